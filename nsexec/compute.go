package nsexec

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/srt-go/srt/policy"
)

// Mounts turns a policy into the mount plan: every path a rule names gets
// a mount exactly when its view differs from its parent's; mounts go from
// shallow to deep, so each lands on top of the ones that contain it. The
// directories between a protected path and its write root are pinned
// (mounted on themselves), a kept symlink is pinned or masked, and srt's
// own directory of run dirs stays read-only (keepPrivate).
func Mounts(pol *policy.Policy) *Plan {
	plan := &Plan{Skipped: pol.Skipped}
	if pol.Disabled {
		// Everything writable, no protected names (spec c.8).
		plan.Mounts = append(plan.Mounts, Mount{Kind: BindWritable, Path: "/", Why: "filesystem.disabled"})
		return plan
	}
	writes := map[string]bool{}
	for _, w := range pol.Writes {
		writes[w.Path] = true
	}
	pins := pinned(pol)

	paths := map[string]bool{}
	for _, r := range pol.Reads {
		paths[r.Path] = true
	}
	for p := range writes {
		paths[p] = true
	}
	for p := range pins {
		paths[p] = true
	}
	links := map[string]policy.Link{}
	for _, l := range pol.Links {
		links[l.Path] = l
		paths[l.Path] = true
	}
	order := make([]string, 0, len(paths))
	for p := range paths {
		order = append(order, p)
	}
	sort.Slice(order, func(i, j int) bool {
		di, dj := strings.Count(order[i], "/"), strings.Count(order[j], "/")
		if order[i] == "/" || order[j] == "/" {
			return order[i] == "/" && order[j] != "/"
		}
		if di != dj {
			return di < dj
		}
		return order[i] < order[j]
	})

	for _, p := range order {
		v, parent := pol.View(p), policy.View{Readable: true}
		if p != "/" {
			parent = pol.View(filepath.Dir(p))
		}
		if l, ok := links[p]; ok {
			// A link matters where the command could remove or replace
			// it: in a directory it may write and can see. A link to
			// nothing matters wherever it is seen: writing through it
			// creates its target.
			if parent.Readable && (parent.Writable || l.Kind == policy.MaskLink) {
				kind := PinLink
				if l.Kind == policy.MaskLink {
					kind = MaskLink
				}
				plan.Mounts = append(plan.Mounts, Mount{Kind: kind, Path: p, Why: l.Why})
			}
			continue
		}
		whys := pol.Why(p)
		if pin := pins[p]; pin != "" {
			whys = append(whys, "pinned: "+pin)
		}
		why := strings.Join(whys, "; ")
		switch {
		case !v.Readable && parent.Readable:
			kind := MaskDir
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				kind = MaskFile
			}
			plan.Mounts = append(plan.Mounts, Mount{Kind: kind, Path: p, Why: why})
		case !v.Readable:
			// Already inside a hidden area.
		case !parent.Readable || v.Writable != parent.Writable || (pins[p] != "" && v.Writable):
			kind := BindReadOnly
			if v.Writable {
				kind = BindWritable
			}
			plan.Mounts = append(plan.Mounts, Mount{Kind: kind, Path: p, Why: why})
		}
	}
	keepPrivate(plan, pol)
	fillKeep(plan.Mounts)
	return plan
}

// keepPrivate hides the policy's Private directory, srt's run dirs of
// every run, whatever the rules say (its parent is /tmp, readable and
// often writable): other runs' temp files, trust bundles and sockets are
// theirs. Its Writable paths (this run's temp dir) and PrivateFiles are
// bound back. The mounts come last, so they land on top of the rules'
// own.
func keepPrivate(plan *Plan, pol *policy.Policy) {
	p := pol.Private
	if p == "" {
		return
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		return
	}
	plan.Mounts = append(plan.Mounts, Mount{Kind: MaskDir, Path: p, Why: "srt: the run dirs of every run"})
	for _, f := range pol.PrivateFiles {
		if policy.Under(f, p) {
			plan.Mounts = append(plan.Mounts, Mount{Kind: BindReadOnly, Path: f, Why: "srt: this run's files"})
		}
	}
	for _, w := range pol.Writable {
		if policy.Under(w, p) {
			plan.Mounts = append(plan.Mounts, Mount{Kind: BindWritable, Path: w, Why: "srt: per-run temp dir"})
		}
	}
}

// pinned returns the directories between each protected (deny-write) path
// or pinned symlink and the write root above it. They become mount points
// of themselves, so that renaming one fails with EBUSY: "mv .git .git2"
// followed by a fresh .git/hooks would otherwise move the protection aside.
func pinned(pol *policy.Policy) map[string]string {
	roots := map[string]bool{}
	for _, w := range pol.Writes {
		if w.Allow {
			roots[w.Path] = true
		}
	}
	pins := map[string]string{}
	pin := func(p string) {
		for d := filepath.Dir(p); d != "/"; d = filepath.Dir(d) {
			if roots[d] {
				break // the write root itself gets its own mount
			}
			if pins[d] == "" {
				pins[d] = "contains " + p
			}
		}
	}
	for _, w := range pol.Writes {
		if !w.Allow {
			pin(w.Path)
		}
	}
	for _, l := range pol.Links {
		pin(l.Path)
	}
	return pins
}

// fillKeep records, in each MaskDir, the mount points that the mounts
// directly beneath it need: the mask is empty, so the init must create
// them inside it (in its private staging area, never in the user's tree).
// The mount that provides a mount's point is the latest one at its
// nearest ancestor path: mounts go from shallow to deep, so it came
// before.
func fillKeep(ms []Mount) {
	latest := make(map[string]int, len(ms)) // path -> index of its latest mount so far
	for i := range ms {
		for p := ms[i].Path; p != "/"; {
			p = filepath.Dir(p)
			j, ok := latest[p]
			if !ok {
				continue
			}
			if ms[j].Kind == MaskDir {
				rel := strings.TrimPrefix(strings.TrimPrefix(ms[i].Path, ms[j].Path), "/")
				if fi, err := os.Stat(ms[i].Path); err == nil && !fi.IsDir() {
					ms[j].KeepFiles = append(ms[j].KeepFiles, rel)
				} else {
					ms[j].Keep = append(ms[j].Keep, rel)
				}
			}
			break // the nearest mount above provides the mount point
		}
		latest[ms[i].Path] = i
	}
}
