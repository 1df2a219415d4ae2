package pathguard

import (
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

// emptyIndex is an index of no entries with hash ids of size bytes.
func emptyIndex(size int) string {
	b := []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00")
	if size == 32 {
		sum := sha256.Sum256(b)
		return string(append(b, sum[:]...))
	}
	sum := sha1.Sum(b)
	return string(append(b, sum[:]...))
}

// A bare repository, a worktree's common directory, a project with
// objects and refs of its own, and what git's state looks like, in one
// tree the tests below share.
func repoTree() *fakeTree {
	return newFakeTree(
		"bare/HEAD=ref: refs/heads/main", "bare/objects/", "bare/refs/", "bare/hooks/pre-commit.sample=#",
		"bare/config=[core]\n\tbare = true\n", "bare/rebase-merge/", "bare/worktrees/w/",
		"wt/HEAD=x", "wt/commondir=../bare", "wt/index="+emptyIndex(20),
		"sha/HEAD=x", "sha/objects/", "sha/refs/", "sha/config=[extensions]\n\tobjectformat = sha256\n",
		"proj/src/objects/", "proj/src/refs/", "proj/src/a/link->../x",
		"proj/.git/HEAD=x", "proj/.git/objects/", "proj/.git/refs/", "proj/.git/hooks/",
		"half/HEAD=x",
		"hooked/hooks/pre-commit=#!/bin/sh",
		"remote/remotes/origin=URL: x",
		"runs/config=[core]\n\tfsmonitor = /bin/evil\n", "runs/refs/",
		"lnk/objects->/bare/objects", "lnk/refs/",
		"deep/refs/", "deep/logs/l->/etc",
		"lonely/.git=gitdir: /bare", "crowd/.git=gitdir: /bare", "crowd/x=1",
		"tree/a/b/HEAD=x", "tree/a/b/objects/", "tree/a/b/refs/",
		"vol/pg/x=1", "locked/",
		"idx/HEAD=x", "idx/objects/", "idx/refs/", "idx/sharedindex.abc=x", "idx/worktrees/w1/gitdir=/w/.git",
	)
}

func TestReposShape(t *testing.T) {
	ft := repoTree()
	ft.denied["/locked"] = true
	r := Repos{Tree: ft}
	root := ft.handle("/")
	for _, c := range []struct {
		what string
		got  bool
		want bool
	}{
		{"a bare repository looks like one", r.GitDirLike(root, "bare"), true},
		{"a directory with no mark does not", r.GitDirLike(root, "proj/src/a"), false},
		{"nothing there does not", r.GitDirLike(root, "nowhere"), false},
		{"a file on the way does not", r.GitDirLike(root, "bare/HEAD/x"), false},
		{"one that cannot be searched may", r.GitDirLike(root, "locked"), true},
		{"HEAD, objects and refs is a git directory", r.GitDir(root, "bare"), true},
		{"HEAD and commondir is one", r.GitDir(root, "wt"), true},
		{"HEAD alone is not", r.GitDir(root, "half"), false},
		{"HEAD alone, objects and refs made, would be", r.GitDirWith(root, "half", "objects") && !r.GitDirWith(root, "half", "index"), false},
		{"objects made where refs is not, not", r.GitDirWith(root, "proj/src/a", "objects"), false},
		{"a project's objects and refs look like a common directory", r.CommonDirLike(root, "proj/src"), true},
		{"refs alone, with objects made, would", r.CommonDirLikeWith(root, "deep", "objects"), true},
		{"refs alone does not", r.CommonDirLike(root, "deep"), false},
		{"the last mark", r.LastMark(ft.handle("/half"), "HEAD"), true},
		{"a mark beside others", r.LastMark(ft.handle("/bare"), "HEAD"), false},
		{"no mark at all", r.LastMark(ft.handle("/bare"), "config"), false},
		{"a symlink at objects", r.SymlinkAtGitNames(ft.handle("/lnk")), true},
		{"a symlink beneath logs", r.SymlinkAtGitNames(ft.handle("/deep")), true},
		{"a symlink under src is not git's", r.SymlinkAtGitNames(ft.handle("/proj/src")), false},
		{"a tree holding a symlink", r.HoldsSymlink(ft.handle("/proj/src")), true},
		{"a tree without", r.HoldsSymlink(ft.handle("/bare")), false},
		{"a .git alone", r.OnlyGit(ft.handle("/lonely")), true},
		{"a .git with company", r.OnlyGit(ft.handle("/crowd")), false},
		{"a .git with company allowed", r.OnlyGit(ft.handle("/crowd"), "x"), true},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v", c.what, c.got)
		}
	}
	if r.GitDirWith(root, "half", "objects") {
		t.Error("HEAD and objects made, without refs, is taken for a git directory")
	}
	if !r.GitDirWith(root, "half", "commondir") {
		t.Error("HEAD and a commondir made is not taken for a git directory")
	}
}

func TestReposWhereNamesLie(t *testing.T) {
	ft := repoTree()
	r := Repos{Tree: ft}
	for _, c := range []struct {
		at   At
		want bool
	}{
		{At{Dir: ft.handle("/proj/.git"), Path: "/proj/.git", Name: "x"}, true},
		{At{Dir: ft.handle("/bare"), Path: "/bare", Name: "x"}, true},
		{At{Dir: ft.handle("/bare/refs"), Path: "/bare/refs", Name: "x"}, true},
		{At{Dir: ft.handle("/proj/src/a"), Path: "/proj/src/a", Name: "x"}, false},
		// A project's objects and refs are a common directory only for
		// git's own names.
		{At{Dir: ft.handle("/proj/src"), Path: "/proj/src", Name: "useRef.js"}, false},
		{At{Dir: ft.handle("/proj/src/objects"), Path: "/proj/src/objects", Name: "x"}, true},
		{At{Dir: ft.handle("/half"), Path: "/half", Name: "objects"}, false},
	} {
		if got := r.InGitDir(c.at); got != c.want {
			t.Errorf("InGitDir(%s/%s) = %v", c.at.Path, c.at.Name, got)
		}
	}
	if !r.WorkTreeAbove(ft.handle("/proj/src/a"), "/proj/src/a") || r.WorkTreeAbove(ft.handle("/bare"), "/bare") {
		t.Error("WorkTreeAbove does not find the .git above")
	}
	if r.WorkTreeAbove(ft.handle("/proj/.git"), "/proj/.git") {
		t.Error("a directory in a .git is taken for a work tree")
	}
	if !r.GitUp(ft.handle("/proj/src"), "..", 2) || r.GitUp(ft.handle("/tree/a"), ".", 3) {
		t.Error("GitUp")
	}
	// A bare repository moved into a work tree is brought in; moved
	// anywhere else, not.
	from := At{Dir: ft.handle("/tree"), Path: "/tree", Name: "a"}
	if !r.GitDirMovedIn(from, At{Dir: ft.handle("/proj/src"), Path: "/proj/src", Name: "a"}) {
		t.Error("a git directory moved into a work tree is not seen")
	}
	if r.GitDirMovedIn(from, At{Dir: ft.handle("/vol"), Path: "/vol", Name: "a"}) {
		t.Error("a git directory moved outside every work tree is refused")
	}
	if r.GitDirMovedIn(At{Dir: ft.handle("/proj"), Path: "/proj", Name: "nowhere"}, At{Dir: ft.handle("/proj/src"), Path: "/proj/src", Name: "a"}) {
		t.Error("nothing moved is taken for a git directory")
	}
}

func TestReposTreeWalk(t *testing.T) {
	ft := repoTree()
	r := Repos{Tree: ft}
	if !r.GitDirBeneath(ft.handle("/tree")) {
		t.Error("a git directory beneath is not found")
	}
	if r.GitDirBeneath(ft.handle("/proj")) {
		t.Error("a .git's own git directory counts as beneath")
	}
	// Another user's directory the command can neither read nor write
	// holds nothing of its; one merely unreadable fails closed.
	ft.denied["/vol/pg"] = true
	ft.foreign["/vol/pg"] = true
	if r.GitDirBeneath(ft.handle("/vol")) {
		t.Error("another user's volume is taken for a git directory")
	}
	delete(ft.foreign, "/vol/pg")
	if !r.GitDirBeneath(ft.handle("/vol")) {
		t.Error("a directory that cannot be read is not failed closed")
	}
	if !r.TreeHas(ft.handle("/idx"), 2, nil, nil, nil) {
		t.Error("a tree of more entries than the bound is not failed closed")
	}
	if r.TreeHas(ft.handle("/idx"), 0, nil, func(e fs.DirEntry) bool { return e.Name() == "nothing" }, nil) {
		t.Error("TreeHas found what is not there")
	}
	if _, err := r.Names(ft.handle("/"), "nowhere"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Names of nothing: %v", err)
	}
}

func TestReposGitFiles(t *testing.T) {
	ft := repoTree()
	var linked []string
	r := Repos{Tree: ft, WorktreeLink: func(c []byte) error { linked = append(linked, string(c)); return nil }}
	idx := ft.handle("/idx")
	files := r.JudgedFiles(idx)
	for _, want := range []string{"config", "config.worktree", "index", "MERGE_RR", "sharedindex.abc", "worktrees/w1/gitdir", "rebase-merge/git-rebase-todo"} {
		if !slices.Contains(files, want) {
			t.Errorf("JudgedFiles lacks %s: %v", want, files)
		}
	}
	if slices.Contains((Repos{Tree: ft, GitConfig: true}).JudgedFiles(idx), "config") {
		t.Error("with allowGitConfig a config is still judged")
	}
	root := ft.handle("/")
	for _, c := range []struct {
		dir  string
		want int
	}{{"/bare", 20}, {"/sha", 32}, {"/wt", 20}, {"/half", 20}} {
		if got := r.HashSize(ft.handle(c.dir)); got != c.want {
			t.Errorf("HashSize(%s) = %d, want %d", c.dir, got, c.want)
		}
	}
	abs := newFakeTree("w/HEAD=x", "w/commondir=/bare", "m/HEAD=x", "m/commondir=../nowhere", "f/HEAD=x", "f/commondir=../f/HEAD")
	for _, d := range []string{"/w", "/m", "/f"} {
		if got := (Repos{Tree: abs}).HashSize(abs.handle(d)); got != 0 {
			t.Errorf("HashSize(%s) = %d: a common directory that cannot be told is told", d, got)
		}
	}
	if err := r.FileSafe(idx, "worktrees/w1/gitdir", []byte("/w/.git\n")); err != nil || len(linked) != 1 {
		t.Errorf("a worktree's link back is not judged by the backend: %v %v", err, linked)
	}
	if err := (Repos{Tree: ft}).FileSafe(idx, "worktrees/w1/gitdir", []byte("/w/.git\n")); err == nil {
		t.Error("a worktree's link back is taken with no one to judge it")
	}
	if err := r.FileSafe(idx, "config", []byte("[core]\n\tfsmonitor = /bin/evil\n")); err == nil {
		t.Error("a config that runs a program is taken")
	}
	if err := r.FileSafe(ft.handle("/wt"), "index", []byte(emptyIndex(20))); err != nil {
		t.Errorf("an empty index is refused: %v", err)
	}
	if err := r.FileSafe(ft.handle("/wt"), "index", []byte("junk")); err == nil {
		t.Error("an index git would not read is taken")
	}
	if err := (Repos{Tree: abs}).FileSafe(abs.handle("/m"), "index", []byte(emptyIndex(20))); err == nil {
		t.Error("an index is taken where the object format cannot be told")
	}
	// A config that switches the object format: the indexes must read
	// with the new size.
	if err := r.IndexesStaySafe(ft.handle("/wt"), []byte("[core]\n")); err != nil {
		t.Errorf("the same format: %v", err)
	}
	if err := r.IndexesStaySafe(ft.handle("/wt"), []byte("[extensions]\n\tobjectformat = sha256\n")); err == nil {
		t.Error("a SHA-1 index read as SHA-256 stays safe")
	}
	two, err := os.ReadFile("testdata/index-two-formats")
	if err != nil {
		t.Fatal(err)
	}
	both := newFakeTree("r/HEAD=x", "r/objects/", "r/refs/", "r/index="+string(two))
	if err := (Repos{Tree: both}).IndexesStaySafe(both.handle("/r"), []byte("[extensions]\n\tobjectformat = sha256\n")); err == nil {
		t.Error("an index harmless with 20-byte ids stays safe read with 32")
	}
	if got := r.HashSize(root); got != 20 {
		t.Errorf("HashSize of a directory with no config: %d", got)
	}
}

func TestReposUnsafeToMark(t *testing.T) {
	ft := repoTree()
	r := Repos{Tree: ft}
	for dir, want := range map[string]bool{
		"/bare": false, "/hooked": true, "/remote": true, "/runs": true, "/proj/src": false,
	} {
		if got := r.UnsafeToMark(ft.handle(dir)); got != want {
			t.Errorf("UnsafeToMark(%s) = %v", dir, got)
		}
	}
	bad := newFakeTree("x/hooks=a file", "y/index=junk", "z/hooks->/etc")
	for _, d := range []string{"/x", "/y", "/z"} {
		if !(Repos{Tree: bad}).UnsafeToMark(bad.handle(d)) {
			t.Errorf("UnsafeToMark(%s): what git would take is not refused", d)
		}
	}
}

// Judge, one case per rule: what the name rules made of a name (Free
// or Context) refined by what lies around it.
func TestReposJudge(t *testing.T) {
	ft := repoTree()
	r := Repos{Tree: ft}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	for _, c := range []struct {
		at   At
		want Name
		rule string // a prefix of the rule, "" for any
	}{
		{at("/bare/hooks", "pre-commit"), Protected, "/bare/hooks"},
		{at("/bare/hooks", "pre-commit.sample"), Free, ""},
		{at("/bare", "hooks"), HooksDir, "/bare/hooks"},
		{at("/bare", "config"), GitConfig, "/bare/config"},
		{at("/proj/src/a", "config"), Free, ""},
		// objects and refs side by side make a directory one whose config
		// git may read (as a common directory): judged.
		{at("/proj/src", "config"), GitConfig, ""},
		{at("/bare", "rebase-merge"), Context, "/bare/rebase-merge"},
		{at("/bare/rebase-merge", "git-rebase-todo"), GitConfig, ""},
		{at("/bare", "index"), GitConfig, ""},
		{at("/bare", "MERGE_RR"), GitConfig, ""},
		{at("/bare/worktrees/w", "gitdir"), GitConfig, ""},
		{at("/proj/src", "gitdir"), Free, ""},
		{at("/proj/src", "commondir"), Protected, "/proj/src/commondir (a commondir"},
		{at("/tree", ".git"), Protected, "/tree/.git (a git directory lies"},
		{at("/proj/src/a", ".git"), Free, ""},
		{at("/hooked", "HEAD"), Protected, "/hooked/HEAD (its directory holds hooks"},
		{at("/proj/src", "HEAD"), Protected, "/proj/src/HEAD (its directory holds a symlink"},
		{at("/lnk", "HEAD"), Protected, "/lnk/HEAD (its directory holds a symlink"},
		{at("/remote", "objects"), Protected, "/remote/objects (its directory holds hooks"},
		// Beside a mark already there, the hooks are a git directory's
		// already (judged as such): the mark adds nothing.
		{at("/deep", "HEAD"), Free, ""},
		{at("/half", "objects"), Free, ""},
		{at("/proj/src/a", "anything.go"), Free, ""},
		{at("/proj/src", "refs"), Free, ""},
	} {
		n, rule := r.Judge(c.at, Free, "")
		if n != c.want || !strings.HasPrefix(rule, c.rule) {
			t.Errorf("Judge(%s/%s) = %v %q, want %v %q", c.at.Path, c.at.Name, n, rule, c.want, c.rule)
		}
	}
	// What the name rules already refused stays refused; allowGitConfig
	// frees a config.
	if n, _ := r.Judge(at("/bare", "x"), Protected, "rule"); n != Protected {
		t.Error("a Protected verdict was refined away")
	}
	if n, _ := (Repos{Tree: ft, GitConfig: true}).Judge(at("/bare", "config"), Free, ""); n != Free {
		t.Error("allowGitConfig does not free a bare repository's config")
	}
	// A repository made where a work tree lies above: the mark that makes
	// it one git takes is refused.
	wt := newFakeTree("p/.git/", "p/sub/HEAD=x", "p/sub/refs/")
	if n, rule := (Repos{Tree: wt}).Judge(At{Dir: wt.handle("/p/sub"), Path: "/p/sub", Name: "objects"}, Free, ""); n != Protected || !strings.Contains(rule, "work tree") {
		t.Errorf("a git directory made in a work tree: %v %q", n, rule)
	}
	if !GitNamed("hooks", "x") || GitNamed("src", "main.go") {
		t.Error("GitNamed")
	}
}

// Found by a differential attack on the move of these decisions out of
// nsexec: a directory that cannot be read, moved into a work tree, may
// hold a git directory (EXDEV: mv copies it, judging each mark); and a
// worktree's commondir is resolved as the kernel resolves it (a symlink,
// then ".."), not cleaned by text, nor through a dangling link.
func TestReposAsTheKernelSees(t *testing.T) {
	ft := newFakeTree("w/y/.git/HEAD=x", "w/x/b/HEAD=x", "w/x/b/objects/", "w/x/b/refs/",
		"w/r.git/HEAD=x", "w/r.git/objects/", "w/r.git/refs/", "w/r.git/config=[extensions]\n\tobjectformat = sha256\n",
		"w/lnk->r.git/refs", "w/r.git/worktrees/a/commondir=../../../lnk/..",
		"w/dl->nowhere", "w/r.git/worktrees/b/commondir=../../../dl")
	r := Repos{Tree: ft}
	ft.denied["/w/x/b"] = true
	from := At{Dir: ft.handle("/w/x"), Path: "/w/x", Name: "b"}
	to := At{Dir: ft.handle("/w/y"), Path: "/w/y", Name: "b"}
	if !r.GitDirMovedIn(from, to) {
		t.Error("an unreadable directory moved into a work tree is taken for holding no git directory")
	}
	if r.GitDirMovedIn(At{Dir: ft.handle("/w/x"), Path: "/w/x", Name: "none"}, to) {
		t.Error("nothing moved brings a git directory")
	}
	if got := r.HashSize(ft.handle("/w/r.git/worktrees/a")); got != 32 {
		t.Errorf("a commondir through a symlink and then ..: size %d, want the repository's 32", got)
	}
	if got := r.HashSize(ft.handle("/w/r.git/worktrees/b")); got != 0 {
		t.Errorf("a commondir through a dangling link: size %d, want cannot be told (0)", got)
	}
}
