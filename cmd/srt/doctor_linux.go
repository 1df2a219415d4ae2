package main

import "github.com/srt-go/srt/nsexec"

func probeHost() *nsexec.Report { return nsexec.Probe() }
