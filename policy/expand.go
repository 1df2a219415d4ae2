package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/srt-go/srt/config"
)

// defaultWritable are the reference's default write paths (spec c.4) that
// exist on disk; /dev is the sandbox's own and TMPDIR is per run. On
// Windows /tmp/claude names no volume (TEMP is the run's own there too).
func defaultWritable(home string) []string {
	var paths []string
	if !windowsPaths {
		paths = append(paths, "/tmp/claude")
	}
	if home != "" {
		paths = append(paths, path.Join(home, ".npm/_logs"), path.Join(home, ".claude/debug"))
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
		if !viewAt(real, reads, nil).Readable {
			b.skip("default write path "+p, "hidden by denyRead")
			continue
		}
		b.writes = append(b.writes, Rule{Path: real, Allow: true, Why: "default write path " + p})
	}
}

// add expands one settings list into rules.
func (b *builder) add(list string, entries []config.PathEntry, allow, write bool) error {
	for i, e := range entries {
		name := fmt.Sprintf("filesystem.%s.%d %q", list, i, e.Path)
		p, ok, err := config.Expand(e, b.osHome, b.osCwd)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if !ok {
			b.skip(name, "names nothing: HOME is empty")
			continue
		}
		if !allow {
			b.later(p, !write, name)
		}
		var paths []string
		if p.Glob != nil {
			paths, err = matchGlob(p.Glob, !allow)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if len(paths) == 0 {
				why := "the pattern matches nothing on disk now"
				if !allow {
					why += "; the path guard judges what matches it later"
				}
				b.skip(name, why)
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
			r := Rule{Path: real, Allow: allow, Why: name}
			if write {
				b.writes = append(b.writes, r)
			} else {
				b.reads = append(b.reads, r)
			}
		}
	}
	return nil
}

// later keeps a deny entry for the path guard.
func (b *builder) later(p config.Path, read bool, why string) {
	r := LaterRule{Read: read, Why: why}
	if p.Glob != nil {
		r.Glob, r.Pattern = p.Glob, p.Glob.String()
		r.Root = resolveExisting(p.Glob.Root())
		// As spelled too: the host writes by the spelled path, so a
		// symlink on it that the command re-made would lead its files
		// elsewhere; and a directory put in the link's place holds
		// matches (kept only where the command could; see spelled).
		if spelled := p.Glob.Root(); spelled != r.Root {
			t := r
			t.Root = spelled
			if _, t.links, _ = resolveChain(spelled); throughLinks(t.links) {
				b.pol.Later = append(b.pol.Later, t)
			}
		}
	} else {
		r.Path = resolveExisting(p.Path)
		if spelled := config.Clean(p.Path); spelled != r.Path && spelled != resolveFollowing(p.Path) {
			t := r
			t.Path, t.Existed = spelled, false
			if _, t.links, _ = resolveChain(spelled); throughLinks(t.links) {
				b.pol.Later = append(b.pol.Later, t)
			}
		}
		// Through symlinks: a dangling link hides nothing at launch.
		fi, err := stat(p.Path)
		r.Existed, r.file = err == nil, err == nil && !fi.IsDir()
		// A deny on a link protects what it points to, also when that
		// does not exist yet and appears while the command runs.
		if target := resolveFollowing(p.Path); target != r.Path {
			t := r
			t.Path = target
			b.pol.Later = append(b.pol.Later, t)
		}
	}
	b.pol.Later = append(b.pol.Later, r)
}

// throughLinks says whether an entry spelled otherwise than it resolves,
// through links, is a spelling through symlinks to keep as spelled. On
// Windows one that went through none is the same path in another case,
// or by a short (8.3) name: the resolved entry is that path already.
func throughLinks(links []string) bool { return !windowsPaths || links != nil }

// resolveFollowing is resolveExisting that also follows a last symlink
// whose target does not exist (yet), as an open of it would once it does.
func resolveFollowing(p string) string {
	for hops := 0; hops < 40; hops++ {
		p = resolveExisting(p)
		fi, err := lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return p
		}
		target, err := readlink(p)
		if err != nil {
			return p
		}
		if !path.IsAbs(target) {
			target = config.Join(config.Dir(p), target)
		}
		p = target
	}
	return p
}

// maxHiddenWalk bounds the files readGuard looks at under the hidden trees.
const maxHiddenWalk = 20_000

// spelled keeps an entry as spelled through symlinks only where the
// command could make one of those symlinks again (it lies in a writable
// tree): /home -> /var/home, outside every one, changes nothing, and
// would make every read judged for nothing.
func (b *builder) spelled() {
	kept := b.pol.Later[:0]
	for _, r := range b.pol.Later {
		if r.links != nil && !slices.ContainsFunc(r.links, func(l string) bool {
			return slices.ContainsFunc(b.writes, func(w Rule) bool { return w.Allow && Under(l, w.Path) }) ||
				slices.ContainsFunc(b.pol.Writable, func(w string) bool { return Under(l, w) })
		}) {
			continue
		}
		kept = append(kept, r)
	}
	b.pol.Later = kept
}

// readGuard decides whether reads need judging while the command runs,
// and finds the hidden files with other names.
func (b *builder) readGuard() {
	for _, r := range b.pol.Later {
		switch {
		case !r.Read:
		case r.Glob != nil && b.pol.ReadGuard == "":
			b.pol.ReadGuard = r.Why + " is a pattern: a file made later may match it"
		case r.Glob == nil && !r.Existed && b.pol.ReadGuard == "":
			b.pol.ReadGuard = r.Why + " does not exist yet"
		case r.file && b.pol.ReadGuard == "":
			// The mask over a file holds only while that file does: one
			// the host replaces (an editor's save renames a new file over
			// it) is the kernel's to unmask.
			b.pol.ReadGuard = r.Why + " is a file, which the host may replace"
		case r.Glob == nil && b.pol.ReadGuard == "" && (len(r.links) > 0 || b.inWritableTree(r.Path)):
			// So is the mask over a directory: a git checkout, an rm -rf
			// and mkdir, or a rename by the host puts a new directory at
			// the path, which the mount does not cover; nor does Landlock
			// in a writable tree, which it grants whole; nor does either
			// a symlink on the way the host re-aims.
			b.pol.ReadGuard = r.Why + " lies in a writable tree, where the host may replace it"
		}
	}
	if b.env.Inode == nil {
		return
	}
	p := b.pol
	p.index()
	visits := 0
	for _, r := range b.reads {
		if r.Allow {
			continue
		}
		walkDir(r.Path, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if visits++; visits > maxHiddenWalk {
				return fs.SkipAll
			}
			if !d.Type().IsRegular() || p.View(path).Readable {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			if id, nlink, ok := b.env.Inode(fi); ok && nlink > 1 {
				if p.HiddenInodes == nil {
					p.HiddenInodes = map[FileID]string{}
				}
				p.HiddenInodes[id] = r.Why
			}
			return nil
		})
	}
	if visits > maxHiddenWalk {
		b.skip("hard links to hidden files", fmt.Sprintf("only the first %d files under denyRead entries were looked at", maxHiddenWalk))
	}
	if len(p.HiddenInodes) > 0 && p.ReadGuard == "" {
		p.ReadGuard = fmt.Sprintf("%d hidden files have other names (hard links), which may lie in readable trees", len(p.HiddenInodes))
	}
}

// inWritableTree reports whether path lies strictly beneath a tree the
// command may write (whose grant Landlock gives whole).
func (b *builder) inWritableTree(path string) bool {
	for _, w := range b.writes {
		if w.Allow && w.Path != path && Under(path, w.Path) {
			return true
		}
	}
	return false
}

// resolveExisting resolves the symlinks of the longest existing part of
// an absolute path, keeping the rest as it is.
func resolveExisting(p string) string {
	p = config.Clean(p)
	rest := ""
	for {
		if real, err := evalSymlinks(p); err == nil {
			return path.Join(real, rest)
		}
		parent := config.Dir(p)
		if parent == p {
			return path.Join(p, rest)
		}
		rest = path.Join(path.Base(p), rest)
		p = parent
	}
}

// resolve turns a lexical path into the real, symlink-free path that a
// rule applies to, or says why the rule applies to nothing.
//
// A deny follows symlinks: a rule on a link protects what it points to. A
// grant refuses to follow a link that the sandbox could have written (one
// inside a writable root): a command could plant "build -> ~/.ssh" and a
// later run would hand it the target.
func (b *builder) resolve(lexical string, grant bool) (string, string) {
	real, err := evalSymlinks(lexical)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if grant {
				return "", "does not exist (a grant on a missing path grants nothing in this run)"
			}
			return "", "does not exist now: no mount hides it; the path guard keeps the command from making it or writing it, and (a denyRead) from reading it once it appears"
		}
		return "", fmt.Sprintf("cannot be resolved: %v", err)
	}
	if strings.HasPrefix(real, "/proc/") || real == "/proc" || real == "/dev" || strings.HasPrefix(real, "/dev/") {
		return "", "is provided by the sandbox itself (/proc and /dev are private)"
	}
	if grant && real != config.Clean(lexical) {
		if link := b.plantableLink(lexical); link != "" {
			return "", fmt.Sprintf("goes through the symlink %s, which lies in a writable area and could have been planted; grant the target itself", config.ToOS(link))
		}
	}
	return real, ""
}

// plantableLink returns the first symlink on lexical's path whose directory
// is writable under the rules so far, or "".
func (b *builder) plantableLink(lexical string) string {
	p := volume(lexical)
	for _, part := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(config.Clean(lexical), p), "/"), "/") {
		next := path.Join(p, part)
		if fi, err := lstat(next); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			for _, w := range b.writes {
				dir, err := evalSymlinks(p)
				if err == nil && w.Allow && Under(dir, w.Path) {
					return next
				}
			}
		}
		resolved, err := evalSymlinks(next)
		if err != nil {
			return ""
		}
		p = resolved
	}
	return ""
}

// matchGlob lists the existing paths that match g. For a deny, a matching
// directory is not searched further: hiding it hides what is beneath.
func matchGlob(g *config.Glob, deny bool) ([]string, error) {
	var out []string
	visits := 0
	root := g.Root()
	if _, err := lstat(root); err != nil {
		return nil, nil
	}
	err := walkDir(root, func(p string, d fs.DirEntry, err error) error {
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

// expandRootDeny turns a denyRead of "/" into one per child of "/", except
// /proc, /dev and /sys, which the sandbox provides itself (spec c.6): a
// mask over "/" would leave no root to build on. On Windows a deny of a
// volume's root (C:\, or "/", which is the working directory's) likewise
// becomes one per child of that root, all of them: the root itself stays
// listable, as "/" does.
func (b *builder) expandRootDeny() {
	allowed := map[string]bool{}
	for _, r := range b.reads {
		if r.Allow {
			allowed[r.Path] = true
		}
	}
	var out []Rule
	for _, r := range b.reads {
		root := r.Path
		if root != volume(root) || r.Allow || allowed[root] {
			// An allow at the same path wins: the deny hides nothing.
			out = append(out, r)
			continue
		}
		entries, _ := readDir(root)
		for _, e := range entries {
			switch e.Name() {
			case "proc", "dev", "sys":
				if !windowsPaths {
					continue
				}
			}
			p := path.Join(root, e.Name())
			if real, err := evalSymlinks(p); err == nil && real == p {
				out = append(out, Rule{Path: p, Why: r.Why})
			}
		}
	}
	b.reads = out
}
