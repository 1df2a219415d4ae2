package main

import (
	"fmt"

	"github.com/srt-go/srt"
)

// doctor prints what this host supports and which enforcement a run would
// get, and fails when no sandbox can run here.
func doctor(c *cli, args []string) int {
	if len(args) > 0 {
		c.errorf("doctor takes no arguments (got %q)", args[0])
		return 1
	}
	r := srt.Doctor()
	w := c.stdout
	fmt.Fprintln(w, "srt doctor: what this host offers the sandbox")
	for _, f := range r.Features {
		mark := "ok"
		if !f.OK {
			mark = "--"
		}
		fmt.Fprintf(w, "  %s %-28s %s\n", mark, f.Name, f.Detail)
	}
	if r.Enforcement.Level == srt.None {
		fmt.Fprintf(w, "enforcement: none — srt refuses to run commands here: %s\n", r.Why)
		if r.Fallback != nil {
			fmt.Fprintf(w, "  with enableWeakerNestedSandbox: %s\n", r.Fallback)
		}
		return 1
	}
	fmt.Fprintf(w, "enforcement: %s\n", r.Enforcement)
	return 0
}
