package pathguard

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestGuardJudge(t *testing.T) {
	g := Rules{}
	cases := map[string]Name{
		"/p/a.txt":                                  Free,
		"/p/.bashrc":                                Protected,
		"/p/a/b/c/d/e/f/.BashRC":                    Protected,
		"/p/.zshrc":                                 Protected,
		"/p/.profile":                               Protected,
		"/p/.gitconfig":                             Protected,
		"/p/.gitmodules":                            Protected,
		"/p/.ripgreprc":                             Protected,
		"/p/.mcp.json":                              Protected,
		"/p/.bash_profile":                          Protected,
		"/p/.zprofile":                              Protected,
		"/p/.vscode":                                Protected,
		"/p/.vscode/settings.json":                  Protected,
		"/p/sub/.idea/workspace.xml":                Protected,
		"/p/.claude":                                Context,
		"/p/.claude/settings.json":                  Protected,
		"/p/.claude/SETTINGS.local.json":            Protected,
		"/p/.claude/skills/x.md":                    Context,
		"/p/.claude/hooks/format.sh":                Protected,
		"/p/.claude/commands":                       Protected,
		"/p/.claude/commands/x.md":                  Protected,
		"/p/.claude/Agents/a.md":                    Protected,
		"/p/.git":                                   Context,
		"/p/.git/objects/ab/cdef":                   Context,
		"/p/.git/hooks":                             HooksDir,
		"/p/.git/hooks/pre-commit.sample":           HookSample,
		"/p/.git/hooks/.sample":                     HookSample, // a dot name is never a hook git runs
		"/p/.git/hooks/pre-commit":                  Protected,
		"/p/.git/hooks/x/pre-commit":                Protected,
		"/p/sub/.git/hooks/pre-commit":              Protected,
		"/p/.git/config":                            GitConfig,
		"/p/.git/config.worktree":                   GitConfig,
		"/p/.git/config.lock":                       Context,
		"/p/.git/refs/heads/hooks":                  Context,
		"/p/.git/refs/heads/config":                 Context,
		"/p/.git/modules/lib/hooks/update":          Protected,
		"/p/.git/modules/a/b/hooks":                 HooksDir,
		"/p/.git/modules/lib/config":                GitConfig,
		"/p/.git/remotes/origin":                    Protected,
		"/p/.git/branches/origin":                   Protected,
		"/p/.git/branches":                          Context,
		"/p/.git/refs/remotes/origin/HEAD":          Context,
		"/p/.git/modules/lib/remotes/origin":        Protected,
		"/p/.git/modules/lib/refs/remotes/o/x":      Context,
		"/p/.git/modules/lib/logs/refs/remotes/o/x": Context,
		"/p/.git/modules/a/refs/b/hooks/update":     Protected,
		"/p/.git/worktrees/wt/config.worktree":      GitConfig,
		"/p/.git/worktrees/wt/gitdir":               GitConfig,
		"/p/hooks/pre-commit":                       Free,
		"/p/src/config":                             Free,
		"/p/.gitignore":                             Free,
	}
	for p, want := range cases {
		if got, rule := g.Judge(p); got != want {
			t.Errorf("Judge(%q) = %v (%q), want %v", p, got, rule, want)
		}
	}
	if got, rule := g.Judge("/p/a/.vscode/x/y"); rule != "/p/a/.vscode" || got != Protected {
		t.Errorf("rule of a path under .vscode = %q, %v", rule, got)
	}
	if got, _ := (Rules{GitConfig: true}).Judge("/p/.git/config"); got != Context {
		t.Errorf("with allowGitConfig, .git/config is %v, want context", got)
	}
	if got, _ := (Rules{GitConfig: true}).Judge("/p/.git/hooks/pre-commit"); got != Protected {
		t.Errorf("allowGitConfig opened hooks: %v", got)
	}
}

// Every protected name of spec c.5, at any depth, is Protected or (for a
// repository's own files) one of the kinds the guard checks by content.
func TestGuardEveryProtectedName(t *testing.T) {
	g := Rules{}
	names := append([]string{}, protectedFiles...)
	names = append(names, ".vscode/settings.json", ".idea/workspace.xml", ".claude/commands/x.md", ".claude/agents/a.md", ".git/hooks/pre-commit")
	for _, depth := range []string{"", "a/", "a/b/c/d/e/f/g/h/i/j/k/"} {
		for _, n := range names {
			for _, spell := range []string{n, strings.ToUpper(n)} {
				if got, _ := g.Judge("/root/" + depth + spell); got != Protected {
					t.Errorf("%s%s: %v", depth, spell, got)
				}
			}
		}
	}
}

func TestGitConfigSafe(t *testing.T) {
	ok := []string{
		"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
		"[core]\n\tbare = false\n[user]\n\tname = x\n[remote \"o\"]\n\turl = https://x\n\tfetch = +refs/heads/*:refs/remotes/o/*\n[branch \"main\"]\n\tremote = o\n\tmerge = refs/heads/main\n",
		"; comment\n# comment\n[user]\n\tname = \"a \\\"quoted\\\" # name\" ; trailing\n",
		"[user] name = x\n",
		"[remote.o]\n\turl = git@example.com:x\n",
		"[user]\n\tname = a \\\n  continued\n",
		"[user]\n\tname = \"a\\\n # still quoted\"\n",
		"[user]\n\tname = a # a comment ends the value, its backslash too \\\n\temail = b\n",
		"[core]\n\tbare\n",
		"[extensions]\n\tobjectFormat = sha256\n",
		"",
	}
	for _, c := range ok {
		if err := GitConfigSafe([]byte(c)); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
	bad := []string{
		"[core]\n\tfsmonitor = /tmp/x\n",
		"[core]\n\thooksPath = /tmp\n",
		"[core]\n\tworktree = ../../../lib\n",         // checkouts write where it leads
		"[extensions]\n\tobjectformat = sha256 ; c\n", // read as the guard reads it, or not at all
		"[extensions]\n\tobjectformat = \"sha256\"\n",
		"[extensions]\n\tobjectformat = sha256\n\tobjectformat = sha1\n",
		"[Core]\n\tSSHCommand = evil\n",
		"[core] pager = evil\n",
		"[core]\n\teditor = evil\n",
		"[alias]\n\tx = !evil\n",
		"[credential]\n\thelper = evil\n",
		"[filter \"lfs\"]\n\tsmudge = evil\n",
		"[diff \"x\"]\n\ttextconv = evil\n",
		"[include]\n\tpath = /tmp/x\n",
		"[includeIf \"gitdir:/\"]\n\tpath = /tmp/x\n",
		"[remote \"o\"]\n\tuploadpack = evil\n",
		"[hook \"x\"]\n\tcommand = evil\n",
		"[protocol \"ext\"]\n\tallow = always\n",
		"[user]\n\tname = a \\\n[core]\n\tfsmonitor = evil\n[user]\n\temail = b\n" + "\tfsmonitor = x\n",
		"[user]\n\tname = \"open\n\tfsmonitor = x\n",
		"fsmonitor = x\n",
		"[core\n",
		"[core \"x\"\n",
		"[user]\n\t=x\n",
		"[user]\n\tname\x00 = x\n",
		"[submodule \"s\"]\n\tupdate = !evil\n",
		// A quote stays open across a continued line: git leaves it at
		// the second line's quote, takes # as a comment, and reads the
		// third line as a section and its key.
		"[user]\n\tname = \"a\\\n\"#\\\n[core] fsmonitor = \"evil\"\n",
		"[user]\n\tname = \"a\\\n\";\\\n[core] fsmonitor = \"evil\"\n",
		"[user]\n\tname = a\\q\n",
	}
	for _, c := range bad {
		if err := GitConfigSafe([]byte(c)); err == nil {
			t.Errorf("%q accepted", c)
		}
	}
}

// What git writes itself when it makes, clones and works in a
// repository passes the check.
func TestGitConfigSafeAcceptsGit(t *testing.T) {
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("needs git: not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		if out, err := gitCmd(dir, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "r")
	run("-C", "r", "config", "user.name", "x")
	run("-C", "r", "config", "user.email", "x@example.com")
	run("-C", "r", "remote", "add", "origin", "https://example.com/x.git")
	run("-C", "r", "commit", "-q", "--allow-empty", "-m", "m")
	run("clone", "-q", "r", "c")
	run("-C", "r", "worktree", "add", "-q", "../wt")
	run("-C", "c", "sparse-checkout", "init", "--cone", "--sparse-index")
	run("-C", "c", "branch", "-q", "--track", "t", "origin/HEAD")
	// The clone's remote is the repository it was made from, a path:
	// taken where the guard takes that repository.
	source := func(p string) error {
		if p != filepath.Join(dir, "r") {
			return fmt.Errorf("not the clone's source: %s", p)
		}
		return nil
	}
	for _, f := range []string{"r/.git/config", "c/.git/config", "c/.git/config.worktree"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := GitConfigSafeBeside(b, nil, source); err != nil {
			t.Errorf("%s refused: %v\n%s", f, err, b)
		}
	}
}

func gitCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=x", "GIT_AUTHOR_EMAIL=x@example.com", "GIT_COMMITTER_NAME=x", "GIT_COMMITTER_EMAIL=x@example.com")
	return cmd.CombinedOutput()
}

// A rebase's todo list takes every line but one git would run: exec or
// x, however spaced or cased; it is judged wherever a git directory
// keeps one (its own, a submodule's, a worktree's).
func TestRebaseTodo(t *testing.T) {
	ok := []string{
		"pick 1234 one\nsquash 5678 two\n# exec in a comment is fine\n",
		"edit 1 x\nfixup -C 2 y\nbreak\nlabel onto\nreset onto\nmerge -C 3 side\nupdate-ref refs/heads/x\n",
		"xpick 1\ndrop 1 exec\n",
		"",
	}
	for _, c := range ok {
		if err := RebaseTodoSafe([]byte(c)); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
	for _, c := range []string{"exec make\n", "pick 1\n  x rm -rf ~\n", "\tEXEC evil", "x", "x\tevil\n", "pick 1\r\nexec evil\r\n", "execute evil\n", "x;evil", "pick 1\x00\n"} {
		if err := RebaseTodoSafe([]byte(c)); err == nil {
			t.Errorf("%q accepted", c)
		}
	}
	for _, p := range []string{"/w/.git/rebase-merge/git-rebase-todo", "/w/.git/modules/m/rebase-merge/git-rebase-todo",
		"/w/.git/worktrees/x/rebase-merge/git-rebase-todo", "/w/.GIT/Rebase-Merge/Git-Rebase-Todo"} {
		for _, g := range []Rules{{}, {GitConfig: true}} {
			if n, _ := g.Judge(p); n != GitConfig {
				t.Errorf("Judge(%q) with allowGitConfig %v = %v, want GitConfig", p, g.GitConfig, n)
			}
		}
	}
	if n, _ := (Rules{}).Judge("/w/rebase-merge/git-rebase-todo"); n != Free {
		t.Errorf("a todo list outside any git directory is %v", n)
	}
	if GitFileSafe(RebaseTodo, []byte("exec x\n"), 20) == nil || GitFileSafe("config", []byte("[core]\n\tfsmonitor = x\n"), 20) == nil || GitFileSafe("config", []byte("exec x"), 20) == nil {
		t.Error("GitFileSafe judged by the wrong rule")
	}
}

// git's global config where XDG puts it is protected as .gitconfig is,
// in any case, anywhere; the directories on its way are Context (a
// directory moved there brings it unseen); their other files are free.
func TestProtectedPaths(t *testing.T) {
	for p, want := range map[string]Name{
		"/h/.config/git/config": Protected, "/w/a/.CONFIG/Git/CONFIG": Protected, ".config/git/config": Protected,
		"/h/.config/git": Context, "/h/.config": Context,
		"/h/.config/git/ignore": Free, "/h/.config/htop/htoprc": Free, "/h/config/git/config": Free, "/h/.config/x/git/config": Free,
		"/h/.config/nvim/init.lua": Protected, "/h/.ssh/config": Protected, "/h/.ssh/known_hosts": Free, "/h/.ssh": Context,
		"/h/.aws/credentials": Protected, "/h/.kube/config": Protected, "/h/.kube/cache/x": Free, "/h/.docker/config.json": Protected,
		"/h/.config/systemd/user/x.service": Protected, "/h/.config/systemd/system.conf": Free,
		// Python's user site-packages: what every python runs at start;
		// a module there, and a venv's .pth, are not.
		"/h/.local/lib/python3.12/site-packages/evil.pth": Protected, "/h/.local/lib/Python3.9/site-packages/sitecustomize.py": Protected,
		"/h/.local/lib/python3.12/site-packages/usercustomize.py": Protected, "/h/.local/lib/python3.12/site-packages/requests/api.py": Free,
		"/h/.local/lib/python3.12/site-packages": Context, "/h/.local/lib/python3.12": Context, "/h/.local": Context,
		"/w/.venv/lib/python3.12/site-packages/_editable.pth": Free, "/h/.local/lib/node/site-packages/x.pth": Free,
		"/Users/u/Library/Python/3.12/lib/python/site-packages/x.pth": Protected,
	} {
		if n, _ := (Rules{}).Judge(p); n != want {
			t.Errorf("Judge(%q) = %v, want %v", p, n, want)
		}
	}
}

// A name git would run as a merge strategy's program's directory.
func TestMergeProgramNames(t *testing.T) {
	for name, want := range map[string]bool{"git-merge-x": true, "GIT-MERGE-ours": true, "git-merge-": true, "git-merge": false, "my-git-merge-x": false} {
		if got := IsMergeProgramDir(name); got != want {
			t.Errorf("IsMergeProgramDir(%q) = %v, want %v", name, got, want)
		}
	}
}

// An am's options for git apply are those git am passes on, as git
// quotes them.
func TestApplyOptsSafe(t *testing.T) {
	for _, c := range []string{"", " '--whitespace=fix' '-C1' '-p1' '--reject' '--include=*' '--exclude=x' '--ignore-whitespace' '--ignore-space-change'\n", " '--directory=a/b'"} {
		if err := ApplyOptsSafe([]byte(c)); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
	for _, c := range []string{" '--build-fake-ancestor=/x'", " '--unsafe-paths'", " --reject", " '--directory=../x'", " '--directory=a/../..'", " '--directory=/etc'", ` '--include=a'\''b'`, " '-C1' 'x'"} {
		if ApplyOptsSafe([]byte(c)) == nil {
			t.Errorf("%q taken", c)
		}
	}
	for _, p := range []string{"/w/.git/rebase-apply/apply-opt", "/w/.git/worktrees/x/rebase-apply/apply-opt", "/w/.git/modules/m/rebase-apply/apply-opt"} {
		if n, _ := (Rules{}).Judge(p); n != GitConfig {
			t.Errorf("Judge(%q) = %v", p, n)
		}
	}
	if n, _ := (Rules{}).Judge("/w/rebase-apply/apply-opt"); n != Free {
		t.Errorf("outside a git directory, apply-opt is %v", n)
	}
}

// A rebase's or cherry-pick's strategy is one of git's own, spelled so.
func TestStrategySafe(t *testing.T) {
	for _, c := range []string{"ort\n", "recursive", "ours\n"} {
		if err := StrategySafe([]byte(c)); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
	for _, c := range []string{"x/y\n", "../x\n", "ort\nx", "", "ORT\n"} {
		if StrategySafe([]byte(c)) == nil {
			t.Errorf("%q taken", c)
		}
	}
	for _, c := range []string{"[options]\n\tstrategy = ort\n\tstrategy-option = theirs\n", "[options]\n\tgpg-sign = x\n", ""} {
		if err := SequencerOptsSafe([]byte(c)); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
	for _, c := range []string{" --theirs", " '--find-renames=50%'", " --subtree=lib/x", ""} {
		if err := StrategyOptsSafe([]byte(c)); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
	for _, c := range []string{" --index-output=/tmp/x", " theirs", " --theirs --exec=x", " '--index-output=/x'"} {
		if StrategyOptsSafe([]byte(c)) == nil {
			t.Errorf("%q taken", c)
		}
	}
	if err := SequencerOptsSafe([]byte("[options]\n\tstrategy = ort\n\tstrategy-option = theirs\n")); err != nil {
		t.Errorf("a plain option refused: %v", err)
	}
	for _, c := range []string{"[options]\n\tstrategy = x/y\n", "[options] strategy = ort\n", "[options]\n\tstrategy = resolve\n\tstrategy-option = index-output=/tmp/x\n", "[options]\n\tstrategy = \"x/y\"\n", "[options]\n\tStrategy = ort ; x\n",
		"[options]\n\tstrategy-option = a\n\tstrategy = x/y\n", "[options]\n\tstrategy-option = strategy\n"} {
		if SequencerOptsSafe([]byte(c)) == nil {
			t.Errorf("%q taken", c)
		}
	}
	for _, p := range []string{"/w/.git/rebase-merge/strategy", "/w/.git/sequencer/opts", "/w/.git/worktrees/x/rebase-merge/strategy"} {
		if n, _ := (Rules{}).Judge(p); n != GitConfig {
			t.Errorf("Judge(%q) = %v", p, n)
		}
	}
}

// A relative core.hooksPath of the host's makes that directory, in any
// repository, a hooks directory.
func TestHooksPathJudge(t *testing.T) {
	g := Rules{HooksPaths: []string{".githooks", "tools/Hooks"}}
	for p, want := range map[string]Name{
		"/w/r/.githooks": HooksDir, "/w/r/.githooks/pre-commit": Protected, "/w/r/.GitHooks/x/y": Protected,
		"/w/r/.githooks/pre-commit.sample": HookSample, "/w/r/tools/hooks/post-checkout": Protected, "/w/r/tools": Context,
		"/w/r/tools/hooks": HooksDir, "/w/r/githooks/pre-commit": Free, "/w/r/tools/x": Free,
	} {
		if n, _ := g.Judge(p); n != want {
			t.Errorf("Judge(%q) = %v, want %v", p, n, want)
		}
	}
	if n, _ := (Rules{}).Judge("/w/r/.githooks/pre-commit"); n != Free {
		t.Errorf("without a hooksPath, .githooks/pre-commit is %v", n)
	}
}

// core.hooksPath and include paths are read as git reads them: checked
// against git config --get-all on the same files.
func TestGitConfigPaths(t *testing.T) {
	cases := []string{
		"[core]\n\thooksPath = .husky/_\n",
		"[core]\n\thookspath = \"a b\"  ; c\n\tHOOKSPATH=x\\\n y # z\n",
		"[core] hooksPath = ~/h\n[include]\n\tpath = other\n[includeIf \"gitdir:~/w/\"]\n\tpath = \"~/inc\"\n",
		"[core \"x\"]\n\thooksPath = no\n[core.x]\n\thooksPath = no\n[Core]\n\thooksPath = a\\tb\\\\c\n",
		"[core]\n\thooksPath = \"q\\\"r\" s  t\t\n",
		"\xef\xbb\xbf[core]\n\thooksPath = .githooks\n",
	}
	_, gitErr := exec.LookPath("git")
	for _, c := range cases {
		hooks, includes := GitConfigPaths([]byte(c))
		if gitErr != nil {
			continue
		}
		f := filepath.Join(t.TempDir(), "config")
		os.WriteFile(f, []byte(c), 0o644)
		get := func(args ...string) []string {
			out, _ := exec.Command("git", append([]string{"config", "--file", f, "--no-includes"}, args...)...).Output()
			var vals []string
			for _, v := range strings.Split(string(out), "\x00") {
				if v != "" {
					_, val, _ := strings.Cut(v, "\n")
					vals = append(vals, val)
				}
			}
			return vals
		}
		if want := get("-z", "--get-regexp", `^core\.hookspath$`); !slices.Equal(hooks, want) {
			t.Errorf("%q: hooks %q, git says %q", c, hooks, want)
		}
		if want := get("-z", "--get-regexp", `^include(if\..*)?\.path$`); !slices.Equal(includes, want) {
			t.Errorf("%q: includes %q, git says %q", c, includes, want)
		}
	}
}

// MERGE_RR takes no record: any path may become a symlink later.
func TestMergeRRSafe(t *testing.T) {
	if err := MergeRRSafe(nil); err != nil {
		t.Errorf("an empty MERGE_RR refused: %v", err)
	}
	if MergeRRSafe([]byte(strings.Repeat("ab", 20)+"\tf\x00")) == nil {
		t.Errorf("a record taken")
	}
	for _, p := range []string{"/w/.git/MERGE_RR", "/w/.git/worktrees/x/MERGE_RR"} {
		if n, _ := (Rules{}).Judge(p); n != GitConfig {
			t.Errorf("Judge(%q) = %v", p, n)
		}
	}
}

// A config about to replace one that holds keys off the list may keep
// them, as they are, and add none.
func TestGitConfigSafeBeside(t *testing.T) {
	old := "[core]\n\tbare = false\n\thooksPath = .husky/_\n[credential]\n\thelper = store\n"
	for _, c := range []string{
		old + "[user]\n\tname = x\n",
		"[credential]\n\thelper = store\n[core]\n\thooksPath = .husky/_\n[user]\n\tname = x\n",
		"[core]\n\tbare = false\n",
	} {
		if err := GitConfigSafeBeside([]byte(c), []byte(old), nil); err != nil {
			t.Errorf("%q refused beside the old config: %v", c, err)
		}
	}
	for _, c := range []string{
		"[core]\n\thooksPath = evil\n",
		"[core]\n\thooksPath = .husky/_\n\thooksPath = .husky/_\n",
		"[core]\n\thooksPath = .husky/_ \n",
		"[core]\n\tfsmonitor = x\n",
		"[core \"x\"]\n\thooksPath = .husky/_\n",
		"[credential \"https://h\"]\n\thelper = store\n",
		"[core]\n\thooksPath = .husky/_\\\n\n",
	} {
		if GitConfigSafeBeside([]byte(c), []byte(old), nil) == nil {
			t.Errorf("%q taken beside the old config", c)
		}
		if GitConfigSafe([]byte(c)) == nil {
			t.Errorf("%q taken alone", c)
		}
	}
	if GitConfigSafeBeside([]byte(old), []byte("[core]\n\tbare = false\n"), nil) == nil {
		t.Errorf("a config's keys off the list taken beside one without them")
	}
}

// Beside kept keys, what changes their meaning is frozen: core.bare and
// worktree configs beside a kept core.hooksPath, and every URL beside a
// kept http or credential key.
func TestGitConfigSafeBesideFrozen(t *testing.T) {
	hooks := "[core]\n\thooksPath = .husky/_\n[remote \"origin\"]\n\turl = /up\n"
	creds := "[http]\n\textraHeader = Authorization: Bearer x\n[remote \"origin\"]\n\turl = /up\n"
	for _, c := range []struct{ content, old string }{
		{hooks + "[remote \"o2\"]\n\turl = https://example.com/x\n", hooks},
		{hooks + "[user]\n\tname = x\n", hooks},
		{creds + "[user]\n\tname = x\n", creds},
		{"[core]\n\tbare = true\n", "[core]\n\tbare = false\n"},
	} {
		if err := GitConfigSafeBeside([]byte(c.content), []byte(c.old), nil); err != nil {
			t.Errorf("%q refused beside %q: %v", c.content, c.old, err)
		}
	}
	for _, c := range []struct{ content, old string }{
		{hooks + "[core]\n\tbare = true\n", hooks},
		{hooks + "[extensions]\n\tworktreeConfig = true\n", hooks},
		{"[http]\n\textraHeader = Authorization: Bearer x\n[remote \"origin\"]\n\turl = http://evil/\n", creds},
		{creds + "[remote \"o2\"]\n\turl = http://evil/\n", creds},
		{creds + "[branch \"m\"]\n\tremote = http://evil/\n", creds},
		{creds + "[submodule \"s\"]\n\turl = http://evil/\n", creds},
	} {
		if GitConfigSafeBeside([]byte(c.content), []byte(c.old), nil) == nil {
			t.Errorf("%q taken beside %q", c.content, c.old)
		}
	}
}

// A URL git fetches from or pushes to, or a branch's remote that no
// remote of the config names (git reads it as a URL or a path), leads
// to this machine only where the guard's LocalRepo takes it (a push
// there runs that repository's hooks): a path, file://, ssh to
// localhost; relative paths and remote helpers never. A push may not
// check files out (updateInstead). What the replaced config held stays.
func TestGitConfigRemotes(t *testing.T) {
	var asked []string
	local := func(p string) error {
		asked = append(asked, p)
		if p == "/repos/ok" {
			return nil
		}
		return fmt.Errorf("not a repository the guard takes")
	}
	for _, c := range []string{
		"[remote \"o\"]\n\turl = https://example.com/x.git\n\tpushurl = ssh://git@example.com/x.git\n",
		"[remote \"o\"]\n\turl = git@github.com:x/y.git\n",
		"[remote \"o\"]\n\turl = http://localhost:3000/x.git\n",
		"[remote \"o\"]\n\turl = /repos/ok\n\tpushurl = file:///repos/ok\n",
		"[remote \"o\"]\n\turl = ssh://localhost/repos/ok\n",
		"[remote \"o\"]\n\turl = https://x\n[branch \"m\"]\n\tremote = o\n\tpushRemote = o\n",
		"[branch \"m\"]\n\tremote = .\n[remote \"o/p\"]\n\turl = https://x\n[branch \"n\"]\n\tremote = o/p\n",
		"[receive]\n\tdenyCurrentBranch = refuse\n",
	} {
		if err := GitConfigSafeBeside([]byte(c), nil, local); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
	for _, c := range []string{
		"[receive]\n\tdenyCurrentBranch = updateInstead\n",
		"[receive]\n\tdenycurrentbranch = \"UPDATEINSTEAD\"\n",
		"[remote \"o\"]\n\turl = https://x\n\tpushurl = ../t/evil\n",
		"[remote \"o\"]\n\tpushurl = evil\n",
		"[remote \"o\"]\n\turl = /repos/evil\n",
		"[remote \"o\"]\n\turl = file:///repos/evil\n",
		"[remote \"o\"]\n\turl = file://host/repos/ok\n",
		"[remote \"o\"]\n\turl = ssh://me@localhost:22/repos/evil\n",
		"[remote \"o\"]\n\turl = git+ssh://[::1]/repos/evil\n",
		"[remote \"o\"]\n\turl = localhost:/repos/evil\n",
		"[remote \"o\"]\n\turl = me@127.0.0.1:repos/ok\n",
		"[remote \"o\"]\n\turl = ext::sh -c evil\n",
		"[remote \"o\"]\n\turl = fd::3\n",
		"[remote \"o\"]\n\turl =\n",
		"[branch \"m\"]\n\tpushRemote = evil\n",
		"[branch \"m\"]\n\tremote = /repos/evil\n",
		"[remote \"o\"]\n\turl = https://x\n[branch \"m\"]\n\tpushRemote = O\n",
		// A remote with no URL is its own name, a path, to git.
		"[remote \"o/p\"]\n\tfetch = x\n[branch \"n\"]\n\tremote = o/p\n",
		"[remote \"o\"]\n\tpushurl = https://x\n[branch \"n\"]\n\tremote = o\n",
	} {
		if err := GitConfigSafeBeside([]byte(c), nil, local); err == nil {
			t.Errorf("%q taken", c)
		}
		if err := GitConfigSafe([]byte(c)); err == nil {
			t.Errorf("%q taken with no repository judge", c)
		}
	}
	if GitConfigSafe([]byte("[remote \"o\"]\n\turl = /repos/ok\n")) == nil {
		t.Errorf("a path taken with no repository judge")
	}
	// The host's own values stay as they are, judged by nothing; a
	// second copy of one is new.
	old := "[remote \"o\"]\n\turl = ../sibling\n[receive]\n\tdenyCurrentBranch = updateInstead\n"
	if err := GitConfigSafeBeside([]byte(old+"[user]\n\tname = x\n"), []byte(old), nil); err != nil {
		t.Errorf("the host's remote refused beside itself: %v", err)
	}
	if GitConfigSafeBeside([]byte(old+"[remote \"p\"]\n\turl = ../sibling\n"), []byte(old), nil) == nil {
		t.Errorf("a second remote with the host's relative URL taken")
	}
	// A remote the host gave a URL keeps one: without, git pushes to
	// ./origin; a branch that named it, unchanged, does not make that
	// safe. What the host had path-like stays.
	host := "[remote \"origin\"]\n\turl = https://example.com/x\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"master\"]\n\tremote = origin\n"
	for _, c := range []string{
		"[remote \"origin\"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"master\"]\n\tremote = origin\n",
		"[branch \"master\"]\n\tremote = origin\n",
		"",
	} {
		if GitConfigSafeBeside([]byte(c), []byte(host), local) == nil {
			t.Errorf("%q taken beside %q: origin lost its URL", c, host)
		}
	}
	if err := GitConfigSafeBeside([]byte(strings.Replace(host, "example.com/x", "example.com/y", 1)), []byte(host), local); err != nil {
		t.Errorf("origin's URL changed to another: %v", err)
	}
	pathLike := "[branch \"master\"]\n\tremote = ../up\n"
	if err := GitConfigSafeBeside([]byte(pathLike+"[user]\n\tname = x\n"), []byte(pathLike), local); err != nil {
		t.Errorf("the host's own path-like branch remote refused beside itself: %v", err)
	}
	asked = nil
	GitConfigSafeBeside([]byte("[remote \"o\"]\n\turl = ssh://localhost/repos/a/../ok\n"), nil, local)
	if len(asked) != 1 || asked[0] != "/repos/a/../ok" {
		t.Errorf("the judge was asked %q, want the path as written (the kernel resolves it)", asked)
	}
}

// Keys that make the host's git destroy or expose: a mirror or push
// refspecs (git push deletes the remote's refs with the user's
// credentials), a shared repository mode (the host's git leaves the
// repository's files world-writable).
func TestGitConfigDestructiveKeys(t *testing.T) {
	for _, c := range []string{"[remote \"o\"]\n\tmirror = true\n", "[remote \"o\"]\n\tpush = :refs/heads/x\n", "[core]\n\tsharedRepository = 0777\n",
		"[core]\n\tsharedRepository = world\n", "[core]\n\tsharedRepository = 2\n", "[core]\n\tsharedRepository = 0666\n", "[core]\n\tsharedRepository = x\n"} {
		if GitConfigSafe([]byte(c)) == nil {
			t.Errorf("%q taken", c)
		}
	}
	// git init --shared's, which its group alone may write.
	for _, c := range []string{"[core]\n\tsharedRepository = 1\n[receive]\n\tdenyNonFastforwards = true\n", "[core]\n\tsharedRepository = group\n", "[core]\n\tsharedRepository = 0660\n"} {
		if err := GitConfigSafe([]byte(c)); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
}

// A shell's startup file, an agent's or an IDE's configuration is
// protected by the directory that gives it its meaning (its anchor); a
// repository's names everywhere (no anchor).
func TestGuardJudgeWhere(t *testing.T) {
	g := Rules{}
	for _, c := range []struct {
		path, anchor string
		n            Name
	}{
		{"/h/.bashrc", "/h", Protected},
		{"/h/.config/fish/config.fish", "/h", Protected},
		{"/h/.config/git/config", "/h", Protected},
		{"/w/clone/.vscode/settings.json", "/w/clone", Protected},
		{"/w/clone/.vscode", "/w/clone", Protected},
		{"/w/clone/.idea/x.xml", "/w/clone", Protected},
		{"/w/clone/.claude/commands/x.md", "/w/clone", Protected},
		{"/w/clone/.claude/settings.json", "/w/clone", Protected},
		{"/w/clone/sub/.mcp.json", "/w/clone/sub", Protected},
		{"/w/clone/.gitmodules", "/w/clone", Protected},
		{"/.bashrc", "/", Protected},
		{".mcp.json", ".", Protected},
		{"a/.vscode/x", "a", Protected},
		{"/w/r/.git/hooks/pre-commit", "", Protected},
		{"/w/r/.git/config", "", GitConfig},
		{"/w/r/.git/modules/s/hooks/post-checkout", "", Protected},
		{"/w/.claude", "", Context},
		{"/w/.claude/notes.md", "", Context},
		{"/w/src/main.go", "", Free},
	} {
		n, _, anchor := g.JudgeWhere(c.path)
		if n != c.n || anchor != c.anchor {
			t.Errorf("JudgeWhere(%q) = %v, anchor %q; want %v, %q", c.path, n, anchor, c.n, c.anchor)
		}
		if j, _ := g.Judge(c.path); j != n {
			t.Errorf("Judge(%q) = %v, JudgeWhere %v", c.path, j, n)
		}
	}
}

// README's table of protected names holds every name of the tables the
// guard and the macOS profile match, each in a row that says where it is
// protected as JudgeWhere does: in every repository, or in home and the
// directories of the launch.
func TestREADMEProtectedNames(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "### Protected names: what the host would run")
	table, _, _ = strings.Cut(table, "\n### ")
	if !ok {
		t.Fatal("README has no protected-names section")
	}
	rows := map[string]string{} // a name as README spells it → where its row says it is protected
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, name := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			rows[strings.TrimSuffix(name[1], "/")] = cells[3]
		}
	}
	files, dirs, claude := ProtectedNames()
	var names []string
	names = append(names, files...)
	names = append(names, dirs...)
	for _, c := range claude {
		names = append(names, ".claude/"+c)
	}
	names = append(names, ProtectedPaths()...)
	for _, name := range names {
		where, ok := rows[name]
		if !ok {
			t.Errorf("README's table has no row for %s", name)
			continue
		}
		_, _, anchor := (Rules{}).JudgeWhere("/launch/" + name)
		if anchor != "" && !strings.Contains(where, "directories of the launch") {
			t.Errorf("README says %s is protected %q; the guard protects it where its directory existed at launch", name, where)
		}
	}
	if _, ok := rows[".git/hooks/*"]; !ok {
		t.Error("README's table has no row for a repository's hooks")
	}
}

// Judging one name of an unpacked tree, as the guard does for every file
// a build or an unpack makes (bench/README: the guard's cost per file).
func BenchmarkJudgeProjectFile(b *testing.B) {
	g := Rules{}
	for b.Loop() {
		g.Judge("/home/u/work/project/node_modules/pkg/lib/sub/dir/index.js")
	}
}
