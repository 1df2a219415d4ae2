package main

import (
	"encoding/json"
	"fmt"

	"github.com/srt-go/srt"
)

// plan prints what a run with the settings would enforce on a system,
// without running anything: srt plan [--os linux|darwin|windows] [--json]
// [--fallback] [-s FILE].
func plan(c *cli, args []string) int {
	var o options
	var po srt.PlanOptions
	asJSON := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--json":
			asJSON = true
		case "--fallback":
			po.Fallback = true
		case "--os", "-s", "--settings":
			if i+1 == len(args) {
				c.errorf("plan: %s needs a value", a)
				return 1
			}
			i++
			if a == "--os" {
				po.OS = args[i]
			} else {
				o.settings, o.sawSettings = args[i], true
			}
		default:
			c.errorf("plan: unknown argument %q (srt plan [--os linux|darwin|windows] [--json] [--fallback] [-s FILE])", a)
			return 1
		}
	}
	switch po.OS {
	case "", "linux", "darwin", "windows":
	default:
		c.errorf("plan: --os %q: want linux, darwin or windows", po.OS)
		return 1
	}
	settings, ok := c.loadSettings(&o)
	if !ok {
		return 1
	}
	p, err := srt.Plan(settings, po)
	if err != nil {
		c.errorf("%v", err)
		return 1
	}
	if asJSON {
		data, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			c.errorf("%v", err)
			return 1
		}
		fmt.Fprintf(c.stdout, "%s\n", data)
		return 0
	}
	fmt.Fprint(c.stdout, p)
	return 0
}
