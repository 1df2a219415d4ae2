package policy

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/testtree"
)

const (
	hidden = testtree.Hidden
	ro     = testtree.RO
	rw     = testtree.RW
)

// slash is the policy's spelling of p, a path as this system spells it.
func slash(t *testing.T, p string) string {
	t.Helper()
	s, err := config.FromOS(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func checkViews(t *testing.T, p *Policy, root string, want map[string]string) {
	t.Helper()
	for rel, w := range want {
		path := slash(t, filepath.Join(root, rel))
		v := p.View(path)
		got := hidden
		switch {
		case v.Writable:
			got = rw
		case v.Readable:
			got = ro
		}
		if got != w {
			t.Errorf("%s: %s, want %s\npolicy: %+v", rel, got, w, p)
		}
	}
}

func build(t *testing.T, s *config.Settings, cwd string) *Policy {
	t.Helper()
	p, err := Build(s, Env{Cwd: cwd, Home: filepath.Join(cwd, "home")})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Spec c.1 precedence rows, on the plan alone (the seatbelt package runs
// the same rows against its profile).
func TestPolicyPrecedence(t *testing.T) {
	w := testtree.Tree(t, testtree.PrecedenceFiles...)
	for _, tc := range testtree.Precedence {
		t.Run(tc.Name, func(t *testing.T) {
			checkViews(t, build(t, tc.Rules.Settings(), w), w, tc.Want)
		})
	}
}

func TestPolicySymlinks(t *testing.T) {
	w := testtree.Tree(t, "real/secret.txt", "deny-link -> real", "work/", "outside/x", "target/")
	// A deny on a link protects what it points to.
	p := build(t, testtree.FSRules{DenyRead: []string{"deny-link"}}.Settings(), w)
	checkViews(t, p, w, map[string]string{"real/secret.txt": hidden})
	// A grant through a link that the sandbox could have planted is refused.
	testtree.Symlink(t, filepath.Join(w, "outside"), filepath.Join(w, "work", "build"))
	p = build(t, testtree.FSRules{AllowWrite: []string{"work", "work/build"}}.Settings(), w)
	checkViews(t, p, w, map[string]string{"outside/x": ro, "work": rw})
	if len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0].Why, "could have been planted") {
		t.Errorf("the refused grant is not reported: %+v", p.Skipped)
	}
	// A link outside every writable area is followed.
	testtree.Symlink(t, filepath.Join(w, "target"), filepath.Join(w, "fixed-link"))
	p = build(t, testtree.FSRules{AllowWrite: []string{"fixed-link"}}.Settings(), w)
	checkViews(t, p, w, map[string]string{"target": rw})
}

func TestPolicyProtectedNames(t *testing.T) {
	names := []string{".bashrc", ".bash_profile", ".gitconfig", ".gitmodules", ".zshrc", ".zprofile", ".profile", ".ripgreprc", ".mcp.json",
		".git/config", ".git/HEAD", ".git/index", ".git/hooks/pre-commit", ".git/objects/test-obj", ".git/refs/heads/main",
		".vscode/settings.json", ".idea/workspace.xml", ".claude/commands/test.md", ".claude/agents/test-agent.md", ".claude/some-other-file.txt", "safe-file.txt",
		".claude/settings.json", ".claude/settings.local.json", "a/.claude/settings.json",
		"a/.bashrc", "a/b/.bashrc", "a/b/c/.bashrc", "a/b/c/d/.bashrc", "a/.vscode/x", "a/b/.vscode/x", "a/b/c/.vscode/x",
		"sub/.git/HEAD", "wt/.git", "home/.BASHRC", "home/deep/er/still/.zshrc"}
	w := testtree.Tree(t, names...)
	s := testtree.FSRules{AllowWrite: []string{"."}}.Settings()
	checkViews(t, build(t, s, w), w, map[string]string{
		".bashrc": ro, ".bash_profile": ro, ".gitconfig": ro, ".gitmodules": ro, ".zshrc": ro, ".zprofile": ro, ".profile": ro,
		".ripgreprc": ro, ".mcp.json": ro, ".git/config": ro, ".git/hooks/pre-commit": ro, ".vscode/settings.json": ro,
		".idea/workspace.xml": ro, ".claude/commands/test.md": ro, ".claude/agents/test-agent.md": ro,
		"safe-file.txt": rw, ".git/objects/test-obj": rw, ".git/refs/heads/main": rw, ".git/index": rw, ".git/HEAD": rw,
		".claude/some-other-file.txt": rw, ".claude/settings.json": ro, ".claude/settings.local.json": ro, "a/.claude/settings.json": ro,
		// Depth 3 counts components below the root.
		"a/.bashrc": ro, "a/b/.bashrc": ro, "a/b/c/.bashrc": rw, "a/b/c/d/.bashrc": rw,
		"a/.vscode/x": ro, "a/b/.vscode/x": ro, "a/b/c/.vscode/x": rw,
		"sub/.git/HEAD": rw, "wt/.git": ro,
		// Home is walked too (it lies in the writable cwd here), case-insensitively.
		"home/.BASHRC": ro, "home/deep/er/still/.zshrc": rw,
	})
	s.MandatoryDenySearchDepth = 1
	checkViews(t, build(t, s, w), w, map[string]string{".bashrc": ro, "a/.bashrc": rw, "a/.vscode/x": rw, ".git/hooks/pre-commit": ro})
	s.MandatoryDenySearchDepth = 3
	s.Filesystem.AllowGitConfig = true
	checkViews(t, build(t, s, w), w, map[string]string{".git/config": rw, ".git/hooks/pre-commit": ro})
}

// A protected name that is a symlink (a dotfile manager's ~/.bashrc, a
// .git in a store) is protected where it leads: its target is read-only,
// every symlink on the way is pinned, a link to nothing is masked, and a
// symlinked .git or .claude is looked into like a directory.
func TestPolicyProtectedSymlinks(t *testing.T) {
	w := testtree.Tree(t, "dotfiles/bashrc", ".bashrc -> dotfiles/bashrc",
		"dotfiles/zshrc", "chain -> dotfiles/zshrc", ".zshrc -> chain",
		".profile -> dotfiles/missing",
		"store/vscode/settings.json", ".vscode -> store/vscode",
		"store/repo.git/hooks/pre-commit", "store/repo.git/config", "store/repo.git/objects/o", ".git -> store/repo.git",
		"real/.git/HEAD", "hookstore/pre-commit", "real/.git/hooks -> hookstore",
		"store/claude/commands/c.md", "store/claude/notes.md", ".claude -> store/claude",
		"ro/target", "sub/.mcp.json -> ro/target",
		"dangling/.git -> nowhere")
	p := build(t, testtree.FSRules{AllowWrite: []string{"."}}.Settings(), w)
	checkViews(t, p, w, map[string]string{
		"dotfiles/bashrc": ro, "dotfiles/zshrc": ro, "store/vscode/settings.json": ro,
		"store/repo.git/hooks/pre-commit": ro, "store/repo.git/config": ro, "store/repo.git/objects/o": rw,
		"hookstore/pre-commit": ro, "store/claude/commands/c.md": ro, "store/claude/notes.md": rw, "ro/target": ro,
	})
	kinds := map[string]LinkKind{}
	for _, l := range p.Links {
		kinds[strings.TrimPrefix(l.Path, slash(t, w)+"/")] = l.Kind
	}
	want := map[string]LinkKind{".bashrc": PinLink, ".zshrc": PinLink, "chain": PinLink, ".profile": MaskLink,
		".vscode": PinLink, ".git": PinLink, "real/.git/hooks": PinLink, ".claude": PinLink, "sub/.mcp.json": PinLink,
		"dangling/.git": MaskLink}
	for path, kind := range want {
		if kinds[path] != kind {
			t.Errorf("%s: %q, want %q\nlinks: %+v", path, kinds[path], kind, p.Links)
		}
	}
	for path := range kinds {
		if _, ok := want[path]; !ok {
			t.Errorf("%s: unexpected %s", path, kinds[path])
		}
	}
	// Where the links' directories are read-only, a writable target is
	// still protected.
	p = build(t, testtree.FSRules{AllowWrite: []string{"dotfiles"}}.Settings(), w)
	checkViews(t, p, w, map[string]string{"dotfiles/bashrc": ro, "dotfiles/other": rw})
}

// A protected directory's own symlinks (a hook linked to a script kept in
// the project, an editor setting linked elsewhere) are protected where
// they lead; one that leads nowhere is masked.
func TestPolicyLinksInsideProtectedDirs(t *testing.T) {
	w := testtree.Tree(t, "scripts/pre-commit", "repo/.git/HEAD", "repo/.git/hooks/pre-commit -> scripts/pre-commit",
		"repo/.git/hooks/post-merge -> scripts/missing", "conf/vs.json", ".vscode/settings.json -> conf/vs.json",
		".vscode/sub/deep.json -> conf/deep.json", "conf/deep.json", "scripts/other")
	p := build(t, testtree.FSRules{AllowWrite: []string{"."}}.Settings(), w)
	checkViews(t, p, w, map[string]string{"scripts/pre-commit": ro, "conf/vs.json": ro, "conf/deep.json": ro, "scripts/other": rw})
	masked := false
	for _, l := range p.Links {
		masked = masked || l.Kind == MaskLink && l.Path == slash(t, filepath.Join(w, "repo/.git/hooks/post-merge"))
	}
	if !masked {
		t.Errorf("a hook linked to nothing is not masked: %+v", p.Links)
	}
}

func TestPolicyProtectsAllowWriteRoots(t *testing.T) {
	w := testtree.Tree(t, "cwd/", "elsewhere/proj/.bashrc", "elsewhere/proj/x")
	s := testtree.FSRules{AllowWrite: []string{"../elsewhere/proj"}}.Settings()
	p, err := Build(s, Env{Cwd: filepath.Join(w, "cwd")})
	if err != nil {
		t.Fatal(err)
	}
	checkViews(t, p, w, map[string]string{"elsewhere/proj/.bashrc": ro, "elsewhere/proj/x": rw})
}

func TestPolicyDefaultWritePaths(t *testing.T) {
	w := testtree.Tree(t, "home/.npm/_logs/", "home/.claude/debug/", "home/.npm/cache/x")
	p := build(t, testtree.FSRules{}.Settings(), w)
	checkViews(t, p, w, map[string]string{"home/.npm/_logs": rw, "home/.claude/debug": rw, "home/.npm/cache/x": ro})
	p = build(t, testtree.FSRules{DenyRead: []string{"~"}}.Settings(), w)
	checkViews(t, p, w, map[string]string{"home/.npm/_logs": hidden, "home/.claude/debug": hidden})
	p = build(t, testtree.FSRules{DenyRead: []string{"~"}, AllowRead: []string{"~/.npm"}}.Settings(), w)
	checkViews(t, p, w, map[string]string{"home/.npm/_logs": rw, "home/.claude/debug": hidden})
}

func TestPolicyDisabled(t *testing.T) {
	w := testtree.Tree(t, ".bashrc")
	s := testtree.FSRules{DenyRead: []string{"."}}.Settings()
	s.Filesystem.Disabled = true
	checkViews(t, build(t, s, w), w, map[string]string{".bashrc": rw})
}

func TestPolicyGlobs(t *testing.T) {
	w := testtree.Tree(t, "logs/a.log", "logs/b.txt", "keys/one.key", "keys/sub/two.key", "src/x.go")
	p := build(t, testtree.FSRules{AllowWrite: []string{"logs/*.log", "src/**"}, DenyRead: []string{"**/*.key"}}.Settings(), w)
	checkViews(t, p, w, map[string]string{"logs/a.log": rw, "logs/b.txt": ro, "keys/one.key": hidden, "keys/sub/two.key": hidden, "src/x.go": rw})
	p = build(t, testtree.FSRules{DenyRead: []string{"nomatch/*.x"}}.Settings(), w)
	if len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0].Why, "matches nothing") {
		t.Errorf("an empty glob is not reported: %+v", p.Skipped)
	}
}

// Making a plan reads the disk and changes nothing in it: no placeholder
// files, no mount points in the user's tree.
func TestPolicyLeavesNoTrace(t *testing.T) {
	w := testtree.Tree(t, "h1/pub/p.txt", ".git/hooks/x", "a/.vscode/y")
	before := listTree(t, w)
	build(t, testtree.FSRules{DenyRead: []string{"h1", "missing"}, AllowRead: []string{"h1/pub"}, AllowWrite: []string{".", "absent/**"}, DenyWrite: []string{".bashrc", ".mcp.json"}}.Settings(), w)
	if after := listTree(t, w); after != before {
		t.Errorf("the tree changed:\nbefore %s\nafter  %s", before, after)
	}
}

func listTree(t *testing.T, root string) string {
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		b.WriteString(strings.TrimPrefix(p, root) + " ")
		return nil
	})
	return b.String()
}

// The deny entries stay in force for what appears after launch: a
// literal path that did not exist, a pattern's later matches; a more
// specific grant re-opens a literal denyRead, not a pattern; srt's own
// per-run directory is never denied.
func TestPolicyDeniedLater(t *testing.T) {
	w := testtree.Tree(t, "src/x.go", "open/inner/", "both/x")
	run := filepath.Join(w, "run")
	s := testtree.FSRules{AllowWrite: []string{".", "open/inner"}, DenyWrite: []string{"secrets/*.pem", "later.txt"},
		DenyRead: []string{"hidden", "**/.env", "open"}}.Settings()
	p, err := Build(s, Env{Cwd: w, Home: filepath.Join(w, "home"), Writable: []string{run}})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{
		"secrets/a.pem": true, "secrets/a.txt": false, "later.txt": true, "later.txt.bak": false,
		"hidden": true, "hidden/f": true, "sub/deep/.env": true, ".env": true, "src/new.go": false,
		"open/x": true, "open/inner/x": false, "run/.env": false,
	} {
		r, denied := p.DeniedLater(slash(t, filepath.Join(w, rel)))
		if denied != want {
			t.Errorf("%s: denied %v (%+v), want %v", rel, denied, r, want)
		}
	}
	// A grant of the denied path itself re-opens it, for reads judged
	// later as at launch: at equal specificity an allow wins (spec c.1).
	s = testtree.FSRules{DenyRead: []string{"both", "**/*.pem"}, AllowRead: []string{"both"}}.Settings()
	if p, err = Build(s, Env{Cwd: w, Home: filepath.Join(w, "home")}); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{"both/x": false, "both/k.pem": true, "src/k.pem": true} {
		if _, denied := p.ReadDeniedLater(slash(t, filepath.Join(w, rel))); denied != want {
			t.Errorf("read %s later: denied %v, want %v", rel, denied, want)
		}
	}
}

// A denyRead entry that is a symlink to nothing yet protects what it
// points to once that appears: reads are judged, and the target (by any
// name) is denied, as the link itself is.
func TestPolicyDanglingDeny(t *testing.T) {
	w := testtree.Tree(t, "dir/", "other/x")
	testtree.Symlink(t, filepath.FromSlash("../dir/tgt"), filepath.Join(w, "other", "dang"))
	for _, tc := range []struct{ name, entry string }{{"relative", "other/dang"}, {"absolute", filepath.Join(w, "other/dang")}} {
		p, err := Build(testtree.FSRules{DenyRead: []string{tc.entry}}.Settings(), Env{Cwd: w, Home: filepath.Join(w, "home")})
		if err != nil {
			t.Fatal(err)
		}
		if p.ReadGuard == "" {
			t.Errorf("%s: reads are not judged", tc.name)
		}
		for rel, want := range map[string]bool{"dir/tgt": true, "other/dang": true, "dir/else": false, "other/x": false} {
			if _, denied := p.ReadDeniedLater(slash(t, filepath.Join(w, rel))); denied != want {
				t.Errorf("%s: read %s later: denied %v, want %v", tc.name, rel, denied, want)
			}
		}
	}
}

// Reads are judged while the command runs only where a denyRead entry
// reaches past the launch's mounts: a pattern, a path that does not
// exist yet, a hidden file with other names (found through Env.Inode).
func TestPolicyReadGuard(t *testing.T) {
	w := testtree.Tree(t, "keys/linked", "keys/single", "src/x.go")
	inode := func(fi fs.FileInfo) (FileID, uint64, bool) {
		if fi.Name() == "linked" {
			return FileID{Dev: 1, Ino: 42}, 2, true
		}
		return FileID{Dev: 1, Ino: 7}, 1, true
	}
	for _, c := range []struct {
		deny   []string
		inode  bool
		reason string
	}{
		{[]string{"keys"}, false, ""},
		{[]string{"keys"}, true, "1 hidden files have other names"},
		{[]string{"**/*.pem"}, false, "is a pattern"},
		{[]string{"missing"}, false, "does not exist yet"},
	} {
		env := Env{Cwd: w, Home: filepath.Join(w, "home")}
		if c.inode {
			env.Inode = inode
		}
		p, err := Build(testtree.FSRules{DenyRead: c.deny}.Settings(), env)
		if err != nil {
			t.Fatal(err)
		}
		if c.reason == "" && p.ReadGuard != "" || !strings.Contains(p.ReadGuard, c.reason) {
			t.Errorf("%v (inode %v): read guard %q, want %q", c.deny, c.inode, p.ReadGuard, c.reason)
		}
		if c.inode && p.HiddenInodes[FileID{Dev: 1, Ino: 42}] == "" {
			t.Errorf("the hidden file with another name is not recorded: %v", p.HiddenInodes)
		}
	}
}

// A deny entry spelled through a symlink is kept as spelled too where the
// command could make that symlink again (it lies in a writable tree): the
// link's place then holds the entry. Through a symlink outside every
// writable tree it is kept only as resolved, and reads of a directory
// stay unjudged (a file's are judged: the host may replace it).
func TestPolicySpelledThroughLinks(t *testing.T) {
	w := testtree.Tree(t, "proj/real/secret.txt", "fixed/real/secrets/k", "proj/src/x")
	for _, l := range []string{"proj/link", "fixed/link"} {
		testtree.Symlink(t, "real", filepath.Join(w, l))
	}
	cwd := filepath.Join(w, "proj")
	for _, tc := range []struct {
		entry     string
		spelled   bool // the link's place holds the entry
		readGuard bool
	}{
		{"link/secret.txt", true, true},
		{filepath.Join(w, "fixed/link/secrets"), false, false},
		{filepath.Join(w, "fixed/link/secrets/k"), false, true},
		{"link/*.pem", true, true},
	} {
		p, err := Build(testtree.FSRules{AllowWrite: []string{"."}, DenyRead: []string{tc.entry}}.Settings(), Env{Cwd: cwd, Home: filepath.Join(w, "home")})
		if err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(cwd, "link")
		if filepath.IsAbs(tc.entry) {
			link = filepath.Join(w, "fixed/link")
		}
		held := false
		for _, r := range p.Later {
			held = held || r.Above(slash(t, link))
		}
		if held != tc.spelled {
			t.Errorf("%s: the link's place holds the entry: %v, want %v (%+v)", tc.entry, held, tc.spelled, p.Later)
		}
		if (p.ReadGuard != "") != tc.readGuard {
			t.Errorf("%s: reads judged: %q, want %v", tc.entry, p.ReadGuard, tc.readGuard)
		}
	}
}
