// Command compare runs the same workloads under bare execution,
// bubblewrap, the reference srt and this srt, interleaved (A B C D A B
// C D ...), and prints medians, extremes and ratios. An implementation
// that is not installed is reported as skipped, never estimated.
//
//	go run ./bench/cmd/compare [-runs 20] [-json out.json]
//
// The reference is found as "srt" on PATH (npm i -g
// @anthropic-ai/sandbox-runtime), or with -reference; bubblewrap as
// "bwrap".
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// impl is one way to run a command.
type impl struct {
	name string
	argv func(settings string, cmd []string) []string // nil: skipped
	why  string                                       // why skipped
}

// workload is one thing measured.
type workload struct {
	name     string
	settings string // settings file contents
	cmd      []string
}

type result struct {
	Workload string          `json:"workload"`
	Impl     string          `json:"impl"`
	Skipped  string          `json:"skipped,omitempty"`
	Runs     int             `json:"runs"`
	Median   time.Duration   `json:"medianNs"`
	Min      time.Duration   `json:"minNs"`
	Max      time.Duration   `json:"maxNs"`
	Failures int             `json:"failures"`
	samples  []time.Duration `json:"-"`
}

func main() {
	runs := flag.Int("runs", 20, "runs of each implementation per workload")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	reference := flag.String("reference", "", "path of the reference srt (default: srt on PATH)")
	ours := flag.String("srt", "", "path of this srt (default: built from ./cmd/srt)")
	flag.Parse()
	if err := run(*runs, *jsonOut, *reference, *ours); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(runs int, jsonOut, reference, ours string) error {
	work, err := os.MkdirTemp("", "srt-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if ours == "" {
		ours = filepath.Join(work, "srt")
		build := exec.Command("go", "build", "-o", ours, "./cmd/srt")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building srt: %v\n%s", err, out)
		}
	}
	impls := []impl{
		{name: "bare", argv: func(_ string, cmd []string) []string { return cmd }},
		lookup("bwrap", "bwrap", "", func(path, _ string, cmd []string) []string {
			return append([]string{path, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}, cmd...)
		}),
		lookup("reference srt", "srt", reference, srtArgv),
		{name: "srt-go", argv: func(settings string, cmd []string) []string { return srtArgv(ours, settings, cmd) }},
	}
	base := `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`
	net := `{"network":{"allowedDomains":["example.com","*.github.com"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`
	workloads := []workload{
		{"true, minimal policy", base, []string{"true"}},
		{"true, network allowances", net, []string{"true"}},
		{"true, 100 filesystem rules", rules(work, 100), []string{"true"}},
		{"true, 1,000 filesystem rules", rules(work, 1000), []string{"true"}},
	}
	var results []*result
	for _, w := range workloads {
		cfg := filepath.Join(work, "settings.json")
		if err := os.WriteFile(cfg, []byte(w.settings), 0o644); err != nil {
			return err
		}
		rs := make([]*result, len(impls))
		for i, im := range impls {
			rs[i] = &result{Workload: w.name, Impl: im.name, Skipped: im.why}
		}
		for r := 0; r < runs; r++ {
			for i, im := range impls {
				if im.argv == nil {
					continue
				}
				argv := im.argv(cfg, w.cmd)
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir = work
				start := time.Now()
				err := cmd.Run()
				d := time.Since(start)
				if err != nil {
					rs[i].Failures++
					continue
				}
				rs[i].samples = append(rs[i].samples, d)
			}
		}
		for _, r := range rs {
			summarize(r)
		}
		results = append(results, rs...)
	}
	print(results)
	if jsonOut != "" {
		data, _ := json.MarshalIndent(results, "", "  ")
		return os.WriteFile(jsonOut, append(data, '\n'), 0o644)
	}
	return nil
}

func srtArgv(path, settings string, cmd []string) []string {
	return append([]string{path, "--settings", settings, "--"}, cmd...)
}

// lookup finds an implementation's program, or says why it is skipped.
func lookup(name, program, given string, argv func(path, settings string, cmd []string) []string) impl {
	path := given
	if path == "" {
		p, err := exec.LookPath(program)
		if err != nil {
			return impl{name: name, why: program + " is not installed"}
		}
		path = p
	}
	return impl{name: name, argv: func(settings string, cmd []string) []string { return argv(path, settings, cmd) }}
}

// rules is a settings document of n filesystem rules over directories it
// creates under work.
func rules(work string, n int) string {
	var deny, allow []string
	for i := 0; i < n; i++ {
		dir := filepath.Join(work, fmt.Sprintf("r%d-%d", n, i))
		os.MkdirAll(dir, 0o755)
		if i%2 == 0 {
			deny = append(deny, fmt.Sprintf("%q", dir))
		} else {
			allow = append(allow, fmt.Sprintf("%q", dir))
		}
	}
	return fmt.Sprintf(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[%s],"allowWrite":[%s],"denyWrite":[]}}`,
		strings.Join(deny, ","), strings.Join(allow, ","))
}

func summarize(r *result) {
	r.Runs = len(r.samples)
	if r.Runs == 0 {
		if r.Skipped == "" && r.Failures > 0 {
			r.Skipped = fmt.Sprintf("every run failed (%d)", r.Failures)
		}
		return
	}
	s := slices.Clone(r.samples)
	slices.Sort(s)
	r.Min, r.Max, r.Median = s[0], s[len(s)-1], s[len(s)/2]
	if len(s)%2 == 0 {
		r.Median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
}

// print writes one table per workload, with ratios to srt-go.
func print(results []*result) {
	var last string
	var ours *result
	for i, r := range results {
		if r.Workload != last {
			last = r.Workload
			ours = nil
			for _, x := range results[i:] {
				if x.Workload == r.Workload && x.Impl == "srt-go" {
					ours = x
				}
			}
			fmt.Printf("\n%s\n  %-14s %10s %10s %10s %9s\n", r.Workload, "", "median", "min", "max", "/ srt-go")
		}
		if r.Runs == 0 {
			fmt.Printf("  %-14s skipped: %s\n", r.Impl, r.Skipped)
			continue
		}
		ratio := "-"
		if ours != nil && ours.Runs > 0 {
			ratio = fmt.Sprintf("%.2fx", float64(r.Median)/float64(ours.Median))
		}
		fmt.Printf("  %-14s %10s %10s %10s %9s", r.Impl, ms(r.Median), ms(r.Min), ms(r.Max), ratio)
		if r.Failures > 0 {
			fmt.Printf("  (%d failed)", r.Failures)
		}
		fmt.Println()
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
