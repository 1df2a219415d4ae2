package nsexec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
)

// tree creates files (trailing "/" for directories) and symlinks
// ("name -> target") under a temp dir and returns its real path.
func tree(t *testing.T, entries ...string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name, target, ok := strings.Cut(e, " -> "); ok {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if !strings.HasPrefix(target, "/") {
				target = filepath.Join(dir, target)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(dir, e)
		if strings.HasSuffix(e, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("ORIGINAL"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func entries(paths ...string) []config.PathEntry {
	out := make([]config.PathEntry, len(paths))
	for i, p := range paths {
		out[i] = config.PathEntry{Path: p}
	}
	return out
}

type fsRules struct{ denyRead, allowRead, allowWrite, denyWrite []string }

func settings(r fsRules) *config.Settings {
	s := config.Default()
	s.Filesystem.DenyRead = entries(r.denyRead...)
	s.Filesystem.AllowRead = entries(r.allowRead...)
	s.Filesystem.AllowWrite = entries(r.allowWrite...)
	s.Filesystem.DenyWrite = entries(r.denyWrite...)
	return s
}

// see simulates the sandbox's view of p under a plan: the last mount that
// covers p decides.
func see(p *Plan, path string) view {
	v := view{readable: true}
	for _, m := range p.Mounts {
		if !within(path, m.Path) {
			continue
		}
		switch m.Kind {
		case BindWritable:
			v = view{readable: true, writable: true}
		case BindReadOnly:
			v = view{readable: true}
		case MaskDir, MaskFile:
			v = view{readable: path == m.Path && m.Kind == MaskDir} // an empty directory
		}
	}
	return v
}

const (
	hidden = "hidden"
	ro     = "ro"
	rw     = "rw"
)

func checkViews(t *testing.T, p *Plan, root string, want map[string]string) {
	t.Helper()
	for rel, w := range want {
		path := filepath.Join(root, rel)
		v := see(p, path)
		got := hidden
		switch {
		case v.writable:
			got = rw
		case v.readable:
			got = ro
		}
		if got != w {
			t.Errorf("%s: %s, want %s\nplan:\n%s", rel, got, w, p)
		}
	}
}

func build(t *testing.T, s *config.Settings, cwd string) *Plan {
	t.Helper()
	p, err := Build(s, Env{Cwd: cwd, Home: filepath.Join(cwd, "home")})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Spec c.1 precedence rows, on the plan alone.
func TestPlanPrecedence(t *testing.T) {
	w := tree(t, "h1/pub/p.txt", "h1/priv/s.txt", ".env", "sub/a.pem", "sub/deep/b.pem", "readme.txt",
		"secrets/s.txt", "w2/sub/t.txt", "w2/top.txt", "both/x", "home/", "out/", "allow/deny.txt", "allow/ok.txt")
	for _, tc := range []struct {
		name  string
		rules fsRules
		want  map[string]string
	}{
		{"nothing writable by default", fsRules{}, map[string]string{"readme.txt": ro, "h1/pub/p.txt": ro}},
		{"allowRead re-opens inside denyRead", fsRules{denyRead: []string{"h1"}, allowRead: []string{"h1/pub"}},
			map[string]string{"h1/pub/p.txt": ro, "h1/priv/s.txt": hidden, "h1": ro, "readme.txt": ro}},
		{"specific deny beats broader allow", fsRules{denyRead: []string{".env", "**/*.pem"}, allowRead: []string{"."}},
			map[string]string{".env": hidden, "sub/a.pem": hidden, "sub/deep/b.pem": hidden, "readme.txt": ro}},
		{"denied file in allowRead dir stays hidden", fsRules{denyRead: []string{"/", "allow/deny.txt"}, allowRead: []string{"allow"}},
			map[string]string{"allow/deny.txt": hidden, "allow/ok.txt": ro, "readme.txt": hidden}},
		{"same path deny and allow: allow wins", fsRules{denyRead: []string{"both"}, allowRead: []string{"both"}}, map[string]string{"both/x": ro}},
		{"deny / allow / denies nothing", fsRules{denyRead: []string{"/"}, allowRead: []string{"/"}}, map[string]string{"readme.txt": ro}},
		{"denyWrite inside allowWrite", fsRules{allowWrite: []string{"."}, denyWrite: []string{"secrets"}},
			map[string]string{"secrets/s.txt": ro, "readme.txt": rw}},
		{"denyWrite at or above allowWrite wins", fsRules{allowWrite: []string{"w2", "w2/sub"}, denyWrite: []string{"w2"}},
			map[string]string{"w2/sub/t.txt": ro, "w2/top.txt": ro}},
		{"hidden dir inside allowWrite is read-only", fsRules{allowWrite: []string{"."}, denyRead: []string{"h1"}},
			map[string]string{"h1": ro, "h1/priv/s.txt": hidden, "readme.txt": rw}},
		{"allowWrite inside denyRead is re-exposed", fsRules{denyRead: []string{"h1"}, allowWrite: []string{"h1/pub"}},
			map[string]string{"h1/pub/p.txt": rw, "h1/priv/s.txt": hidden}},
		{"missing allowWrite is skipped", fsRules{allowWrite: []string{"nonexistent-dir", "out/**"}}, map[string]string{"out": rw, "readme.txt": ro}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkViews(t, build(t, settings(tc.rules), w), w, tc.want)
		})
	}
}

func TestPlanMaskKeepsMountPoints(t *testing.T) {
	w := tree(t, "h1/a/pub/p.txt", "h1/a/s.txt", "h1/key.txt")
	p := build(t, settings(fsRules{denyRead: []string{"h1"}, allowRead: []string{"h1/a/pub", "h1/key.txt"}}), w)
	if len(p.Mounts) == 0 || p.Mounts[0].Kind != MaskDir || p.Mounts[0].Path != filepath.Join(w, "h1") {
		t.Fatalf("plan:\n%s", p)
	}
	m := p.Mounts[0]
	if strings.Join(m.Keep, ",") != "a/pub" || strings.Join(m.KeepFiles, ",") != "key.txt" {
		t.Errorf("keep = %q files %q", m.Keep, m.KeepFiles)
	}
}

func TestPlanSymlinks(t *testing.T) {
	w := tree(t, "real/secret.txt", "deny-link -> real", "work/", "outside/x", "target/")
	// A deny on a link protects what it points to.
	p := build(t, settings(fsRules{denyRead: []string{"deny-link"}}), w)
	checkViews(t, p, w, map[string]string{"real/secret.txt": hidden})
	// A grant through a link that the sandbox could have planted is refused.
	if err := os.Symlink(filepath.Join(w, "outside"), filepath.Join(w, "work", "build")); err != nil {
		t.Fatal(err)
	}
	p = build(t, settings(fsRules{allowWrite: []string{"work", "work/build"}}), w)
	checkViews(t, p, w, map[string]string{"outside/x": ro, "work": rw})
	if !strings.Contains(p.String(), "could have been planted") {
		t.Errorf("the refused grant is not reported:\n%s", p)
	}
	// A link outside every writable area is followed.
	if err := os.Symlink(filepath.Join(w, "target"), filepath.Join(w, "fixed-link")); err != nil {
		t.Fatal(err)
	}
	p = build(t, settings(fsRules{allowWrite: []string{"fixed-link"}}), w)
	checkViews(t, p, w, map[string]string{"target": rw})
}

func TestPlanProtectedNames(t *testing.T) {
	names := []string{".bashrc", ".bash_profile", ".gitconfig", ".gitmodules", ".zshrc", ".zprofile", ".profile", ".ripgreprc", ".mcp.json",
		".git/config", ".git/HEAD", ".git/index", ".git/hooks/pre-commit", ".git/objects/test-obj", ".git/refs/heads/main",
		".vscode/settings.json", ".idea/workspace.xml", ".claude/commands/test.md", ".claude/agents/test-agent.md", ".claude/some-other-file.txt", "safe-file.txt",
		"a/.bashrc", "a/b/.bashrc", "a/b/c/.bashrc", "a/b/c/d/.bashrc", "a/.vscode/x", "a/b/.vscode/x", "a/b/c/.vscode/x",
		"sub/.git/HEAD", "wt/.git", "home/.BASHRC", "home/deep/er/still/.zshrc"}
	w := tree(t, names...)
	s := settings(fsRules{allowWrite: []string{"."}})
	checkViews(t, build(t, s, w), w, map[string]string{
		".bashrc": ro, ".bash_profile": ro, ".gitconfig": ro, ".gitmodules": ro, ".zshrc": ro, ".zprofile": ro, ".profile": ro,
		".ripgreprc": ro, ".mcp.json": ro, ".git/config": ro, ".git/hooks/pre-commit": ro, ".vscode/settings.json": ro,
		".idea/workspace.xml": ro, ".claude/commands/test.md": ro, ".claude/agents/test-agent.md": ro,
		"safe-file.txt": rw, ".git/objects/test-obj": rw, ".git/refs/heads/main": rw, ".git/index": rw, ".git/HEAD": rw,
		".claude/some-other-file.txt": rw,
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

	// Ancestors between a protected path and its write root are pinned.
	p := build(t, settings(fsRules{allowWrite: []string{"."}}), w)
	pinned := false
	for _, m := range p.Mounts {
		pinned = pinned || (m.Path == filepath.Join(w, ".git") && m.Kind == BindWritable)
	}
	if !pinned {
		t.Errorf(".git is not pinned:\n%s", p)
	}
}

// A protected name that is a symlink (a dotfile manager's ~/.bashrc, a
// .git in a store) is protected where it leads: its target is read-only,
// every symlink on the way is pinned, a link to nothing is masked, and a
// symlinked .git or .claude is looked into like a directory.
func TestPlanProtectedSymlinks(t *testing.T) {
	w := tree(t, "dotfiles/bashrc", ".bashrc -> dotfiles/bashrc",
		"dotfiles/zshrc", "chain -> dotfiles/zshrc", ".zshrc -> chain",
		".profile -> dotfiles/missing",
		"store/vscode/settings.json", ".vscode -> store/vscode",
		"store/repo.git/hooks/pre-commit", "store/repo.git/config", "store/repo.git/objects/o", ".git -> store/repo.git",
		"real/.git/HEAD", "hookstore/pre-commit", "real/.git/hooks -> hookstore",
		"store/claude/commands/c.md", "store/claude/notes.md", ".claude -> store/claude",
		"ro/target", "sub/.mcp.json -> ro/target",
		"dangling/.git -> nowhere")
	p := build(t, settings(fsRules{allowWrite: []string{"."}}), w)
	checkViews(t, p, w, map[string]string{
		"dotfiles/bashrc": ro, "dotfiles/zshrc": ro, "store/vscode/settings.json": ro,
		"store/repo.git/hooks/pre-commit": ro, "store/repo.git/config": ro, "store/repo.git/objects/o": rw,
		"hookstore/pre-commit": ro, "store/claude/commands/c.md": ro, "store/claude/notes.md": rw, "ro/target": ro,
	})
	kinds := map[string]MountKind{}
	for _, m := range p.Mounts {
		if m.Kind == PinLink || m.Kind == MaskLink {
			kinds[strings.TrimPrefix(m.Path, w+"/")] = m.Kind
		}
	}
	want := map[string]MountKind{".bashrc": PinLink, ".zshrc": PinLink, "chain": PinLink, ".profile": MaskLink,
		".vscode": PinLink, ".git": PinLink, "real/.git/hooks": PinLink, ".claude": PinLink, "sub/.mcp.json": PinLink,
		"dangling/.git": MaskLink}
	for path, kind := range want {
		if kinds[path] != kind {
			t.Errorf("%s: %q, want %q\nplan:\n%s", path, kinds[path], kind, p)
		}
	}
	for path := range kinds {
		if _, ok := want[path]; !ok {
			t.Errorf("%s: unexpected %s\nplan:\n%s", path, kinds[path], p)
		}
	}
	// Where the links' directories are read-only, nothing needs pinning,
	// but a writable target is still protected, and a link to nothing is
	// masked wherever it is seen: writing through it would create its
	// target in the writable dotfiles.
	p = build(t, settings(fsRules{allowWrite: []string{"dotfiles"}}), w)
	checkViews(t, p, w, map[string]string{"dotfiles/bashrc": ro, "dotfiles/other": rw})
	for _, m := range p.Mounts {
		if m.Kind == PinLink || m.Kind == MaskLink && m.Path != filepath.Join(w, ".profile") && m.Path != filepath.Join(w, "dangling/.git") {
			t.Errorf("a link in a read-only directory is pinned: %+v", m)
		}
	}
}

// A protected directory's own symlinks (a hook linked to a script kept in
// the project, an editor setting linked elsewhere) are protected where
// they lead; one that leads nowhere is masked.
func TestPlanLinksInsideProtectedDirs(t *testing.T) {
	w := tree(t, "scripts/pre-commit", "repo/.git/HEAD", "repo/.git/hooks/pre-commit -> scripts/pre-commit",
		"repo/.git/hooks/post-merge -> scripts/missing", "conf/vs.json", ".vscode/settings.json -> conf/vs.json",
		".vscode/sub/deep.json -> conf/deep.json", "conf/deep.json", "scripts/other")
	p := build(t, settings(fsRules{allowWrite: []string{"."}}), w)
	checkViews(t, p, w, map[string]string{"scripts/pre-commit": ro, "conf/vs.json": ro, "conf/deep.json": ro, "scripts/other": rw})
	masked := false
	for _, m := range p.Mounts {
		masked = masked || m.Kind == MaskLink && m.Path == filepath.Join(w, "repo/.git/hooks/post-merge")
	}
	if !masked {
		t.Errorf("a hook linked to nothing is not masked:\n%s", p)
	}
}

// Plan.Writable answers as the mounts do, the last that covers a path
// deciding.
func TestPlanWritable(t *testing.T) {
	w := tree(t, "src/a.go", "secrets/k", ".bashrc", "out/")
	p := build(t, settings(fsRules{allowWrite: []string{"."}, denyWrite: []string{"secrets"}, denyRead: []string{"out"}}), w)
	for rel, want := range map[string]bool{"src/a.go": true, "src/new": true, "secrets/k": false, ".bashrc": false, "out/x": false, "..": false} {
		if got := p.Writable(filepath.Clean(filepath.Join(w, rel))); got != want {
			t.Errorf("%s: writable %v, want %v\n%s", rel, got, want, p)
		}
	}
}

func TestPlanProtectsAllowWriteRoots(t *testing.T) {
	w := tree(t, "cwd/", "elsewhere/proj/.bashrc", "elsewhere/proj/x")
	s := settings(fsRules{allowWrite: []string{"../elsewhere/proj"}})
	p, err := Build(s, Env{Cwd: filepath.Join(w, "cwd")})
	if err != nil {
		t.Fatal(err)
	}
	checkViews(t, p, w, map[string]string{"elsewhere/proj/.bashrc": ro, "elsewhere/proj/x": rw})
}

func TestPlanDefaultWritePaths(t *testing.T) {
	w := tree(t, "home/.npm/_logs/", "home/.claude/debug/", "home/.npm/cache/x")
	p := build(t, settings(fsRules{}), w)
	checkViews(t, p, w, map[string]string{"home/.npm/_logs": rw, "home/.claude/debug": rw, "home/.npm/cache/x": ro})
	p = build(t, settings(fsRules{denyRead: []string{"~"}}), w)
	checkViews(t, p, w, map[string]string{"home/.npm/_logs": hidden, "home/.claude/debug": hidden})
	p = build(t, settings(fsRules{denyRead: []string{"~"}, allowRead: []string{"~/.npm"}}), w)
	checkViews(t, p, w, map[string]string{"home/.npm/_logs": rw, "home/.claude/debug": hidden})
}

func TestPlanDisabled(t *testing.T) {
	w := tree(t, ".bashrc")
	s := settings(fsRules{denyRead: []string{"."}})
	s.Filesystem.Disabled = true
	checkViews(t, build(t, s, w), w, map[string]string{".bashrc": rw})
}

func TestPlanGlobs(t *testing.T) {
	w := tree(t, "logs/a.log", "logs/b.txt", "keys/one.key", "keys/sub/two.key", "src/x.go")
	p := build(t, settings(fsRules{allowWrite: []string{"logs/*.log", "src/**"}, denyRead: []string{"**/*.key"}}), w)
	checkViews(t, p, w, map[string]string{"logs/a.log": rw, "logs/b.txt": ro, "keys/one.key": hidden, "keys/sub/two.key": hidden, "src/x.go": rw})
	p = build(t, settings(fsRules{denyRead: []string{"nomatch/*.x"}}), w)
	if !strings.Contains(p.String(), "matches nothing") {
		t.Errorf("an empty glob is not reported:\n%s", p)
	}
}

// Making a plan reads the disk and changes nothing in it: no placeholder
// files, no mount points in the user's tree.
func TestPlanLeavesNoTrace(t *testing.T) {
	w := tree(t, "h1/pub/p.txt", ".git/hooks/x", "a/.vscode/y")
	before := listTree(t, w)
	build(t, settings(fsRules{denyRead: []string{"h1", "missing"}, allowRead: []string{"h1/pub"}, allowWrite: []string{".", "absent/**"}, denyWrite: []string{".bashrc", ".mcp.json"}}), w)
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

func TestPlanJSONRoundTrip(t *testing.T) {
	w := tree(t, "h1/pub/p.txt")
	p := build(t, settings(fsRules{denyRead: []string{"h1"}, allowRead: []string{"h1/pub"}}), w)
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Plan
	if err := json.Unmarshal(data, &q); err != nil {
		t.Fatal(err)
	}
	if q.String() != p.String() || len(q.Mounts[0].Keep) != 1 {
		t.Errorf("round trip changed the plan:\n%s\n%s", p, &q)
	}
}
