// Package nsexec runs a command in the Linux sandbox: user, mount, PID,
// network, IPC, UTS and cgroup namespaces built by a re-executed init, with
// no bubblewrap. This file is the pure half: the mount plan, computed from
// the settings and the disk, with no privileges.
package nsexec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/landlock"
	"github.com/srt-go/srt/policy"
)

// MountKind says what a mount does to a path of the sandbox's view.
type MountKind string

const (
	// BindWritable exposes the host path, writable.
	BindWritable MountKind = "bind-rw"
	// BindReadOnly exposes the host path, recursively read-only.
	BindReadOnly MountKind = "bind-ro"
	// MaskDir hides a directory behind an empty, read-only one (with just
	// the mount points that deeper mounts need).
	MaskDir MountKind = "mask-dir"
	// MaskFile hides a file behind an empty, read-only file of mode 000.
	MaskFile MountKind = "mask-file"
	// PinLink mounts a symlink on itself: it can be neither removed nor
	// replaced, so it keeps leading where it did (a protected name that
	// is a symlink, and every symlink on its way to its target).
	PinLink MountKind = "pin-link"
	// MaskLink covers a symlink whose target does not exist with one that
	// leads nowhere anything can be created (/dev/null/…): a protected
	// name must not let the command create what it points to.
	MaskLink MountKind = "mask-link"
)

// deadLink is the target of a MaskLink: nothing can exist beneath a
// character device, so neither reading nor creating through it works.
const deadLink = "/dev/null/srt-protected"

// Mount is one step of the plan. Mounts are applied in order, over a
// read-only view of the whole host, each on top of what came before.
type Mount struct {
	Kind MountKind `json:"kind"`
	Path string    `json:"path"` // absolute, symlink-free host path; the same path inside
	Why  string    `json:"why"`  // the rule that asked for it, for --debug and violations
	// Keep lists the mount points a MaskDir must contain for the mounts
	// beneath it: relative paths, directories unless in KeepFiles.
	Keep      []string `json:"keep,omitempty"`
	KeepFiles []string `json:"keepFiles,omitempty"`
	// Content, for a MaskFile, is what the file reads as inside instead
	// of nothing: a masked credential file, with sentinels in place of
	// the secrets (read-only, mode 0444).
	Content []byte `json:"content,omitempty"`
}

// Skip is a rule that made no mount, and why.
type Skip = policy.Skip

// Plan is everything the init needs to build the sandbox's filesystem.
type Plan struct {
	Mounts  []Mount `json:"mounts"`
	Skipped []Skip  `json:"skipped,omitempty"`
}

// String renders the plan one mount a line, for srt --debug.
func (p *Plan) String() string {
	var b strings.Builder
	b.WriteString("/ (read-only)\n")
	for _, m := range p.Mounts {
		fmt.Fprintf(&b, "%-9s %s  (%s)\n", m.Kind, m.Path, m.Why)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "skipped   %s  (%s)\n", s.Rule, s.Why)
	}
	return b.String()
}

// Writable reports whether path (absolute, symlink-free) is writable in
// the sandbox's view: the last mount that covers it decides, over a
// read-only host. A symlink pinned or masked by a mount is not.
func (p *Plan) Writable(path string) bool {
	w := false
	for _, m := range p.Mounts {
		if policy.Under(path, m.Path) {
			w = m.Kind == BindWritable
		}
	}
	return w
}

// Build computes the mount plan for s in env: the platform-neutral
// policy (package policy), read with this kernel's getdents, turned into
// mounts. It reads the disk but changes nothing.
func Build(s *config.Settings, env policy.Env) (*Plan, error) {
	if env.Dirs == nil {
		env.Dirs = dirReader
	}
	pol, err := policy.Build(s, env)
	if err != nil {
		return nil, err
	}
	return Mounts(pol), nil
}

// LandlockInput turns a plan into the hierarchies of the Landlock layer
// under the namespace sandbox's mounts: writable binds (and /dev and
// /proc, the sandbox's own, whose mounts decide) are writable, masks are
// hidden, and binds beneath a mask reopen their tree.
func LandlockInput(p *Plan) landlock.Input {
	in := planLandlock(p)
	in.Writable = append(in.Writable, "/dev", "/proc")
	return in
}

// fallbackDevices are the devices the fallback's command may write, and
// fallbackReadDevices those it may read: what the namespace sandbox's own
// /dev holds. The rest of the host's /dev is hidden: root owns the block
// devices, and a command running as root keeps that ownership with no
// capability, so /dev/sda would be every denyRead's way around; /dev/shm
// holds other processes' shared memory.
var (
	fallbackDevices     = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}
	fallbackReadDevices = []string{"/dev/random", "/dev/urandom"}
)

// FallbackLandlockInput is the Landlock layer of the fallback, where it
// decides alone, in the host's /dev and /proc: /dev is hidden but for the
// harmless devices, and nothing under /proc is writable. The command's
// own terminal is added by the child that knows its stdio. No new
// pseudo-terminal can be made: its slave would be opened in the host's
// /dev/pts, among this user's other terminals.
func FallbackLandlockInput(p *Plan) landlock.Input {
	in := planLandlock(p)
	in.Hidden = append(in.Hidden, "/dev")
	in.Writable = append(in.Writable, fallbackDevices...)
	in.Reopened = append(in.Reopened, fallbackReadDevices...)
	return in
}

// HiddenInWritable returns a mask of p that lies inside a writable bind,
// and that bind: Landlock can only grant, and what it grants on a tree it
// grants everywhere beneath, so the fallback cannot hide it.
func HiddenInWritable(p *Plan) (mask, bind Mount, found bool) {
	for _, w := range p.Mounts {
		if w.Kind != BindWritable {
			continue
		}
		for _, m := range p.Mounts {
			if (m.Kind == MaskDir || m.Kind == MaskFile) && m.Path != w.Path && policy.Under(m.Path, w.Path) {
				return m, w, true
			}
		}
	}
	return Mount{}, Mount{}, false
}

// planLandlock is what a plan's mounts say to Landlock.
func planLandlock(p *Plan) landlock.Input {
	var in landlock.Input
	for _, m := range p.Mounts {
		switch {
		case m.Kind == MaskFile && m.Content != nil:
			// A masked credential file reads as its masked copy, which
			// the mount puts where Landlock's rules will find it.
		case m.Kind == MaskDir, m.Kind == MaskFile:
			in.Hidden = append(in.Hidden, m.Path)
		}
	}
	for _, m := range p.Mounts {
		switch m.Kind {
		case BindWritable:
			in.Writable = append(in.Writable, m.Path)
		case BindReadOnly:
			for _, h := range in.Hidden {
				if m.Path != h && policy.Under(m.Path, h) {
					in.Reopened = append(in.Reopened, m.Path)
					break
				}
			}
		}
	}
	return in
}

// LandlockRules computes the Landlock layer of in against the disk.
func LandlockRules(in landlock.Input) (landlock.Rules, error) {
	return landlock.Compute(in, listDir)
}

func listDir(dir string) ([]string, map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, nil, nil // nothing there to reopen
		}
		return nil, nil, err
	}
	names := make([]string, 0, len(entries))
	isDir := make(map[string]bool, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
		isDir[e.Name()] = e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
				isDir[e.Name()] = fi.IsDir()
			}
		}
	}
	return names, isDir, nil
}
