package nsexec

import (
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/srt-go/srt/policy"
	"golang.org/x/sys/unix"
)

// The path guard: deny entries for what appears after launch (a
// denyRead or denyWrite path made later, a pattern's new match), and what
// a symlink or a moved directory would lead away from them.

// deniedLater refuses (EACCES) making or writing full when a denyRead
// or denyWrite entry covers it: one that names a path made after the
// launch, or a pattern it matches now.
func (k *call) deniedLater(op, full string) unix.Errno {
	r, ok := k.later(full)
	if !ok {
		return 0
	}
	return k.reportLater(op, full, r)
}

// policyLater reports whether a deny entry of the settings keeps full
// from being made or written now (not a repository's hooks).
func (k *call) policyLater(full string) bool {
	_, denied := k.pol.Guard.Later(full)
	return denied
}

// later returns the rule that keeps full from being made or written
// while the command runs: a deny entry's, or a repository's hooks'
// (hooksLater).
func (k *call) later(full string) (policy.LaterRule, bool) {
	if r, ok := k.pol.Guard.Later(full); ok {
		return r, true
	}
	return k.hooksLater(full)
}

// leadsAway says why a symlink at full (physical) holding target would
// send elsewhere what the guard keeps beneath full, if it would: what
// the host later writes at a deny entry's path, or at a match of its
// pattern, would land where the link leads, and the command read or
// write it there; a repository's hooks; where a landed .git file or
// commondir leads (pathguard.Decider.LeadsAway).
func (k *call) leadsAway(full, target string) (string, bool) {
	if r, ok := k.redirects(full, target); ok {
		return r.Why + " lies beneath: a symlink here would lead it elsewhere", true
	}
	if k.hooksBeneath(full) {
		return "a repository's hooks (core.hooksPath, a hook's script, an included config) lie at or beneath: a symlink here would lead them where the guard does not keep them", true
	}
	if k.targetAbove(full) {
		return "a .git file or a commondir leads here: a symlink would lead it to another repository", true
	}
	return "", false
}

// redirects returns the deny entry a symlink at full holding target would
// send elsewhere: any symlink above a literal entry; one where a
// pattern's match may lie beneath, unless it leads where the same paths
// match too, or to a file that can never hold anything beneath it — and,
// either way, only through places whose later change the guard would
// judge against that entry (a directory or symlink on the way that the
// command could replace or re-aim unjudged would let it lead elsewhere
// later).
func (k *call) redirects(full, target string) (policy.LaterRule, bool) {
	p := k.pol.Guard.Policy
	if p == nil {
		return policy.LaterRule{}, false
	}
	var above []policy.LaterRule
	for _, r := range p.Later {
		if r.Above(full) {
			if r.Glob == nil {
				return r, true
			}
			above = append(above, r)
		}
	}
	if len(above) == 0 {
		return policy.LaterRule{}, false
	}
	w := k.leadsTo(path.Dir(full), target)
	for _, r := range above {
		for _, c := range w.changeable {
			if !r.Above(c) {
				return r, true
			}
		}
		if !w.leaf && r.Redirects(full, w.to) {
			return r, true
		}
	}
	return policy.LaterRule{}, false
}

// walk is where a symlink leads.
type walk struct {
	// to is where it leads now, physical ("" when that cannot be told for
	// good: a ".." after a name, a name in /proc or /dev/fd, which each
	// process that follows it reads for itself).
	to string
	// leaf: a file (not a directory) on a read-only mount, beneath which
	// nothing can ever be (a virtualenv's python, linked to /usr/bin's).
	leaf bool
	// changeable are the places on the way the command may replace or
	// re-aim: a writable directory or symlink it went through.
	changeable []string
}

// leadsTo walks, component by component in the command's root, the way a
// symlink in the directory dir (physical) holding target leads now.
func (k *call) leadsTo(dir, target string) walk {
	var w walk
	root, e := k.rootFD()
	if e != 0 {
		return w
	}
	cur := dir
	var comps []string
	push := func(t string) bool {
		if t == "" || !settledDots(t) {
			return false
		}
		if strings.HasPrefix(t, "/") {
			cur = "/"
		}
		comps = append(strings.Split(t, "/"), comps...)
		return true
	}
	if !push(target) {
		return w
	}
	for hops := 0; len(comps) > 0; {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		if policy.Under(next, "/proc") || policy.Under(next, "/dev/fd") || strings.HasPrefix(next, "/dev/std") {
			return walk{}
		}
		fd, err := openat2(root, next, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			// Leads nowhere yet: judged as it reads; what is made there
			// later is judged where it is made.
			w.to = path.Join(append([]string{next}, comps...)...)
			return w
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		ro := readOnlyFD(fd)
		if !ro && k.writable(next) {
			w.changeable = append(w.changeable, next)
		}
		kind := st.Mode & unix.S_IFMT
		if err != nil || kind != unix.S_IFLNK {
			unix.Close(fd)
			cur = next
			if kind != unix.S_IFDIR && len(comps) > 0 {
				w.to = path.Join(append([]string{next}, comps...)...)
				return w // not a directory: nothing beneath
			}
			w.leaf = err == nil && kind != unix.S_IFDIR && ro
			continue
		}
		t, err := readlinkat(fd, "")
		unix.Close(fd)
		if hops++; err != nil || hops > maxSymlinks || !push(t) {
			return walk{changeable: w.changeable}
		}
	}
	w.to = cur
	return w
}

// settledDots reports whether a symlink's target holds ".." only at its
// start, where it climbs from the link's own (physical) directory.
func settledDots(target string) bool {
	named := false
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if named {
				return false
			}
		default:
			named = true
		}
	}
	return true
}

func (k *call) reportLater(op, full string, r policy.LaterRule) unix.Errno {
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: laterReason(r)})
}

// laterReason says why a deny entry that applies after launch refuses.
func laterReason(r policy.LaterRule) string {
	if r.Read {
		return r.Why + " (a hidden path is never writable)"
	}
	return r.Why
}

// onReadOnlyMount reports whether the file at pl is on a read-only mount
// (it may be a mount of its own).
func (k *call) onReadOnlyMount(pl place) bool {
	fd, err := unix.Openat(pl.dir, pl.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return readOnlyFD(fd)
}

// readOnlyFD reports whether the file fd names is on a read-only mount.
func readOnlyFD(fd int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Flags&unix.ST_RDONLY != 0
}

// notWritable refuses (EACCES, reported) op on a path the fallback's
// plan does not make writable.
func (k *call) notWritable(op, path string) unix.Errno {
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: path, Reason: "not writable here (allowWrite)"})
}

// writable says whether the fallback's plan lets path be written; in the
// namespace sandbox the mounts decide, for the command and for srt alike.
func (k *call) writable(p string) bool {
	return k.pol.Writable == nil || k.pol.Writable(p) || slices.Contains(fallbackDevices, p)
}

// carried is Decider.Carried: what a directory moved whole from from to
// to carries that the guard keeps. Whole: a literal deny entry beneath
// either, or a repository's kept hooks (hooksBeneath). Name by name:
// a name beneath that a deny pattern near either path matches, a symlink
// beneath that would lead such an entry elsewhere (redirects), or an
// entry by the first name of a relative core.hooksPath of a work tree
// around to (namesMovedIn's).
func (k *call) carried(from, to string) (bool, func(rel string, e fs.DirEntry, target string) bool) {
	if k.hooksBeneath(from) || k.hooksBeneath(to) {
		return true, nil
	}
	var patterns []policy.LaterRule
	if p := k.pol.Guard.Policy; p != nil {
		for _, r := range p.Later {
			if r.Glob == nil {
				if r.Path != from && policy.Under(r.Path, from) || r.Path != to && policy.Under(r.Path, to) {
					return true, nil
				}
				continue
			}
			root := r.Root
			if root == "" {
				root = r.Glob.Root()
			}
			if policy.Under(from, root) || policy.Under(root, from) || policy.Under(to, root) || policy.Under(root, to) {
				patterns = append(patterns, r)
			}
		}
	}
	first := k.hooksFirstNames(to)
	if len(patterns) == 0 && len(first) == 0 {
		return false, nil
	}
	return false, func(rel string, e fs.DirEntry, target string) bool {
		if first[e.Name()] {
			return true
		}
		for _, pat := range patterns {
			if pat.CoversPath(from+"/"+rel) || pat.CoversPath(to+"/"+rel) {
				return true
			}
		}
		// A symlink moved with the directory is one made where it
		// lands.
		if len(patterns) > 0 && e.Type()&fs.ModeSymlink != 0 {
			if _, bad := k.redirects(to+"/"+rel, target); bad {
				return true
			}
		}
		return false
	}
}
