package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/internal/testenv"
)

// projectFiles are what real repositories commit among the protected
// names: a project's own IDE, agent and CI configuration.
var projectFiles = map[string]string{
	".vscode/settings.json":    `{"editor.tabSize": 2}`,
	".idea/workspace.xml":      "<project/>",
	".claude/commands/hi.md":   "Say hi.",
	".claude/settings.json":    `{"permissions": {}}`,
	".mcp.json":                `{"mcpServers": {}}`,
	".github/workflows/ci.yml": "on: push",
	".envrc":                   "export A=1",
	".cursor/rules/style.mdc":  "Use tabs.",
	".zed/settings.json":       `{"tab_size": 2}`,
	".gemini/settings.json":    `{"theme": "x"}`,
	".npmrc":                   "save-exact=true",
	".aider.conf.yml":          "model: x",
}

// everydayRepos makes, on the host, a repository that tracks
// projectFiles and .gitmodules (a submodule, itself tracking .vscode),
// with a branch that adds and removes such files; it returns the
// repository's path and the submodule-free copy's.
func everydayRepos(t *testing.T, b *box) (withSub, plain string) {
	t.Helper()
	src := filepath.Join(filepath.Dir(b.W), "src")
	sub := filepath.Join(filepath.Dir(b.W), "subrepo")
	plain = filepath.Join(filepath.Dir(b.W), "plain")
	for _, d := range []string{src, sub, plain} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		hostGit(t, d, "init", "-q", "-b", "main")
	}
	os.MkdirAll(filepath.Join(sub, ".vscode"), 0o755)
	os.WriteFile(filepath.Join(sub, ".vscode/settings.json"), []byte("{}"), 0o644)
	hostGit(t, sub, "add", "-A")
	hostGit(t, sub, "commit", "-q", "-m", "sub")
	for _, d := range []string{src, plain} {
		for f, content := range projectFiles {
			p := filepath.Join(d, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(content), 0o644)
		}
		hostGit(t, d, "add", "-A")
		hostGit(t, d, "commit", "-q", "-m", "project")
	}
	hostGit(t, src, "submodule", "add", "-q", sub, "sub")
	hostGit(t, src, "commit", "-q", "-m", "submodule")
	hostGit(t, src, "checkout", "-q", "-b", "feature")
	os.MkdirAll(filepath.Join(src, ".claude/agents"), 0o755)
	os.WriteFile(filepath.Join(src, ".claude/agents/a.md"), []byte("agent"), 0o644)
	os.WriteFile(filepath.Join(src, ".vscode/extensions.json"), []byte("{}"), 0o644)
	hostGit(t, src, "rm", "-q", ".idea/workspace.xml")
	hostGit(t, src, "add", "-A")
	hostGit(t, src, "commit", "-q", "-m", "feature")
	hostGit(t, src, "checkout", "-q", "main")
	return src, plain
}

// Everyday work with a project's protected names passes, as it does
// without a sandbox: git clone (a path and file://) of a repository that
// tracks .vscode, .idea, .claude, .mcp.json, .github, .envrc and
// .gitmodules; checkout and switch between branches that add and remove
// them; submodule update; worktree add; cp -a, tar x and rsync -a of a
// repository (its config arrives, git status works in the copy); rm -rf
// of a tree the host made that holds a package's .vscode, .gitmodules
// and .npmrc; an editor's save by rename; git init --shared. Judged on
// the host; both users.
func TestEverydayWork(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		t.Run("namespaces", func(t *testing.T) {
			b := newBox(t)
			everydayWork(t, b, func(script string) result { return b.run(fsMap{"allowWrite": []string{"."}}, script) })
		})
		// The fallback, on a host that refuses what Docker's default
		// profile refuses.
		t.Run("fallback", func(t *testing.T) {
			b := newBox(t)
			cfg := filepath.Join(filepath.Dir(b.W), "fallback.json")
			os.WriteFile(cfg, []byte(`{"enableWeakerNestedSandbox":true,"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[]}}`), 0o644)
			everydayWork(t, b, func(script string) result { return b.runNoUserns("docker", nil, "--settings", cfg, "-c", script) })
		})
	})
}

// everydayWork is TestEverydayWork in b, its script run by run.
func everydayWork(t *testing.T, b *box, run func(script string) result) {
	{
		src, plain := everydayRepos(t, b)
		tarball := filepath.Join(filepath.Dir(b.W), "plain.tar")
		if out, err := exec.Command("tar", "-C", filepath.Dir(plain), "-cf", tarball, "plain").CombinedOutput(); err != nil {
			t.Fatalf("tar: %v %s", err, out)
		}
		// A tree the host made: a package that ships its own
		// configuration.
		for _, f := range []string{"node_modules/pkg/.vscode/settings.json", "node_modules/pkg/.gitmodules", "node_modules/pkg/.npmrc", "node_modules/pkg/index.js"} {
			b.write(f, "x")
		}
		_, rsyncErr := exec.LookPath("rsync")
		// A package that ships its own configuration, as npm packs one.
		pkg := filepath.Join(filepath.Dir(b.W), "pkg")
		for f, content := range map[string]string{"package/package.json": `{"name": "pkg", "version": "1.0.0"}`, "package/.vscode/settings.json": "{}", "package/.gitmodules": "[submodule \"x\"]"} {
			os.MkdirAll(filepath.Dir(filepath.Join(pkg, f)), 0o755)
			os.WriteFile(filepath.Join(pkg, f), []byte(content), 0o644)
		}
		if out, err := exec.Command("tar", "-C", pkg, "-czf", pkg+".tgz", "package").CombinedOutput(); err != nil {
			t.Fatalf("tar: %v %s", err, out)
		}
		b.write("app/package.json", `{"name": "app", "version": "1.0.0"}`)
		_, npmErr := exec.LookPath("npm")
		script := `set -u
step() { "$@" >"$TMPDIR/out" 2>&1; rc=$?; echo "$rc $*"; [ $rc = 0 ] || sed 's/^/    /' "$TMPDIR/out"; }
export GIT_CONFIG_COUNT=3 GIT_CONFIG_KEY_0=protocol.file.allow GIT_CONFIG_VALUE_0=always GIT_CONFIG_KEY_1=user.name GIT_CONFIG_VALUE_1=a GIT_CONFIG_KEY_2=user.email GIT_CONFIG_VALUE_2=a@example.com
step git clone -q ` + src + ` c
step git clone -q file://` + src + ` c2
step git -C c checkout -q feature
step git -C c switch -q main
step git -C c submodule -q update --init
step git -C c worktree add -q ../wt feature
step cp -a ` + plain + ` cp
step git -C cp status --short
mkdir tx && step tar -C tx -xf ` + tarball + `
step git -C tx/plain status --short
`
		if rsyncErr == nil {
			script += `step rsync -a ` + plain + `/ rs/
step git -C rs status --short
`
		}
		if npmErr == nil {
			script += `(cd app && step npm install --offline --no-audit --no-fund --cache "$TMPDIR/npm" ` + pkg + `.tgz)
`
		} else {
			t.Log("npm is not installed: the npm install of a local tarball is not tried")
		}
		script += `step rm -rf node_modules
step git init -q --shared shared
step sh -c 'echo "{\"a\": 2}" > c/.vscode/.settings.json.swp && mv c/.vscode/.settings.json.swp c/.vscode/settings.json'
echo END`
		r := run(script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if line != "" && !strings.HasPrefix(line, "0 ") && !strings.HasPrefix(line, "    ") && line != "END" {
				t.Errorf("failed: %s\n%s", line, r.stdout)
			}
		}
		for f, content := range projectFiles {
			for _, copy := range []string{"c", "c2", "cp", "tx/plain"} {
				if got := b.read(copy + "/" + f); got != content && !(copy == "c" && f == ".vscode/settings.json") {
					t.Errorf("%s/%s = %q, want %q", copy, f, got, content)
				}
			}
		}
		if got := b.read("c/.vscode/settings.json"); got != `{"a": 2}`+"\n" {
			t.Errorf("the editor's save did not land: %q", got)
		}
		for _, f := range []string{"c/.gitmodules", "c/sub/.vscode/settings.json", "wt/.claude/agents/a.md", "wt/.vscode/extensions.json"} {
			if _, err := os.Stat(b.path(f)); err != nil {
				t.Errorf("%s is missing: %v", f, err)
			}
		}
		if _, err := os.Stat(b.path("wt/.idea/workspace.xml")); err == nil {
			t.Error("the branch's checkout left a file it removes")
		}
		for _, copy := range []string{"cp", "tx/plain"} {
			if got, want := b.read(copy+"/.git/config"), readFile(t, plain+"/.git/config"); got != want {
				t.Errorf("%s/.git/config = %q, want %q", copy, got, want)
			}
		}
		if npmErr == nil {
			for _, f := range []string{"app/node_modules/pkg/.vscode/settings.json", "app/node_modules/pkg/.gitmodules"} {
				if _, err := os.Stat(b.path(f)); err != nil {
					t.Errorf("npm install: %v", err)
				}
			}
		}
		if _, err := os.Stat(b.path("node_modules")); err == nil {
			t.Error("rm -rf left node_modules")
		}
		if out, err := exec.Command("git", "-C", b.path("shared"), "config", "core.sharedRepository").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
			t.Errorf("git init --shared: %q %v", out, err)
		}
		for _, f := range []string{"shared/.git/hooks", "shared/.git/config"} {
			if fi, err := os.Stat(b.path(f)); err != nil || fi.Mode().Perm()&0o022 != 0 {
				t.Errorf("%s takes write for its group or others: %v %v", f, fi.Mode(), err)
			}
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// What the host would run stays refused beside everyday work: a
// project's configuration made, or moved from a tree the command made,
// into a directory of the launch (the working directory, a subdirectory
// of it, home); a directory of the launch removed and made again; a
// directory the command made, holding such names, exchanged with one of
// the launch or moved where one was; a hook or an executable key in a
// repository the command cloned. Judged from
// outside; both users.
func TestEverydayWorkStaysRefused(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		src, _ := everydayRepos(t, b)
		b.write("sub/keep", "")
		b.write("gone/keep", "")
		b.write("xchg/keep", "")
		b.write("proj/", "")
		c := b.canary
		script := `git -c protocol.file.allow=always clone -q ` + src + ` c
mv c/.vscode .vscode; mv c/.mcp.json .mcp.json; mv c/.claude sub/.claude
mkdir -p .vscode sub/.claude/commands; echo ` + c + ` > .vscode/tasks.json; echo ` + c + ` > sub/.claude/commands/x.md
echo ` + c + ` > .mcp.json; echo ` + c + ` > ~/.bashrc; mkdir -p ~/.claude; echo ` + c + ` > ~/.claude/settings.json
rm -rf gone && mkdir -p gone/.vscode && echo ` + c + ` > gone/.vscode/tasks.json
mkdir -p t/.vscode && echo ` + c + ` > t/.vscode/tasks.json && mv t/.vscode sub/.vscode
printf '#!/bin/sh\necho ` + c + `\n' > c/.git/hooks/post-checkout; chmod +x c/.git/hooks/post-checkout
git -C c config core.fsmonitor 'echo ` + c + `'
mkdir -p M/.vscode M/.claude && echo ` + c + ` > M/.vscode/tasks.json && echo ` + c + ` > M/.claude/settings.json
python3 -c 'import ctypes, sys; l = ctypes.CDLL(None, use_errno=True); sys.exit(l.renameat2(-100, b"M", -100, b"xchg", 2) != 0)' || echo EXCHANGE-REFUSED
mkdir -p N/.claude/commands && echo ` + c + ` > N/.claude/commands/x.md && echo ` + c + ` > N/.mcp.json; rmdir proj && mv N proj
echo END; exit 3`
		r := b.run(fsMap{"allowWrite": []string{".", "~"}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, f := range []string{".vscode/tasks.json", ".vscode/settings.json", ".mcp.json", "sub/.claude/commands/x.md", "sub/.claude/settings.json", "~/.bashrc", "~/.claude/settings.json", "gone/.vscode/tasks.json", "sub/.vscode/tasks.json", "c/.git/hooks/post-checkout",
			"xchg/.vscode/tasks.json", "xchg/.claude/settings.json", "proj/.claude/commands/x.md", "proj/.mcp.json"} {
			if _, err := os.Lstat(b.path(f)); err == nil {
				t.Errorf("%s was made: %q", f, b.read(f))
			}
		}
		if strings.Contains(b.read("c/.git/config"), c) {
			t.Errorf("an executable key landed in a cloned repository's config: %q", b.read("c/.git/config"))
		}
		if !strings.Contains(r.stderr, "blocked:") {
			t.Errorf("no refusal was reported: %+v", r)
		}
	})
}

// filesystem.skipPathGuard turns the guard off: what exists at launch
// stays read-only (a .bashrc, a repository's config), names made during
// the run are not refused, and the run's enforcement says what it lacks;
// the fallback refuses the setting. Judged on the host; both users.
func TestSkipPathGuard(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		b.write(".bashrc", "ORIGINAL")
		hostGit(t, b.W, "init", "-q", "r")
		before := b.read("r/.git/config")
		r := b.exec(fsMap{"allowWrite": []string{"."}, "skipPathGuard": true}, []string{"SRT_DEBUG=1"}, "-c",
			`echo X >> .bashrc; git -C r config core.fsmonitor "echo `+b.canary+`"; mkdir n && echo made > n/.bashrc; echo END`)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if b.read(".bashrc") != "ORIGINAL" || b.read("r/.git/config") != before {
			t.Errorf("a protected name of the launch was written with the guard off: %q %q", b.read(".bashrc"), b.read("r/.git/config"))
		}
		if b.read("n/.bashrc") != "made\n" {
			t.Errorf("with the guard off, a name made during the run was refused: %+v", r)
		}
		if !strings.Contains(r.stderr, "filesystem.skipPathGuard") {
			t.Errorf("the enforcement report does not say what the run lacks: %q", r.stderr)
		}
		cfg := filepath.Join(filepath.Dir(b.W), "fallback-skip.json")
		os.WriteFile(cfg, []byte(`{"enableWeakerNestedSandbox":true,"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[],"skipPathGuard":true}}`), 0o644)
		r = b.runNoUserns("", nil, "--settings", cfg, "-c", "echo ran > ran")
		if r.code == 0 || !strings.Contains(r.stderr, "skipPathGuard") {
			t.Errorf("the fallback took filesystem.skipPathGuard: %+v", r)
		}
		if _, err := os.Stat(b.path("ran")); err == nil {
			t.Error("the fallback ran the command with the guard off")
		}
	})
}
