//go:build linux

// Command compare runs the same workloads under bare execution,
// bubblewrap, the reference srt and this srt, interleaved (A B C D A B
// C D ...), and prints medians, extremes and ratios. An implementation
// that is not installed, or that cannot run a workload, is reported as
// skipped, never estimated.
//
//	go run ./bench/cmd/compare [-runs 20] [-only REGEXP] [-json out.json] [-png out.png]
//
// The reference is found as "srt" on PATH (npm i -g
// @anthropic-ai/sandbox-runtime), or with -reference; bubblewrap as
// "bwrap". The chart is drawn by the separate module in bench/chart, so
// its plotting dependencies stay out of srt's own module.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"time"
)

// impl is one way to run a command.
type impl struct {
	name string
	// argv wraps cmd; nil means the implementation is skipped (why says
	// why).
	argv func(settings string, cmd []string) []string
	why  string
	// sandboxed: the command runs inside a sandbox with srt's settings
	// (it reaches the network only through a proxy, when at all).
	sandboxed bool
	// network: the sandbox has a way out (a proxy).
	network bool
}

// workload is one thing measured: sample runs it once under an
// implementation and returns the figure(s) of that run, one per metric.
type workload struct {
	name     string
	settings string // settings file contents
	metrics  []metric
	// skip, if set, says why an implementation cannot run this workload.
	skip   func(im impl) string
	sample func(im impl, settings string) ([]float64, error)
	// makesFiles: the workload writes many files, so srt-go without the
	// path guard runs it too.
	makesFiles bool
}

// metric is one figure a workload yields, with its unit and chart panel.
// noGuardImpl names srt-go built without the path guard; baselineImpl,
// an earlier build given by -baseline.
const (
	noGuardImpl  = "srt-go, no guard"
	floorImpl    = "srt-go, trap floor"
	baselineImpl = "srt-go, before"
)

type metric struct {
	suffix string // appended to the workload name ("" for the only one)
	unit   string // "ms", "MB/s" or "MB"
}

type result struct {
	Workload string  `json:"workload"`
	Impl     string  `json:"impl"`
	Unit     string  `json:"unit"`
	Skipped  string  `json:"skipped,omitempty"`
	Runs     int     `json:"runs"`
	Median   float64 `json:"median"`
	// Label is the median as the table prints it (the chart's labels).
	Label    string  `json:"label,omitempty"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	Failures int     `json:"failures"`
	// FirstError is the first failure's message, so a failing
	// implementation says why.
	FirstError string    `json:"firstError,omitempty"`
	samples    []float64 `json:"-"`
}

// A run is the host on which the figures were taken, with the results.
type report struct {
	Date    string    `json:"date"`
	CPUs    int       `json:"cpus"`
	Kernel  string    `json:"kernel"`
	Runs    int       `json:"runs"`
	Results []*result `json:"results"`
}

func main() {
	runs := flag.Int("runs", 20, "runs of each implementation per workload")
	only := flag.String("only", "", "run only the workloads whose name matches this regular expression")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	pngOut := flag.String("png", "", "also draw the results as a PNG bar chart (needs -json)")
	reference := flag.String("reference", "", "path of the reference srt (default: srt on PATH)")
	ours := flag.String("srt", "", "path of this srt (default: built from ./cmd/srt)")
	noGuard := flag.String("srt-noguard", "", "path of this srt built with -tags srt_noguard, without the path guard (default: built from ./cmd/srt)")
	floor := flag.String("srt-floor", "", "path of this srt built with -tags srt_guardfloor, whose guard answers every trapped call at once: the round trips alone (default: built from ./cmd/srt)")
	baseline := flag.String("baseline", "", "path of an earlier srt build, measured beside this one in the same interleaved run (before and after a change)")
	concurrent := flag.Int("concurrent", 50, "sandboxes started at once in the concurrency workload")
	flag.Parse()
	if *pngOut != "" && *jsonOut == "" {
		fmt.Fprintln(os.Stderr, "compare: -png needs -json (the chart is drawn from it)")
		os.Exit(2)
	}
	filter, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare: -only:", err)
		os.Exit(2)
	}
	if err := run(*runs, *concurrent, filter, *jsonOut, *pngOut, *reference, *ours, *noGuard, *floor, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(runs, concurrent int, only *regexp.Regexp, jsonOut, pngOut, reference, ours, noGuard, floor, baseline string) error {
	if runs < 1 {
		return errors.New("-runs must be at least 1")
	}
	work, err := os.MkdirTemp("", "srt-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	for _, b := range []struct {
		path *string
		name string
		tags []string
	}{{&ours, "srt", nil}, {&noGuard, "srt-noguard", []string{"-tags", "srt_noguard"}}, {&floor, "srt-floor", []string{"-tags", "srt_guardfloor"}}} {
		if *b.path != "" {
			continue
		}
		*b.path = filepath.Join(work, b.name)
		build := exec.Command("go", append(append([]string{"build"}, b.tags...), "-o", *b.path, "./cmd/srt")...)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", b.name, err, out)
		}
	}
	impls := []impl{
		{name: "bare", argv: func(_ string, cmd []string) []string { return cmd }, network: true},
		lookup("bwrap", "bwrap", "", func(path, _ string, cmd []string) []string {
			return append([]string{path, "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}, cmd...)
		}),
		lookup("reference srt", "srt", reference, srtArgv),
		{name: "srt-go", argv: func(settings string, cmd []string) []string { return srtArgv(ours, settings, cmd) }},
		// The same without the path guard, for the workloads that make
		// files: what the guard costs.
		{name: noGuardImpl, argv: func(settings string, cmd []string) []string { return srtArgv(noGuard, settings, cmd) }},
		// The guard's round trips alone, every call answered at once:
		// the floor under any guard that judges in user space.
		{name: floorImpl, argv: func(settings string, cmd []string) []string { return srtArgv(floor, settings, cmd) }},
	}
	impls[2].sandboxed, impls[2].network = impls[2].argv != nil, true
	impls[3].sandboxed, impls[3].network = true, true
	impls[4].sandboxed, impls[4].network = true, true
	impls[5].sandboxed, impls[5].network = true, true
	if baseline != "" {
		impls = append(impls, impl{name: baselineImpl, sandboxed: true, network: true,
			argv: func(settings string, cmd []string) []string { return srtArgv(baseline, settings, cmd) }})
	}

	workloads, cleanup, err := workloads(work, concurrent)
	if err != nil {
		return err
	}
	defer cleanup()
	rep := &report{Date: time.Now().UTC().Format(time.DateOnly), CPUs: cpus(), Kernel: kernel(), Runs: runs}
	for _, w := range workloads {
		if !only.MatchString(w.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "compare: %s ...\n", w.name)
		rep.Results = append(rep.Results, measure(w, impls, runs, work)...)
	}
	print(rep.Results)
	if jsonOut == "" {
		return nil
	}
	data, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(jsonOut, append(data, '\n'), 0o644); err != nil {
		return err
	}
	if pngOut == "" {
		return nil
	}
	chart := exec.Command("go", "-C", "bench/chart", "run", ".", "-in", abs(jsonOut), "-out", abs(pngOut))
	chart.Env = append(os.Environ(), "CGO_ENABLED=0")
	chart.Stdout, chart.Stderr = os.Stderr, os.Stderr
	if err := chart.Run(); err != nil {
		return fmt.Errorf("drawing the chart (bench/chart): %w", err)
	}
	return nil
}

// measure runs w under every implementation, interleaved, runs times.
func measure(w workload, impls []impl, runs int, work string) []*result {
	cfg := filepath.Join(work, "settings.json")
	if err := os.WriteFile(cfg, []byte(w.settings), 0o644); err != nil {
		panic(err)
	}
	rs := make([][]*result, len(impls)) // per impl, per metric
	for i, im := range impls {
		why := im.why
		if why == "" && w.skip != nil {
			why = w.skip(im)
		}
		if why == "" && (im.name == noGuardImpl || im.name == floorImpl) && !w.makesFiles {
			why = "the path guard matters where files are made"
		}
		for _, m := range w.metrics {
			rs[i] = append(rs[i], &result{Workload: w.name + m.suffix, Impl: im.name, Unit: m.unit, Skipped: why})
		}
	}
	// One untimed round first: caches warm, and whatever the previous
	// workload left running in the kernel (writeback, namespace teardown)
	// is not timed.
	for i, im := range impls {
		if rs[i][0].Skipped == "" {
			w.sample(im, cfg)
		}
	}
	for r := 0; r < runs; r++ {
		for i, im := range impls {
			if rs[i][0].Skipped != "" {
				continue
			}
			values, err := w.sample(im, cfg)
			for j, res := range rs[i] {
				if err != nil {
					res.Failures++
					if res.FirstError == "" {
						res.FirstError = err.Error()
					}
					continue
				}
				if !isNaN(values[j]) {
					res.samples = append(res.samples, values[j])
				}
			}
		}
	}
	var out []*result
	for m := range w.metrics {
		for i := range impls {
			summarize(rs[i][m])
			out = append(out, rs[i][m])
		}
	}
	return out
}

func isNaN(f float64) bool { return f != f }

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

func summarize(r *result) {
	r.Runs = len(r.samples)
	if r.Runs == 0 {
		switch {
		case r.Skipped != "":
		case r.Failures > 0:
			r.Skipped = fmt.Sprintf("every run failed (%d): %s", r.Failures, r.FirstError)
		default:
			r.Skipped = "no figure: the processes ended before the first sample"
		}
		return
	}
	s := slices.Clone(r.samples)
	slices.Sort(s)
	r.Min, r.Max, r.Median = s[0], s[len(s)-1], s[len(s)/2]
	if len(s)%2 == 0 {
		r.Median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	r.Label = num(r.Median)
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
			fmt.Printf("\n%s (%s)\n  %-18s %10s %10s %10s %9s\n", r.Workload, r.Unit, "", "median", "min", "max", "/ srt-go")
		}
		if r.Runs == 0 {
			fmt.Printf("  %-18s skipped: %s\n", r.Impl, r.Skipped)
			continue
		}
		ratio := "-"
		if ours != nil && ours.Runs > 0 && ours.Median > 0 {
			ratio = fmt.Sprintf("%.2fx", r.Median/ours.Median)
		}
		fmt.Printf("  %-18s %10s %10s %10s %9s", r.Impl, num(r.Median), num(r.Min), num(r.Max), ratio)
		if r.Failures > 0 {
			fmt.Printf("  (%d failed: %s)", r.Failures, r.FirstError)
		}
		fmt.Println()
	}
}

// num prints a figure with three significant digits at most.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
