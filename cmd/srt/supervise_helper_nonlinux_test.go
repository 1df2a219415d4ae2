//go:build !linux

package main

import (
	"fmt"
	"os"
)

func superviseHelper() {
	fmt.Fprintln(os.Stderr, "the supervise helper runs on Linux only")
	os.Exit(1)
}
