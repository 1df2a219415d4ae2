package nsexec

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// view is what the sandbox sees at a path.
type view struct {
	readable, writable bool
}

// compute turns the rules into mounts. Every path that a rule names gets a
// mount exactly when its view differs from its parent's; mounts go from
// shallow to deep, so each lands on top of the ones that contain it.
//
// Reads: the most specific rule wins, and at equal specificity an allow
// beats a deny (spec c.1) — so a denied file inside an allowRead directory
// stays hidden, where the reference leaks it. Writes: writable under some
// allowWrite and under no denyWrite or protected name, at any height
// (denyWrite wins even above the allow).
func (b *builder) compute() {
	b.expandRootDeny()
	reads := index(b.reads)
	writes := index(b.writes)
	pins := b.pinned(writes)

	paths := map[string]bool{}
	for p := range reads {
		paths[p] = true
	}
	for p := range writes {
		paths[p] = true
	}
	for p := range pins {
		paths[p] = true
	}
	links := map[string]linkRule{}
	for _, l := range b.links {
		links[l.path] = l
		paths[l.path] = true
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
		v, parent := viewAt(p, reads, writes), view{readable: true}
		if p != "/" {
			parent = viewAt(filepath.Dir(p), reads, writes)
		}
		if l, ok := links[p]; ok {
			// A link matters where the command could remove or replace
			// it: in a directory it may write and can see. A link to
			// nothing matters wherever it is seen: writing through it
			// creates its target.
			if parent.readable && (parent.writable || l.kind == MaskLink) {
				b.plan.Mounts = append(b.plan.Mounts, Mount{Kind: l.kind, Path: p, Why: l.why})
			}
			continue
		}
		why := ruleWhy(p, reads, writes, pins)
		switch {
		case !v.readable && parent.readable:
			kind := MaskDir
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				kind = MaskFile
			}
			b.plan.Mounts = append(b.plan.Mounts, Mount{Kind: kind, Path: p, Why: why})
		case !v.readable:
			// Already inside a hidden area.
		case !parent.readable || v.writable != parent.writable || (pins[p] != "" && v.writable):
			kind := BindReadOnly
			if v.writable {
				kind = BindWritable
			}
			b.plan.Mounts = append(b.plan.Mounts, Mount{Kind: kind, Path: p, Why: why})
		}
	}
	b.fillKeep()
}

// expandRootDeny turns a denyRead of "/" into one per child of "/", except
// /proc, /dev and /sys, which the sandbox provides itself (spec c.6): a
// mask over "/" would leave no root to build on.
func (b *builder) expandRootDeny() {
	for _, r := range b.reads {
		if r.path == "/" && r.allow {
			return // an allow at the same path wins: the deny hides nothing
		}
	}
	var out []rule
	for _, r := range b.reads {
		if r.path != "/" || r.allow {
			out = append(out, r)
			continue
		}
		entries, _ := os.ReadDir("/")
		for _, e := range entries {
			switch e.Name() {
			case "proc", "dev", "sys":
				continue
			}
			p := "/" + e.Name()
			if real, err := filepath.EvalSymlinks(p); err == nil && real == p {
				out = append(out, rule{path: p, why: r.why})
			}
		}
	}
	b.reads = out
}

func index(rules []rule) map[string][]rule {
	m := map[string][]rule{}
	for _, r := range rules {
		m[r.path] = append(m[r.path], r)
	}
	return m
}

// ancestors yields p, its parent, ..., "/".
func ancestors(p string, yield func(string) bool) {
	for {
		if !yield(p) || p == "/" {
			return
		}
		p = filepath.Dir(p)
	}
}

func viewAt(p string, reads, writes map[string][]rule) view {
	v := view{readable: true}
	decided := false
	allowed, denied := false, false
	ancestors(p, func(a string) bool {
		if rs, ok := reads[a]; ok && !decided {
			decided = true
			v.readable = false
			for _, r := range rs {
				v.readable = v.readable || r.allow
			}
		}
		for _, r := range writes[a] {
			if r.allow {
				allowed = true
			} else {
				denied = true
			}
		}
		return true
	})
	v.writable = allowed && !denied
	return v
}

// ruleWhy names the rules at p, for the plan's readers.
func ruleWhy(p string, reads, writes map[string][]rule, pins map[string]string) string {
	var whys []string
	seen := map[string]bool{}
	for _, r := range append(append([]rule(nil), reads[p]...), writes[p]...) {
		if !seen[r.why] {
			seen[r.why] = true
			whys = append(whys, r.why)
		}
	}
	if pin := pins[p]; pin != "" {
		whys = append(whys, "pinned: "+pin)
	}
	return strings.Join(whys, "; ")
}

// pinned returns the directories between each protected (deny-write) path
// or pinned symlink and the write root above it. They become mount points
// of themselves, so that renaming one fails with EBUSY: "mv .git .git2"
// followed by a fresh .git/hooks would otherwise move the protection aside.
func (b *builder) pinned(writes map[string][]rule) map[string]string {
	pins := map[string]string{}
	pin := func(p string) {
		for d := filepath.Dir(p); d != "/"; d = filepath.Dir(d) {
			if hasAllow(writes[d]) {
				break // the write root itself gets its own mount
			}
			if pins[d] == "" {
				pins[d] = "contains " + p
			}
		}
	}
	for _, w := range b.writes {
		if !w.allow {
			pin(w.path)
		}
	}
	for _, l := range b.links {
		pin(l.path)
	}
	return pins
}

func hasAllow(rs []rule) bool {
	for _, r := range rs {
		if r.allow {
			return true
		}
	}
	return false
}

// fillKeep records, in each MaskDir, the mount points that the mounts
// directly beneath it need: the mask is empty, so the init must create
// them inside it (in its private staging area, never in the user's tree).
// The mount that provides a mount's point is the latest one at its
// nearest ancestor path: mounts go from shallow to deep, so it came
// before.
func (b *builder) fillKeep() {
	ms := b.plan.Mounts
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
