package srt

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/landlock"
	"github.com/srt-go/srt/nsexec"
	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/seatbelt"
	"github.com/srt-go/srt/seccomp"
	"github.com/srt-go/srt/winsec"
)

// PlanOptions say for which system, and where, a run is planned.
type PlanOptions struct {
	// OS is "linux", "darwin" or "windows"; "" is this system.
	OS string
	// Dir is the working directory, Home the user's home; "" is this
	// process's.
	Dir, Home string
	// Fallback plans the weaker fallback sandbox (Linux, where user
	// namespaces are refused and enableWeakerNestedSandbox is set).
	Fallback bool
}

// RunPlan is what a run of some settings would enforce on a system,
// computed without running anything: the first phase of every run, which
// srt plan prints and --debug logs.
type RunPlan struct {
	OS          string       `json:"os"`
	Enforcement Enforcement  `json:"enforcement"`
	Linux       *LinuxPlan   `json:"linux,omitempty"`
	Darwin      *DarwinPlan  `json:"darwin,omitempty"`
	Windows     *winsec.Plan `json:"windows,omitempty"`
}

// DarwinPlan is what the macOS backend applies: a Seatbelt profile, as
// data and as the text Seatbelt reads. The run's proxy ports are added to
// it when the run starts.
type DarwinPlan struct {
	Profile *seatbelt.Profile `json:"profile"`
	Text    string            `json:"text"`
}

// LinuxPlan is what the Linux backend builds: the mounts with the rule
// behind each, the seccomp filter, and the Landlock layer.
type LinuxPlan struct {
	Mounts  []nsexec.Mount `json:"mounts"`
	Skipped []policy.Skip  `json:"skipped,omitempty"`
	// Seccomp is the filter's options; SeccompProgram its instructions
	// for Arch, one a line.
	Seccomp        seccomp.Options `json:"seccomp"`
	Arch           string          `json:"arch"`
	SeccompProgram []string        `json:"seccompProgram"`
	// PathGuard says what the path guard judges while the command runs.
	PathGuard string `json:"pathGuard"`
	// Landlock is the Landlock layer; nil with NoLandlock saying why.
	Landlock   *landlock.Rules `json:"landlock,omitempty"`
	NoLandlock string          `json:"noLandlock,omitempty"`
}

// Plan computes what a run of settings would enforce on o.OS, on any
// host, without running anything. The run's own TMPDIR is written
// $TMPDIR/srt-<uid>/run-PLAN/tmp. A system with no backend is an
// *UnsupportedError.
func Plan(settings *config.Settings, o PlanOptions) (*RunPlan, error) {
	goos := o.OS
	if goos == "" {
		goos = runtime.GOOS
	}
	if goos != "linux" && goos != "darwin" && goos != "windows" {
		return nil, &UnsupportedError{Missing: "a sandbox backend for " + goos, Err: fmt.Errorf("no sandbox backend for %s yet: nothing to plan", goos)}
	}
	cwd, home := o.Dir, o.Home
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	switch goos {
	case "darwin":
		return darwinPlan(settings, home, cwd)
	case "windows":
		return windowsPlan(settings, home, cwd)
	}
	runDirs := filepath.Join(os.TempDir(), fmt.Sprintf("srt-%d", os.Getuid()))
	rp, err := nsexec.PlanRun(settings, nsexec.PlanOptions{Home: home, Cwd: cwd, RunDirs: runDirs,
		TempDir: filepath.Join(runDirs, "run-PLAN", "tmp"), Fallback: o.Fallback, Report: true})
	if err != nil {
		return nil, err
	}
	return linuxRunPlan(rp, newBackend(nil).LandlockABI()), nil
}

// linuxRunPlan is the facade's view of nsexec's plan, under Landlock ABI
// abi.
func linuxRunPlan(rp *nsexec.RunPlan, abi int) *RunPlan {
	arch, _ := seccomp.ArchOf(runtime.GOARCH)
	lp := &LinuxPlan{Mounts: rp.Mounts.Mounts, Skipped: rp.Mounts.Skipped, Seccomp: rp.Seccomp, Arch: arch.Name,
		Landlock: rp.Landlock, NoLandlock: rp.NoLandlock, PathGuard: rp.GuardLine()}
	if lp.Mounts == nil {
		lp.Mounts = []nsexec.Mount{}
	}
	if arch.Nr != nil {
		lp.SeccompProgram = strings.Split(strings.TrimSuffix(seccomp.Disassemble(arch, seccomp.Filter(arch, rp.Seccomp)), "\n"), "\n")
	}
	e := backend.LinuxEnforcement(rp.Fallback, rp.NoLandlock, abi)
	if rp.GuardSkipped {
		e.Lacks = append(e.Lacks, backend.GuardSkippedLacks)
	}
	return &RunPlan{OS: "linux", Enforcement: e, Linux: lp}
}

// linuxPlanJSON is a Linux run's plan with its enforcement e, as srt plan
// --json prints it: the Linux backend's debug log prints it for every
// run (srt_linux.go gives it to the backend).
func linuxPlanJSON(rp *nsexec.RunPlan, e Enforcement) []byte {
	p := linuxRunPlan(rp, 0) // the ABI only decides the enforcement, e
	p.Enforcement = e
	data, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	return data
}

// darwinPlan is the profile a macOS run of settings would get (the
// paths read on this host's disk; the run's directory, made only by a
// run, is named run-PLAN).
func darwinPlan(settings *config.Settings, home, cwd string) (*RunPlan, error) {
	tmpdir, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmpdir = os.TempDir()
	}
	base := filepath.Join(tmpdir, fmt.Sprintf("srt-%d", os.Getuid()))
	tmp := filepath.Join(base, "run-PLAN", "tmp")
	pol, err := policy.Build(settings, policy.Env{Home: home, Cwd: cwd, Writable: []string{tmp}, Private: base})
	if err != nil {
		return nil, err
	}
	p, err := seatbelt.Build(pol, seatbelt.SettingsFor(settings, home, cwd, "srt-PLAN", nil))
	if err != nil {
		return nil, err
	}
	p.Rules = append(p.Rules, seatbelt.RunDirRules(base, tmp, settings.Network.AllowAllUnixSockets)...)
	return &RunPlan{OS: "darwin", Enforcement: backend.DarwinEnforcement(), Darwin: &DarwinPlan{Profile: p, Text: p.String()}}, nil
}

// windowsPlan is what a Windows session of settings would apply (the
// paths read on this host's disk; the run's directory, made only by a
// run, is named run-PLAN).
func windowsPlan(settings *config.Settings, home, cwd string) (*RunPlan, error) {
	if err := config.Check(settings, "windows"); err != nil {
		return nil, err
	}
	o, err := winsec.OptionsOf(settings)
	if err != nil {
		return nil, err
	}
	base := winsec.RunDirs()
	o.TempDir, o.Cwd = filepath.Join(base, "run-PLAN", "tmp"), cwd
	pol, err := policy.Build(settings, policy.Env{Home: home, Cwd: cwd, Writable: []string{o.TempDir}, Private: base})
	if err != nil {
		return nil, err
	}
	p, err := winsec.Build(pol, o)
	if err != nil {
		return nil, err
	}
	return &RunPlan{OS: "windows", Enforcement: backend.WindowsEnforcement(), Windows: p}, nil
}

// String renders the plan for people.
func (p *RunPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "System: %s\nEnforcement: %s\n", p.OS, p.Enforcement)
	if l := p.Linux; l != nil {
		b.WriteString("Mounts:\n")
		b.WriteString((&nsexec.Plan{Mounts: l.Mounts, Skipped: l.Skipped}).String())
		if l.Landlock != nil {
			fmt.Fprintf(&b, "Landlock layer: read %v; read files %v; list only %v; write %v\n", l.Landlock.Read, l.Landlock.ReadFile, l.Landlock.ListOnly, l.Landlock.Write)
		} else {
			fmt.Fprintf(&b, "No Landlock layer: %s\n", l.NoLandlock)
		}
		b.WriteString(l.PathGuard + "\n")
		fmt.Fprintf(&b, "Seccomp filter for %s, %+v:\n%s\n", l.Arch, l.Seccomp, strings.Join(l.SeccompProgram, "\n"))
	}
	if d := p.Darwin; d != nil {
		b.WriteString("Seatbelt profile (the run's proxy ports are added when it starts):\n")
		b.WriteString(d.Text)
	}
	if w := p.Windows; w != nil {
		b.WriteString(w.String())
	}
	return b.String()
}
