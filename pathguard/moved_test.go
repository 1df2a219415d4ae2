package pathguard

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"
)

// Moving a name away, one case per rule.
func TestDecideMoveAway(t *testing.T) {
	ft := newFakeTree("w/src/a.go=x", "w/.bashrc=x", "w/.claude/commands/x.md=x", "w/r/.git/HEAD=x", "w/r/.git/hooks/pre-commit=#",
		"w/r/.git/config=[core]", "w/bare/HEAD=x", "w/bare/hooks/post-update=#", "w/plain/HEAD=x", "w/kept/.git/HEAD=x", "w/made/")
	d := Decider{Repos: Repos{Tree: ft},
		KeepsHooks: func(tree string) bool { return tree == "/w/kept" },
		Made:       func(a At, anchor string) bool { return anchor == "/w/made" }}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	for _, c := range []struct {
		at     At
		reason string
	}{
		{at("/w/src", "a.go"), ""},
		{at("/w", ".bashrc"), "protected name /w/.bashrc"},
		{at("/w", ".claude"), "protected name /w/.claude"},
		{at("/w/made", ".claude"), "protected name /w/made/.claude"}, // made or not: its commands are judged by its name
		{at("/w/r/.git", "hooks"), "a repository's hooks directory: /w/r/.git/hooks"},
		{at("/w/r/.git", "config"), "a repository's config"},
		{at("/w/bare", "HEAD"), reasonLastMark},
		{at("/w/plain", "HEAD"), ""},
		{at("/w/r", ".git"), ""},
		{at("/w/kept", ".git"), "the repository's hooks"},
	} {
		v := d.MoveAway(c.at)
		switch {
		case c.reason == "" && v.Refused():
			t.Errorf("move away %s/%s refused: %+v", c.at.Path, c.at.Name, v)
		case c.reason != "" && (v.Errno != EACCES || !strings.HasPrefix(v.Reason, c.reason)):
			t.Errorf("move away %s/%s: %+v, want %q", c.at.Path, c.at.Name, v, c.reason)
		}
	}
}

// A directory moved whole: EXDEV where it carries what the backend keeps
// or a git directory into a work tree; the names beneath are asked, and
// a symlink's target read; a tree that cannot be read counts as carrying.
func TestDecideMoveWhole(t *testing.T) {
	ft := newFakeTree("w/plain/a/b.go=x", "w/keys/deep/id.pem=x", "w/links/l->/etc", "w/bare/x/HEAD=x",
		"w/bare/x/objects/", "w/bare/x/refs/", "w/repo/.git/HEAD=x", "w/repo/dest/", "w/big/", "w/locked/in/x=1", "w/out/")
	ft.denied["/w/locked/in"] = true
	for i := range MaxMovedTree + 1 {
		ft.add("/w/big/"+strings.Repeat("f", 1+i%7)+string(rune('a'+i%26))+strconv.Itoa(i), &fakeNode{})
	}
	var asked []string
	d := Decider{Repos: Repos{Tree: ft},
		Carried: func(from, to string) (bool, func(string, fs.DirEntry, string) bool) {
			if from == "/w/kept" || to == "/w/keep-here" {
				return true, nil
			}
			return false, func(rel string, e fs.DirEntry, target string) bool {
				asked = append(asked, rel)
				return strings.HasSuffix(rel, ".pem") || target == "/etc"
			}
		}}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	for _, c := range []struct {
		from, to At
		exdev    bool
	}{
		{at("/w", "plain"), at("/w/out", "p"), false},
		{at("/w", "keys"), at("/w/out", "k"), true},       // a pattern's match beneath
		{at("/w", "links"), at("/w/out", "l"), true},      // a symlink leading a kept path away
		{at("/w", "plain"), at("/w", "keep-here"), true},  // whole: what is kept there
		{at("/w", "bare"), at("/w/repo/dest", "b"), true}, // a git directory into a work tree
		{at("/w", "bare"), at("/w/out", "b"), false},
		{at("/w", "locked"), at("/w/out", "x"), true}, // cannot be read
		{at("/w", "big"), at("/w/out", "big"), true},  // more than MaxMovedTree names
	} {
		asked = nil
		v := d.MoveWhole(c.from, c.to)
		if got := v.Errno == EXDEV; got != c.exdev || v.Refused() && v.Errno != EXDEV {
			t.Errorf("move %s/%s to %s/%s: %+v, want EXDEV %v", c.from.Path, c.from.Name, c.to.Path, c.to.Name, v, c.exdev)
		}
		if c.from.Name == "plain" && !c.exdev && strings.Join(asked, " ") != "a a/b.go" {
			t.Errorf("names asked %q, want every name beneath, relative", asked)
		}
	}
	if v := (Decider{Repos: Repos{Tree: ft}}).MoveWhole(at("/w", "keys"), at("/w/out", "k")); v.Refused() {
		t.Errorf("nothing kept, yet %+v", v)
	}
}

// A link's source: never a protected or judged file, nor one outside the
// writable trees or under a deny entry; a descriptor's file with no path
// is the backend's.
func TestDecideLinkSource(t *testing.T) {
	d := Decider{Writable: func(full string) bool { return Under(full, "/w") },
		Later: func(full string) (string, bool) { return "denyWrite", strings.HasSuffix(full, ".pem") }}
	for _, c := range []struct {
		at     At
		n      Name
		rule   string
		reason string
	}{
		{At{Path: "/w", Name: "a.go"}, Free, "", ""},
		{At{Path: "/home/u", Name: ".bashrc"}, Free, "", "not writable here"},
		{At{Path: "/w", Name: ".bashrc"}, Protected, "/w/.bashrc", "protected name /w/.bashrc"},
		{At{Path: "/w/r/.git", Name: "config"}, GitConfig, "/w/r/.git/config", "a repository's config"},
		{At{Path: "/w", Name: "k.pem"}, Free, "", "denyWrite"}, // KernelFirst: a read-only destination first
		{At{Path: "anon_inode:[x]", Full: "anon_inode:[x]"}, Protected, "", ""},
	} {
		v := d.LinkSource(c.at, c.n, c.rule)
		switch {
		case c.reason == "" && v.Refused():
			t.Errorf("link from %s refused: %+v", c.at.full(), v)
		case c.reason != "" && (v.Errno != EACCES || !strings.HasPrefix(v.Reason, c.reason)):
			t.Errorf("link from %s: %+v, want %q", c.at.full(), v, c.reason)
		}
	}
}

// A .git or commondir put other than by writing it: a file never, a
// symlink only into a writable tree outside every work tree.
func TestDecideGitLink(t *testing.T) {
	ft := newFakeTree("w/repos/r.git/HEAD=x", "w/proj/.git/HEAD=x", "w/proj/sub/x.git/", "out/r.git/", "w/new/")
	d := Decider{Repos: Repos{Tree: ft},
		TreeWritable: func(p string) bool { return Under(p, "/w") },
		Resolve: func(p string) (Dir, string, error) {
			real, n, err := ft.resolve(0, p, true)
			if err != nil {
				return -1, "", err
			}
			if n.mode != fs.ModeDir {
				return -1, "", errors.New("not a directory")
			}
			return ft.handle(real), real, nil
		}}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	for _, c := range []struct {
		at      At
		regular bool
		target  string
		reason  string
	}{
		{at("/w/new", "x"), true, "", ""}, // not a .git
		{at("/w/new", ".git"), false, "/w/repos/r.git", ""},
		{at("/w/new", ".git"), false, "../repos/r.git", ""},
		{at("/w/new", ".git"), true, "", "a .git file or a commondir is made only by writing it"},
		{at("/w/new", "commondir"), false, "/w/repos/r.git", "a .git file or a commondir is made only by writing it"},
		{at("/w/new", ".git"), false, "/out/r.git", "a .git symlink: /out/r.git leads to /out/r.git, outside the trees"},
		{at("/w/new", ".git"), false, "/w/proj/sub/x.git", "a .git symlink: /w/proj/sub/x.git leads to /w/proj/sub/x.git, in a work tree"},
		{at("/w/new", ".git"), false, "/w/none", "a .git symlink: /w/none does not lead to a directory"},
	} {
		v := d.GitLink(c.at, c.regular, c.target)
		switch {
		case c.reason == "" && v.Refused():
			t.Errorf("%s/%s -> %q refused: %+v", c.at.Path, c.at.Name, c.target, v)
		case c.reason != "" && (v.Errno != EACCES || !strings.HasPrefix(v.Reason, c.reason)):
			t.Errorf("%s/%s -> %q: %+v, want %q", c.at.Path, c.at.Name, c.target, v, c.reason)
		}
	}
	if err := (Decider{Repos: Repos{Tree: ft}}).LeadsIn("/w/repos/r.git"); err == nil {
		t.Error("led in with no way to tell where")
	}
}

// A symlink on the way of a protected path (.ssh of .ssh/config) is
// refused where that path's anchor existed at launch, and made freely in
// a tree the command made; any other symlink is free.
func TestLeadOnProtectedPath(t *testing.T) {
	for _, c := range []struct {
		p, anchor string
	}{
		{"/h/.ssh", "/h"}, {"/h/.SSH", "/h"}, {"/h/.config", "/h"}, {"/h/.config/git", "/h"},
		{"/h/.local", "/h"}, {"/h/.local/lib", "/h"}, {"/h/.local/lib/python3.12", "/h"},
		{"/h/.local/lib/python3.12/site-packages", "/h"}, {"/h/.config/systemd", "/h"},
		{".ssh", "."}, {"/h/src", ""}, {"/h/lib", ""}, {"/h/.ssh/known_hosts", ""}, {"/h/.local/share", "/h"},
	} {
		anchor, ok := (Rules{}).OnProtectedPath(c.p)
		if ok != (c.anchor != "") || anchor != c.anchor {
			t.Errorf("OnProtectedPath(%q) = %q %v, want %q", c.p, anchor, ok, c.anchor)
		}
	}
	d := Decider{Made: func(a At, anchor string) bool { return anchor == "/made" }}
	for _, c := range []struct {
		dir, name string
		refused   bool
	}{
		{"/h", ".ssh", true}, {"/h/.local", "lib", true}, {"/made", ".ssh", false}, {"/h", "src", false},
	} {
		if v := d.Lead(At{Path: c.dir, Name: c.name}, "/elsewhere"); v.Refused() != c.refused {
			t.Errorf("a symlink at %s/%s: %+v, want refused %v", c.dir, c.name, v, c.refused)
		}
	}
}
