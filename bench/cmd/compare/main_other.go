//go:build !linux

package main

import (
	"fmt"
	"os"
)

// The comparison runs Linux sandboxes (bubblewrap, the reference srt's
// Linux backend, srt-go's namespaces) and reads /proc.
func main() {
	fmt.Fprintln(os.Stderr, "compare: the side-by-side comparison runs on Linux only")
	os.Exit(1)
}
