//go:build !linux

package main

import "runtime"

type feature struct {
	Name, Detail string
	OK           bool
}

type report struct {
	Features    []feature
	Runnable    bool
	Why         string
	Enforcement string
}

func probeHost() *report {
	return &report{Why: "no sandbox backend exists for " + runtime.GOOS + " yet"}
}
