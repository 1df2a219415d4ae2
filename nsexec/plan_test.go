package nsexec

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/testtree"
	"github.com/srt-go/srt/policy"
)

// The policy's own tests (package policy) judge what each rule means;
// these judge the mounts that carry it out.

// see simulates the sandbox's view of p under a plan: the last mount that
// covers p decides, over a read-only host.
func see(p *Plan, path string) policy.View {
	v := policy.View{Readable: true}
	for _, m := range p.Mounts {
		if !policy.Under(path, m.Path) {
			continue
		}
		switch m.Kind {
		case BindWritable:
			v = policy.View{Readable: true, Writable: true}
		case BindReadOnly:
			v = policy.View{Readable: true}
		case MaskDir, MaskFile:
			v = policy.View{Readable: path == m.Path && m.Kind == MaskDir} // an empty directory
		}
	}
	return v
}

func build(t *testing.T, s *config.Settings, cwd string) (*Plan, *policy.Policy) {
	t.Helper()
	pol, err := policy.Build(s, policy.Env{Cwd: cwd, Home: filepath.Join(cwd, "home"), Dirs: dirReader})
	if err != nil {
		t.Fatal(err)
	}
	return Mounts(pol), pol
}

// The mounts show every path of a tree as the policy says, for rule sets
// that exercise every kind of mount: masks over a read-only host, binds
// inside masks, read-only holes in writable trees, protected names and
// their pinned ancestors, globs, the default write paths.
func TestMountsMatchPolicy(t *testing.T) {
	w := testtree.Tree(t, "h1/pub/p.txt", "h1/priv/s.txt", ".env", "sub/a.pem", "sub/deep/b.pem", "readme.txt",
		"secrets/s.txt", "w2/sub/t.txt", "w2/top.txt", "allow/deny.txt", "allow/ok.txt", ".bashrc", ".git/hooks/pre-commit",
		".git/config", ".git/HEAD", "a/b/.vscode/x", "home/.npm/_logs/", "home/.bashrc", "logs/a.log", "logs/b.txt")
	for _, r := range []testtree.FSRules{
		{},
		{DenyRead: []string{"h1"}, AllowRead: []string{"h1/pub"}},
		{DenyRead: []string{".env", "**/*.pem"}, AllowRead: []string{"."}},
		{DenyRead: []string{"/", "allow/deny.txt"}, AllowRead: []string{"allow"}},
		{AllowWrite: []string{"."}, DenyWrite: []string{"secrets"}},
		{AllowWrite: []string{"w2", "w2/sub"}, DenyWrite: []string{"w2"}},
		{AllowWrite: []string{"."}, DenyRead: []string{"h1"}},
		{DenyRead: []string{"h1"}, AllowWrite: []string{"h1/pub", "logs/*.log"}},
		{AllowWrite: []string{".", "~"}, DenyRead: []string{"~"}, AllowRead: []string{"~/.npm"}},
	} {
		plan, pol := build(t, r.Settings(), w)
		filepath.WalkDir(w, func(p string, d fs.DirEntry, err error) error {
			got, want := see(plan, p), pol.View(p)
			if got != want && !(got.Readable && !want.Readable && d.IsDir() && maskedAt(plan, p)) {
				t.Errorf("%+v: %s: mounts show %+v, the policy says %+v\nplan:\n%s", r, strings.TrimPrefix(p, w), got, want, plan)
			}
			return nil
		})
	}
}

// maskedAt reports whether a MaskDir covers exactly p: an empty directory
// where the policy hides one.
func maskedAt(p *Plan, path string) bool {
	for _, m := range p.Mounts {
		if m.Path == path && m.Kind == MaskDir {
			return true
		}
	}
	return false
}

func TestPlanMaskKeepsMountPoints(t *testing.T) {
	w := testtree.Tree(t, "h1/a/pub/p.txt", "h1/a/s.txt", "h1/key.txt")
	p, _ := build(t, testtree.FSRules{DenyRead: []string{"h1"}, AllowRead: []string{"h1/a/pub", "h1/key.txt"}}.Settings(), w)
	if len(p.Mounts) == 0 || p.Mounts[0].Kind != MaskDir || p.Mounts[0].Path != filepath.Join(w, "h1") {
		t.Fatalf("plan:\n%s", p)
	}
	m := p.Mounts[0]
	if strings.Join(m.Keep, ",") != "a/pub" || strings.Join(m.KeepFiles, ",") != "key.txt" {
		t.Errorf("keep = %q files %q", m.Keep, m.KeepFiles)
	}
}

// Ancestors between a protected path and its write root are pinned: "mv
// .git .git2" would otherwise move the protection aside.
func TestPlanPinsAncestors(t *testing.T) {
	w := testtree.Tree(t, ".git/hooks/pre-commit", ".git/HEAD", "a/b/.bashrc")
	p, _ := build(t, testtree.FSRules{AllowWrite: []string{"."}}.Settings(), w)
	pinned := map[string]bool{}
	for _, m := range p.Mounts {
		if m.Kind == BindWritable && strings.Contains(m.Why, "pinned") {
			pinned[strings.TrimPrefix(m.Path, w+"/")] = true
		}
	}
	for _, d := range []string{".git", "a", "a/b"} {
		if !pinned[d] {
			t.Errorf("%s is not pinned:\n%s", d, p)
		}
	}
}

// A kept symlink becomes a mount where the command could remove or
// replace it (its directory writable and visible); a link to nothing is
// masked wherever it is seen.
func TestPlanLinkMounts(t *testing.T) {
	w := testtree.Tree(t, "dotfiles/bashrc", ".bashrc -> dotfiles/bashrc", ".profile -> dotfiles/missing",
		"repo/.git/HEAD", "repo/.git/hooks/post-merge -> scripts/missing", "scripts/")
	kinds := func(p *Plan) map[string]MountKind {
		out := map[string]MountKind{}
		for _, m := range p.Mounts {
			if m.Kind == PinLink || m.Kind == MaskLink {
				out[strings.TrimPrefix(m.Path, w+"/")] = m.Kind
			}
		}
		return out
	}
	p, _ := build(t, testtree.FSRules{AllowWrite: []string{"."}}.Settings(), w)
	want := map[string]MountKind{".bashrc": PinLink, ".profile": MaskLink, "repo/.git/hooks/post-merge": MaskLink}
	if got := kinds(p); len(got) != len(want) || got[".bashrc"] != PinLink || got[".profile"] != MaskLink || got["repo/.git/hooks/post-merge"] != MaskLink {
		t.Errorf("link mounts %v, want %v\n%s", got, want, p)
	}
	// Links in a read-only directory: only the one to nothing, which a
	// write through it would create in the writable dotfiles.
	p, _ = build(t, testtree.FSRules{AllowWrite: []string{"dotfiles"}}.Settings(), w)
	if got := kinds(p); len(got) != 1 || got[".profile"] != MaskLink {
		t.Errorf("link mounts %v, want only .profile masked\n%s", got, p)
	}
}

// Plan.Writable answers as the mounts do, the last that covers a path
// deciding.
func TestPlanWritable(t *testing.T) {
	w := testtree.Tree(t, "src/a.go", "secrets/k", ".bashrc", "out/")
	p, _ := build(t, testtree.FSRules{AllowWrite: []string{"."}, DenyWrite: []string{"secrets"}, DenyRead: []string{"out"}}.Settings(), w)
	for rel, want := range map[string]bool{"src/a.go": true, "src/new": true, "secrets/k": false, ".bashrc": false, "out/x": false, "..": false} {
		if got := p.Writable(filepath.Clean(filepath.Join(w, rel))); got != want {
			t.Errorf("%s: writable %v, want %v\n%s", rel, got, want, p)
		}
	}
}

func TestPlanDisabled(t *testing.T) {
	w := testtree.Tree(t, ".bashrc")
	s := testtree.FSRules{DenyRead: []string{"."}}.Settings()
	s.Filesystem.Disabled = true
	p, _ := build(t, s, w)
	if len(p.Mounts) != 1 || p.Mounts[0].Kind != BindWritable || p.Mounts[0].Path != "/" {
		t.Errorf("plan:\n%s", p)
	}
}

// The plan keeps srt's own run dirs read-only inside, whatever the rules
// say, but for the run's own TMPDIR.
func TestPlanKeepsPrivate(t *testing.T) {
	w := testtree.Tree(t, "base/run-1/tmp/", "base/run-2/tmp/")
	own := filepath.Join(w, "base/run-1/tmp")
	pol, err := policy.Build(testtree.FSRules{AllowWrite: []string{"."}}.Settings(),
		policy.Env{Cwd: w, Writable: []string{own}, Private: filepath.Join(w, "base"), Dirs: dirReader})
	if err != nil {
		t.Fatal(err)
	}
	p := Mounts(pol)
	for rel, want := range map[string]bool{"base/run-2/tmp/x": false, "base/x": false, "base/run-1/tmp/x": true, "other": true} {
		if got := see(p, filepath.Join(w, rel)).Writable; got != want {
			t.Errorf("%s: writable %v, want %v\n%s", rel, got, want, p)
		}
	}
}

func TestPlanJSONRoundTrip(t *testing.T) {
	w := testtree.Tree(t, "h1/pub/p.txt")
	p, _ := build(t, testtree.FSRules{DenyRead: []string{"h1"}, AllowRead: []string{"h1/pub"}}.Settings(), w)
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
