package pathguard

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// A repository's names where the names alone cannot tell: a git
// directory that is not called .git (a bare repository, a
// --separate-git-dir, a worktree's common directory) is known by what it
// holds, so a decision about a name there reads the tree around it. It
// reads through Tree, relative to directory handles the backend gives it
// (descriptors on Linux, nodes of a fake tree in the tests), and never
// follows a symlink at a name's end.

// Dir is a directory handle of a Tree.
type Dir int

// Tree is what a decision reads of the filesystem the command sees.
// Every name is relative to a handle (".." and several components
// allowed); no symlink is followed at its last component. An error that
// says nothing is there Is fs.ErrNotExist (a missing name) or ErrNotDir
// (a name on the way, or one OpenDir opens, that is no directory); any
// other says it cannot be told.
type Tree interface {
	// Lstat returns the type bits of dir/rel (fs.FileMode.Type).
	Lstat(dir Dir, rel string) (fs.FileMode, error)
	// OpenDir returns a handle of the directory dir/rel (follow: a
	// symlink at its end is followed), to be closed.
	OpenDir(dir Dir, rel string, follow bool) (Dir, error)
	// ReadDir lists a directory.
	ReadDir(dir Dir) ([]fs.DirEntry, error)
	// Readlink reads the symlink dir/name.
	Readlink(dir Dir, name string) (string, error)
	// ReadFile reads dir/rel, at most limit bytes and one more (a
	// longer file is seen so), not waiting on a FIFO.
	ReadFile(dir Dir, rel string, limit int) ([]byte, error)
	// Foreign reports whether dir/name is another user's directory the
	// command can neither read nor write (nothing of its can be there).
	Foreign(dir Dir, name string) bool
	Close(dir Dir)
}

// ErrNotDir is a Tree's error for a name that is no directory where one
// must be.
var ErrNotDir = errors.New("not a directory")

// absent says an error of Tree says nothing is there; missing, that the
// name itself is missing.
func absent(err error) bool  { return missing(err) || errors.Is(err, ErrNotDir) }
func missing(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// Bounds of what the decisions read.
const (
	// MaxMovedTree bounds the entries a tree is looked through for a
	// symlink or a git directory: one larger counts as holding one.
	MaxMovedTree = 10_000
	maxConfig    = 1 << 20
	// MaxGitFile bounds a judged git file (an index: GitIndexSafe).
	MaxGitFile = 512 << 20
)

// gitMarks are the names that make a directory a git directory to git;
// gitConfigNames the config files git reads in one.
var (
	gitMarks       = map[string]bool{"HEAD": true, "objects": true, "refs": true, "commondir": true}
	gitConfigNames = map[string]bool{"config": true, "config.worktree": true}
)

// IsGitMark reports whether name makes a directory a git directory.
func IsGitMark(name string) bool { return gitMarks[name] }

// IsConfigName reports whether name is a config file git reads in a git
// directory.
func IsConfigName(name string) bool { return gitConfigNames[name] }

// gitInternalNames are the names git reads or writes at the top of a
// (common) git directory.
var gitInternalNames = map[string]bool{
	"head": true, "fetch_head": true, "orig_head": true, "merge_head": true, "cherry_pick_head": true, "revert_head": true,
	"auto_merge": true, "commit_editmsg": true, "merge_msg": true, "merge_mode": true, "squash_msg": true, "tag_editmsg": true,
	"config": true, "config.worktree": true, "index": true, "packed-refs": true, "shallow": true, "description": true,
	"hooks": true, "info": true, "logs": true, "objects": true, "refs": true, "worktrees": true, "modules": true,
	"rebase-merge": true, "rebase-apply": true, "sequencer": true, "rr-cache": true, "lfs": true, "commondir": true,
	"gitdir": true, "gc.pid": true, "gc.log": true, "branches": true, "remotes": true,
}

func gitInternal(name string) bool {
	lower := strings.ToLower(name)
	return gitInternalNames[lower] || strings.HasPrefix(lower, "bisect_")
}

// GitNamed reports whether name, in a directory called dir, is one
// Repos.Judge looks into a git directory for: a hook, a hooks
// directory, a config, a mark. Any other name is judged by the name
// rules alone.
func GitNamed(dir, name string) bool {
	return dir == "hooks" || name == "hooks" || IsLegacyRemotes(dir) || gitConfigNames[name] || gitMarks[name] ||
		IsGitStateDir(name) || IsGitStateFile(dir, name) || IsIndexName(name) || name == MergeRR ||
		name == WorktreeGitdir || strings.EqualFold(name, ".git")
}

// UnderDotGit reports whether a path goes through a .git.
func UnderDotGit(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// Repos decides about a repository's names where they lie.
type Repos struct {
	Tree Tree
	// GitConfig is filesystem.allowGitConfig: a repository's config is
	// then free.
	GitConfig bool
	// WorktreeLink judges a worktree's link back (worktrees/<id>/gitdir)
	// about to land: where it leads is the backend's to resolve. Nil:
	// none is taken.
	WorktreeLink func(content []byte) error
}

// At is a name as a call reaches it: the directory that holds it (Dir,
// a handle, and Path, the directory's path as the command's root names
// it) and the name in it; Full, if set, is the path the name is judged
// at (where a nested mount's source puts it), else Path/Name.
type At struct {
	Dir  Dir
	Path string
	Name string
	Full string
}

func (a At) full() string {
	switch {
	case a.Full != "":
		return a.Full
	case a.Name == "." || a.Name == "":
		return a.Path
	}
	return path.Join(a.Path, a.Name)
}

// exists reports whether dir/rel names something, or cannot be told not
// to.
func (r Repos) exists(dir Dir, rel string) bool {
	_, err := r.Tree.Lstat(dir, rel)
	return !absent(err)
}

// Names lists the directory dir/rel, not through a symlink at its end:
// what could be read.
func (r Repos) Names(dir Dir, rel string) ([]string, error) {
	d, err := r.Tree.OpenDir(dir, rel, false)
	if err != nil {
		return nil, err
	}
	defer r.Tree.Close(d)
	entries, _ := r.Tree.ReadDir(d)
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// GitDirLike reports whether the directory rel from dir holds a mark of
// a git directory. One the guard cannot look into (the command took
// away its search right) may be one: only a name that is not there says
// no.
func (r Repos) GitDirLike(dir Dir, rel string) bool {
	for m := range gitMarks {
		if r.exists(dir, path.Join(rel, m)) {
			return true
		}
	}
	return false
}

// LastMark reports whether name is the only mark left in dir that makes
// it look like a git directory (GitDirLike), where the guard keeps hooks
// and config that, without a mark, would be any directory's names.
func (r Repos) LastMark(dir Dir, name string) bool {
	if !gitMarks[name] {
		return false
	}
	for m := range gitMarks {
		if m != name && r.exists(dir, m) {
			return false
		}
	}
	return true
}

// GitDir reports whether the directory at dir/rel is one git takes for a
// git directory: a HEAD, and objects and refs or a commondir (git's
// is_git_directory). One the guard cannot look into may be.
func (r Repos) GitDir(dir Dir, rel string) bool { return r.GitDirWith(dir, rel, "") }

// GitDirWith is GitDir as it would be once the mark named made is made.
func (r Repos) GitDirWith(dir Dir, rel, made string) bool {
	if _, err := r.Tree.Lstat(dir, rel); err != nil {
		return !absent(err)
	}
	has := func(name string) bool { return name == made || r.exists(dir, path.Join(rel, name)) }
	return has("HEAD") && (has("commondir") || has("objects") && has("refs"))
}

// CommonDirLike reports whether dir/rel holds objects and refs: what a
// worktree's commondir may name, which needs no HEAD of its own.
func (r Repos) CommonDirLike(dir Dir, rel string) bool { return r.CommonDirLikeWith(dir, rel, "") }

// CommonDirLikeWith is CommonDirLike once the name made is made.
func (r Repos) CommonDirLikeWith(dir Dir, rel, made string) bool {
	has := func(name string) bool {
		_, err := r.Tree.Lstat(dir, path.Join(rel, name))
		return name == made || err == nil
	}
	return has("objects") && has("refs")
}

// SymlinkAtGitNames reports whether dir holds a symlink at one of git's
// own names, or beneath one (see HoldsSymlink).
func (r Repos) SymlinkAtGitNames(dir Dir) bool {
	d, err := r.Tree.OpenDir(dir, ".", true)
	if err != nil {
		return true
	}
	defer r.Tree.Close(d)
	entries, err := r.Tree.ReadDir(d)
	if err != nil {
		return true
	}
	for _, e := range entries {
		if !gitInternal(e.Name()) {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			return true
		}
		if e.IsDir() {
			sub, err := r.Tree.OpenDir(d, e.Name(), false)
			if err != nil {
				return true
			}
			held := r.HoldsSymlink(sub)
			r.Tree.Close(sub)
			if held {
				return true
			}
		}
	}
	return false
}

// HoldsSymlink reports whether the tree at dir holds a symlink, or more
// than MaxMovedTree entries, or anything the guard cannot read.
func (r Repos) HoldsSymlink(dir Dir) bool {
	return r.TreeHas(dir, MaxMovedTree, nil, func(e fs.DirEntry) bool { return e.Type()&fs.ModeSymlink != 0 }, nil)
}

// InGitDir reports whether the name at a lies inside a git directory: a
// .git on its path, or a directory at or above its own that git takes
// for one (GitDir). The host's git reads and writes what lies there by
// fixed names (logs/HEAD, FETCH_HEAD, COMMIT_EDITMSG, worktrees/<id>,
// rebase-merge): a symlink there would lead its writes, and gc's
// deletions, out of the repository.
func (r Repos) InGitDir(a At) bool {
	if UnderDotGit(a.Path) {
		return true
	}
	parts := strings.Split(strings.Trim(a.Path, "/"), "/")
	// The names beneath each directory above, first first: under a
	// common directory (objects and refs, no HEAD), only git's own.
	names := append(parts, a.Name)
	rel := "."
	for i := 0; i <= len(parts); i++ {
		// What is made counts as there: a symlink named objects beside
		// refs is a mark of its own.
		made := ""
		if i == 0 {
			made = a.Name
		}
		if r.GitDirWith(a.Dir, rel, made) {
			return true
		}
		if gitInternal(names[len(names)-1-i]) && r.CommonDirLikeWith(a.Dir, rel, made) {
			return true
		}
		rel = path.Join(rel, "..")
	}
	return false
}

// WorkTreeAbove reports whether the directory at dir (path at) lies in a
// work tree: it or a directory above holds a .git. A git directory in a
// .git (a submodule's, a worktree's) does not: git never checks a path
// through .git out.
func (r Repos) WorkTreeAbove(dir Dir, at string) bool {
	if UnderDotGit(at) {
		return false
	}
	return r.GitUp(dir, ".", len(strings.Split(strings.Trim(at, "/"), "/"))+1)
}

// GitUp reports whether dir/rel, or one of the levels-1 directories
// above it, holds a .git (of any kind, or one that cannot be told).
func (r Repos) GitUp(dir Dir, rel string, levels int) bool {
	for range levels {
		if r.exists(dir, path.Join(rel, ".git")) {
			return true
		}
		rel = path.Join(rel, "..")
	}
	return false
}

// GitDirMovedIn reports whether the directory from (its name in its
// directory), moved to to, would bring a git directory into a work tree
// (see GitDirBeneath).
func (r Repos) GitDirMovedIn(from, to At) bool {
	if !r.WorkTreeAbove(to.Dir, to.Path) || UnderDotGit(to.full()) {
		return false
	}
	d, err := r.Tree.OpenDir(from.Dir, from.Name, false)
	if err != nil {
		// Nothing there, or no directory: nothing is brought. One that
		// cannot be read (its owner took away the read right) may hold
		// anything.
		return !absent(err)
	}
	defer r.Tree.Close(d)
	return r.GitDirBeneath(d)
}

// GitDirBeneath reports whether the tree at dir holds a git directory
// (GitDir) other than in a .git, or a directory the guard cannot read: a
// .git made at dir would make the tree a work tree, and git checks out a
// path into such a directory (a --separate-git-dir put in the work tree,
// a bare repository) as into any other.
func (r Repos) GitDirBeneath(dir Dir) bool {
	return r.TreeHas(dir, 0, func(d Dir) bool { return r.GitDir(d, ".") }, nil,
		func(e fs.DirEntry) bool { return strings.EqualFold(e.Name(), ".git") })
}

// TreeHas walks the tree at dir, symlinks not followed, and reports
// whether at says yes of one of its directories or entry of one of
// their entries; and, failing closed, whether a directory cannot be read
// or the tree holds more than limit entries (0: no bound). Every
// directory is entered but those skip names, and another user's the
// command can neither read nor write (nothing of its can be there).
func (r Repos) TreeHas(dir Dir, limit int, at func(d Dir) bool, entry, skip func(fs.DirEntry) bool) bool {
	seen := 0
	var walk func(d Dir) bool
	walk = func(d Dir) bool {
		defer r.Tree.Close(d)
		if at != nil && at(d) {
			return true
		}
		entries, err := r.Tree.ReadDir(d)
		if err != nil {
			return true
		}
		for _, e := range entries {
			if seen++; limit > 0 && seen > limit {
				return true
			}
			if entry != nil && entry(e) {
				return true
			}
			if !e.IsDir() || skip != nil && skip(e) {
				continue
			}
			sub, err := r.Tree.OpenDir(d, e.Name(), false)
			if errors.Is(err, fs.ErrPermission) && r.Tree.Foreign(d, e.Name()) {
				continue
			}
			if err != nil || walk(sub) {
				return true
			}
		}
		return false
	}
	d, err := r.Tree.OpenDir(dir, ".", true)
	return err != nil || walk(d)
}

// OnlyGit reports whether dir holds nothing but a .git (and the names
// also), as read now.
func (r Repos) OnlyGit(dir Dir, also ...string) bool {
	names, err := r.Names(dir, ".")
	return err == nil && !slices.ContainsFunc(names, func(n string) bool { return n != ".git" && !slices.Contains(also, n) })
}

// JudgedFiles lists the files in the git directory (to be) at dir whose
// content the guard judges (GitConfig): its config files (unless
// allowGitConfig), its index and shared indexes, and a rebase's todo
// list and the other state files git goes on with; relative to dir.
func (r Repos) JudgedFiles(dir Dir) []string {
	var names []string
	if !r.GitConfig {
		for name := range gitConfigNames {
			names = append(names, name)
		}
	}
	names = append(names, GitIndexName, MergeRR)
	names = append(names, GitStateFiles()...)
	all, _ := r.Names(dir, ".")
	for _, n := range all {
		if strings.HasPrefix(n, SharedIndexPrefix) {
			names = append(names, n)
		}
	}
	ids, _ := r.Names(dir, "worktrees")
	for _, id := range ids {
		names = append(names, path.Join("worktrees", id, WorktreeGitdir))
	}
	return names
}

// HashSize is the object id size of the repository whose git directory
// is dir: its config's, or its common directory's (a worktree's); 20
// where neither holds one; 0 where the guard cannot tell (a common
// directory it cannot reach).
func (r Repos) HashSize(dir Dir) int {
	// The common directory's path is the kernel's to resolve, as git's
	// is (a symlink then "..": where the link leads, then up), never
	// cleaned by text.
	sizeIn := func(at string) int {
		switch c, err := r.Tree.ReadFile(dir, at+"/config", maxConfig); {
		case err == nil:
			return HashSizeOf(c)
		case missing(err):
			return 20
		}
		return 0
	}
	// git takes the format from the common directory where there is one
	// (a worktree's config is not read for it), else from dir's.
	common, err := r.Tree.ReadFile(dir, "commondir", maxConfig)
	if missing(err) {
		return sizeIn(".")
	}
	at := strings.TrimSpace(string(common))
	if err != nil || at == "" || path.IsAbs(at) {
		return 0
	}
	if _, err := r.Tree.Lstat(dir, at+"/."); err != nil {
		return 0 // no directory there (its config's absence would say 20)
	}
	return sizeIn(at)
}

// FileSafe judges the content of dir/name, a GitConfig file.
func (r Repos) FileSafe(dir Dir, name string, content []byte) error {
	if path.Base(name) == WorktreeGitdir {
		if r.WorktreeLink == nil {
			return errors.New("a worktree's link back is not taken here")
		}
		return r.WorktreeLink(content)
	}
	if !IsIndexName(path.Base(name)) {
		return GitFileSafe(path.Base(name), content, 20)
	}
	size := r.HashSize(dir)
	if size == 0 {
		return fmt.Errorf("the repository's object format cannot be told")
	}
	return GitFileSafe(path.Base(name), content, size)
}

// IndexesStaySafe reports, for a config about to replace dir/config,
// whether every index git would then read in dir (its own, its shared
// ones, its worktrees') is still safe read with the hash size the new
// content sets: extensions.objectFormat changes how git reads them.
func (r Repos) IndexesStaySafe(dir Dir, content []byte) error {
	size := HashSizeOf(content)
	if size == r.HashSize(dir) {
		return nil
	}
	var indexes []string
	for _, n := range r.JudgedFiles(dir) {
		if IsIndexName(n) {
			indexes = append(indexes, n)
		}
	}
	ids, _ := r.Names(dir, "worktrees")
	for _, id := range ids {
		indexes = append(indexes, path.Join("worktrees", id, GitIndexName))
	}
	for _, n := range indexes {
		idx, err := r.Tree.ReadFile(dir, n, MaxGitFile)
		if missing(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := GitIndexSafe(idx, size); err != nil {
			return fmt.Errorf("its %s, read with the object format it sets: %v", n, err)
		}
	}
	return nil
}

// UnsafeToMark reports whether dir holds hooks other than samples, or a
// config that would run a program, or an index or a rebase's todo list
// the guard would not take (see JudgedFiles): a mark made there would
// make them a git directory's.
func (r Repos) UnsafeToMark(dir Dir) bool {
	hooks, err := r.Names(dir, "hooks")
	if err != nil && !missing(err) {
		return true // a hooks that is no directory, or cannot be read
	}
	for _, n := range hooks {
		if !IsInertHookName(n) {
			return true
		}
	}
	for _, d := range []string{"remotes", "branches"} {
		if names, err := r.Names(dir, d); len(names) > 0 || err != nil && !missing(err) {
			return true // a legacy remote (see IsLegacyRemotes)
		}
	}
	for _, name := range r.JudgedFiles(dir) {
		content, err := r.Tree.ReadFile(dir, name, MaxGitFile)
		if absent(err) {
			continue
		}
		if err != nil || r.FileSafe(dir, name, content) != nil {
			return true
		}
	}
	return false
}

// Judge is what the name at a is, given what the name rules made of it
// (n, rule): what they cannot see from names alone — a git directory
// that is not called .git (a bare repository, a --separate-git-dir, a
// worktree's common directory), known by what it holds (HEAD, objects,
// refs or commondir). Its hooks and its config are a .git's; and a
// directory whose hooks hold more than git's samples, or whose config
// would run a program, may not become one (no HEAD, objects, refs or
// commondir is made in it). The backend judges one call at a time, so
// no two of them can each see the other's half missing.
func (r Repos) Judge(a At, n Name, rule string) (Name, string) {
	if n != Free && n != Context || a.Name == "" || a.Name == "." || !GitNamed(path.Base(a.Path), a.Name) {
		return n, rule
	}
	full := a.full()
	switch {
	case path.Base(a.Path) == "hooks" && !IsInertHookName(a.Name), IsLegacyRemotes(path.Base(a.Path)):
		if r.GitDirLike(a.Dir, "..") {
			return Protected, a.Path
		}
	case a.Name == "hooks":
		if r.GitDirLike(a.Dir, ".") {
			return HooksDir, full
		}
	case gitConfigNames[a.Name] && !r.GitConfig:
		if r.GitDirLike(a.Dir, ".") {
			return GitConfig, full
		}
	case IsGitStateDir(a.Name):
		if r.GitDirLike(a.Dir, ".") {
			return Context, full // a directory moved there brings its state files unseen
		}
	case IsGitStateFile(path.Base(a.Path), a.Name):
		if r.GitDirLike(a.Dir, "..") {
			return GitConfig, full
		}
	case IsIndexName(a.Name) || a.Name == MergeRR:
		if r.GitDirLike(a.Dir, ".") {
			return GitConfig, full
		}
	case a.Name == WorktreeGitdir:
		if path.Base(path.Dir(a.Path)) == "worktrees" && r.GitDirLike(a.Dir, "../..") {
			return GitConfig, full
		}
	case a.Name == "commondir" && (path.Base(path.Dir(a.Path)) != "worktrees" || path.Base(a.Path) == ".git"):
		// git writes a commondir only in a worktree's git directory
		// (worktrees/<id>, which a .git file names, and whose commondir
		// the guard reads at each call): anywhere else it would lead git
		// to another repository's config and hooks after the guard read
		// the repository.
		return Protected, full + " (a commondir other than in a worktree's git directory, worktrees/<id>, would lead git to another repository's config and hooks)"
	case strings.EqualFold(a.Name, ".git"):
		if r.GitDirBeneath(a.Dir) {
			return Protected, full + " (a git directory lies in what would become its work tree, where the host's checkout would write into it)"
		}
	case gitMarks[a.Name]:
		if !r.GitDirLike(a.Dir, ".") && r.UnsafeToMark(a.Dir) {
			return Protected, full + " (its directory holds hooks, or a config that runs programs, and would become a git directory)"
		}
		// The mark that makes it one git takes: nothing beneath may be a
		// symlink (see InGitDir), which no mark made before saw.
		if !r.GitDir(a.Dir, ".") && r.GitDirWith(a.Dir, ".", a.Name) {
			if r.HoldsSymlink(a.Dir) {
				return Protected, full + " (its directory holds a symlink, or more than the guard looks through, and would become a git directory)"
			}
			if r.WorkTreeAbove(a.Dir, a.Path) {
				return Protected, full + " (its directory lies in a work tree, where the host's checkout would write into it, and would become a git directory)"
			}
		}
		// The mark that makes it what a worktree's commondir may name: no
		// symlink at git's own names (see InGitDir).
		if !r.CommonDirLike(a.Dir, ".") && r.CommonDirLikeWith(a.Dir, ".", a.Name) && r.SymlinkAtGitNames(a.Dir) {
			return Protected, full + " (its directory holds a symlink at one of git's own names, and would become a common git directory)"
		}
	}
	return n, rule
}
