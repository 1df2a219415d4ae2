//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

type feature struct {
	Name, Detail string
	OK           bool
}

type report struct {
	Features    []feature
	Runnable    bool
	Why         string
	Enforcement string
	Fallback    fmt.Stringer // nil: no fallback on this platform
}

func probeHost() *report {
	return &report{Why: "no sandbox backend exists for " + runtime.GOOS + " yet"}
}
