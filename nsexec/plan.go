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
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/landlock"
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
}

// Skip is a rule that made no mount, and why.
type Skip struct {
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

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
		if within(path, m.Path) {
			w = m.Kind == BindWritable
		}
	}
	return w
}

// Env is where a plan is made.
type Env struct {
	Home string // "" disables "~" entries and the home walk
	Cwd  string
	// Writable lists paths srt itself makes writable (the per-run temp
	// dir); they take part like allowWrite entries.
	Writable []string
	// Private is srt's own directory of run dirs: read-only inside
	// whatever the rules say, but for Writable beneath it, so that a
	// command allowed to write its parent (allowWrite: ["/tmp"]) can
	// neither delete other runs' directories, nor their sockets and
	// temp files, nor lock srt out of it.
	Private string
}

// Protected names (spec c.5): never writable wherever they are found.
var (
	protectedFiles  = []string{".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".ripgreprc", ".mcp.json"}
	protectedDirs   = []string{".vscode", ".idea"}
	protectedClaude = []string{"commands", "agents"} // inside .claude
)

// maxGlobVisits bounds the walk that matches one glob against the disk.
const maxGlobVisits = 1_000_000

// rule is one expanded, resolved entry.
type rule struct {
	path  string
	allow bool
	why   string
}

// Build computes the mount plan for s in env. It reads the disk (to
// resolve symlinks, match globs and find protected names) but changes
// nothing.
func Build(s *config.Settings, env Env) (*Plan, error) {
	b := &builder{env: env, plan: &Plan{}}
	fsys := s.Filesystem
	if fsys.Disabled {
		// Everything writable, no protected names (spec c.8).
		b.plan.Mounts = append(b.plan.Mounts, Mount{Kind: BindWritable, Path: "/", Why: "filesystem.disabled"})
		return b.plan, nil
	}
	for _, w := range env.Writable {
		b.writes = append(b.writes, rule{path: w, allow: true, why: "srt: per-run temp dir"})
	}
	if err := b.add("allowWrite", fsys.AllowWrite, true, true); err != nil {
		return nil, err
	}
	if err := b.add("denyWrite", fsys.DenyWrite, false, true); err != nil {
		return nil, err
	}
	if err := b.add("denyRead", fsys.DenyRead, false, false); err != nil {
		return nil, err
	}
	if err := b.add("allowRead", fsys.AllowRead, true, false); err != nil {
		return nil, err
	}
	b.addDefaultWritable()
	// A writable path is readable too, also inside a denied area (spec c.6).
	for _, w := range b.writes {
		if w.allow {
			b.reads = append(b.reads, rule{path: w.path, allow: true, why: w.why})
		}
	}
	b.protect(s)
	b.compute()
	b.keepPrivate()
	return b.plan, nil
}

// keepPrivate makes env.Private read-only where the rules left it
// writable, and re-opens the Writable paths beneath it. The mounts come
// last, so they land on top of the rules' own.
func (b *builder) keepPrivate() {
	p := b.env.Private
	if p == "" {
		return
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	if !viewAt(p, index(b.reads), index(b.writes)).writable {
		return
	}
	b.plan.Mounts = append(b.plan.Mounts, Mount{Kind: BindReadOnly, Path: p, Why: "srt: the run dirs of every run"})
	for _, w := range b.env.Writable {
		if within(w, p) {
			b.plan.Mounts = append(b.plan.Mounts, Mount{Kind: BindWritable, Path: w, Why: "srt: per-run temp dir"})
		}
	}
}

// defaultWritable are the reference's default write paths (spec c.4) that
// exist on disk; /dev is the sandbox's own and TMPDIR is per run.
func defaultWritable(home string) []string {
	paths := []string{"/tmp/claude"}
	if home != "" {
		paths = append(paths, filepath.Join(home, ".npm/_logs"), filepath.Join(home, ".claude/debug"))
	}
	return paths
}

// addDefaultWritable grants the default write paths that exist, unless a
// denyRead hides them (spec c.4: an allowRead beneath re-opens them).
func (b *builder) addDefaultWritable() {
	reads := index(b.reads)
	for _, p := range defaultWritable(b.env.Home) {
		real, why := b.resolve(p, true)
		if why != "" {
			continue
		}
		if !viewAt(real, reads, nil).readable {
			b.skip("default write path "+p, "hidden by denyRead")
			continue
		}
		b.writes = append(b.writes, rule{path: real, allow: true, why: "default write path " + p})
	}
}

type builder struct {
	env    Env
	plan   *Plan
	reads  []rule
	writes []rule
	links  []linkRule
}

func (b *builder) skip(rule, why string) {
	b.plan.Skipped = append(b.plan.Skipped, Skip{Rule: rule, Why: why})
}

// add expands one settings list into rules.
func (b *builder) add(list string, entries []config.PathEntry, allow, write bool) error {
	for i, e := range entries {
		name := fmt.Sprintf("filesystem.%s.%d %q", list, i, e.Path)
		p, ok, err := config.Expand(e, b.env.Home, b.env.Cwd)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if !ok {
			b.skip(name, "names nothing: HOME is empty")
			continue
		}
		var paths []string
		if p.Glob != nil {
			paths, err = matchGlob(p.Glob, !allow)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if len(paths) == 0 {
				b.skip(name, "the pattern matches nothing on disk now")
			}
		} else {
			paths = []string{p.Path}
		}
		for _, lexical := range paths {
			real, why := b.resolve(lexical, allow)
			if why != "" {
				b.skip(name, why)
				continue
			}
			r := rule{path: real, allow: allow, why: name}
			if write {
				b.writes = append(b.writes, r)
			} else {
				b.reads = append(b.reads, r)
			}
		}
	}
	return nil
}

// resolve turns a lexical path into the real, symlink-free path that a
// rule applies to, or says why the rule applies to nothing.
//
// A deny follows symlinks: a rule on a link protects what it points to. A
// grant refuses to follow a link that the sandbox could have written (one
// inside a writable root): a command could plant "build -> ~/.ssh" and a
// later run would hand it the target.
func (b *builder) resolve(lexical string, grant bool) (string, string) {
	real, err := filepath.EvalSymlinks(lexical)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "does not exist (a rule on a missing path hides or grants nothing in this run)"
		}
		return "", fmt.Sprintf("cannot be resolved: %v", err)
	}
	if strings.HasPrefix(real, "/proc/") || real == "/proc" || real == "/dev" || strings.HasPrefix(real, "/dev/") {
		return "", "is provided by the sandbox itself (/proc and /dev are private)"
	}
	if grant && real != filepath.Clean(lexical) {
		if link := b.plantableLink(lexical); link != "" {
			return "", fmt.Sprintf("goes through the symlink %s, which lies in a writable area and could have been planted; grant the target itself", link)
		}
	}
	return real, ""
}

// plantableLink returns the first symlink on lexical's path whose directory
// is writable under the rules so far, or "".
func (b *builder) plantableLink(lexical string) string {
	p := "/"
	for _, part := range strings.Split(strings.TrimPrefix(filepath.Clean(lexical), "/"), "/") {
		next := filepath.Join(p, part)
		if fi, err := os.Lstat(next); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			for _, w := range b.writes {
				dir, err := filepath.EvalSymlinks(p)
				if err == nil && w.allow && within(dir, w.path) {
					return next
				}
			}
		}
		resolved, err := filepath.EvalSymlinks(next)
		if err != nil {
			return ""
		}
		p = resolved
	}
	return ""
}

// within reports whether p is base or beneath it.
func within(p, base string) bool {
	// Without building base+"/": this runs for every directory of a walk
	// against every rule.
	return p == base || base == "/" || len(p) > len(base) && p[len(base)] == '/' && strings.HasPrefix(p, base)
}

// matchGlob lists the existing paths that match g. For a deny, a matching
// directory is not searched further: hiding it hides what is beneath.
func matchGlob(g *config.Glob, deny bool) ([]string, error) {
	var out []string
	visits := 0
	root := g.Root()
	if _, err := os.Lstat(root); err != nil {
		return nil, nil
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && g.Match(p) {
				out = append(out, p)
			}
			return nil // unreadable: only what can be listed is matched
		}
		if visits++; visits > maxGlobVisits {
			return fmt.Errorf("glob %q visits more than %d paths; make it more specific", g, maxGlobVisits)
		}
		if p == "/proc" || p == "/sys" || p == "/dev" {
			return fs.SkipDir
		}
		if g.Match(p) {
			out = append(out, p)
			if deny && d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	return out, err
}

// protect adds the protected names found under cwd, home and every
// writable root, down to mandatoryDenySearchDepth. A name that is a
// symlink is protected where it leads: every symlink on the way is pinned
// (a command could otherwise re-aim one), the target is read-only, and a
// link whose target is missing is masked.
func (b *builder) protect(s *config.Settings) {
	roots := map[string]bool{}
	for _, r := range []string{b.env.Cwd, b.env.Home} {
		if r == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(r); err == nil {
			roots[real] = true
		}
	}
	for _, w := range b.writes {
		if w.allow {
			roots[w.path] = true
		}
	}
	sorted := make([]string, 0, len(roots))
	for r := range roots {
		sorted = append(sorted, r)
	}
	sort.Strings(sorted)
	seen := map[string]bool{}
	deny := func(p, why string) {
		if !seen[p] {
			seen[p] = true
			b.writes = append(b.writes, rule{path: p, allow: false, why: why})
		}
	}
	linked := map[string]bool{}
	for _, root := range sorted {
		if !b.writableSomewhereUnder(root) {
			continue // nothing beneath can be written: no name there can change
		}
		for _, f := range findProtected(root, s.MandatoryDenySearchDepth, s.Filesystem.AllowGitConfig, b.writableSomewhereUnder) {
			why := "protected name " + f.path
			if f.inside != "" {
				why = "protected name " + f.inside + " (a symlink in it)"
			}
			if !f.linked {
				deny(f.path, why) // no symlink on its way: the walk went through real directories
				continue
			}
			real, err := b.follow(f.path, why, linked)
			if err == nil && !f.linkOnly {
				deny(real, why)
			}
		}
	}
}

// follow resolves a protected path, recording every symlink on its way:
// each is pinned, and the first is masked when the path leads nowhere.
func (b *builder) follow(path, why string, linked map[string]bool) (string, error) {
	real, links, err := resolveChain(path)
	for i, l := range links {
		if linked[l] {
			continue
		}
		linked[l] = true
		kind := PinLink
		if err != nil && i == 0 {
			kind = MaskLink // it leads nowhere now: nothing may be created through it
		}
		b.links = append(b.links, linkRule{path: l, kind: kind, why: why})
	}
	if err != nil && len(links) == 0 {
		b.skip(why, fmt.Sprintf("cannot be resolved: %v", err))
	}
	return real, err
}

// maxLinkWalk bounds the entries walkLinks reads in one protected
// directory.
const maxLinkWalk = 10_000

// walkLinks calls fn for every symlink beneath dir (not following any).
func walkLinks(dir string, fn func(string)) {
	seen := 0
	var walk func(string)
	walk = func(d string) {
		var subdirs []string
		readDir(d, func(name []byte, kind entryKind) {
			if seen++; seen > maxLinkWalk {
				return
			}
			switch kind {
			case kindLink:
				fn(filepath.Join(d, string(name)))
			case kindDir:
				subdirs = append(subdirs, filepath.Join(d, string(name)))
			}
		})
		for _, s := range subdirs {
			walk(s)
		}
	}
	walk(dir)
}

// linkRule is a symlink that gets a PinLink or MaskLink mount.
type linkRule struct {
	path string
	kind MountKind
	why  string
}

// maxLinks bounds the symlinks resolveChain follows, as the kernel does.
const maxLinks = 40

// resolveChain resolves path like filepath.EvalSymlinks and also returns
// every symlink it went through, in order: the lexical path of each link
// object, its directory resolved. With an error (a missing target, a
// loop), the links up to the failure are returned.
func resolveChain(path string) (string, []string, error) {
	var links []string
	resolved := "/"
	rest := strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/")
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", links, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if len(links) == maxLinks {
			return "", links, fmt.Errorf("%s: too many levels of symbolic links", path)
		}
		links = append(links, next)
		target, err := os.Readlink(next)
		if err != nil {
			return "", links, err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, links, nil
}

// writableSomewhereUnder reports whether some allow-write rule covers root
// or lies beneath it.
func (b *builder) writableSomewhereUnder(root string) bool {
	for _, w := range b.writes {
		if w.allow && (within(root, w.path) || within(w.path, root)) {
			return true
		}
	}
	return false
}

// found is a protected name the walk found: protect what path leads to,
// or, with linkOnly, only the symlinks on its way (a symlinked .git or
// .claude, whose protected contents are found too). linked says that a
// symlink is on its way or at its end; inside, that it is a symlink in
// the protected directory inside.
type found struct {
	path     string
	linkOnly bool
	linked   bool
	inside   string
}

// findProtected walks root for protected names whose path relative to root
// has at most depth components (for .git/hooks and .claude/commands, the
// .git or .claude directory counts). Matching ignores case. A .git directory
// protects its hooks (and config, unless gitConfig), a .git file (a
// worktree or submodule pointer) protects itself; a .git or .claude that is
// a symlink to a directory is looked into like one.
//
// Only directories that hold something writable are read (relevant):
// a name where nothing can be written cannot change, so the walk costs
// nothing in a large read-only tree.
//
// Past the first parallelAfter directories (a small tree stays on one
// goroutine, which is faster there), directories are read by a few
// goroutines at once: the cost is the kernel's, per directory. The result
// is sorted.
const parallelAfter = 256

func findProtected(root string, depth int, gitConfig bool, relevant func(string) bool) []found {
	var (
		mu  sync.Mutex
		out []found
		wg  sync.WaitGroup
	)
	sem := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	var read atomic.Int64
	var walk func(dir string, level int)
	walk = func(dir string, level int) {
		if !relevant(dir) {
			return
		}
		read.Add(1)
		var hits []found
		var subdirs []string
		err := readDir(dir, func(name []byte, kind entryKind) {
			// Every protected name starts with a dot: only those are
			// looked at, and only those and directories become strings.
			var lower string
			if name[0] == '.' {
				lower = strings.ToLower(string(name))
			}
			path := func() string { return filepath.Join(dir, string(name)) }
			isDir, isLink := kind == kindDir, kind == kindLink
			switch {
			case lower == "":
			case (kind == kindRegular || isLink) && contains(protectedFiles, lower):
				hits = append(hits, found{path: path(), linked: isLink})
			case lower == ".git" && (isDir || isLink):
				p := path()
				inside := p
				if isLink {
					real, err := filepath.EvalSymlinks(p)
					fi, statErr := os.Stat(p)
					if err != nil || statErr != nil || !fi.IsDir() {
						hits = append(hits, found{path: p, linked: true}) // a linked pointer file, or nothing
						return
					}
					hits = append(hits, found{path: p, linkOnly: true, linked: true})
					inside = real
				}
				hits = append(hits, gitProtected(p, inside, isLink, gitConfig)...)
				return // objects, refs and the index stay writable; nothing else inside is sourced
			case lower == ".git" && kind == kindRegular:
				hits = append(hits, found{path: path()})
			case (isDir || isLink) && contains(protectedDirs, lower):
				hits = append(hits, protectedDir(path(), isLink)...)
				return
			case (isDir || isLink) && lower == ".claude":
				p := path()
				inside := p
				if isLink {
					real, err := filepath.EvalSymlinks(p)
					hits = append(hits, found{path: p, linkOnly: true, linked: true})
					if err != nil {
						return
					}
					inside = real
				}
				for _, sub := range protectedClaude {
					for _, e := range existingCaseless(inside, sub) {
						hits = append(hits, protectedDir(filepath.Join(inside, e), false)...)
					}
				}
			}
			if isDir && level < depth {
				subdirs = append(subdirs, path())
			}
		})
		if err != nil {
			return
		}
		for _, p := range subdirs {
			if read.Load() < parallelAfter {
				walk(p, level+1)
				continue
			}
			select {
			case sem <- struct{}{}:
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					walk(p, level+1)
				}()
			default: // enough readers already: this one reads it
				walk(p, level+1)
			}
		}
		if len(hits) > 0 {
			mu.Lock()
			out = append(out, hits...)
			mu.Unlock()
		}
	}
	if depth >= 1 {
		walk(root, 1)
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// gitProtected lists the protected entries of the .git directory at p
// (read at inside, where p leads; linked: through a symlink): hooks, and
// config unless gitConfig.
func gitProtected(p, inside string, linked, gitConfig bool) []found {
	var out []found
	names := []string{"hooks"}
	if !gitConfig {
		names = append(names, "config")
	}
	for _, n := range names {
		fi, err := os.Lstat(filepath.Join(inside, n))
		if err != nil {
			continue
		}
		isLink := fi.Mode()&fs.ModeSymlink != 0
		isDir := fi.IsDir()
		if isLink {
			st, err := os.Stat(filepath.Join(inside, n))
			isDir = err == nil && st.IsDir()
		}
		if isDir {
			out = append(out, protectedDir(filepath.Join(p, n), linked || isLink)...)
		} else {
			out = append(out, found{path: filepath.Join(p, n), linked: linked || isLink})
		}
	}
	return out
}

// protectedDir is a protected directory at p (a symlink, with link) and
// the symlinks beneath it: a hook linked to a script kept in the project
// leads to what the host runs too.
func protectedDir(p string, link bool) []found {
	out := []found{{path: p, linked: link}}
	dir := p
	if link {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return out
		}
		dir = real
	}
	walkLinks(dir, func(l string) { out = append(out, found{path: l, linked: true, inside: p}) })
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// existingCaseless returns the names of dir's entries that equal name
// ignoring case and are directories or symlinks.
func existingCaseless(dir, name string) []string {
	var out []string
	err := readDir(dir, func(entry []byte, kind entryKind) {
		if (kind == kindDir || kind == kindLink) && strings.EqualFold(string(entry), name) {
			out = append(out, string(entry))
		}
	})
	if err != nil {
		return nil
	}
	return out
}

// entryKind is what a directory entry is, as readDir reports it.
type entryKind uint8

// kindOf is the kind of an entry of type t (fs.DirEntry.Type).
func kindOf(t fs.FileMode) entryKind {
	switch {
	case t.IsDir():
		return kindDir
	case t.IsRegular():
		return kindRegular
	case t&fs.ModeSymlink != 0:
		return kindLink
	}
	return kindOther
}

const (
	kindOther entryKind = iota
	kindDir
	kindRegular
	kindLink // a symlink, whatever it points to
)

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
			if (m.Kind == MaskDir || m.Kind == MaskFile) && m.Path != w.Path && within(m.Path, w.Path) {
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
		switch m.Kind {
		case MaskDir, MaskFile:
			in.Hidden = append(in.Hidden, m.Path)
		}
	}
	for _, m := range p.Mounts {
		switch m.Kind {
		case BindWritable:
			in.Writable = append(in.Writable, m.Path)
		case BindReadOnly:
			for _, h := range in.Hidden {
				if strings.HasPrefix(m.Path, strings.TrimSuffix(h, "/")+"/") {
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
