package pathguard

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"
)

// fakeRoot is a fakeTree read by absolute paths, as Root.
type fakeRoot struct{ t *fakeTree }

func (r fakeRoot) ReadFile(p string, limit int) ([]byte, error) { return r.t.ReadFile(0, p, limit) }
func (r fakeRoot) Resolve(p string) (string, bool) {
	real, _, err := r.t.resolve(0, p, true)
	return real, err == nil
}
func (r fakeRoot) Links(p string) map[string]string {
	real, n, err := r.t.resolve(0, p, true)
	if err != nil || n.mode != fs.ModeDir {
		return nil
	}
	links := map[string]string{}
	for q, n := range r.t.nodes {
		if path.Dir(q) == real && q != "/" && n.mode == fs.ModeSymlink {
			links[path.Base(q)] = n.target
		}
	}
	return links
}

// A repository's hooks as the guard keeps them, read from its git
// directory: core.hooksPath (absolute, relative, ~/, husky's, the work
// tree itself), includes, a hook linked to a script, a .git file and a
// commondir leading elsewhere.
func TestHookReader(t *testing.T) {
	ft := newFakeTree(
		"home/u/.hooks/",
		"w/plain/.git/HEAD=x", "w/plain/.git/config=[core]\n\tbare = false\n",
		"w/abs/.git/config=[core]\n\thooksPath = /w/shared\n",
		"w/rel/.git/config=[core]\n\thooksPath = .husky/_\n",
		"w/home/.git/config=[core]\n\thooksPath = ~/.hooks\n",
		"w/self/.git/config=[core]\n\thooksPath = .\n",
		"w/inc/.git/config=[include]\n\tpath = extra.cfg\n",
		"w/inc/.git/extra.cfg=[core]\n\thooksPath = /w/fromInclude\n",
		"w/linked/.git/config=",
		"w/linked/.git/hooks/pre-commit->../../scripts/check.sh",
		"w/linked/scripts/check.sh=#!",
		"w/wt/.git=gitdir: /w/main/.git/worktrees/wt\n",
		"w/main/.git/worktrees/wt/commondir=../..\n",
		"w/main/.git/config=[core]\n\thooksPath = hooks-here\n",
		"w/main/.git/worktrees/wt/config.worktree=",
		"w/escape/.git/config=[core]\n\thooksPath = ../up\n",
	)
	hr := HookReader{Root: fakeRoot{ft}, Home: "/home/u", Extra: nil}
	type want struct {
		dirs, targets []string
		names         [][]string
	}
	for _, c := range []struct {
		tree   string
		file   string // a .git file's content
		w      want
		absent bool
	}{
		{tree: "/w/plain", w: want{}},
		{tree: "/w/abs", w: want{dirs: []string{"/w/shared"}}},
		{tree: "/w/rel", w: want{dirs: []string{"/w/rel/.husky/_"}, targets: []string{"/w/rel/.husky/pre-commit"}, names: [][]string{{".husky", "_"}}}},
		{tree: "/w/home", w: want{dirs: []string{"/home/u/.hooks"}}},
		{tree: "/w/self", w: want{targets: []string{"/w/self/pre-commit", "/w/self/post-checkout"}}},
		{tree: "/w/inc", w: want{dirs: []string{"/w/fromInclude"}, targets: []string{"/w/inc/.git/extra.cfg"}}},
		{tree: "/w/linked", w: want{targets: []string{"/w/linked/scripts/check.sh"}}},
		{tree: "/w/wt", file: "gitdir: /w/main/.git/worktrees/wt\n", w: want{dirs: []string{"/w/wt/hooks-here"}, names: [][]string{{"hooks-here"}}}},
		{tree: "/w/escape", w: want{dirs: []string{"/w/up"}}},
		{tree: "/w/none", absent: true},
		{tree: "/w/wt", file: "not a git file", absent: true},
	} {
		h := hr.Tree(c.tree, []byte(c.file), c.file != "")
		if c.absent {
			if h != nil {
				t.Errorf("%s: hooks %+v, want none", c.tree, h)
			}
			continue
		}
		if h == nil {
			t.Errorf("%s: no hooks read", c.tree)
			continue
		}
		for _, d := range c.w.dirs {
			if !slices.Contains(h.Dirs, d) {
				t.Errorf("%s: dirs %v lack %s", c.tree, h.Dirs, d)
			}
		}
		for _, tg := range c.w.targets {
			if !slices.Contains(h.Targets, tg) {
				t.Errorf("%s: targets %v lack %s", c.tree, h.Targets, tg)
			}
		}
		if len(c.w.dirs) == 0 && len(h.Dirs) > 0 || len(c.w.targets) == 0 && len(h.Targets) > 0 {
			t.Errorf("%s: kept %v %v, want nothing there", c.tree, h.Dirs, h.Targets)
		}
		if !slices.EqualFunc(h.Names, c.w.names, slices.Equal) {
			t.Errorf("%s: names %v, want %v", c.tree, h.Names, c.w.names)
		}
		if len(h.Targets) != len(h.Why) {
			t.Errorf("%s: %d targets, %d reasons", c.tree, len(h.Targets), len(h.Why))
		}
	}
	// The host's global core.hooksPath holds for every repository.
	hr.Extra = []string{"~/.hooks"}
	if h := hr.GitDir("/w/plain", "/w/plain/.git"); !slices.Contains(h.Dirs, "/home/u/.hooks") {
		t.Errorf("a global core.hooksPath not kept: %v", h.Dirs)
	}
	// Without a home, ~/ is not followed.
	hr = HookReader{Root: fakeRoot{ft}}
	if h := hr.Tree("/w/home", nil, false); h == nil || len(h.Dirs) != 0 {
		t.Errorf("~/ followed without a home: %+v", h)
	}
}

// What the kept hooks hold, and what a directory moved whole would
// bring among them.
func TestHooksHoldsAndBeneath(t *testing.T) {
	h := &Hooks{}
	h.Dirs = []string{"/w/t/.husky/_"}
	h.Keep("a hook's script", "/w/t/scripts/check.sh")
	h.Names = [][]string{{"tools", "hooks"}}
	o := &Hooks{Dirs: []string{"/w/t/.husky/_", "/elsewhere"}, Names: [][]string{{"tools", "hooks"}, {"more"}}}
	o.Keep("an include", "/w/t/scripts/check.sh", "/w/t/inc.cfg")
	h.Merge(o)
	if len(h.Dirs) != 2 || len(h.Targets) != 2 || len(h.Names) != 2 || len(h.Why) != 2 {
		t.Fatalf("merged twice what both keep: %+v", h)
	}
	for _, c := range []struct {
		full, kept string
	}{
		{"/w/t/.husky/_/pre-commit", "/w/t/.husky/_"},
		{"/w/t/scripts/check.sh", "/w/t/scripts/check.sh"},
		{"/w/t/sub/tools/hooks/pre-push", "/w/t/sub/tools/hooks"},
		{"/w/t/tools/hooks", "/w/t/tools/hooks"},
		{"/w/t/src/main.go", ""},
		{"/w/t/tools/x", ""},
		{"/w/other/tools/hooks/x", ""},
	} {
		kept, why, ok := h.Holds("/w/t", c.full)
		if ok != (c.kept != "") || kept != c.kept || ok && !strings.Contains(why, c.kept) {
			t.Errorf("Holds(%s) = %q %q %v, want %q", c.full, kept, why, ok, c.kept)
		}
	}
	for _, c := range []struct {
		full string
		want bool
	}{
		{"/w/t/.husky", true},  // the hooks directory beneath
		{"/w/t/scripts", true}, // a script kept beneath
		{"/w/t/a/tools", true}, // ends with the start of a relative hooksPath
		{"/w/t/a/tools/hooks", true},
		{"/w/t/src", false},
		{"/w/t/hooks", false},
	} {
		if got := h.Beneath("/w/t", c.full); got != c.want {
			t.Errorf("Beneath(%s) = %v, want %v", c.full, got, c.want)
		}
	}
	if f := h.FirstNames(); !f["tools"] || !f["more"] || len(f) != 2 {
		t.Errorf("first names %v", f)
	}
	if (&Hooks{}).Placed() || (*Hooks)(nil).Placed() || !h.Placed() || (&Hooks{Names: h.Names}).Placed() {
		t.Error("Placed: only directories and files kept place hooks")
	}
	if !(&Hooks{}).Empty() || h.Empty() {
		t.Error("Empty")
	}
	if RelParts("/w/t", "/w/t") != nil || RelParts("/w/t", "/w/tx/a") != nil || !slices.Equal(RelParts("/w/t", "/w/t/a/b"), []string{"a", "b"}) {
		t.Error("RelParts")
	}
}

// Git's expansions of a path, as the guard follows them.
func TestHomeRelativeAndGitFileTarget(t *testing.T) {
	for _, c := range []struct {
		v, home, want string
		ok            bool
	}{
		{"~/x", "/h", "/h/x", true},
		{"~", "/h", "/h", true},
		{"~/x", "", "/x", false},
		{"~other/x", "/h", "", false},
		{"", "/h", "", false},
		{"rel/x", "/h", "rel/x", true},
	} {
		if got, ok := HomeRelative(c.v, c.home); got != c.want || ok != c.ok {
			t.Errorf("HomeRelative(%q, %q) = %q %v", c.v, c.home, got, ok)
		}
	}
	for _, c := range []struct {
		content, want string
		ok            bool
	}{
		{"gitdir: /r/.git\n", "/r/.git", true},
		{"gitdir: ../r/.git\r\n", "/w/t/../r/.git", true},
		{"gitdir: /r\x00/evil", "/r", true},
		{"gitdir: ", "", false},
		{"nothing", "", false},
	} {
		if got, ok := GitFileTarget("/w/t", []byte(c.content)); got != c.want || ok != c.ok {
			t.Errorf("GitFileTarget(%q) = %q %v", c.content, got, ok)
		}
	}
	ft := newFakeTree("real/dir/", "w/link->/real")
	if s := Spellings(fakeRoot{ft}, "/w/link/dir/../x"); !slices.Equal(s, []string{"/w/link/x", "/real/x"}) {
		t.Errorf("Spellings through a symlink: %v", s)
	}
	if s := Spellings(fakeRoot{ft}, "/real/new"); !slices.Equal(s, []string{"/real/new"}) {
		t.Errorf("Spellings of a plain path: %v", s)
	}
}
