package pathguard

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// Calls in, verdicts out: the backend describes a call on names (what it
// does, at which name, reached from which directory handle), Decider
// answers whether it may be made and, if not, how it fails and why; the
// backend makes it, or reports the refusal, on the command's behalf.

// Errno is how a refused call fails, as the kernel would say it; the
// backend says it in its own numbers.
type Errno int

const (
	// EACCES: refused by the guard's rules (reported).
	EACCES Errno = iota + 1
	// EXDEV: a directory moved where its names would change meaning;
	// mv then copies it, one judged name at a time (not reported).
	EXDEV
	// EROFS: refused as a read-only file's write would be (reported).
	EROFS
	// EEXIST: the name exists where the call must make it (not
	// reported).
	EEXIST
)

// Verdict is a decision on one call: the zero Verdict lets it be made.
type Verdict struct {
	Errno Errno
	// Reason says why, for the violation report: the rule, and whether
	// and how the user may allow it.
	Reason string
	// KernelFirst: where the name's directory lies on a read-only mount,
	// the kernel would refuse first (EROFS), and the backend says that
	// instead, reporting nothing. ExistsFirst: where the name exists, the
	// kernel's EEXIST comes first (mkdir -p goes on past a protected
	// directory that is there).
	KernelFirst, ExistsFirst bool
}

// Refused reports whether the call may not be made.
func (v Verdict) Refused() bool { return v.Errno != 0 }

// Decider decides a sandbox's calls on names.
type Decider struct {
	Rules Rules
	Repos Repos
	// Later returns why full may not be made or written now that the
	// command runs — a deny entry that applies after launch, a
	// repository's hooks the backend keeps — if it may not.
	Later func(full string) (why string, denied bool)
	// Writable reports whether full lies where the command may write
	// (nil: anywhere the backend's mounts let it, which decide first).
	Writable func(full string) bool
	// Made reports whether the directory at anchor, above the name at a,
	// is one the command made in this run (MadeTrees; nil: none is).
	Made func(a At, anchor string) bool
	// TargetsBeneath reports whether a .git file or a commondir the
	// guard let land leads into dir, but not into its .git (nil: none).
	TargetsBeneath func(dir string) bool
	// TargetAbove reports whether a .git file or a commondir the guard
	// let land leads to full or beneath it (nil: none).
	TargetAbove func(full string) bool
	// LeadsAway says why a symlink at full leading to target would send
	// elsewhere what the backend keeps beneath full — a deny entry's
	// path or match, a repository's hooks, where a landed .git file or
	// commondir leads — if it would (nil: nothing is kept).
	LeadsAway func(full, target string) (why string, away bool)
	// KeepsHooks reports whether the repository of the work tree tree
	// keeps hooks by where they are (Hooks.Placed; nil: none does).
	KeepsHooks func(tree string) bool
	// Carried says what a directory moved whole from one path to
	// another carries that the backend keeps: whole, at once (a deny
	// entry's path beneath either, a repository's kept hooks); or, for
	// each name beneath (rel to the directory; target, a symlink's),
	// whether it would land on or lead away what the backend keeps (nil
	// each: no name need be asked; nil Carried: nothing is kept).
	Carried func(from, to string) (whole bool, each func(rel string, e fs.DirEntry, target string) bool)
	// Resolve opens the directory p leads to in the command's root and
	// says where that is (real; "" if it cannot be told): a handle to
	// close (nil: where a .git symlink leads cannot be told).
	Resolve func(p string) (dir Dir, real string, err error)
	// TreeWritable reports whether p lies in a tree the command may
	// write, its mounts' and the guard's rules both (nil: any).
	TreeWritable func(p string) bool
}

// Make decides making a name at a: a directory (dir; never a merge
// program's, git-merge-*, from which a stopped rebase could run one), or a file, FIFO,
// socket, symlink or link's new name. A protected name, or a
// repository's file judged by its content, is never made so (a hooks
// directory is, by mkdir: empty, it runs nothing); nor a name where a
// deny entry applies, nor outside the writable trees; nor a .git where a
// landed .git file or commondir leads beneath (it would become a work
// tree the host's checkout writes), nor a .git other than a directory
// beside anything else (what lies there would become the work tree of
// the repository it names, whose hooks it may hold: git makes one in a
// directory of its own).
func (d Decider) Make(a At, dir bool) (Name, Verdict) {
	n, rule := d.Judge(a)
	judged := n
	if n == HooksDir && dir {
		judged = Free // an empty hooks directory runs nothing
	}
	if v := d.made(a, judged, rule, true, !dir); v.Refused() {
		return n, v
	}
	if dir && IsMergeProgramDir(a.Name) {
		return n, Verdict{Errno: EACCES, Reason: reasonMergeProgramDir}
	}
	return n, Verdict{}
}

// Create decides a file an open makes at a, whose name the rules made n
// (rule; the backend judged it on its way here): as Make, but for a
// landed .git file's target beneath (git writes a worktree's .git where
// its link back leads).
func (d Decider) Create(a At, n Name, rule string) Verdict { return d.made(a, n, rule, false, true) }

// made decides a name made at a, judged n (rule): targets, whether a
// .git may not lie where a landed .git file or commondir leads beneath;
// alone, whether a .git must be alone in its directory (not a directory).
func (d Decider) made(a At, n Name, rule string, targets, alone bool) Verdict {
	full := a.full()
	if Blocked(n) {
		return Verdict{Errno: EACCES, Reason: d.Rules.Reason(rule, n), KernelFirst: true, ExistsFirst: true}
	}
	if d.Writable != nil && !d.Writable(full) {
		return Verdict{Errno: EACCES, Reason: "not writable here (allowWrite)"}
	}
	if d.Later != nil {
		if why, denied := d.Later(full); denied {
			return Verdict{Errno: EACCES, Reason: why, KernelFirst: true, ExistsFirst: true}
		}
	}
	if targets && a.Name == ".git" && d.TargetsBeneath != nil && d.TargetsBeneath(a.Path) {
		return Verdict{Errno: EACCES, Reason: reasonTargetsBeneath}
	}
	if alone && a.Name == ".git" && !d.Repos.OnlyGit(a.Dir) {
		return Verdict{Errno: EACCES, Reason: reasonGitFileAlone}
	}
	return Verdict{}
}

// Judge is what the name at a is: the name rules, a project's name free
// in a tree the command made (Made), and a repository's shape
// (Repos.Judge).
func (d Decider) Judge(a At) (Name, string) {
	full := a.full()
	var n Name
	var rule string
	if d.Made != nil {
		n, rule = d.Rules.JudgeMade(full, func(anchor string) bool { return d.Made(a, anchor) })
	} else {
		n, rule = d.Rules.Judge(full)
	}
	return d.Repos.Judge(a, n, rule)
}

// Remove decides removing the name at a (unlink, or rmdir). A shell's
// startup file or a project's configuration may go: the host runs
// nothing from a name that is not there, and none can be made again where
// it would (MadeTrees). A repository's names may not (a hook removed is a
// check the host's git no longer runs); nor what a deny entry covers, nor
// what lies outside the writable trees; nor the last mark of a git
// directory whose hooks or config the guard keeps (they would become any
// directory's names, and the host's git takes it for a repository again
// once a mark is back: git init --bare there).
func (d Decider) Remove(a At) Verdict {
	full := a.full()
	n, rule, anchor := d.Rules.JudgeWhere(full)
	n, rule = d.Repos.Judge(a, n, rule)
	if n == Protected && anchor == "" {
		return Verdict{Errno: EACCES, Reason: d.Rules.Reason(rule, n), KernelFirst: true}
	}
	if d.Later != nil {
		if why, denied := d.Later(full); denied {
			return Verdict{Errno: EACCES, Reason: why, KernelFirst: true}
		}
	}
	if d.Writable != nil && !d.Writable(full) {
		return Verdict{Errno: EACCES, Reason: "not writable here (allowWrite)", KernelFirst: true}
	}
	if path.Base(a.Path) != ".git" && d.Repos.LastMark(a.Dir, a.Name) && d.Repos.UnsafeToMark(a.Dir) {
		return Verdict{Errno: EACCES, Reason: reasonLastMark}
	}
	return Verdict{}
}

// Reasons of refusals several calls give (reasonGitFileAlone: the
// backend's open too).
const (
	reasonSymlinkInGitDir = "a symlink in a git directory, which the host's git would write through"
	reasonMergeProgramDir = "a directory named " + MergeProgramPrefix + "*, from which the host's git rebase --continue could run a merge strategy's program"
	reasonGitFileAlone    = "a .git file is made or written only in a directory that holds nothing else: what lies beside it would become the work tree of the repository it names, whose hooks it may hold"
	claudeLink            = "a .claude directory's commands and agents are judged by its name: a symlink there would lead them elsewhere"
	reasonTargetsBeneath  = "a .git file or a commondir leads beneath: it would lie in a work tree, where the host's checkout writes"
)

// Symlink decides a symlink holding target made at a: a name made
// (Make), by a symlink (SymlinkName), where git's own probe may be made.
func (d Decider) Symlink(a At, target string) Verdict {
	if _, v := d.Make(a, false); v.Refused() {
		return v
	}
	return d.symlinkName(a, target, true)
}

// SymlinkName decides a name at a, made already (Make), for a symlink
// holding target (a second name of one, by link): never in a git
// directory (the host's git would write through it), never a merge
// program's directory, and one that leads nothing away (Lead). A .git
// or commondir symlink is the backend's to judge where it leads.
func (d Decider) SymlinkName(a At, target string) Verdict { return d.symlinkName(a, target, false) }

func (d Decider) symlinkName(a At, target string, probe bool) Verdict {
	switch {
	case d.Repos.InGitDir(a) && !(probe && d.Repos.probe(a, target)):
		return Verdict{Errno: EACCES, Reason: reasonSymlinkInGitDir}
	case IsMergeProgramDir(a.Name):
		return Verdict{Errno: EACCES, Reason: reasonMergeProgramDir}
	}
	return d.Lead(a, target)
}

// Lead decides a symlink holding target put at a (made, linked or moved
// there): not a .claude, whose commands and agents are judged by its
// name, nor one that would send elsewhere what the backend keeps beneath
// (LeadsAway).
func (d Decider) Lead(a At, target string) Verdict {
	full := a.full()
	if strings.EqualFold(path.Base(full), ".claude") {
		return Verdict{Errno: EACCES, Reason: claudeLink}
	}
	// On the way of a protected path (.ssh of .ssh/config), where its
	// anchor existed at launch: the host would read the protected path
	// where the symlink leads, a file the command may write.
	if anchor, on := d.Rules.OnProtectedPath(full); on && !(d.Made != nil && d.Made(a, anchor)) {
		return Verdict{Errno: EACCES, Reason: "a symlink at " + full + ", on the way of a protected path: the host would read that path where it leads; not allowed there (a tree the command makes may hold it)"}
	}
	if d.LeadsAway != nil {
		if why, away := d.LeadsAway(full, target); away {
			return Verdict{Errno: EACCES, Reason: why}
		}
	}
	return Verdict{}
}

// gitProbeName is the name git init and clone give the symlink they make
// at the top of a new git directory, to learn whether the filesystem has
// symlinks (and remove at once): refused, git would set core.symlinks =
// false and check a repository's symlinks out as files.
var gitProbeName = regexp.MustCompile(`^t[A-Za-z0-9]{6}$`)

// probe reports whether a symlink to target at a is git's probe:
// "testing", at the top of a git directory, by such a name. It leads to a
// name git never uses, and the name is none of git's.
func (r Repos) probe(a At, target string) bool {
	if target != "testing" || !gitProbeName.MatchString(a.Name) {
		return false
	}
	if path.Base(a.Path) == ".git" {
		return true
	}
	// Elsewhere (a bare repository), only the top of a whole git
	// directory: its objects and refs are there, not only a mark.
	if !r.GitDirLike(a.Dir, ".") {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		if mode, err := r.Tree.Lstat(a.Dir, d); err != nil || !mode.IsDir() {
			return false
		}
	}
	return true
}

// Move decides what a rename may put at a: something of kind (the type
// bits of fs.FileMode; 0 a regular file) moved or exchanged there (flags:
// renameat2's flags were given). It returns what the name at a is too.
// A protected name takes nothing; a directory goes (EXDEV: mv copies it,
// one judged name at a time) nowhere its names would change meaning (a
// name that is not Free, a git directory known by its marks); a symlink
// not into a git directory; no merge program's directory; a repository's
// hooks directory nothing, its config and state files only a regular
// file, plainly renamed (the backend judges its content); nothing where
// a landed .git file or commondir leads; a .git not beside anything else
// but the names also (those of the rename itself); nothing outside the
// writable trees.
func (d Decider) Move(a At, kind fs.FileMode, flags bool, also ...string) (Name, Verdict) {
	full := a.full()
	n, rule := d.Judge(a)
	isDir, isLink := kind&fs.ModeDir != 0, kind&fs.ModeSymlink != 0
	refuse := func(why string) (Name, Verdict) { return n, Verdict{Errno: EACCES, Reason: why} }
	switch {
	case n == Protected:
		return refuse(d.Rules.Reason(rule, n))
	case isDir && n != Free:
		return n, Verdict{Errno: EXDEV}
	case isDir && d.Repos.InGitDir(a):
		// Into a git directory known by its marks: copied, each symlink
		// in it is judged (see InGitDir).
		return Context, Verdict{Errno: EXDEV}
	case isLink && d.Repos.InGitDir(a):
		return refuse(reasonSymlinkInGitDir)
	case (isDir || isLink) && IsMergeProgramDir(a.Name):
		return refuse(reasonMergeProgramDir)
	case n == HooksDir:
		return refuse(d.Rules.Reason(rule, n))
	case n == GitConfig && (kind.Type() != 0 || flags):
		return refuse(d.Rules.Reason(rule, n))
	case d.TargetAbove != nil && d.TargetAbove(full):
		return refuse("a .git file or a commondir leads here: what is moved here would lead it to another repository")
	case a.Name == ".git" && d.TargetsBeneath != nil && d.TargetsBeneath(a.Path):
		return refuse(reasonTargetsBeneath)
	case a.Name == ".git" && !isDir && !d.Repos.OnlyGit(a.Dir, also...):
		return refuse(reasonGitFileAlone)
	}
	if d.Writable != nil && !d.Writable(full) {
		return refuse("not writable here (allowWrite)")
	}
	return n, Verdict{}
}

// File is what the backend found of a file a call writes or changes: its
// kind (the type bits of fs.FileMode), its link count, whether the name
// it was reached by is gone (a descriptor's), and whether the guard gave
// it its other names in this run.
type File struct {
	Kind     fs.FileMode
	Nlink    uint64
	Unlinked bool
	OwnLinks bool
}

// LinkedElsewhere says why a write to an existing regular file (or a
// change of the metadata of any file but a directory: metadata) is
// refused when it has a name other than the one it was reached by,
// unless the guard gave it its other names in this run: a hard link made
// before the run, in a writable tree, to a file outside it (~/.bashrc, a
// denyWrite file, another project's) would otherwise write that file,
// and no name tells where the others are. A file reached by a descriptor
// whose name is gone has other names if it has any.
func (f File) LinkedElsewhere(metadata bool) (string, bool) {
	others := f.Nlink
	if !f.Unlinked && others > 0 {
		others--
	}
	if f.Kind.IsDir() || f.Kind.Type() != 0 && !metadata || others == 0 || f.OwnLinks {
		return "", false
	}
	if f.Unlinked {
		return "a file whose name here is gone, with another made before this run: it may lie outside the writable trees", true
	}
	return fmt.Sprintf("a file with %d hard links, made before this run: one may lie outside the writable trees", f.Nlink), true
}

// Write decides opening for writing the existing file f at a, whose name
// the rules made n (rule; the backend judged it on its way here), the
// open asking it be made (excl: O_CREAT|O_EXCL): never a protected name
// or a file judged by its content (refused as read-only), nor one
// outside the writable trees; then EEXIST for one that must be made;
// nor where a deny entry applies (the kernel first, where the file is a
// read-only mount of the launch's), nor a file with names made before
// the run (LinkedElsewhere), nor a .git file beside anything else.
func (d Decider) Write(a At, n Name, rule string, f File, excl bool) Verdict {
	full := a.full()
	if Blocked(n) {
		return Verdict{Errno: EROFS, Reason: d.Rules.Reason(rule, n)}
	}
	if d.Writable != nil && !d.Writable(full) {
		return Verdict{Errno: EACCES, Reason: "not writable here (allowWrite)"}
	}
	if excl {
		return Verdict{Errno: EEXIST}
	}
	if d.Later != nil {
		if why, denied := d.Later(full); denied {
			return Verdict{Errno: EACCES, Reason: why, KernelFirst: true}
		}
	}
	if why, linked := f.LinkedElsewhere(false); linked {
		return Verdict{Errno: EACCES, Reason: why}
	}
	if a.Name == ".git" && !f.Kind.IsDir() && !d.Repos.OnlyGit(a.Dir) {
		return Verdict{Errno: EACCES, Reason: reasonGitFileAlone}
	}
	return Verdict{}
}

// Open is how an open for writing asks, its flags as booleans.
type Open struct {
	WriteOnly, ReadWrite        bool
	Create, Excl, Append, Trunc bool
	// TruncateCall: truncate(2), which writes nothing but the length.
	TruncateCall bool
}

// Deferral is how the guard takes an open of a repository's file whose
// content it judges.
type Deferral int

const (
	// Now: as any other file.
	Now Deferral = iota
	// AsWritten: its content is judged as the command writes it (through
	// a pipe the backend reads), landing when closed: a .git file, a
	// commondir, a worktree's link back.
	AsWritten
	// MadeWhole: a repository's config or index made whole (cp -a, tar x
	// of a repository), judged when written, as git's own lock file is
	// when renamed; refused, the file made goes again.
	MadeWhole
	// Emptied: git writes an am's options in place, empty when there are
	// none: the open goes through as the emptying it is, on a descriptor
	// that reads, so nothing is written there.
	Emptied
)

// Defer decides how the open o of the name (n, as the rules judged it;
// isDir says whether a directory is there, asked only of a .git) goes:
// refused, a .git file opened to read and write (it is written only
// through a pipe the guard reads, which cannot be read back).
func Defer(name string, n Name, isDir func() bool, o Open) (Deferral, Verdict) {
	gitFile := name == ".git" && !isDir()
	switch {
	case gitFile && o.ReadWrite:
		return Now, Verdict{Errno: EACCES, Reason: "a .git file is written only for writing (O_WRONLY), through the guard"}
	case o.TruncateCall:
		return Now, Verdict{}
	case o.WriteOnly && (n == GitConfig && name == WorktreeGitdir || gitFile || name == "commondir" && !Blocked(n)):
		return AsWritten, Verdict{}
	case o.WriteOnly && o.Create && o.Excl && !o.Append && n == GitConfig && (IsConfigName(name) || IsIndexName(name)):
		return MadeWhole, Verdict{}
	case o.WriteOnly && o.Trunc && n == GitConfig && WrittenEmpty(name):
		return Emptied, Verdict{}
	}
	return Now, Verdict{}
}
