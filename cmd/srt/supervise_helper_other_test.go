//go:build !unix

package main

import (
	"fmt"
	"os"
)

func superviseHelper() {
	fmt.Fprintln(os.Stderr, "the supervise helper needs POSIX sessions")
	os.Exit(1)
}
