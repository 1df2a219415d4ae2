package nsexec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/landlock"
	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/seccomp"
)

// RunPlan is what one run will enforce, computed before anything starts:
// the filesystem policy and the mounts that carry it out, the seccomp
// filter, the Landlock layer. Pure data: srt plan prints it on any host,
// Prepare carries it out.
type RunPlan struct {
	Policy *policy.Policy `json:"-"`
	Mounts *Plan          `json:"mounts"`
	// Seccomp selects the command's filter; UnixSocketPaths are
	// allowUnixSockets, resolved.
	Seccomp         seccomp.Options `json:"seccomp"`
	UnixSocketPaths []string        `json:"unixSocketPaths,omitempty"`
	// Landlock is the Landlock layer; nil with NoLandlock saying why.
	Landlock   *landlock.Rules `json:"landlock,omitempty"`
	NoLandlock string          `json:"noLandlock,omitempty"`
	// Fallback: the command runs in the host's namespaces, under
	// Landlock and seccomp only.
	Fallback bool `json:"fallback,omitempty"`
	// GuardSkipped: filesystem.skipPathGuard turned the path guard off.
	GuardSkipped bool `json:"guardSkipped,omitempty"`
	// Guard is the path guard's rules (nil: no guard, as with
	// filesystem.disabled): protected names that do not exist yet, or lie
	// deeper than the walk, are judged at each call that would make or
	// write them.
	Guard *policy.Guard `json:"guard,omitempty"`
}

// PlanOptions say where a run is planned.
type PlanOptions struct {
	Home, Cwd string
	// TempDir is the run's own TMPDIR, writable; RunDirs srt's directory
	// of run dirs, hidden but for TempDir and RunFiles (srt's files of
	// this run the command reads).
	TempDir, RunDirs string
	RunFiles         []string
	// Fallback plans the fallback sandbox; OwnSockets, one whose
	// supervisor makes the command's sockets (seccomp.Options.OwnSockets:
	// this host refuses pidfd_getfd).
	Fallback, OwnSockets bool
	// Report sends the refused Unix sockets to srt's supervisor, to be
	// reported as violations.
	Report bool
	// Masks are masked credential files (hidden like denyRead entries,
	// which the settings must name): what each reads as inside instead.
	// The fallback, which cannot bind a file, hides them.
	Masks map[string][]byte
}

// NestedNoLandlock says why allowNestedUserNamespaces goes without Landlock.
const NestedNoLandlock = "allowNestedUserNamespaces needs mounts, which a Landlock domain may not make"

// PlanRun plans a run of settings s: it reads the disk (symlinks, globs,
// protected names, the siblings Landlock must list) and changes nothing.
// Settings the fallback cannot honour are refused here, before anything
// starts.
func PlanRun(s *config.Settings, o PlanOptions) (*RunPlan, error) {
	var writable []string
	if o.TempDir != "" && !s.Filesystem.Disabled {
		writable = []string{o.TempDir}
	}
	guard := !s.Filesystem.Disabled && guardBuilt && !s.Filesystem.SkipPathGuard
	pol, err := policy.Build(s, policy.Env{Home: o.Home, Cwd: o.Cwd, Writable: writable, Private: o.RunDirs, PrivateFiles: o.RunFiles, Dirs: dirReader, Inode: inodeOf,
		GuardKeepsConfigs: guard && !s.AllowNestedUserNamespaces})
	if err != nil {
		return nil, err
	}
	rp := &RunPlan{Policy: pol, Mounts: Mounts(pol), Fallback: o.Fallback, GuardSkipped: s.Filesystem.SkipPathGuard && !s.Filesystem.Disabled}
	if !o.Fallback {
		for i, m := range rp.Mounts.Mounts {
			if c, ok := o.Masks[m.Path]; ok && m.Kind == MaskFile {
				rp.Mounts.Mounts[i].Content = c
				rp.Mounts.Mounts[i].Why += "; masked credential file"
			}
		}
	}
	rp.Seccomp, rp.UnixSocketPaths = seccomp.FromSettings(s, o.Home, o.Cwd)
	rp.Seccomp.ReportSockets = o.Report
	if guard {
		rp.Guard = &policy.Guard{GitConfig: s.Filesystem.AllowGitConfig, Policy: pol}
		rp.Seccomp.Guard = true
		// Reads are judged too only where the launch's mounts cannot
		// hide all there is (pol.ReadGuard), and not in the fallback,
		// whose host procfs srt could not open for the command.
		rp.Seccomp.GuardReads = pol.ReadGuard != "" && !o.Fallback
	}
	var in landlock.Input
	switch {
	case o.Fallback:
		if mask, bind, found := HiddenInWritable(rp.Mounts); found {
			return nil, fmt.Errorf("the fallback sandbox cannot hide %s (%s) inside the writable %s (%s): Landlock can only grant, and what it grants on %s it grants on everything beneath; move the entry out of the writable tree, or run where user namespaces are available (srt doctor)",
				mask.Path, mask.Why, bind.Path, bind.Why, bind.Path)
		}
		if rp.GuardSkipped {
			return nil, errors.New("the fallback sandbox cannot honour filesystem.skipPathGuard: only the path guard keeps its protected names (it has no mounts); remove the setting, or run where user namespaces are available (srt doctor)")
		}
		if s.AllowPty {
			return nil, errors.New("the fallback sandbox cannot honour allowPty: a new pseudo-terminal's slave opens in the host's /dev/pts, where this user's other terminals are, and a command that may open one may open them; remove allowPty, or run where user namespaces are available (srt doctor)")
		}
		rp.Seccomp.HostNamespaces = true
		rp.Seccomp.OwnSockets = o.OwnSockets
		rp.Seccomp.NestedNamespaces = false
		in = FallbackLandlockInput(rp.Mounts)
	case s.AllowNestedUserNamespaces:
		rp.NoLandlock = NestedNoLandlock
		return rp, nil
	default:
		in = LandlockInput(rp.Mounts)
	}
	rules, err := LandlockRules(in)
	if err != nil {
		return nil, err
	}
	rp.Landlock = &rules
	return rp, nil
}

// String renders the plan for people: the mounts with the rule behind
// each, the Landlock layer and the seccomp filter.
func (rp *RunPlan) String() string {
	var b strings.Builder
	b.WriteString("Mounts:\n")
	b.WriteString(rp.Mounts.String())
	if rp.Landlock != nil {
		l := rp.Landlock
		fmt.Fprintf(&b, "Landlock layer: read %v; read files %v; list only %v; write %v\n", l.Read, l.ReadFile, l.ListOnly, l.Write)
	} else {
		fmt.Fprintf(&b, "No Landlock layer: %s\n", rp.NoLandlock)
	}
	b.WriteString(rp.GuardLine() + "\n")
	fmt.Fprintf(&b, "Seccomp filter for %s", seccomp.Describe(rp.Seccomp))
	return b.String()
}

// GuardLine says what the path guard judges in this run.
func (rp *RunPlan) GuardLine() string {
	switch {
	case rp.Guard == nil:
		return "No path guard (filesystem.disabled)"
	case rp.Seccomp.GuardReads:
		return fmt.Sprintf("Path guard: every name made, moved or linked, every file opened, also for reading (%s), and every change of a file's metadata", rp.Policy.ReadGuard)
	}
	return "Path guard: every name made, moved or linked, every file opened for writing, and every change of a file's metadata"
}
