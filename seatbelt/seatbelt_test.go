package seatbelt

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/testtree"
	"github.com/srt-go/srt/pathguard"
	"github.com/srt-go/srt/policy"
)

// linuxView is what the Linux backend enforces at path: its mounts (the
// policy's view), and its path guard for names made or written later.
func linuxView(pol *policy.Policy, g policy.Guard, path string) (read, write bool) {
	read, write = pol.Readable(path), pol.View(path).Writable
	if _, denied := pol.DeniedLater(path); denied {
		write = false
	}
	// The guard runs only where the filesystem rules do.
	// A GitConfig file other than a config (an index, a rebase's todo
	// list or strategy) is decided by its content, not its path: git's
	// writes (a rename the guard judges) land, and no profile reads
	// content (see README: the macOS backend does not judge them).
	base := strings.ToLower(filepath.Base(path))
	byContent := base != "config" && base != "config.worktree"
	if name, _ := g.Judge(path); !pol.Disabled && (name == pathguard.Protected || name == pathguard.GitConfig && !byContent) {
		write = false
	}
	return read, write
}

// The profile means what the Linux backend enforces: for every path of
// the trees below, under each rule set, the evaluator reading the
// rendered profile answers as the policy and the guard do.
func TestFilesystemConformance(t *testing.T) {
	w := testtree.Tree(t, "home/.ssh/id", "home/.bashrc", "home/proj/src/a.go", "home/proj/.git/HEAD", "home/proj/.git/hooks/pre-commit.sample",
		"home/proj/.git/config", "home/proj/secrets/k.pem", "home/proj/out/", "home/proj/deep/a/b/c/d/e/.zshrc", "etc/conf", "home/proj/.claude/commands/x.md",
		"home/proj/.vscode/settings.json", "home/proj/keep/x", "home/docs/ok", "home/.ssh/known_hosts", "home/.ssh/keys/pub/k", "home/.ssh/keys/priv",
		"home/proj/.env", "home/proj/sub/.env", "home/proj/cfg/.env", "home/proj/cfg/x", "home/vault1/pub/vault2/x", "home/vault1/priv", "home/proj/axb/c/k")
	home, proj := filepath.Join(w, "home"), filepath.Join(w, "home", "proj")
	paths := []string{"/", w, home, proj}
	for _, rel := range []string{".ssh", ".ssh/id", ".ssh/new", ".bashrc", "proj/src/a.go", "proj/src/new.go", "proj/.git/HEAD", "proj/.git/hooks/pre-commit",
		"proj/.git/hooks/pre-commit.sample", "proj/.git/hooks", "proj/.git/config", "proj/.git/CONFIG", "proj/.git/modules/sub/hooks/x", "proj/.git/modules/sub/config",
		"proj/.git/worktrees/w/config", "proj/secrets/k.pem", "proj/secrets/new.pem", "proj/x.pem", "proj/out/f", "proj/deep/a/b/c/d/e/.zshrc",
		"proj/deep/a/b/c/d/e/.ZshRC", "proj/new/.Bashrc", "proj/.claude/commands/x.md", "proj/.claude/agents/a.md", "proj/.claude/other.md",
		"proj/.vscode/settings.json", "proj/sub/.idea/x", "proj/keep/x", "proj/keep", "docs/ok", "docs/.mcp.json", "proj/.gitconfig", "proj/.gitmodules",
		".ssh/known_hosts", ".ssh/known_hosts/x", ".ssh/keys", ".ssh/keys/pub", ".ssh/keys/pub/k", ".ssh/keys/pub/new", ".ssh/keys/priv",
		".ssh/keys/pub/.env", "proj/.env", "proj/sub/.env", "proj/cfg/.env", "proj/cfg/x", "proj/.env/deeper/.env", "proj/new/.env",
		"vault1", "vault1/pub", "vault1/pub/vault2/x", "vault1/priv", "vault9/pub", "proj/axb", "proj/axb/c", "proj/axb/c/k", "proj/axb/c/k/ayb", "proj/axb/c/k/z"} {
		paths = append(paths, filepath.Join(home, rel))
	}
	paths = append(paths, filepath.Join(w, "etc/conf"), "/etc/passwd", "/tmp/x")
	for _, rs := range []struct {
		name             string
		rules            testtree.FSRules
		gitConfig        bool
		readable, hidden []string // beneath home, as the spec says (c.1)
	}{
		{name: "defaults"},
		{name: "write the project", rules: testtree.FSRules{AllowWrite: []string{proj}}},
		{name: "write home, deny ssh", rules: testtree.FSRules{AllowWrite: []string{home}, DenyRead: []string{filepath.Join(home, ".ssh")}}},
		{name: "deny home, reopen docs", rules: testtree.FSRules{DenyRead: []string{home}, AllowRead: []string{filepath.Join(home, "docs")}}},
		{name: "deny inside a grant", rules: testtree.FSRules{AllowWrite: []string{proj}, DenyRead: []string{filepath.Join(proj, "secrets")}, AllowRead: []string{proj}}},
		{name: "patterns", rules: testtree.FSRules{AllowWrite: []string{proj}, DenyRead: []string{filepath.Join(proj, "**/*.pem")}, DenyWrite: []string{filepath.Join(proj, "keep")}}},
		{name: "missing paths", rules: testtree.FSRules{AllowWrite: []string{proj}, DenyRead: []string{filepath.Join(proj, "secrets/new.pem")}, DenyWrite: []string{filepath.Join(proj, "out/f")}}},
		{name: "git config allowed", rules: testtree.FSRules{AllowWrite: []string{proj}}, gitConfig: true},
		// A grant at or beneath a denyRead pattern's match re-opens it;
		// a match beneath the grant stays hidden.
		{name: "pattern and grant at its match", rules: testtree.FSRules{AllowWrite: []string{proj}, DenyRead: []string{filepath.Join(home, ".ssh/*")},
			AllowRead: []string{filepath.Join(home, ".ssh/known_hosts"), filepath.Join(home, ".ssh/keys/pub")}},
			readable: []string{".ssh/known_hosts", ".ssh/keys/pub/k", ".ssh/keys/pub/new"}, hidden: []string{".ssh/id", ".ssh/keys/priv", ".ssh/new"}},
		{name: "recursive pattern and grants", rules: testtree.FSRules{AllowWrite: []string{proj}, DenyRead: []string{filepath.Join(proj, "**/.env"), filepath.Join(home, ".ssh/**/pub")},
			AllowRead: []string{filepath.Join(proj, ".env"), filepath.Join(proj, "cfg"), filepath.Join(home, ".ssh")}},
			readable: []string{"proj/.env", "proj/cfg/x", ".ssh/id"}, hidden: []string{"proj/sub/.env", "proj/cfg/.env", "proj/.env/deeper/.env", "proj/new/.env", ".ssh/keys/pub/k"}},
		{name: "pattern of a fixed depth", rules: testtree.FSRules{DenyRead: []string{filepath.Join(home, "vault*")}, AllowRead: []string{filepath.Join(home, "vault1/pub")}},
			readable: []string{"vault1/pub/vault2/x"}, hidden: []string{"vault1/priv", "vault9/pub"}},
		{name: "pattern spanning directories", rules: testtree.FSRules{DenyRead: []string{filepath.Join(proj, "a**b")}, AllowRead: []string{filepath.Join(proj, "axb/c")}},
			readable: []string{"proj/axb/c"}, hidden: []string{"proj/axb/c/k", "proj/axb/c/k/ayb"}},
	} {
		t.Run(rs.name, func(t *testing.T) {
			s := rs.rules.Settings()
			s.Filesystem.AllowGitConfig = rs.gitConfig
			pol, err := policy.Build(s, policy.Env{Home: home, Cwd: proj})
			if err != nil {
				t.Fatal(err)
			}
			p, err := Build(pol, Settings{Options: Options{Tag: "srt-test", GitConfig: rs.gitConfig}, ProxyPorts: []int{3128},
				LocalBinding: true, UnixSockets: []string{"/var/run/docker.sock"}, MachLookup: []string{"com.example.*"}, Pty: true})
			if err != nil {
				t.Fatal(err)
			}
			c, err := Compile(p.String())
			if err != nil {
				t.Fatalf("the profile does not read back: %v\n%s", err, p)
			}
			g := policy.Guard{GitConfig: rs.gitConfig, Policy: pol}
			for _, rel := range rs.readable {
				if !pol.Readable(filepath.Join(home, rel)) {
					t.Errorf("%s is hidden; the spec re-opens it", rel)
				}
			}
			for _, rel := range rs.hidden {
				if pol.Readable(filepath.Join(home, rel)) {
					t.Errorf("%s is readable; the spec hides it", rel)
				}
			}
			for _, path := range paths {
				read, write := linuxView(pol, g, path)
				if got := c.Allowed("file-read-data", path); got != read {
					t.Errorf("%s: read: Seatbelt %v, Linux %v", path, got, read)
				}
				if got := c.Allowed("file-write-data", path); got != write {
					t.Errorf("%s: write: Seatbelt %v, Linux %v", path, got, write)
				}
			}
		})
	}
}

// A path holding quotes, backslashes, newlines or regex metacharacters
// stays one string, and matches as itself.
func TestQuotedPaths(t *testing.T) {
	for _, path := range []string{`/a") (allow file-write* (subpath "/`, "/a\nb", `/a\"b`, "/x.*+?()[]{}|^$", "/ü/ẞ"} {
		p := &Profile{Tag: "t\")", Rules: []Rule{
			{Action: Allow, Ops: []string{"file-write*"}, Filters: []Filter{{Kind: "literal", Value: path}}, Why: "a\n(allow default)"},
		}}
		c, err := Compile(p.String())
		if err != nil {
			t.Fatalf("%q: %v\n%s", path, err, p)
		}
		if !c.Allowed("file-write-data", path) || c.Allowed("file-write-data", path+"x") || c.Allowed("file-read-data", path) {
			t.Errorf("%q: the rule does not mean itself:\n%s", path, p)
		}
		re, err := GlobRegex(path, false)
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(re); !m.MatchString(path) || m.MatchString(path+"/x") && !strings.ContainsAny(path, "*?[") {
			t.Errorf("%q: regex %q", path, re)
		}
	}
}

// The evaluator, on profiles written by hand: the last matching rule
// wins; default deny; operation wildcards; filters.
func TestEvaluator(t *testing.T) {
	c, err := Compile(`(version 1)
(deny default (with message "x"))
; a comment (allow default)
(allow file-read*)
(deny file-read* (subpath "/secret"))
(allow file-read-data (literal "/secret/ok"))
(allow file-write* (regex "^/tmp/[^/]+$") (subpath "/w"))`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op, path string
		want     bool
	}{
		{"file-read-data", "/etc/passwd", true},
		{"file-read-data", "/secret", false},
		{"file-read-metadata", "/secret/ok", false},
		{"file-read-data", "/secret/ok", true},
		{"file-read-data", "/secretx", true},
		{"file-write-data", "/tmp/a", true},
		{"file-write-data", "/tmp/a/b", false},
		{"file-write-create", "/w/x", true},
		{"network-outbound", "/", false},
	} {
		if got := c.Allowed(tc.op, tc.path); got != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.op, tc.path, got, tc.want)
		}
	}
}

// A directory above a denied path cannot be removed or renamed (the
// denied tree would leave its rule behind); its siblings can.
func TestMoveBlocking(t *testing.T) {
	w := testtree.Tree(t, "proj/secrets/k", "proj/out/f")
	proj := filepath.Join(w, "proj")
	s := testtree.FSRules{AllowWrite: []string{proj}, DenyRead: []string{filepath.Join(proj, "secrets")}}.Settings()
	c := compiled(t, s, w, proj)
	for path, want := range map[string]bool{
		proj:                             false, // above the hidden secrets
		filepath.Join(proj, "secrets"):   false, // hidden, so read-only
		filepath.Join(proj, "out"):       true,
		filepath.Join(proj, "out", "f"):  true,
		filepath.Join(proj, "secrets/k"): false,
	} {
		if got := c.Allowed("file-write-unlink", path); got != want {
			t.Errorf("unlink %s: %v, want %v", path, got, want)
		}
	}
}

// A volume that ignores case (APFS's default) reaches a denied path by
// any spelling: a deny matches every one; a grant only its own.
func TestCaselessDenies(t *testing.T) {
	w := testtree.Tree(t, "home/.ssh/id", "home/proj/key.pem", "home/proj/ok")
	home, proj := filepath.Join(w, "home"), filepath.Join(w, "home/proj")
	s := testtree.FSRules{AllowWrite: []string{proj}, DenyRead: []string{filepath.Join(home, ".ssh"), filepath.Join(proj, "**/*.pem")}}.Settings()
	c := compiled(t, s, home, proj)
	upper := strings.ToUpper(home)
	for path, want := range map[string]bool{
		filepath.Join(home, ".SSH/id"):     false,
		filepath.Join(upper, ".Ssh/ID"):    false,
		filepath.Join(proj, "KEY.PEM"):     false,
		filepath.Join(proj, "sub/Key.Pem"): false,
		filepath.Join(proj, "ok"):          true,
	} {
		if got := c.Allowed("file-read-data", path); got != want {
			t.Errorf("read %s: %v, want %v", path, got, want)
		}
	}
	if c.Allowed("file-write-data", filepath.Join(strings.ToUpper(proj), "ok")) {
		t.Error("a grant reached by another spelling")
	}
	for _, dev := range []string{"/dev/rdisk0", "/dev/disk1s1", "/dev/bpf3", "/dev/ttys004"} {
		if c.Allowed("file-read-data", dev) {
			t.Errorf("%s is readable", dev)
		}
	}
	if !c.Allowed("file-read-data", "/dev/urandom") {
		t.Error("/dev/urandom is not readable")
	}
}

// compiled is the profile of settings s for home and cwd, read back.
func compiled(t *testing.T, s *config.Settings, home, cwd string) *Compiled {
	t.Helper()
	_, c := profileOf(t, s, policy.Env{Home: home, Cwd: cwd}, Options{Tag: "t"})
	return c
}

// profileOf is the policy of settings s in env, and its profile with o,
// read back.
func profileOf(t *testing.T, s *config.Settings, env policy.Env, o Options) (*policy.Policy, *Compiled) {
	t.Helper()
	pol, err := policy.Build(s, env)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(pol, Settings{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(p.String())
	if err != nil {
		t.Fatal(err)
	}
	return pol, c
}

// A run on a terminal drives its own (the keeper appends OwnTerminal),
// never the user's others.
func TestOwnTerminal(t *testing.T) {
	w := testtree.Tree(t, "proj/a")
	pol, err := policy.Build(testtree.FSRules{}.Settings(), policy.Env{Home: w, Cwd: filepath.Join(w, "proj")})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(pol, Settings{Options: Options{Tag: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, own := range []bool{false, true} {
		text := p.String()
		if own {
			text += OwnTerminal("/dev/ttys005").String()
		}
		c, err := Compile(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range []string{"file-ioctl", "file-read-data", "file-write-data"} {
			if got := c.Allowed(op, "/dev/ttys005"); got != own {
				t.Errorf("own %v: %s of the run's terminal: %v", own, op, got)
			}
			// (Reads go where reads go: without a terminal of its own
			// the command has no /dev/tty to open.)
			if got := c.Allowed(op, "/dev/tty"); got != own && op != "file-read-data" {
				t.Errorf("own %v: %s of /dev/tty: %v", own, op, got)
			}
			if c.Allowed(op, "/dev/ttys004") {
				t.Errorf("own %v: %s of another terminal", own, op)
			}
		}
	}
}

// The profile and the Linux guard answer from the same tables: for every
// name of pathguard's (files, directories, .claude's, paths of several
// names, a repository's hooks and configs, a merge program), a write
// there, in a project and a directory that existed at launch, is refused
// by both — and a name beside them is written by both.
func TestProfileEveryProtectedName(t *testing.T) {
	w := testtree.Tree(t, "home/proj/sub/x")
	home, proj := filepath.Join(w, "home"), filepath.Join(w, "home", "proj")
	s := testtree.FSRules{AllowWrite: []string{proj}}.Settings()
	pol, c := profileOf(t, s, policy.Env{Home: home, Cwd: proj}, Options{Tag: "t"})
	g := policy.Guard{Policy: pol}
	var refused []string
	files, dirs, claude := pathguard.ProtectedNames()
	for _, dir := range []string{proj, filepath.Join(proj, "sub")} {
		for _, f := range files {
			refused = append(refused, filepath.Join(dir, f))
		}
		for _, d := range dirs {
			refused = append(refused, filepath.Join(dir, d, "settings.json"), filepath.Join(dir, d))
		}
		for _, n := range claude {
			refused = append(refused, filepath.Join(dir, ".claude", n), filepath.Join(dir, ".claude", n, "x.md"))
		}
		for _, p := range pathguard.ProtectedPaths() {
			p = strings.ReplaceAll(p, "*", "x3") // python*: pythonx3; *.pth: x3.pth
			refused = append(refused, filepath.Join(dir, p), filepath.Join(dir, p, "x"))
		}
	}
	for _, rel := range []string{".git/hooks/pre-commit", ".git/config", ".git/config.worktree", ".git/modules/m/hooks/post-checkout",
		".git/modules/m/config", ".git/worktrees/w/config"} {
		refused = append(refused, filepath.Join(proj, rel))
	}
	for _, h := range pathguard.GitHookNames {
		refused = append(refused, filepath.Join(proj, ".git/hooks", h))
	}
	if len(refused) < 100 {
		t.Fatalf("only %d names from the tables: the test proves little", len(refused))
	}
	for _, p := range refused {
		n, _ := g.Judge(p)
		linux := n == pathguard.Protected || n == pathguard.GitConfig || n == pathguard.HooksDir
		darwin := !c.Allowed("file-write-data", p)
		if !linux || !darwin {
			t.Errorf("%s: refused by the Linux guard %v (%v), by the profile %v", p, linux, n, darwin)
		}
	}
	// A merge strategy's program: Linux refuses a directory or symlink
	// so named (at mkdir, symlink, link, rename), the profile the name
	// itself (it cannot tell a directory from a file by name: stricter).
	// Neither judges what lies in such a directory once there.
	merge := filepath.Join(proj, pathguard.MergeProgramPrefix+"x")
	if !pathguard.IsMergeProgramDir(filepath.Base(merge)) || c.Allowed("file-write-create", merge) {
		t.Errorf("%s: a merge program's directory may be made", merge)
	}
	for _, rel := range []string{"src/main.go", ".claude/notes.md", ".config/other", "sub/.git-blame-ignore-revs", ".git/objects/ab/cd"} {
		p := filepath.Join(proj, rel)
		n, _ := g.Judge(p)
		if n == pathguard.Protected || n == pathguard.GitConfig || !c.Allowed("file-write-data", p) {
			t.Errorf("%s: refused (Linux %v, profile allows %v)", p, n, c.Allowed("file-write-data", p))
		}
	}
}
