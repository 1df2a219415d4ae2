package pathguard

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// What a rename takes away from where a name was, what a directory moved
// whole carries, what a link's source may be, and where a .git or
// commondir made other than by writing may lead.

// reasonLastMark: removing or moving away the last mark of a git
// directory whose hooks or config are kept.
const reasonLastMark = "the last mark of a git directory whose hooks or config the guard keeps: without it they would be any directory's names"

// MoveAway decides moving the name at a away (a rename's source, either
// side of an exchange): never a protected name, a hooks directory or a
// repository's judged file (what the host made there during the run, a
// hook, a .bashrc, would become the command's to write under another
// name); never a .claude directory (what the host made in its commands
// or agents would no longer be judged by name); never the last mark of a
// git directory whose hooks or config are kept; never a .git whose
// repository keeps hooks by where they are (KeepsHooks): the guard would
// no longer find them around the work tree, and a .git file made there
// could name the repository again.
func (d Decider) MoveAway(a At) Verdict {
	full := a.full()
	if n, rule := d.Judge(a); Blocked(n) {
		return Verdict{Errno: EACCES, Reason: d.Rules.Reason(rule, n)}
	}
	if strings.EqualFold(a.Name, ".claude") {
		return Verdict{Errno: EACCES, Reason: d.Rules.Reason(full, Protected)}
	}
	if path.Base(a.Path) != ".git" && d.Repos.LastMark(a.Dir, a.Name) && d.Repos.UnsafeToMark(a.Dir) {
		return Verdict{Errno: EACCES, Reason: reasonLastMark}
	}
	if a.Name == ".git" && d.KeepsHooks != nil && d.KeepsHooks(a.Path) {
		return Verdict{Errno: EACCES, Reason: "the repository's hooks (core.hooksPath, a hook's script, an included config) are kept by where its .git is"}
	}
	return Verdict{}
}

// MoveWhole decides a directory at from moved whole to to (EXDEV: mv
// then copies it, one judged name at a time): not when it would bring a
// git directory into a work tree (GitDirMovedIn: copied, its marks are
// made one by one, and judged), nor when it carries what the backend
// keeps (Carried): a deny entry reaching beneath it, where it is or
// where it goes; a repository's kept hooks; a name beneath it that a
// pattern matches or a relative core.hooksPath starts with; a symlink
// beneath it that would lead a kept path elsewhere. Moved whole, a
// denied path would appear (or a hidden one leave) without a call the
// guard judges.
func (d Decider) MoveWhole(from, to At) Verdict {
	exdev := Verdict{Errno: EXDEV}
	if d.Carried != nil {
		whole, each := d.Carried(from.full(), to.full())
		if whole || each != nil && d.Repos.walkNames(from, MaxMovedTree, each) {
			return exdev
		}
	}
	if d.Repos.GitDirMovedIn(from, to) {
		return exdev
	}
	return Verdict{}
}

// walkNames walks the tree of the directory at a (symlinks not
// followed) and reports whether each says yes of one of its names (rel:
// its path beneath a; target: a symlink's), failing closed: a directory
// that cannot be read, a symlink that cannot, or more than limit names.
func (r Repos) walkNames(a At, limit int, each func(rel string, e fs.DirEntry, target string) bool) bool {
	seen := 0
	var walk func(d Dir, rel string) bool
	walk = func(d Dir, rel string) bool {
		defer r.Tree.Close(d)
		entries, err := r.Tree.ReadDir(d)
		if err != nil {
			return true
		}
		for _, e := range entries {
			if seen++; seen > limit {
				return true
			}
			name := path.Join(rel, e.Name())
			target := ""
			if e.Type()&fs.ModeSymlink != 0 {
				if target, err = r.Tree.Readlink(d, e.Name()); err != nil {
					return true
				}
			}
			if each(name, e, target) {
				return true
			}
			if e.IsDir() {
				sub, err := r.Tree.OpenDir(d, e.Name(), false)
				if err != nil || walk(sub, name) {
					return true
				}
			}
		}
		return false
	}
	d, err := r.Tree.OpenDir(a.Dir, a.Name, false)
	return err != nil || walk(d, ".")
}

// LinkSource decides giving the file at a, whose name the rules made n
// (rule; the backend judged it on its way here), a second name: not a
// protected name's or a repository's judged file (a second name would
// be the command's to write), nor a file outside the writable trees or
// where a deny entry applies (the second name would write it). A file
// with no path the backend can tell (a descriptor's, its name gone) is
// the backend's to judge.
func (d Decider) LinkSource(a At, n Name, rule string) Verdict {
	full := a.full()
	if !strings.HasPrefix(full, "/") {
		return Verdict{}
	}
	if d.Writable != nil && !d.Writable(full) {
		// The fallback: a new name in a writable tree for a file
		// outside would write it (the namespace sandbox's mounts say
		// EXDEV).
		return Verdict{Errno: EACCES, Reason: "not writable here (allowWrite)"}
	}
	if Blocked(n) {
		return Verdict{Errno: EACCES, Reason: d.Rules.Reason(rule, n)}
	}
	if d.Later != nil {
		if why, denied := d.Later(full); denied {
			// The kernel refuses a destination on a read-only mount
			// first.
			return Verdict{Errno: EACCES, Reason: why, KernelFirst: true}
		}
	}
	return Verdict{}
}

// GitLink decides a .git or a commondir put at a other than by writing
// it, which the guard judges as it lands: a regular file (regular),
// linked or renamed there, never; a symlink holding target only to a
// directory (Resolve) in a tree the command may write (TreeWritable)
// that lies in no work tree. Elsewhere, the host's git would write that
// repository's objects, refs and index, or its checkout of a commit of
// the command's would write a config and hooks. On an allowed symlink,
// the backend keeps where it leads (TargetAbove).
func (d Decider) GitLink(a At, regular bool, target string) Verdict {
	if a.Name != ".git" && a.Name != "commondir" {
		return Verdict{}
	}
	refuse := func(why string) Verdict { return Verdict{Errno: EACCES, Reason: why} }
	if a.Name == "commondir" || regular {
		return refuse("a .git file or a commondir is made only by writing it, as git does, which the guard judges as it lands")
	}
	if !strings.HasPrefix(target, "/") {
		target = a.Path + "/" + target
	}
	if err := d.LeadsIn(target); err != nil {
		return refuse("a .git symlink: " + err.Error())
	}
	return Verdict{}
}

// LeadsIn says why a .git symlink, a .git file or a commondir may not
// lead to p, if it may not: only to a directory in a tree the command
// may write (TreeWritable) that lies in no work tree.
func (d Decider) LeadsIn(p string) error {
	if d.Resolve == nil {
		return fmt.Errorf("where %s leads cannot be told", p)
	}
	dir, real, err := d.Resolve(p)
	if err != nil {
		return fmt.Errorf("%s does not lead to a directory the guard can read: %v", p, err)
	}
	defer d.Repos.Tree.Close(dir)
	if real == "" {
		return fmt.Errorf("where %s leads cannot be told", p)
	}
	if d.TreeWritable != nil && !d.TreeWritable(real) {
		return fmt.Errorf("%s leads to %s, outside the trees the command may write, where the host's git there would write that repository's objects, refs and index", p, real)
	}
	if d.Repos.WorkTreeAbove(dir, real) {
		// git never checks a path in a .git out, but anywhere else in a
		// work tree the host's checkout of a commit of the command's
		// writes what it holds: a config, hooks.
		return fmt.Errorf("%s leads to %s, in a work tree, where the host's git checking out a commit of the command's would write that repository's config and hooks", p, real)
	}
	return nil
}
