package main

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/testenv"

	"golang.org/x/sys/unix"
)

// guardNames are the protected names of spec c.5, and the shell startup
// files and git's legacy remotes it leaves out, as paths a command would
// write: each file, and a file inside each protected directory.
var guardNames = append([]string{".vscode/settings.json", ".idea/workspace.xml", ".claude/commands/x.md",
	".claude/agents/a.md", ".claude/settings.json", ".claude/settings.local.json", ".claude/hooks/format.sh", ".git/hooks/pre-commit", ".git/config", ".config/git/config",
	".git/remotes/origin", ".git/branches/origin", ".config/fish/config.fish", ".config/fish/conf.d/x.fish"}, protectedFiles...)

// protectedFiles are the protected names that are files.
var protectedFiles = []string{".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile",
	".ripgreprc", ".mcp.json", ".bash_login", ".bash_logout", ".zshenv", ".zlogin", ".zlogout", ".login", ".logout",
	".cshrc", ".tcshrc", ".kshrc", ".mkshrc", ".bash_aliases", ".inputrc"}

// attacks are the ways a command may try to make path p (under root r)
// with content c; i tells their scratch names apart.
var attacks = map[string]func(r, p, c string, i int) string{
	"create": func(r, p, c string, i int) string {
		return fmt.Sprintf(`mkdir -p "$(dirname "%[1]s")"; echo %[2]s > "%[1]s"`, p, c)
	},
	"mkdir": func(r, p, c string, i int) string {
		return fmt.Sprintf(`mkdir -p "%[1]s" && echo %[2]s > "%[1]s/inner"`, p, c)
	},
	"rename": func(r, p, c string, i int) string {
		return fmt.Sprintf(`mkdir -p "$(dirname "%[1]s")"; echo %[2]s > "%[3]s/tmp%[4]d"; mv -f "%[3]s/tmp%[4]d" "%[1]s"`, p, c, r, i)
	},
	"link": func(r, p, c string, i int) string {
		return fmt.Sprintf(`mkdir -p "$(dirname "%[1]s")"; echo %[2]s > "%[3]s/src%[4]d"; ln -f "%[3]s/src%[4]d" "%[1]s"`, p, c, r, i)
	},
	"symlink": func(r, p, c string, i int) string {
		return fmt.Sprintf(`mkdir -p "$(dirname "%[1]s")"; echo %[2]s > "%[3]s/src%[4]d"; ln -sf "%[3]s/src%[4]d" "%[1]s"`, p, c, r, i)
	},
	// A directory prepared under a harmless name, then moved where its
	// names become protected ones.
	// It lands in the root itself: in a directory the command made, a
	// project's names are its own (see TestGuardProjectNamesInMadeTrees).
	"mv-dir": func(r, p, c string, i int) string {
		rel := strings.TrimPrefix(p, r+"/")
		top, rest, nested := strings.Cut(rel, "/")
		prep := fmt.Sprintf("%s/prep%d", r, i)
		if !nested {
			return fmt.Sprintf(`mkdir -p %[1]s; echo %[2]s > %[1]s/inner; mv -T %[1]s "%[3]s/%[4]s"`, prep, c, r, top)
		}
		return fmt.Sprintf(`mkdir -p "$(dirname "%[1]s/%[2]s")"; echo %[3]s > "%[1]s/%[2]s"; mv -T %[1]s "%[4]s/%[5]s"`, prep, rest, c, r, top)
	},
}

// repositoryName says whether rel is one of a repository's protected
// names (its hooks, config, legacy remotes): protected in every
// repository, whoever made it.
func repositoryName(rel string) bool {
	return protectedBy(rel) && strings.Contains(strings.ToLower(rel), ".git/")
}

// protectedBy says whether rel (a path under a root) is one the guard
// must keep from holding made content: an independent spelling of spec
// c.5 at any depth.
func protectedBy(rel string) bool {
	parts := strings.Split(strings.ToLower(rel), "/")
	last := parts[len(parts)-1]
	for i, p := range parts {
		switch {
		case p == ".vscode" || p == ".idea":
			return true
		case p == ".claude" && i+1 < len(parts) && (parts[i+1] == "commands" || parts[i+1] == "agents" || parts[i+1] == "settings.json" || parts[i+1] == "settings.local.json" || parts[i+1] == "hooks"):
			return true
		case p == ".git" && i+1 < len(parts) && parts[i+1] == "hooks" && !(i+3 == len(parts) && strings.HasSuffix(last, ".sample")):
			return i+2 < len(parts) // the hooks directory itself may be made (git's templates)
		case p == ".git" && i+2 == len(parts) && parts[i+1] == "config":
			return true
		case p == ".git" && i+2 < len(parts) && (parts[i+1] == "remotes" || parts[i+1] == "branches"):
			return true
		case p == ".config" && i+3 == len(parts) && parts[i+1] == "git" && last == "config":
			return true
		case p == ".config" && i+2 < len(parts) && parts[i+1] == "fish":
			return true
		}
	}
	for _, f := range protectedFiles {
		if last == f {
			return true
		}
	}
	return false
}

// madeProtected walks root and returns every protected path that holds
// the canary or is a symlink: what the host would later run or read.
func madeProtected(t *testing.T, root, canary string) []string {
	return madeWhere(root, canary, protectedBy)
}

// madeWhere is madeProtected for the paths protected says are.
func madeWhere(root, canary string, protected func(rel string) bool) []string {
	var bad []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if !protected(rel) {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			bad = append(bad, rel+" (symlink)")
		case d.Type().IsRegular():
			if data, _ := os.ReadFile(p); strings.Contains(string(data), canary) {
				bad = append(bad, rel)
			}
		}
		return nil
	})
	return bad
}

// Every protected name of spec c.5, where it does not exist yet, at the
// working directory, deep below it, in the home and in a second write
// root (directories that existed at launch), made by each way a command
// has: none ends up on the host with content, judged from outside. In a
// tree the command made during the run, a repository's names stay
// protected too. Run as both users.
func TestGuardProtectedNamesBattery(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		second := filepath.Join(filepath.Dir(b.W), "second")
		if err := os.Mkdir(second, 0o755); err != nil {
			t.Fatal(err)
		}
		deep := filepath.Join(b.W, "a/b/c/d/e")
		if err := os.MkdirAll(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		made := filepath.Join(b.W, "made/in/run")
		roots := map[string]string{"cwd": b.W, "deep": deep, "home": b.H, "second": second, "made": made}
		var script strings.Builder
		fmt.Fprintf(&script, "mkdir -p %s\n", made)
		i := 0
		for _, root := range roots {
			for _, name := range guardNames {
				for _, attack := range attacks {
					i++
					fmt.Fprintf(&script, "( %s ) 2>/dev/null\n", attack(root, root+"/"+name, b.canary, i))
				}
			}
		}
		script.WriteString("echo BATTERY-DONE\n")
		cfg := filepath.Join(filepath.Dir(b.W), "battery.sh")
		os.WriteFile(cfg, []byte(script.String()), 0o644)
		r := b.exec(fsMap{"allowWrite": []string{".", "~", second}}, nil, "bash", cfg)
		if !strings.Contains(r.stdout, "BATTERY-DONE") {
			t.Fatalf("the battery did not run: %+v", r)
		}
		for what, root := range roots {
			bad := madeProtected(t, root, b.canary)
			if what == "made" {
				bad = madeWhere(root, b.canary, repositoryName)
			} else if what == "cwd" {
				// Not the trees made beneath it in the run.
				bad = slices.DeleteFunc(bad, func(p string) bool { return strings.HasPrefix(p, "made/") })
			}
			for _, p := range bad {
				t.Errorf("%s: %s was made with content", what, p)
			}
		}
		// In the tree made in the run, a project's names were made.
		for _, name := range []string{".vscode/settings.json", ".claude/commands/x.md", ".mcp.json", ".gitmodules", ".bashrc"} {
			data, err := os.ReadFile(filepath.Join(made, name))
			if fi, serr := os.Stat(filepath.Join(made, name)); serr == nil && fi.IsDir() {
				data, err = os.ReadFile(filepath.Join(made, name, "inner")) // the mkdir attack's
			}
			if err != nil || !strings.Contains(string(data), b.canary) {
				t.Errorf("made: %s was not made in a tree the command made (%v)", name, err)
			}
		}
		// The steps that are not about a protected name worked: each
		// root holds the scratch files the attacks made.
		for what, root := range roots {
			for _, prefix := range []string{"src", "tmp", "prep"} {
				if m, _ := filepath.Glob(filepath.Join(root, prefix+"*")); len(m) == 0 {
					t.Errorf("%s: no %s* scratch file, so the battery proves nothing there", what, prefix)
				}
			}
		}
	})
}

// A protected name that was a symlink at launch cannot be replaced: not
// by mv of a new file over it, nor by ln -sf, nor by cp; its target is
// unchanged.
func TestGuardReplaceLinkedName(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("~/dotfiles/bashrc", "ORIGINAL")
		if err := os.Symlink("dotfiles/bashrc", b.path("~/.bashrc")); err != nil {
			t.Fatal(err)
		}
		r := b.run(fsMap{"allowWrite": []string{"~"}}, fmt.Sprintf(`cd ~; echo %[1]s > new; mv -f new .bashrc; echo %[1]s > new2; ln -sf new2 .bashrc; cp new2 .bashrc; cat dotfiles/bashrc; echo %[1]s >> .bashrc; echo END`, b.canary))
		if target, err := os.Readlink(b.path("~/.bashrc")); err != nil || target != "dotfiles/bashrc" {
			t.Errorf("~/.bashrc was replaced: %q %v (%+v)", target, err, r)
		}
		if got := b.read("~/dotfiles/bashrc"); got != "ORIGINAL" {
			t.Errorf("the target of ~/.bashrc was written: %q", got)
		}
	})
}

// Racing threads that swap a path's bytes, a directory on its way or a
// final symlink between the guard's check and its use make no protected
// name. Run as both users.
func TestGuardRaces(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		dir := filepath.Join(b.W, "race")
		os.Mkdir(dir, 0o755)
		r := b.exec(fsMap{"allowWrite": []string{"."}}, []string{probeEnv + "=race", "SRT_RACE_CANARY=" + b.canary}, exe, dir)
		if !strings.Contains(r.stdout, "race calls") || strings.Contains(r.stdout, "race calls 0\n") {
			t.Fatalf("the race did not run: %+v", r)
		}
		for _, p := range madeProtected(t, dir, b.canary) {
			t.Errorf("a race made %s", p)
		}
		for _, p := range []string{".bashrc", ".zshrc", "repo/.git/hooks/pre-commit"} {
			if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
				t.Errorf("a race made %s", p)
			}
		}
	})
}

// Real work still succeeds under the guard, end to end: git (init, add,
// commit, config, remote, clone, worktree), an editor's
// write-then-rename save, tar x of 10,000 files, go build of a module,
// npm install of a local tarball.
func TestGuardRealWork(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		for i := 0; i < 100; i++ {
			for j := 0; j < 100; j++ {
				b.write(fmt.Sprintf("src/d%d/f%d.txt", i, j), "x")
			}
		}
		tarball := filepath.Join(filepath.Dir(b.W), "t.tar")
		if out, err := exec.Command("tar", "cf", tarball, "-C", b.path("src"), ".").CombinedOutput(); err != nil {
			t.Fatalf("tar: %v %s", err, out)
		}
		os.RemoveAll(b.path("src"))
		// A module to build and a package to install, when go and npm
		// are here (each is skipped, and said, when not).
		var extra []string
		if goBin, err := exec.LookPath("go"); err == nil {
			b.write("mod/go.mod", "module example.com/m\n\ngo 1.21\n")
			b.write("mod/main.go", "package main\n\nfunc main() { println(\"built\") }\n")
			extra = append(extra, "cd mod && GOCACHE=$PWD/../gocache GOPATH=$PWD/../gopath GOTOOLCHAIN=local GOFLAGS= "+goBin+" build -o m . && ./m 2>&1 && cd ..")
		} else {
			t.Log("go is not on PATH: the module build is not tried")
		}
		if npmBin, err := exec.LookPath("npm"); err == nil {
			pkg := filepath.Join(filepath.Dir(b.W), "pkg")
			os.MkdirAll(pkg, 0o755)
			os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"guard-test-pkg","version":"1.0.0","main":"index.js"}`), 0o644)
			os.WriteFile(filepath.Join(pkg, "index.js"), []byte("module.exports = 42;\n"), 0o644)
			pack := exec.Command(npmBin, "pack", "--silent", "--pack-destination", filepath.Dir(b.W))
			pack.Dir = pkg
			pack.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(filepath.Dir(b.W), "npmcache-host"))
			if out, err := pack.CombinedOutput(); err != nil {
				t.Fatalf("npm pack: %v %s", err, out)
			}
			b.write("app/package.json", `{"name":"app","version":"1.0.0"}`)
			extra = append(extra, "cd app && npm_config_cache=$PWD/../npmcache "+npmBin+" install --offline --no-audit --no-fund --silent "+filepath.Join(filepath.Dir(b.W), "guard-test-pkg-1.0.0.tgz")+" && node -e 'console.log(\"npm \" + require(\"guard-test-pkg\"))' && cd ..")
		} else {
			t.Log("npm is not on PATH: the package install is not tried")
		}
		script := `set -e
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
git init -q repo && cd repo
git config user.name tester && git config user.email t@example.com
git remote add origin https://example.com/x.git
echo hello > a.txt && git add a.txt && git commit -q -m one
echo filemode=$(git config core.filemode)
printf '#!/bin/sh\n' > run.sh && chmod +x run.sh && git add run.sh && git commit -q -m exec && echo staged=$(git ls-files -s run.sh | cut -c1-6)
git branch side && git worktree add -q ../wt side
cd .. && git clone -q repo clone && test -f clone/a.txt
cp -a repo repo-copy 2>cp.err || true; echo hooks=$(stat -c %a repo/.git/hooks) copied=$(stat -c %a repo-copy/.git/hooks) errors=$(grep -c hooks cp.err)
printf 'new' > .notes.txt.swp && mv .notes.txt.swp notes.txt && cat notes.txt && echo
mkdir x && tar xf ` + tarball + ` -C x && echo files=$(find x -type f | wc -l)
` + strings.Join(extra, "\n") + `
echo REAL-DONE`
		r := b.exec(fsMap{"allowWrite": []string{"."}}, nil, "bash", "-c", script)
		if !strings.Contains(r.stdout, "REAL-DONE") || !strings.Contains(r.stdout, "files=10000") {
			t.Fatalf("real work failed: %+v", r)
		}
		// git probes whether modes hold by flipping its config's execute
		// bit: a refusal would leave every repository with filemode off.
		if !strings.Contains(r.stdout, "filemode=true") || !strings.Contains(r.stdout, "staged=100755") {
			t.Errorf("git does not see modes: %+v", r)
		}
		// cp -a sets a copied repository's hooks directory's mode and
		// times as it goes.
		// (Its config, which cp makes as a file, is refused: see
		// README's Known limits.)
		if m := regexp.MustCompile(`hooks=(\d+) copied=(\d+) errors=0`).FindStringSubmatch(r.stdout); m == nil || m[1] != m[2] {
			t.Errorf("a repository copied with cp -a lost its hooks directory's mode: %+v", r)
		}
		for _, want := range []string{"built", "npm 42"} {
			if strings.Contains(strings.Join(extra, " "), map[string]string{"built": "build", "npm 42": "npm"}[want]) && !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q: %+v", want, r)
			}
		}
		cfg, _ := os.ReadFile(b.path("repo/.git/config"))
		for _, want := range []string{"name = tester", "[remote \"origin\"]"} {
			if !strings.Contains(string(cfg), want) {
				t.Errorf("repo/.git/config lacks %q:\n%s", want, cfg)
			}
		}
		if hooks, _ := filepath.Glob(b.path("repo/.git/hooks/*.sample")); len(hooks) == 0 {
			t.Logf("git made no sample hooks (no templates here)")
		}
	})
}

// A hard link made before the run, in a writable tree, to a file outside
// it (or to a denyWrite file) writes nothing through: not by >, >>,
// truncate or dd; a file the command links itself stays writable under
// both names. Judged from outside; run as both users.
func TestGuardHardLinksWrite(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("~/outside.txt", "ORIGINAL")
		b.write("dw.txt", "ORIGINAL")
		for link, target := range map[string]string{"l-out": b.path("~/outside.txt"), "l-dw": b.path("dw.txt")} {
			if err := os.Link(target, b.path(link)); err != nil {
				t.Skipf("needs hard links between the test's directories: %v", err)
			}
		}
		script := `for l in l-out l-dw; do echo X > $l; echo X >> $l; truncate -s 0 $l; printf Y | dd of=$l conv=notrunc status=none; done
echo a > mine; ln mine mine2; echo b >> mine2; cat mine; echo END`
		r := b.run(fsMap{"allowWrite": []string{"."}, "denyWrite": []string{"dw.txt"}}, script)
		for _, f := range []string{"~/outside.txt", "dw.txt"} {
			if got := b.read(f); got != "ORIGINAL" {
				t.Errorf("%s was written through a hard link: %q (%+v)", f, got, r)
			}
		}
		if !strings.Contains(r.stdout, "a\nb\nEND") {
			t.Errorf("a file the command linked itself is not writable under both names: %+v", r)
		}
	})
}

// denyWrite and denyRead entries apply to what appears after launch: a
// literal path that did not exist, a pattern's new matches, made by the
// command or by the host while it runs. Run as both users.
func TestGuardDenyLater(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("secrets/", "")
		fs := fsMap{"allowWrite": []string{"."}, "denyWrite": []string{"secrets/*.pem", "secrets2/*.pem", "ex/*.pem", "later.txt"}, "denyRead": []string{"hidden-later", "**/.env", "rd/hidden.txt"}}
		// The host makes secrets/host.pem once the command is running;
		// the command then tries to write it.
		b.whenReady("ready", "go", 5*time.Second, func() {
			os.WriteFile(b.path("secrets/host.pem"), []byte("ORIGINAL"), 0o666)
		})
		script := fmt.Sprintf(`echo %[1]s > secrets/a.pem; echo %[1]s > later.txt; mkdir hidden-later; echo %[1]s > hidden-later/f
mkdir -p sub sub2; echo %[1]s > sub/.env; echo %[1]s > fine.txt; cp fine.txt f2; mv f2 sub2/.env
mkdir t; echo %[1]s > t/secret.pem; mv t secrets2; mkdir u; echo %[1]s > u/later.txt; mv u/later.txt .; mkdir v; echo %[1]s > v/.env; mv v w2
mkdir -p x2; echo %[1]s > x2/a.pem; touch ex; python3 -c 'import ctypes; ctypes.CDLL(None).renameat2(-100, b"ex", -100, b"x2", 2)' 2>/dev/null
ln -s elsewhere rd; mkdir -p sym; ln -s ../elsewhere sym/s; mv sym/s rd 2>/dev/null
touch ready; for i in $(seq 100); do [ -e go ] && break; sleep 0.05; done
echo %[1]s > secrets/host.pem; mv secrets/host.pem secrets/x; echo END`, b.canary)
		r := b.run(fs, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, f := range []string{"secrets/a.pem", "later.txt", "hidden-later", "sub/.env", "sub2/.env", "secrets/x", "w2/.env", "ex/a.pem", "rd"} {
			if _, err := os.Lstat(b.path(f)); err == nil {
				t.Errorf("%s was made: %+v", f, r)
			}
		}
		if strings.Contains(b.read("secrets2/secret.pem"), b.canary) {
			t.Errorf("a directory moved into place made a denyWrite match: %q", b.read("secrets2/secret.pem"))
		}
		if got := b.read("secrets/host.pem"); got != "ORIGINAL" {
			t.Errorf("a denyWrite match made by the host during the run was written: %q", got)
		}
		if got := b.read("fine.txt"); got != b.canary+"\n" {
			t.Errorf("fine.txt = %q: a path no entry covers was not writable", got)
		}
	})
}

// A symlink cannot send a deny pattern's later matches elsewhere: made or
// moved at the pattern's directory, or where a match's directory may be,
// to a place where the same path would not match, it is refused — so a
// secret the host writes at secrets/key.pem while the command runs lands
// there, hidden, and a write meant for secrets/a.key is not the command's
// to make. A link between two places a pattern treats alike (two
// directories under **/.env's) still works. Judged from outside; run as
// both users.
func TestGuardPatternSymlinks(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		rules := fsMap{"allowWrite": []string{"."}, "denyRead": []string{"secrets/*.pem", "secrets/**/*.pem", "**/keys/*.pem", "**/.env"}, "denyWrite": []string{"secrets/*.key"}}
		b.whenReady("ready", "go", 5*time.Second, func() {
			os.MkdirAll(b.path("secrets"), 0o755)
			os.MkdirAll(b.path("a/keys"), 0o755)
			b.write("secrets/key.pem", b.canary)
			b.write("a/keys/k.pem", b.canary)
			b.write("secrets/a.key", "ORIGINAL")
		})
		script := `mkdir -p pub a d1 d2
ln -s pub secrets; ln -s ../pub a/keys; ln -s "$PWD/pub" secrets 2>/dev/null
ln -s pub tmp-link && mv -T tmp-link secrets; ln -s ../pub tmp2 && mv -T tmp2 a/keys
ln -s d1 d3 && echo LINK-OK; echo x > d3/f && [ "$(cat d1/f)" = x ] && echo THROUGH-OK
mkdir -p .venv/bin m/pkg/bin m/.bin && touch m/pkg/bin/x.js && ln -s /usr/bin/env .venv/bin/python && ln -s ../pkg/bin/x.js m/.bin/x && echo TOOLS-OK
ln -s "$PWD/pub" hx && ln hx secrets; mkdir -p secrets; ln -s "$PWD/secrets" secrets/d; ln -s d/../pub secrets/L
mkdir y && ln -s "$PWD/pub" y/L && mv y secrets/y; mkdir -p secrets/q && (cd secrets/q && ln -s /proc/self/cwd ../M)
ln -s ../../pub secrets/q/N; rmdir secrets 2>/dev/null
touch ready; for i in $(seq 100); do [ -e go ] && break; sleep 0.05; done
cat pub/key.pem pub/k.pem secrets/key.pem a/keys/k.pem; echo PWN > pub/a.key; echo PWN > secrets/a.key; echo END`
		r := b.run(rules, script)
		if !strings.Contains(r.stdout, "LINK-OK\nTHROUGH-OK\nTOOLS-OK") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run, or a harmless symlink failed: %+v", r)
		}
		b.noCanary(r)
		for _, f := range []string{"secrets", "a/keys"} {
			if fi, err := os.Lstat(b.path(f)); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
				t.Errorf("%s is not the directory the host made (a symlink was put there): %v", f, err)
			}
		}
		// The second attack round's spellings: a hard link of a symlink, a
		// ".." after a name that is (or may become) a symlink, a directory
		// moved with a symlink in it, /proc/self/cwd, a leading ".." that
		// climbs out.
		for _, f := range []string{"secrets/L", "secrets/y/L", "secrets/M", "secrets/q/N"} {
			if _, err := os.Lstat(b.path(f)); err == nil {
				t.Errorf("a symlink was made at %s: %+v", f, r)
			}
		}
		if got := b.read("secrets/a.key"); got != "ORIGINAL" {
			t.Errorf("a denyWrite match the host made was written: %q", got)
		}
	})
}

// bind(2) of a Unix socket makes a name: the guard judges it as any
// other, in every Unix-socket mode (a stream socketpair's socket can be
// bound too, where no other Unix socket may be made). No socket is left
// at a protected name, and a socket cannot be the marker that makes a
// directory whose hooks hold a program a git directory; ordinary binds
// (a path, an abstract name, an autobind, TCP on loopback) still work.
// Judged from outside; run as both users.
func TestGuardBind(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("needs python3")
		}
		// The last mode is the fallback (no user namespace: the host's
		// network), where a TCP bind without allowLocalBinding is refused
		// as Landlock refuses it when the command makes it.
		const fallback = `"allowAllUnixSockets": true, "fallback",`
		for _, mode := range []string{``, `"allowUnixSockets": ["/run/none.sock"],`, `"allowAllUnixSockets": true,`, fallback} {
			b := newBox(t)
			b.write("sub/", "") // a directory of the launch: its .mcp.json is protected
			b.write("bind.py", `import os, socket
def bind(p, pair=False):
    try:
        s = socket.socketpair()[0] if pair else socket.socket(socket.AF_UNIX)
        s.bind(p)
        print("BOUND", repr(p))
    except OSError as e:
        print("REFUSED", repr(p), e.errno)
for p in [".bashrc", "sub/.mcp.json", "r/.git/config", "r/.git/hooks/pre-commit", "g/refs", "ok.sock"]:
    bind(p)
for p in [".zshrc", "g/objects", "pair.sock", "\0srt-test-abstract", ""]:
    bind(p, True)
try:
    t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(); print("TCP", t.getsockname()[1] > 0)
except OSError as e:
    print("TCP REFUSED", e.errno)
`)
			script := `mkdir -p sub r/.git g/hooks; printf '#!/bin/sh\necho PWNED\n' > g/hooks/pre-commit; chmod +x g/hooks/pre-commit
python3 bind.py; echo END`
			var r result
			if mode == fallback {
				cfg := filepath.Join(filepath.Dir(b.W), "settings-fallback.json")
				if err := os.WriteFile(cfg, []byte(`{"enableWeakerNestedSandbox":true,"network":{"allowAllUnixSockets":true,"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[]}}`), 0o644); err != nil {
					t.Fatal(err)
				}
				r = b.runNoUserns("", nil, "--settings", cfg, "-c", script)
			} else {
				r = b.runJSON(fmt.Sprintf(`{"network":{%s"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[]}}`, mode), script)
			}
			if !strings.Contains(r.stdout, "END") {
				t.Fatalf("%s: the script did not run: %+v", mode, r)
			}
			wants := []string{`BOUND 'pair.sock'`, `BOUND '\x00srt-test-abstract'`, `BOUND ''`, `TCP True`}
			if mode == fallback {
				wants[3] = "TCP REFUSED 13"
				if os.Getenv(harnessEnv) == "docker" {
					// Where pidfd_getfd is refused srt binds only the
					// sockets it made: a pair's are refused (EPERM).
					wants[0], wants[1], wants[2] = `REFUSED 'pair.sock' 1`, `REFUSED '\x00srt-test-abstract' 1`, `REFUSED '' 1`
				}
			}
			if mode != "" {
				wants = append(wants, `BOUND 'ok.sock'`)
			}
			for _, want := range wants {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("%s: %q missing: ordinary binds failed: %+v", mode, want, r)
				}
			}
			for _, p := range []string{".bashrc", "sub/.mcp.json", "r/.git/config", "r/.git/hooks/pre-commit", "g/refs", "g/objects", ".zshrc"} {
				if _, err := os.Lstat(b.path(p)); err == nil {
					t.Errorf("%s: a socket was bound at %s: %+v", mode, p, r)
				}
			}
			if mode == "" {
				continue
			}
			if fi, err := os.Lstat(b.path("ok.sock")); err != nil || fi.Mode()&fs.ModeSocket == 0 {
				t.Errorf("%s: ok.sock is not a socket on the host: %v", mode, err)
			}
		}
	})
}

// What the launch's mounts could not hide stays unreadable: a denyRead
// path and a denyRead pattern's match the host makes while the command
// runs (by their names, through a symlink, through /proc/self/cwd, by a
// thread racing the path's bytes; the target of a denied symlink that
// pointed to nothing at launch), and a hidden file reached by a hard
// link made before the run; nothing of the init's is opened in /proc.
// Run as both users.
func TestGuardReadsLater(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "~/.ssh/id_rsa", "~/.ssh/key2", "~/.ssh/key3")
		for l, hidden := range map[string]string{"innocent.txt": "~/.ssh/id_rsa", "innocent2.txt": "~/.ssh/key2", "innocent3.txt": "~/.ssh/key3"} {
			if err := os.Link(b.path(hidden), b.path(l)); err != nil {
				t.Skipf("needs hard links between the test's directories: %v", err)
			}
		}
		exe := testExe(t)
		b.write("race/open.txt", "PUBLIC")
		// A denied symlink to nothing yet: what it points to appears.
		if err := os.Symlink("dangling-target", b.path("dang")); err != nil {
			t.Fatal(err)
		}
		fs := fsMap{"allowWrite": []string{"."}, "denyRead": []string{"~/.ssh", "**/*.env", "later-secret", "dang"}}
		b.whenReady("race/ready", "race/go", 10*time.Second, func() {
			for _, f := range []string{"later-secret", "sub/.env", "race/hide.env", "dangling-target"} {
				b.write(f, b.canary)
			}
		})
		// innocent2.txt's name is removed once it is pinned: the hidden
		// file is then known only by its inode.
		script := fmt.Sprintf(`cat innocent.txt; %s=race-read %s race
python3 -c 'import os; fd = os.open("innocent2.txt", os.O_PATH); os.unlink("innocent2.txt"); print(open("/proc/self/fd/%%d" %% fd).read())'
python3 -c 'import os; fd = os.open("innocent3.txt", os.O_PATH); os.unlink("innocent3.txt"); os.link("/proc/self/fd/%%d" %% fd, "k3", follow_symlinks=True); print(os.read(os.open("k3", os.O_RDWR), 99))'

cat later-secret; cat sub/.env; ln -s later-secret l; cat l; cat dang; cat dangling-target; cat /proc/self/cwd/sub/.env; cp later-secret copy
mv sub moved-sub; cat moved-sub/.env; [ "$(head -c 4 /proc/self/exe | tail -c 3)" = ELF ] && echo OWN-EXE
%[1]s=opath %[2]s later-secret
cat /proc/1/environ; cat /proc/1/cmdline; ls /proc/1/fd; echo plain > p.txt; cat p.txt; echo END`, probeEnv, exe)
		r := b.run(fs, script)
		if !strings.Contains(r.stdout, "plain\nEND") || !strings.Contains(r.stdout, "race reads") || !strings.Contains(r.stdout, `read "PUBLIC"`) || !strings.Contains(r.stdout, "OWN-EXE") || !strings.Contains(r.stdout, "OPATH-OK") {
			t.Fatalf("the script did not run, or ordinary reads failed: %+v", r)
		}
		b.noCanary(r)
		if strings.Contains(r.stdout+r.stderr, "SRT_") {
			t.Errorf("the init's environment was read: %+v", r)
		}
		if _, err := os.Stat(b.path("copy")); err == nil {
			if got := b.read("copy"); strings.Contains(got, b.canary) {
				t.Errorf("a hidden file was copied out: %q", got)
			}
		}
	})
}

// A git directory not called .git — a bare repository, a
// --separate-git-dir, one prepared by hand for a .git file or a
// worktree's commondir to point at — is known by what it holds: its
// hooks take only git's samples, its config only settings that run
// nothing, and a directory whose hooks or config would run something
// cannot become one. Ordinary git work there still succeeds. Judged
// from outside; run as both users.
func TestGuardGitDirsByContent(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		script := fmt.Sprintf(`export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
git init -q --bare bare.git; echo %[1]s > bare.git/hooks/post-receive
git init -q --separate-git-dir=sep wt; echo %[1]s > sep/hooks/pre-commit
mkdir -p g/hooks; echo %[1]s > g/hooks/pre-commit; touch g/HEAD; mkdir g/objects g/refs; echo x > g/commondir
mkdir -p c; printf '[core]\n\tfsmonitor = %[1]s\n' > c/config; touch c/HEAD
mkdir x; exec 3<>x/config; mkdir x/objects x/refs; echo 'ref: refs/heads/main' > x/HEAD; printf '[core]\n\tfsmonitor = %[1]s\n' >&3; exec 3>&-
mkdir y; : > y/config; ln y/config y-alias; mkdir y/objects y/refs; printf '[core]\n\tfsmonitor = %[1]s\n' > y-alias
git init -q --bare z; printf '[core]\n\tfsmonitor = %[1]s\n' > z/config.worktree
git -C bare.git config core.hooksPath /tmp
git init -q work && git -C work commit -q --allow-empty -m one && git clone -q --bare work nb.git && git -C nb.git config user.name x && echo GIT-OK`, b.canary)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "GIT-OK") {
			t.Fatalf("ordinary git work failed: %+v", r)
		}
		for _, f := range []string{"bare.git/hooks/post-receive", "sep/hooks/pre-commit", "g/HEAD", "g/objects", "g/refs", "g/commondir", "c/HEAD"} {
			if _, err := os.Lstat(b.path(f)); err == nil {
				t.Errorf("%s was made", f)
			}
		}
		// A config opened, or given a second name, before its directory
		// became a git directory is not the one that directory holds.
		for _, f := range []string{"x/config", "y/config", "z/config.worktree"} {
			if strings.Contains(b.read(f), b.canary) {
				t.Errorf("%s took core.fsmonitor: %q", f, b.read(f))
			}
		}
		if cfg := b.read("bare.git/config"); strings.Contains(cfg, "hooksPath") {
			t.Errorf("a bare repository's config took core.hooksPath:\n%s", cfg)
		}
		if cfg := b.read("nb.git/config"); !strings.Contains(cfg, "name = x") {
			t.Errorf("git config user.name in a bare clone did not land:\n%s", cfg)
		}
	})
}

// A command opening FIFOs nobody will open from the other end holds at
// most a bounded number of srt's threads (the rest fail EMFILE), and when
// it ends, srt ends too. The host's device nodes keep their mode, owner
// and times whatever the command does to the sandbox's /dev (as root it
// owns them) or to its stdin, the host's /dev/null. Run as both users.
func TestGuardSpecialFiles(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		before := map[string]string{}
		for _, d := range []string{"/dev/null", "/dev/full", "/dev/zero"} {
			out, _ := exec.Command("stat", "-c", "%a %u %Y", d).Output()
			before[d] = string(out)
			// A failing run must not leave the host broken.
			if fi, err := os.Stat(d); err == nil && os.Geteuid() == 0 {
				mode, mtime := fi.Mode().Perm(), fi.ModTime()
				t.Cleanup(func() {
					os.Chmod(d, mode)
					os.Chown(d, 0, 0)
					os.Chtimes(d, mtime, mtime)
				})
			}
		}
		script := `for i in $(seq 200); do mkfifo f$i; (exec 3>f$i) 2>/dev/null & done; sleep 1
ls /proc | grep -c '^[0-9]' > procs; chmod 000 /dev/null /dev/full; chown 1:1 /dev/zero; touch -d @0 /dev/null; chmod 000 /proc/self/fd/0
python3 -c 'import os; os.fchmod(0, 0)' 2>/dev/null; echo x > /dev/null && echo NULL-WRITES; kill $(jobs -p) 2>/dev/null; echo END`
		cmd := exec.Command(os.Getenv(srtEnv), "--settings", b.settingsFile(fsMap{"allowWrite": []string{"."}}), "-c", script)
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}
		cmd.Dir = b.W
		cmd.Stdin = nil // the host's /dev/null
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		maxThreads := 0
		deadline := time.Now().Add(time.Minute)
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
	watch:
		for {
			select {
			case <-exited:
				break watch
			case <-time.After(20 * time.Millisecond):
				if tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", cmd.Process.Pid)); err == nil && len(tasks) > maxThreads {
					maxThreads = len(tasks)
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("srt did not end after its command: %s", out.String())
				}
			}
		}
		if !strings.Contains(out.String(), "NULL-WRITES") || !strings.Contains(out.String(), "END") {
			t.Errorf("the script did not run through: %s", out.String())
		}
		if maxThreads > 2*64+40 {
			t.Errorf("srt grew to %d threads for FIFO opens that wait", maxThreads)
		}
		for d, was := range before {
			out, _ := exec.Command("stat", "-c", "%a %u %Y", d).Output()
			if string(out) != was {
				t.Errorf("the host's %s changed: %q -> %q", d, was, out)
			}
		}
	})
}

// A directory deeper than the kernel can name (its path past PATH_MAX)
// takes no new name under the guard, which judges by path: the call
// fails ENAMETOOLONG, as a path that long would, not with an unrelated
// error; every directory above it works.
func TestGuardDeepDirectory(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	b := newBox(t)
	b.write("deep.py", `import os
os.makedirs("deep", exist_ok=True); os.chdir("deep")
for i in range(40):
    try:
        os.mkdir("%0200d" % i)
    except OSError as e:
        print("FAILED", len(os.getcwd()) > 3800, e.errno); break
    os.chdir("%0200d" % i)
`)
	r := b.run(fsMap{"allowWrite": []string{"."}}, "python3 deep.py")
	if !strings.Contains(r.stdout, "FAILED True 36") {
		t.Errorf("want mkdir to fail ENAMETOOLONG only past PATH_MAX: %+v", r)
	}
}

// A file reached by a descriptor — reopened for writing through
// /proc/self/fd, or given a new name by linkat(AT_EMPTY_PATH) — is
// judged as the file it is: a git directory's config known only by what
// the directory holds (a --separate-git-dir) gains no program to run, and
// in the fallback, which has no read-only mounts, a file outside
// allowWrite is not written. Judged from outside; run as both users.
func TestGuardDescriptorWrites(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		for _, exe := range []string{"git", "python3"} {
			if _, err := exec.LookPath(exe); err != nil {
				t.Skipf("needs %s", exe)
			}
		}
		b := newBox(t)
		outside := filepath.Join(filepath.Dir(b.W), "outside.txt")
		if err := os.WriteFile(outside, []byte("ORIGINAL"), 0o666); err != nil {
			t.Fatal(err)
		}
		b.write("desc.py", `import os, sys
def attempt(what, f):
    try:
        f(); print("DONE", what)
    except OSError as e:
        print("REFUSED", what, e.errno)
def reopen(p):
    fd = os.open(p, os.O_RDONLY)
    w = os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"[core]\n\tfsmonitor = echo PWNED\n")
def relink(p, new):
    fd = os.open(p, os.O_PATH)
    os.link("/proc/self/fd/%d" % fd, new)
    w = os.open(new, os.O_WRONLY | os.O_APPEND)
    os.write(w, b"[core]\n\tfsmonitor = echo PWNED\n")
for p in sys.argv[1:]:
    attempt("reopen " + p, lambda: reopen(p))
    attempt("relink " + p, lambda: relink(p, os.path.basename(p) + ".2"))
print("END")
`)
		script := `git init -q --separate-git-dir=gd w && python3 desc.py gd/config ` + outside
		for _, fallback := range []bool{false, true} {
			var r result
			if fallback {
				cfg := filepath.Join(filepath.Dir(b.W), "settings-fallback.json")
				if err := os.WriteFile(cfg, []byte(`{"enableWeakerNestedSandbox":true,"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[]}}`), 0o644); err != nil {
					t.Fatal(err)
				}
				os.RemoveAll(b.path("gd"))
				os.RemoveAll(b.path("w"))
				r = b.runNoUserns("", nil, "--settings", cfg, "-c", script)
			} else {
				r = b.run(fsMap{"allowWrite": []string{"."}}, script)
			}
			if !strings.Contains(r.stdout, "END") {
				t.Fatalf("fallback %v: the script did not run: %+v", fallback, r)
			}
			if got, _ := os.ReadFile(outside); string(got) != "ORIGINAL" {
				t.Errorf("fallback %v: a file outside allowWrite was written: %q", fallback, got)
			}
			cfg, _ := os.ReadFile(b.path("gd/config"))
			if strings.Contains(string(cfg), "fsmonitor") {
				t.Errorf("fallback %v: the git directory's config gained a program: %q\n%+v", fallback, cfg, r)
			}
		}
	})
}

// The third attack round's ways past the symlink rule, each judged from
// outside by a secret the host writes at a denied path once the command
// has set up: a link that leads where it may only through a symlink the
// command can re-aim unjudged afterwards (pub/L, then ln -sfn); and a
// deny entry spelled through a symlink made before the run (link ->
// real), which the command removes and makes again elsewhere. Run as
// both users.
func TestGuardSymlinkChains(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		if err := os.MkdirAll(b.path("real/secrets"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("real", b.path("link")); err != nil {
			t.Fatal(err)
		}
		b.whenReady("ready", "go", 5*time.Second, func() {
			os.MkdirAll(b.path("secrets"), 0o755)
			os.MkdirAll(b.path("link/secrets"), 0o755)
			b.write("secrets/sub/k.pem", b.canary)
			b.write("link/secrets/k.pem", b.canary)
			b.write("link/secret.txt", b.canary)
		})
		rules := fsMap{"allowWrite": []string{"."}, "denyRead": []string{"secrets/**/*.pem", "link/secrets/*.pem", "link/secret.txt"}}
		script := `mkdir -p secrets pub/real pub2/secrets
ln -s /usr/bin/env pub/L; ln -s "$PWD/pub/L" secrets/sub; ln -sfn "$PWD/pub/real" pub/L
mkdir -p pub/d; ln -s "$PWD/pub/d" secrets/sub2
rm link && ln -s pub2 link
ln -s "$PWD/pub" pl; python3 -c 'import os, ctypes
fd = os.open("pl", os.O_PATH | os.O_NOFOLLOW)
ctypes.CDLL(None).linkat(fd, b"", -100, b"secrets/sub3", 0x1000)
os.link("/proc/self/fd/%d" % fd, "secrets/sub4", follow_symlinks=True)' 2>/dev/null
touch ready; for i in $(seq 100); do [ -e go ] && break; sleep 0.05; done
cat pub/real/k.pem pub2/secrets/k.pem pub2/secret.txt secrets/sub/k.pem link/secrets/k.pem; echo END`
		r := b.run(rules, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		b.noCanary(r)
		// Removing it is the command's to do (nothing is left for the host
		// to run); making it again to lead elsewhere is not.
		if target, err := os.Readlink(b.path("link")); err == nil && target != "real" {
			t.Errorf("link was made again, to %q", target)
		}
		for _, f := range []string{"secrets/sub3", "secrets/sub4"} {
			if _, err := os.Lstat(b.path(f)); err == nil {
				t.Errorf("a symlink's descriptor got a second name at %s", f)
			}
		}
		if target, err := os.Readlink(b.path("pub/L")); err == nil && target == b.path("pub/real") {
			if target, err := os.Readlink(b.path("secrets/sub")); err == nil {
				t.Errorf("secrets/sub leads to %q through a re-aimed link", target)
			}
		}
	})
}

// whenReady plays the host: once the command has made ready (within
// limit), host runs, then done is made for the command to go on.
func (b *box) whenReady(ready, done string, limit time.Duration, host func()) {
	go func() {
		for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(b.path(ready)); err == nil {
				host()
				os.WriteFile(b.path(done), nil, 0o644)
				return
			}
		}
	}()
}

// A file's mode, owner, times and extended attributes are written like
// its content: where a write is refused, so is every change of them, by
// path, by descriptor (read-only or O_PATH), by /proc/self/fd, and by
// racing a symlink swap — for deny entries' matches and protected names
// the host makes while the command runs, and for files reached by a hard
// link made before the run. The command's own files still take every
// change. Judged from outside; run as both users.
func TestGuardMetadataLater(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		b.write("secrets/", "")
		b.write("~/outside.txt", "ORIGINAL")
		b.write("~/outside2.txt", "ORIGINAL")
		b.write("~/outside3.txt", "ORIGINAL")
		b.write("dw.txt", "ORIGINAL")
		// Host nodes other than regular files, each with a second name in
		// the writable tree.
		if err := unix.Mkfifo(b.path("~/fifo"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("anywhere", b.path("~/sl")); err != nil {
			t.Fatal(err)
		}
		for link, target := range map[string]string{"l-out": "~/outside.txt", "l-dw": "dw.txt", "l-gone": "~/outside2.txt", "l-relink": "~/outside3.txt", "l-fifo": "~/fifo", "l-sl": "~/sl"} {
			if err := os.Link(b.path(target), b.path(link)); err != nil {
				t.Skipf("needs hard links between the test's directories: %v", err)
			}
		}
		later := []string{"secrets/host.pem", "later.txt", "later-secret", "sub/.env", "sub/.bashrc", "repo2/.git/hooks/pre-push"}
		targets := append([]string{"l-out", "l-dw"}, later...)
		before := map[string]string{}
		existing := []string{"~/outside.txt", "~/outside2.txt", "~/outside3.txt", "dw.txt", "~/fifo", "~/sl"}
		for _, f := range existing {
			before[f] = fileMeta(t, b.path(f))
		}
		b.whenReady("ready", "go", 10*time.Second, func() {
			for _, f := range later {
				b.write(f, "ORIGINAL")
				before[f] = fileMeta(t, b.path(f))
			}
		})
		fs := fsMap{"allowWrite": []string{"."}, "denyWrite": []string{"secrets/*.pem", "later.txt", "dw.txt"}, "denyRead": []string{"later-secret", "**/.env"}}
		var paths []string
		for _, f := range targets {
			paths = append(paths, b.path(f))
		}
		// l-gone's name here is removed once its descriptor is open: the
		// file keeps its name outside.
		script := fmt.Sprintf(`echo x > mine; touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done
%[1]s=metadata %[2]s %[3]s %[4]s; %[1]s=metadata-race %[2]s race %[4]s %[5]s
exec 3<l-gone; rm l-gone; chmod 4777 /dev/fd/3; touch -d 2001-01-01 /dev/fd/3; echo PWNED >> /proc/self/fd/3
exec 4<l-relink; rm l-relink; ln -L /proc/self/fd/4 relinked; echo PWNED >> relinked; chmod 4777 relinked
mv sub/.bashrc sub/moved; echo PWNED >> sub/moved; mv repo2/.git/hooks hk; echo PWNED >> hk/pre-push
chmod 666 l-fifo l-sl; touch -d 2001-01-01 l-fifo; touch -h -d 2001-01-01 l-sl
python3 -c 'import os; fd = os.memfd_create("m"); os.fchmod(fd, 0o600); print("MEMFD-OK")'
python3 -c 'import os; open("mine2", "w"); os.chmod("/proc/%%d/cwd/mine2" %% os.getpid(), 0o640); print("OWN-PID-OK")'
echo END`, probeEnv, exe, strings.Join(paths, " "), b.path("mine"), b.path("secrets/host.pem"))
		r := b.run(fs, script)
		if !strings.Contains(r.stdout, "END") || !strings.Contains(r.stdout, "race:") || !strings.Contains(r.stdout, "MEMFD-OK") || !strings.Contains(r.stdout, "OWN-PID-OK") {
			t.Fatalf("the script did not run, or a memfd's mode, or a file's by /proc/<own pid>/cwd, could not be set: %+v", r)
		}
		if len(before) != len(existing)+len(later) {
			t.Fatalf("the host did not make its files in time: %+v", r)
		}
		for f, was := range before {
			if now := fileMeta(t, b.path(f)); now != was {
				t.Errorf("%s changed: %s, was %s", f, now, was)
			}
		}
		for _, f := range append(later, "~/outside.txt", "~/outside2.txt", "~/outside3.txt", "dw.txt") {
			if got := b.read(f); got != "ORIGINAL" {
				t.Errorf("%s was written: %q", f, got)
			}
		}
		changedAll(t, b.path("mine"), r.stdout)
	})
}

// The guard makes a chown with the ids the caller means, in its own user
// namespace: root of a nested namespace (unshare -r) owns what it makes,
// and an id with no mapping is EINVAL, as the kernel says. Run as both
// users.
func TestGuardChownMapped(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("requires unshare (util-linux)")
		}
		b := newBox(t)
		script := `touch mine; chown 12345 mine 2>&1 | grep -q 'Invalid argument' && echo UNMAPPED-EINVAL
unshare -r true 2>/dev/null || echo NO-NESTED-MAP
unshare -r sh -c 'touch nested; chown 0:0 nested && echo NESTED-OK'`
		r := b.runSettings(map[string]any{"allowNestedUserNamespaces": true,
			"network":    map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}},
			"filesystem": fsMap{"allowWrite": []string{"."}, "denyRead": []string{}, "denyWrite": []string{}}}, nil, script)
		want := []string{"UNMAPPED-EINVAL", "NESTED-OK"}
		if strings.Contains(r.stdout, "NO-NESTED-MAP") {
			// As root, a nested namespace's map cannot be written here
			// (see the closing notes); the nested chown is not tried.
			t.Logf("unshare -r cannot write its map in the sandbox: the nested chown is not tried (%s)", r.stderr)
			want = want[:1]
		}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("no %s: %+v", w, r)
			}
		}
	})
}

// A descriptor's file the guard cannot judge by its path is not changed
// through it: one moved deeper than PATH_MAX (its path cannot be read),
// one in a git directory the guard may not search (its hooks cannot be
// told from any file). And a repository's hooks directory is no one
// else's to write, whatever the umask. The host makes the repositories
// while the command runs; judged from outside, as both users.
func TestGuardUnjudgeable(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		exe := testExe(t)
		hook := "#!/bin/sh\nexit 0\n"
		b.whenReady("ready", "go", 10*time.Second, func() {
			hostGit(t, b.W, "init", "-q", "r")
			hostGit(t, b.W, "init", "-q", "--bare", "B")
			b.write("r/.git/hooks/pre-commit", hook)
			b.write("B/hooks/post-update", hook)
		})
		script := fmt.Sprintf(`touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done
%[1]s=unjudgeable %[2]s deep r .git/hooks/pre-commit; %[1]s=unjudgeable %[2]s unsearchable B hooks/post-update
umask 0; git init -q r3 && rm -rf r3/.git/hooks && mkdir -m 777 r3/.git/hooks; echo END`, probeEnv, exe)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") || !strings.Contains(r.stdout, "deep: fchmod") || !strings.Contains(r.stdout, "unsearchable: fchmod") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, f := range []string{"r/.git/hooks/pre-commit", "B/hooks/post-update"} {
			var st unix.Stat_t
			if err := unix.Stat(b.path(f), &st); err != nil || st.Mode&0o111 != 0 || b.read(f) != hook {
				t.Errorf("%s changed: mode %o, %q (%+v)", f, st.Mode&0o7777, b.read(f), r)
			}
		}
		var st unix.Stat_t
		if err := unix.Stat(b.path("r3/.git/hooks"), &st); err != nil || st.Mode&0o022 != 0 {
			t.Errorf("a hooks directory others may write: mode %o, %v", st.Mode&0o7777, err)
		}
	})
}

// A .claude directory's commands and agents are known by its name: no
// symlink is made or moved to that name, and the directory is not moved
// away (what the host made in it would become the command's to write).
// No core dump is written either: the kernel would make it, at the dying
// process's cwd, without a call the guard sees. Judged from outside; run
// as both users.
func TestGuardClaudeByName(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("sub/", "")
		b.whenReady("ready", "go", 10*time.Second, func() {
			b.write(".claude/commands/deploy.md", "ORIGINAL")
			b.write("laterdir/", "")
		})
		script := `mkdir -p dd/commands; ln -s "$PWD/dd" sub/.claude; echo EVIL > sub/.claude/commands/x.md
ln -s dd link; mv -T link sub/.CLAUDE
touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done
mv .claude c2; echo INJECTED >> c2/commands/deploy.md; ln -s c2 .claude
ulimit -c unlimited 2>/dev/null; ulimit -c; cd laterdir && sh -c 'kill -SEGV $$'; echo END`
		r := b.run(fsMap{"allowWrite": []string{"."}, "denyWrite": []string{"laterdir"}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, f := range []string{"sub/.claude", "sub/.CLAUDE"} {
			if fi, err := os.Lstat(b.path(f)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				t.Errorf("%s is a symlink: %+v", f, r)
			}
		}
		if got := b.read(".claude/commands/deploy.md"); got != "ORIGINAL" {
			t.Errorf("a command the host made was moved away or written: %q (%+v)", got, r)
		}
		if !strings.HasPrefix(r.stdout, "0\n") {
			t.Errorf("core dumps are allowed: %+v", r)
		}
		if cores, _ := filepath.Glob(b.path("laterdir/core*")); len(cores) > 0 {
			t.Errorf("a core dump was written in a denyWrite directory: %v", cores)
		}
	})
}

// A file the caller hands the command for reading (its stdin, on the
// caller's own mount) is not the command's to write or change: srt
// reopens /dev/stdin for writing, or changes it, only where the sandbox
// could write it. The caller's own writable stdout stays writable.
// Judged from outside; run as both users.
func TestGuardCallerReadOnlyStdin(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("~/notes.txt", "ORIGINAL")
		before := fileMeta(t, b.path("~/notes.txt"))
		in, err := os.Open(b.path("~/notes.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		cmd := exec.Command(os.Getenv(srtEnv), "--settings", b.settingsFile(fsMap{"allowWrite": []string{"."}}), "-c",
			"echo PWNED > /dev/stdin; echo PWNED >> /proc/self/fd/0; chmod 666 /dev/stdin; touch /dev/stdin; echo STDOUT-OK > /dev/stdout")
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}
		cmd.Dir, cmd.Stdin = b.W, in
		out, errOut, _, err := testenv.Output(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.read("~/notes.txt"); got != "ORIGINAL" {
			t.Errorf("the caller's stdin was written: %q (%s)", got, errOut)
		}
		if after := fileMeta(t, b.path("~/notes.txt")); after != before {
			t.Errorf("the caller's stdin changed: %s, was %s", after, before)
		}
		if !strings.Contains(out, "STDOUT-OK") {
			t.Errorf("the caller's stdout is not writable anew: %q %q", out, errOut)
		}
	})
}

// Making a directory a git directory seals its config by replacing it
// with a copy the guard makes: never one the command may not write (a
// denyWrite file, under a read-only mount the guard, outside the
// sandbox's mount namespace, would replace from underneath). Judged from
// outside; run as both users.
func TestGuardSealKeepsDenied(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("deploy/config", "# prod\n[user]\n\tname = x\n")
		var before unix.Stat_t
		if err := unix.Stat(b.path("deploy/config"), &before); err != nil {
			t.Fatal(err)
		}
		r := b.run(fsMap{"allowWrite": []string{"."}, "denyWrite": []string{"deploy/config"}}, ": > deploy/HEAD; echo END")
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		var after unix.Stat_t
		if err := unix.Stat(b.path("deploy/config"), &after); err != nil || after.Ino != before.Ino {
			t.Errorf("the denyWrite config was replaced: inode %d, was %d (%v) %+v", after.Ino, before.Ino, err, r)
		}
	})
}

// A protected name that is a symlink (a hook linked to a script) is not
// written or changed through, however deep its repository lies (the
// launch's mounts reach mandatoryDenySearchDepth). Judged from outside;
// run as both users.
func TestGuardThroughProtectedLink(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("a/b/c/d/.git/hooks/", "")
		b.write("a/b/c/d/.git/HEAD", "ref: refs/heads/main\n")
		b.write("a/b/c/d/scripts/pc", "ORIGINAL")
		if err := os.Symlink("../../scripts/pc", b.path("a/b/c/d/.git/hooks/pre-commit")); err != nil {
			t.Fatal(err)
		}
		r := b.run(fsMap{"allowWrite": []string{"."}}, "echo EVIL >> a/b/c/d/.git/hooks/pre-commit; chmod 777 a/b/c/d/.git/hooks/pre-commit; touch -d 2001-01-01 a/b/c/d/.git/hooks/pre-commit; echo END")
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		var st unix.Stat_t
		if err := unix.Stat(b.path("a/b/c/d/scripts/pc"), &st); err != nil || st.Mode&0o111 != 0 || b.read("a/b/c/d/scripts/pc") != "ORIGINAL" || st.Mtim.Sec < 1e9+1e8 {
			t.Errorf("the hook's script was changed through its link: mode %o, mtime %d, %q (%+v)", st.Mode&0o7777, st.Mtim.Sec, b.read("a/b/c/d/scripts/pc"), r)
		}
	})
}

// A repository deeper than the launch's walk (mandatoryDenySearchDepth)
// keeps its hooks too: a hook that is a symlink to a script of the
// project's keeps the script from being written by its own name, made
// or replaced; core.hooksPath's directory takes no hook; and a work tree
// whose .git file names another repository is judged by that
// repository's config (a relative core.hooksPath in it is the work
// tree's). The host commits in each after the run; no hook of the
// command's runs and the script is unchanged. Both users.
func TestGuardDeepRepoHooks(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		ran := filepath.Join(filepath.Dir(b.W), "ran")
		deep := "a/b/c/d/e"
		for _, r := range []string{deep + "/r1", deep + "/r2", deep + "/r3", deep + "/r4", deep + "/r5", deep + "/r6", "hp"} {
			os.MkdirAll(b.path(r), 0o755)
			hostGit(t, b.path(r), "init", "-q")
		}
		for _, r := range []string{deep + "/r1", deep + "/r3"} {
			b.write(r+"/scripts/pc", "#!/bin/sh\nexit 0\n")
			os.Chmod(b.path(r+"/scripts/pc"), 0o755)
			if err := os.Symlink("../../scripts/pc", b.path(r+"/.git/hooks/pre-commit")); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("../../scripts/later", b.path(deep+"/r1/.git/hooks/post-commit")); err != nil {
			t.Fatal(err)
		}
		hostGit(t, b.path(deep+"/r2"), "config", "core.hooksPath", ".husky/_")
		hostGit(t, b.path(deep+"/r4"), "config", "core.hooksPath", ".husky/_")
		hostGit(t, b.path(deep+"/r5"), "config", "core.hooksPath", ".husky/_")
		hostGit(t, b.path(deep+"/r6"), "config", "core.hooksPath", ".husky/_")
		// A repository outside the walk's roots whose relative
		// core.hooksPath a .git file made inside would borrow.
		hostGit(t, b.path("hp"), "config", "core.hooksPath", "h")
		evil := fmt.Sprintf("#!/bin/sh\necho $0 >> %s\n", ran)
		script := fmt.Sprintf(`e=%q
put() { mkdir -p "$(dirname "$1")" && printf "$e" > "$1" && chmod +x "$1"; }
cd %s
printf "$e" > r1/scripts/pc; printf "$e" > r1/scripts/x && mv -f r1/scripts/x r1/scripts/pc; put r1/scripts/later
put r2/.husky/_/pre-commit; put r2/.husky/_/post-commit
mkdir w && echo "gitdir: %s" > w/.git && put w/h/post-commit
put ../x/_/post-merge && mv ../x r2/.husky; ln -s ../y r2/.husky; put ../y/_/post-checkout
put ../z/pc && mv ../z r1/scripts2 && rm -rf r1/scripts && mv r1/scripts2 r1/scripts; ln -sf ../../elsewhere r1/scripts/pc 2>/dev/null
rm -rf r4/.husky; mkdir -p r4/other/_ && ln -s other r4/.husky; mkdir -p j1/.git; touch r4/x; rm -f r4/.husky; put r4/.husky/_/pre-commit
mv r3/scripts r3/s2; mkdir -p r3/el && ln -s el r3/scripts; mkdir -p j2/.git; touch r3/x; rm -f r3/scripts; put r3/scripts/pc
mkdir r5/empty && echo ../empty > r5/.git/commondir; touch nowhere/.git 2>/dev/null; touch r5/x; put r5/.husky/_/pre-commit; rm -f r5/.git/commondir
mv r6/.git gd6; put r6/.husky/_/pre-commit; [ -d gd6 ] && echo "gitdir: $PWD/gd6" > r6/.git
echo END`, evil, deep, b.path("hp/.git"))
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if got := b.read(deep + "/r1/scripts/pc"); got != "#!/bin/sh\nexit 0\n" && !strings.HasPrefix(got, "<") {
			t.Errorf("the hook's script was written by its own name: %q (%+v)", got, r)
		}
		if fi, err := os.Lstat(b.path(deep + "/r1/scripts/pc")); err == nil && !fi.Mode().IsRegular() {
			// Removed it may be (unlink is not judged); replaced, not.
			t.Errorf("the hook's script was replaced by a %v (%+v)", fi.Mode(), r)
		}
		for _, repo := range []string{deep + "/r1", deep + "/r2", deep + "/r3", deep + "/r4", deep + "/r5", deep + "/r6", deep + "/w"} {
			for _, args := range [][]string{{"commit", "-q", "--allow-empty", "-m", "x"}, {"checkout", "-q", "HEAD"}} {
				cmd := exec.Command("git", append([]string{"-c", "user.name=a", "-c", "user.email=a@example.com"}, args...)...)
				cmd.Dir = b.path(repo)
				if out, err := cmd.CombinedOutput(); err != nil && args[0] == "commit" {
					t.Errorf("the host could not commit in %s: %v %s", repo, err, out)
				}
			}
		}
		noHookRan(t, ran, r)
	})
}

// What a repository's config reaches is kept wherever the guard meets
// the repository: a linked worktree's relative core.hooksPath (a
// worktree of the launch's, and one made during the run), one set in
// config.worktree, a submodule's own, husky's scripts that its hooks
// run (.husky/pre-commit), and a file the config includes (which could
// take core.fsmonitor). The host commits and runs git status in each
// after the run; nothing of the command's runs. Both users.
func TestGuardRepoConfigReach(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		ran := filepath.Join(filepath.Dir(b.W), "ran")
		for _, r := range []string{"main", "cw", "inc", "lib", "app"} {
			hostGit(t, b.W, "init", "-q", r)
			hostGit(t, b.path(r), "commit", "-q", "--allow-empty", "-m", "1")
		}
		hostGit(t, b.path("main"), "config", "core.hooksPath", ".husky/_")
		hostGit(t, b.path("main"), "worktree", "add", "-q", "../wt")
		hostGit(t, b.path("cw"), "config", "extensions.worktreeConfig", "true")
		hostGit(t, b.path("cw"), "config", "--worktree", "core.hooksPath", ".githooks")
		hostGit(t, b.path("inc"), "config", "include.path", "../project.gitconfig")
		b.write("inc/project.gitconfig", "[user]\n\tname = a\n")
		hostGit(t, b.path("app"), "-c", "protocol.file.allow=always", "submodule", "add", "-q", b.path("lib"), "lib")
		hostGit(t, b.path("app/lib"), "config", "core.hooksPath", ".husky/_")
		b.write("main/.husky/_/pre-commit", "#!/bin/sh\n. \"$(dirname \"$0\")/h\"\n")
		b.write("main/.husky/_/h", "#!/bin/sh\nexec sh -e \"$(dirname \"$(dirname \"$0\")\")/$(basename \"$0\")\"\n")
		os.Chmod(b.path("main/.husky/_/pre-commit"), 0o755)
		evil := fmt.Sprintf("#!/bin/sh\necho $0 >> %s\n", ran)
		script := fmt.Sprintf(`e=%q
put() { mkdir -p "$(dirname "$1")" && printf "$e" > "$1" && chmod +x "$1"; }
put main/.husky/pre-commit; put wt/.husky/_/post-commit
(cd main && git worktree add -q ../wt2 2>/dev/null); put wt2/.husky/_/post-commit
put cw/.githooks/post-commit; put app/lib/.husky/_/post-commit
printf "$e" > inc/fsm && chmod +x inc/fsm; printf '[core]\n\tfsmonitor = %%s\n' "$PWD/inc/fsm" >> inc/project.gitconfig
echo END`, evil)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, repo := range []string{"main", "wt", "wt2", "cw", "app/lib", "inc"} {
			if _, err := os.Stat(b.path(repo)); err != nil {
				continue // wt2, when the worktree could not be made
			}
			for _, args := range [][]string{{"commit", "-q", "--allow-empty", "-m", "x"}, {"status", "--short"}} {
				cmd := exec.Command("git", append([]string{"-c", "user.name=a", "-c", "user.email=a@example.com"}, args...)...)
				cmd.Dir = b.path(repo)
				cmd.CombinedOutput()
			}
		}
		noHookRan(t, ran, r)
	})
}

// A denyRead file stays unreadable when the host replaces it while the
// command runs (an editor's save renames a new file over it, which takes
// the sandbox's mask with the old one). Judged from outside; run as both
// users.
func TestGuardReplacedDenyRead(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "secret.txt")
		b.whenReady("ready", "go", 10*time.Second, func() {
			b.write("new.txt", b.canary+"-NEW")
			os.Rename(b.path("new.txt"), b.path("secret.txt"))
		})
		r := b.run(fsMap{"allowWrite": []string{"."}, "denyRead": []string{"secret.txt"}},
			"cat secret.txt; touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done; cat secret.txt; echo END")
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		b.noCanary(r)
	})
}

// A denyRead directory in a writable tree stays unreadable when the host
// replaces it while the command runs: removed and made again (a git
// checkout does so), a new one renamed into place, or the symlink the
// entry names re-aimed. The mount over the old directory does not cover
// the new one, nor does Landlock in a tree it grants whole. Judged from
// outside; both users.
func TestGuardReplacedDenyReadDir(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "secrets/a.pem", "moved/a.pem", "s1/a.pem")
		if err := os.Symlink("s1", b.path("linked")); err != nil {
			t.Fatal(err)
		}
		b.whenReady("ready", "go", 10*time.Second, func() {
			os.RemoveAll(b.path("secrets"))
			b.write("secrets/b.pem", b.canary+"-REMADE")
			b.write("new/b.pem", b.canary+"-RENAMED")
			os.Rename(b.path("moved"), b.path("old"))
			os.Rename(b.path("new"), b.path("moved"))
			b.write("s2/b.pem", b.canary+"-RELINKED")
			os.Symlink("s2", b.path("linked.new"))
			os.Rename(b.path("linked.new"), b.path("linked"))
		})
		r := b.run(fsMap{"allowWrite": []string{"."}, "denyRead": []string{"secrets", "moved", "linked"}},
			"cat secrets/* moved/* linked/*; ls secrets moved >/dev/null && tar cf /dev/null . && echo WALKED; touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done; ls secrets moved linked; cat secrets/b.pem moved/b.pem linked/b.pem; echo END")
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if !strings.Contains(r.stdout, "WALKED") {
			t.Errorf("a walk of the project failed on a hidden directory still under its mask: %+v", r)
		}
		b.noCanary(r)
	})
}

// A masked credential file reads as its mask only while the mask is on
// it in the sandbox's own mount namespace: once the host replaces the
// file (which takes the mask's mount with it), neither a plain read nor
// one through a nested namespace's bind mount of the host's new file
// onto itself, or at another path (a user namespace with no map, made
// by nsBind), gets the real value. Judged from outside; run as both
// users (as root, unshare -r cannot write its map here: that part is
// skipped, and said).
func TestGuardReplacedMask(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("~/.tok", "ORIGINAL-TOKEN-VALUE")
		b.whenReady("ready", "go", 10*time.Second, func() {
			b.write("~/.tok.new", b.canary)
			os.Rename(b.path("~/.tok.new"), b.path("~/.tok"))
		})
		settings := map[string]any{
			"allowNestedUserNamespaces": true,
			"network":                   map[string]any{"allowedDomains": []string{"127.0.0.1"}, "deniedDomains": []string{}, "tlsTerminate": map[string]any{}},
			"filesystem":                fsMap{"allowWrite": []string{"."}, "denyRead": []string{}, "denyWrite": []string{}},
			"credentials":               map[string]any{"files": []any{map[string]any{"path": "~/.tok", "mode": "mask", "injectHosts": []string{"127.0.0.1"}}}},
		}
		script := `echo "MASK=$(cat ~/.tok)"; touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done
cat ~/.tok; unshare -Ur true 2>/dev/null || echo NO-NESTED-MAP
unshare -Urm sh -c 'mount --bind ~/.tok ~/.tok && cat ~/.tok'
touch seen; python3 bind.py ~/.tok seen -- cat seen; echo END`
		b.write("bind.py", nsBind)
		r := b.runSettings(settings, nil, script)
		if !strings.Contains(r.stdout, "END") || !strings.Contains(r.stdout, "MASK=fake_value_") {
			t.Fatalf("the script did not run, or the mask did not read as one: %+v", r)
		}
		if strings.Contains(r.stdout, "NO-NESTED-MAP") {
			t.Logf("unshare -r cannot write its map in the sandbox: the nested bind is not tried")
		}
		b.noCanary(r)
	})
}

// No repository's config made inside takes core.worktree: git's
// checkouts there write wherever it leads, and what it names can be made
// a symlink at any time (into a .git, a bare repository, the home
// directory), so no value can be judged safe. git submodule update still
// checks the submodule out (git finds its work tree by the .git file).
// The host makes the repositories; judged from outside, as both users.
func TestGuardNoWorktreeKey(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		host := func(dir string, args ...string) { t.Helper(); hostGit(t, dir, args...) }
		host(b.W, "init", "-q", "lib")
		b.write("lib/f.txt", "lib")
		host(b.path("lib"), "add", "f.txt")
		host(b.path("lib"), "commit", "-q", "-m", "lib")
		host(b.W, "init", "-q", "app")
		host(b.path("app"), "submodule", "-q", "add", "../lib", "lib")
		host(b.path("app"), "commit", "-q", "-m", "app")
		host(b.W, "clone", "-q", "app", "c")
		host(b.path("c"), "submodule", "-q", "init")
		script := `cd c && git -c protocol.file.allow=always submodule -q update >/dev/null 2>&1; cat lib/f.txt; echo
ln -s .git lnk; ln -s ~ home
for w in ../../../lib ../../../home ../../../../outside /tmp; do
  git config -f .git/modules/lib/config core.worktree "$w" 2>/dev/null && echo "TOOK $w"
done
printf '[core]
	worktree = ../../../lib
' > .git/modules/lib/config.worktree 2>/dev/null && echo TOOK-FILE
cd .. && git init -q r && cd r && git config core.worktree ../lnk 2>/dev/null && echo TOOK-TOP
echo END`
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if !strings.Contains(r.stdout, "lib\n") || b.read("c/lib/f.txt") != "lib" {
			t.Errorf("git submodule update did not check the submodule out: %+v", r)
		}
		if strings.Contains(r.stdout, "TOOK") {
			t.Errorf("core.worktree was taken: %+v", r)
		}
		for _, f := range []string{"c/.git/modules/lib/config", "r/.git/config"} {
			if out, err := exec.Command("git", "config", "-f", b.path(f), "--get-all", "core.worktree").Output(); err == nil || len(out) != 0 {
				t.Errorf("%s holds core.worktree %q", f, out)
			}
		}
		if _, err := os.Lstat(b.path("c/.git/modules/lib/config.worktree")); err == nil {
			t.Errorf("config.worktree was made: %q", b.read("c/.git/modules/lib/config.worktree"))
		}
	})
}

// A hook linked to a script keeps the script from the command also after
// the host replaces it during the run (renaming a new file over it, as an
// editor or git checkout does): the launch's read-only mount stays on the
// old file, the guard keeps the name. Judged from outside; both users.
func TestGuardReplacedLinkTarget(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("scripts/pre-commit", "ORIGINAL")
		b.write(".git/HEAD", "ref: refs/heads/main\n")
		b.write(".git/hooks/", "")
		if err := os.Symlink("../../scripts/pre-commit", b.path(".git/hooks/pre-commit")); err != nil {
			t.Fatal(err)
		}
		b.whenReady("ready", "go", 10*time.Second, func() {
			b.write("scripts/new", "HOST")
			if err := os.Rename(b.path("scripts/new"), b.path("scripts/pre-commit")); err != nil {
				t.Error(err)
			}
		})
		script := `touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done
echo EVIL > scripts/pre-commit; echo EVIL >> scripts/pre-commit; chmod 777 scripts/pre-commit
echo EVIL > x && mv x scripts/pre-commit; echo END`
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if got := b.read("scripts/pre-commit"); got != "HOST" {
			t.Errorf("the hook's script, replaced by the host, was written: %q (%+v)", got, r)
		}
		if fi, err := os.Stat(b.path("scripts/pre-commit")); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("the hook's script changed mode: %v %v", fi, err)
		}
	})
}

// A repository made before the run takes git's config changes (git
// config, remote add, branch tracking), each a rename the guard judges,
// and nothing that runs a program, by any way of writing: in place,
// appended, copied, moved or linked over, or through a hard link made
// before the run. Judged from outside with the host's git; as both users.
func TestGuardExistingRepoConfig(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		hostGit(t, b.W, "init", "-q", "r")
		hostGit(t, b.path("r"), "commit", "-q", "--allow-empty", "-m", "one")
		if err := os.Link(b.path("r/.git/config"), b.path("alias")); err != nil {
			t.Fatal(err)
		}
		evil := fmt.Sprintf("[core]\n\tfsmonitor = echo %s\n", b.canary)
		b.write("evil", evil)
		script := `cat evil > alias; cd r && git config user.name tester && git remote add up /x && git branch side && git branch -q -u up/side side 2>/dev/null; echo CONFIG-DONE
cd ..; git -C r config core.fsmonitor evil
printf '` + strings.ReplaceAll(evil, "\n", `\n`) + `' >> r/.git/config; printf x > r/.git/config
cp evil r/.git/config; cp evil x && mv -f x r/.git/config; ln -f evil r/.git/config; ln -sf ../../evil r/.git/config; echo END`
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "CONFIG-DONE") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		get := func(key string) string {
			out, _ := exec.Command("git", "config", "-f", b.path("r/.git/config"), "--get", key).Output()
			return strings.TrimSpace(string(out))
		}
		if get("user.name") != "tester" || get("remote.up.url") != "/x" {
			t.Errorf("git's config changes did not land:\n%s\n%+v", b.read("r/.git/config"), r)
		}
		if cfg := b.read("r/.git/config"); strings.Contains(cfg, b.canary) || strings.Contains(cfg, "fsmonitor") {
			t.Errorf("the config took a program:\n%s", cfg)
		}
		if fi, err := os.Lstat(b.path("r/.git/config")); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("the config is no longer a file: %v %v", fi, err)
		}
		if strings.Contains(b.read("alias"), b.canary) {
			t.Errorf("the config's second name, made before the run, was written")
		}
	})
}

// A repository whose config the host gave a key off the list (husky's
// core.hooksPath, an alias) still takes git's config changes inside:
// those keys may stay as they are, and none is added, changed or
// repeated, nor core.bare (a bare repository's git takes a relative
// hooksPath from where it runs); beside a kept http.extraHeader no URL
// is added (the host's fetch would send it there). Judged from outside
// with the host's git; both users.
func TestGuardExistingConfigKeeps(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		hostGit(t, b.W, "init", "-q", "r")
		hostGit(t, b.path("r"), "commit", "-q", "--allow-empty", "-m", "one")
		hostGit(t, b.path("r"), "config", "core.hooksPath", ".husky/_")
		hostGit(t, b.path("r"), "config", "alias.st", "!git status")
		hostGit(t, b.W, "init", "-q", "c")
		hostGit(t, b.path("c"), "config", "http.extraHeader", "Authorization: Bearer "+b.canary)
		script := `cd r && git config user.name tester && git remote add up /x && git branch -m main2 && echo CONFIG-DONE
git config core.hooksPath evil; git config --add core.hooksPath .husky/_; git config alias.st '!evil'; git config core.fsmonitor evil; git config core.bare true
cd ../c && git remote add evil http://127.0.0.1:9/x; echo END`
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "CONFIG-DONE") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("git's config changes failed inside: %+v", r)
		}
		getAll := func(key string) string {
			out, _ := exec.Command("git", "config", "-f", b.path("r/.git/config"), "--get-all", key).Output()
			return strings.TrimSpace(string(out))
		}
		if getAll("user.name") != "tester" || getAll("remote.up.url") != "/x" {
			t.Errorf("git's config changes did not land:\n%s", b.read("r/.git/config"))
		}
		if getAll("core.hooksPath") != ".husky/_" || getAll("alias.st") != "!git status" || getAll("core.fsmonitor") != "" || getAll("core.bare") != "false" {
			t.Errorf("a key off the list, or what it means, was added or changed:\n%s", b.read("r/.git/config"))
		}
		if cfg := b.read("c/.git/config"); strings.Contains(cfg, "127.0.0.1") {
			t.Errorf("a URL was added beside a kept http.extraHeader:\n%s", cfg)
		}
	})
}

// A rebase the command leaves stopped holds no exec line for the host's
// git rebase --continue to run: the todo list is written only by a rename
// the guard judges (git's own, sed -i's), never in place, and a todo
// directory is not moved into a git directory whole. Rebasing still
// works. The host continues the rebase after the run; judged from
// outside, as both users.
func TestGuardRebaseTodo(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		canary := filepath.Join(b.W, "ran")
		script := fmt.Sprintf(`export GIT_EDITOR=true GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
git init -q r && cd r && for i in 1 2 3 4; do echo $i > f$i; git add f$i; git commit -qm c$i; done
GIT_SEQUENCE_EDITOR="sed -i 2s/^pick/squash/" git rebase -q -i HEAD~3 >/dev/null && echo SQUASHED $(git rev-list --count HEAD)
GIT_SEQUENCE_EDITOR=true git rebase -q -i --exec 'echo %[1]s > %[2]s' HEAD~1 >/dev/null 2>&1; git rebase --abort 2>/dev/null
GIT_SEQUENCE_EDITOR="sed -i 1s/^pick/edit/" git rebase -q -i HEAD~2 >/dev/null 2>&1; test -d .git/rebase-merge && echo STOPPED
todo=.git/rebase-merge/git-rebase-todo line='exec echo %[1]s > %[2]s'
echo "$line" >> $todo; echo "$line" > $todo; echo "$line" > ../t; cp ../t $todo; mv -f ../t $todo
echo "$line" > ../t; ln -f ../t $todo; echo "  X echo %[1]s > %[2]s" > ../u; mv -f ../u $todo
GIT_EDITOR="sed -i '1i $line'" git rebase --edit-todo 2>/dev/null
mkdir ../rm && echo "$line" > ../rm/git-rebase-todo && mv ../rm .git/rebase-merge.x 2>/dev/null; mv .git/rebase-merge.x/git-rebase-todo $todo 2>/dev/null
cd .. && git init -q --bare B && mkdir -p B/rebase-merge && echo "$line" > B/rebase-merge/git-rebase-todo
echo END`, b.canary, canary)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "SQUASHED 3") || !strings.Contains(r.stdout, "STOPPED") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("rebasing failed: %+v", r)
		}
		todo := b.read("r/.git/rebase-merge/git-rebase-todo")
		if strings.Contains(todo, b.canary) || strings.Contains(b.read("B/rebase-merge/git-rebase-todo"), b.canary) {
			t.Errorf("a todo list took an exec line:\n%s\n%+v", todo, r)
		}
		cont := exec.Command("git", "-C", b.path("r"), "-c", "user.name=a", "-c", "user.email=a@example.com", "rebase", "--continue")
		cont.Env = append(os.Environ(), "GIT_EDITOR=true")
		out, err := cont.CombinedOutput()
		if _, statErr := os.Stat(canary); statErr == nil {
			t.Errorf("the host's git rebase --continue ran the command's exec line: %s", out)
		}
		if err != nil {
			t.Errorf("the host could not continue the rebase: %v %s", err, out)
		}
	})
}

// core.hooksPath puts a repository's hooks where it says: a repository's
// own (a work tree's .husky/_, existing or not yet made) and the host's
// global one, relative (then in every repository, one the command makes
// too). None of those directories takes a hook from the command, by a
// write, a new file, mkdir, or a directory moved in; the host then
// commits in each and no hook of the command's runs. Both users.
func TestGuardHooksPath(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		ran := filepath.Join(filepath.Dir(b.W), "ran")
		b.write("~/.gitconfig", "[core]\n\thooksPath = .githooks\n")
		for _, r := range []string{"r1", "r2"} {
			hostGit(t, b.W, "init", "-q", r)
		}
		hostGit(t, b.path("r1"), "config", "core.hooksPath", ".husky/_")
		hostGit(t, b.path("r2"), "config", "core.hooksPath", "hooks-here")
		b.write("r1/.husky/_/pre-commit", "#!/bin/sh\nexit 0\n")
		os.Chmod(b.path("r1/.husky/_/pre-commit"), 0o755)
		evil := fmt.Sprintf("#!/bin/sh\necho $PWD >> %s\n", ran)
		script := fmt.Sprintf(`e=%q
put() { mkdir -p "$(dirname "$1")" && printf "$e" > "$1" && chmod +x "$1"; }
put r1/.husky/_/pre-commit; put r1/.husky/_/post-commit; put r1/.githooks/post-commit
put r2/hooks-here/post-commit; put x/hooks-here/post-commit && mv x/hooks-here r2/
git init -q r4 && put r4/.githooks/post-commit; put y/.githooks/post-commit && mv y/.githooks r4/
git init -q r5 && put z/post-commit && mv z r5/.githooks
echo END`, evil)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, repo := range []string{"r1", "r2", "r4", "r5"} {
			cmd := exec.Command("git", "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "x")
			cmd.Dir = b.path(repo)
			cmd.Env = append(os.Environ(), "HOME="+b.H, "XDG_CONFIG_HOME="+filepath.Join(b.H, ".config"), "GIT_CONFIG_NOSYSTEM=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("the host could not commit in %s: %v %s", repo, err, out)
			}
		}
		noHookRan(t, ran, r)
	})
}

// rerere keeps a merge's conflicts in MERGE_RR, by path, and the host's
// git commit merges each one's recorded resolution into the file at that
// path, through any symlink on it (rerere runs by itself once rr-cache
// exists): MERGE_RR is kept like a config and takes no record. Written in
// place, renamed or linked over, naming a path outside or a symlink in
// the work tree, or left before a directory becomes a git directory, a
// record is refused. The host commits after the run; judged from outside;
// both users.
func TestGuardMergeRR(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		victim := filepath.Join(filepath.Dir(b.W), "victim")
		os.WriteFile(victim, []byte("a\nb\n"), 0o644)
		hostGit(t, b.W, "init", "-q", "r")
		b.write("r/f", "1\n")
		hostGit(t, b.path("r"), "add", "f")
		hostGit(t, b.path("r"), "commit", "-q", "-m", "one")
		const id = "0123456789abcdef0123456789abcdef01234567"
		script := fmt.Sprintf(`export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
cd r && mkdir -p .git/rr-cache/%[1]s && printf 'a\nb\n' > .git/rr-cache/%[1]s/preimage && printf 'a\nb\nPWNED\n' > .git/rr-cache/%[1]s/postimage
rec() { printf '%[1]s.-1\t%%s\0' "$1"; }
git checkout -q -b side && echo 2 > f && git commit -qam two && git checkout -q - && echo 3 > f && git commit -qam three
git merge -q side >/dev/null 2>&1; echo 4 > f && git add f && git commit -qm merged && echo RERERE $(ls .git/rr-cache | wc -l)
rec %[2]s > .git/MERGE_RR; rec %[2]s > .git/m1 && perl -e 'rename($ARGV[0], $ARGV[1])' .git/m1 .git/MERGE_RR
rec ../../victim > .git/m2 && mv -f .git/m2 .git/MERGE_RR; rec %[2]s > .git/m3 && ln -f .git/m3 .git/MERGE_RR
ln -s %[2]s notes.txt && rec notes.txt > .git/m4 && perl -e 'rename($ARGV[0], $ARGV[1])' .git/m4 .git/MERGE_RR
cd .. && mkdir -p s/rr-cache && rec %[2]s > s/MERGE_RR && git init -q --bare s 2>/dev/null
echo END`, id, victim)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if mr := b.read("r/.git/MERGE_RR"); mr != "" {
			t.Errorf("MERGE_RR took the command's records: %q", mr)
		}
		if _, err := os.Stat(b.path("s/HEAD")); err == nil && strings.Contains(b.read("s/MERGE_RR"), "victim") {
			t.Errorf("a directory holding a MERGE_RR that names a file outside became a git directory")
		}
		b.write("r/f", "5\n")
		cmd := exec.Command("git", "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-q", "-am", "host")
		cmd.Dir = b.path("r")
		out, _ := cmd.CombinedOutput()
		if got, _ := os.ReadFile(victim); string(got) != "a\nb\n" {
			t.Errorf("the host's git commit wrote a file outside through MERGE_RR: %q %s", got, out)
		}
	})
}

// git init and clone probe the filesystem for symlinks with one at the
// top of the new git directory: the guard lets that one through (to
// "testing", by git's temporary name), so a clone made inside checks
// its symlinks out as symlinks (core.symlinks is not set false). Both
// users.
func TestGuardGitSymlinkProbe(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		hostGit(t, b.W, "init", "-q", "src")
		b.write("src/target", "t")
		if err := os.Symlink("target", b.path("src/link")); err != nil {
			t.Fatal(err)
		}
		hostGit(t, b.path("src"), "add", ".")
		hostGit(t, b.path("src"), "commit", "-q", "-m", "s")
		r := b.run(fsMap{"allowWrite": []string{"."}}, `git clone -q src c && test -L c/link && echo LINKED; echo "symlinks=$(git -C c config core.symlinks)"
git init -q n && echo "new=$(git -C n config core.symlinks)"; ls -A c/.git n/.git | grep -c '^t......$'; echo END`)
		if !strings.Contains(r.stdout, "LINKED") || strings.Contains(r.stdout, "=false") || !strings.Contains(r.stdout, "\n0\nEND") {
			t.Errorf("a clone made inside lost its symlinks, or git's probe was left: %+v", r)
		}
	})
}

// husky's layout: core.hooksPath is .husky/_ (made by husky, ignored by
// git), whose hooks run the tracked .husky/<hook> scripts. Those scripts
// are kept whether or not .husky/_ is there (the command may remove it,
// for husky to make again at the next npm install); and a relative
// core.hooksPath is kept anywhere in the work tree (a bare repository's
// git takes it from where it runs), nor may the config gain core.bare.
// The host makes .husky/_ again, commits, and runs git in a
// subdirectory as a bare repository would; nothing of the command's
// runs. Both users.
func TestGuardHuskyScripts(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		ran := filepath.Join(filepath.Dir(b.W), "ran")
		hostGit(t, b.W, "init", "-q", "main")
		b.write("main/.husky/pre-commit", "exit 0\n")
		b.write("main/src/f", "x")
		b.write("main/.husky/_/.gitignore", "*\n")
		b.write("main/.husky/_/pre-commit", "#!/bin/sh\nsh .husky/pre-commit\n")
		os.Chmod(b.path("main/.husky/_/pre-commit"), 0o755)
		hostGit(t, b.path("main"), "config", "core.hooksPath", ".husky/_")
		hostGit(t, b.path("main"), "add", ".")
		hostGit(t, b.path("main"), "commit", "-q", "-m", "husky")
		saved, _ := os.ReadFile(b.path("main/.husky/_/pre-commit"))
		evil := fmt.Sprintf("#!/bin/sh\necho $0 >> %s\n", ran)
		script := fmt.Sprintf(`e=%[1]q
put() { mkdir -p "$(dirname "$1")" && printf "$e" > "$1" && chmod +x "$1"; }
cd main && rm -rf .husky/_ && mkdir a && mv a b && rmdir b; printf "$e" >> .husky/pre-commit; put .husky/post-commit
git config core.bare true; put src/.husky/_/reference-transaction; mkdir -p ../m/.husky/_ && put ../m/.husky/_/post-checkout; mv ../m/.husky src/
echo END`, evil)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		os.MkdirAll(b.path("main/.husky/_"), 0o755)
		os.WriteFile(b.path("main/.husky/_/pre-commit"), saved, 0o755)
		os.WriteFile(b.path("main/.husky/_/post-commit"), saved, 0o755)
		hostGit(t, b.path("main"), "commit", "-q", "--allow-empty", "-m", "x")
		cmd := exec.Command("git", "-c", "core.bare=true", "-c", "user.name=a", "-c", "user.email=a@example.com", "branch", "side")
		cmd.Dir = b.path("main/src")
		cmd.CombinedOutput()
		noHookRan(t, ran, r)
	})
}

// A .git file (or link) is made or written only in a directory holding
// nothing else: hooks written first, or while it named another
// repository, would otherwise become the hooks of the repository it
// names (a relative core.hooksPath). Remade after removing a worktree's,
// made beside hooks, rewritten in place, renamed or linked over: each
// refused; git worktree add still works. The host commits in each;
// nothing of the command's runs. Both users.
func TestGuardGitFileAlone(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		ran := filepath.Join(filepath.Dir(b.W), "ran")
		for _, r := range []string{"h", "plain"} {
			hostGit(t, b.W, "init", "-q", r)
			hostGit(t, b.path(r), "commit", "-q", "--allow-empty", "-m", "1")
		}
		hostGit(t, b.path("h"), "config", "core.hooksPath", ".husky/_")
		hostGit(t, b.path("h"), "worktree", "add", "-q", "../wt")
		evil := fmt.Sprintf("#!/bin/sh\necho $0 >> %s\n", ran)
		script := fmt.Sprintf(`e=%q H=%q P=%q
put() { mkdir -p "$(dirname "$1")" && printf "$e" > "$1" && chmod +x "$1"; }
g=$(cat wt/.git); rm -f wt/.git; put wt/.husky/_/pre-commit; echo "$g" > wt/.git
mkdir d1 && put d1/.husky/_/pre-commit && echo "gitdir: $H/.git" > d1/.git
mkdir d2 && echo "gitdir: $P/.git" > d2/.git && put d2/.husky/_/pre-commit && echo "gitdir: $H/.git" > d2/.git
mkdir d3 && put d3/.husky/_/pre-commit && echo "gitdir: $H/.git" > g3 && mv g3 d3/.git; echo "gitdir: $H/.git" > d3/g && mv d3/g d3/.git; ln g3 d3/.git 2>/dev/null
(cd h && git worktree add -q ../wt2) && echo WORKTREE
python3 -c '
import os, sys
os.makedirs("d4")
fd = os.open("d4/.git", os.O_WRONLY|os.O_CREAT, 0o644)
os.makedirs("d4/.husky/_")
with open("d4/.husky/_/pre-commit", "w") as f: f.write(sys.argv[1])
os.chmod("d4/.husky/_/pre-commit", 0o755)
os.write(fd, ("gitdir: " + sys.argv[2] + "/.git\n").encode()); os.close(fd)
' "$(printf "$e")" "$H"
for how in rdwr reopen rename link; do python3 -c '
import os, sys
how, hook, repo = sys.argv[1:4]
a, c = "a-" + how, "c-" + how
os.makedirs(a); os.makedirs(c)
try:
    if how == "rdwr":
        fd = os.open(a + "/.git", os.O_RDWR|os.O_CREAT, 0o644); c = a
    elif how == "reopen":
        open(a + "/.git", "w").close(); r = os.open(a + "/.git", os.O_RDONLY)
        fd = os.open("/proc/self/fd/%%d" %% r, os.O_WRONLY); c = a
    else:
        fd = os.open(a + "/.git", os.O_WRONLY|os.O_CREAT, 0o644)
        (os.rename if how == "rename" else os.link)(a + "/.git", c + "/.git")
except OSError as e:
    print(how, "refused", e); sys.exit(0)
os.makedirs(c + "/.husky/_")
with open(c + "/.husky/_/pre-commit", "w") as f: f.write(hook)
os.chmod(c + "/.husky/_/pre-commit", 0o755)
os.write(fd, ("gitdir: " + repo + "/.git\n").encode()); os.close(fd)
' $how "$(printf "$e")" "$H"; done
sleep 0.3; echo END`, evil, b.path("h"), b.path("plain"))
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "WORKTREE") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run, or git worktree add failed: %+v", r)
		}
		for _, repo := range []string{"wt", "d1", "d2", "d3", "d4", "wt2", "a-rdwr", "a-reopen", "c-rename", "a-rename", "c-link", "a-link"} {
			cmd := exec.Command("git", "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "x")
			cmd.Dir = b.path(repo)
			cmd.CombinedOutput()
		}
		noHookRan(t, ran, r)
	})
}

// A linked worktree's link back (.git/worktrees/<id>/gitdir) names the
// worktree's .git: the host's git worktree repair writes a .git file
// where it leads, and git worktree remove deletes the directory. It
// takes only a .git in a tree the command may write, judged as git
// writes it (in place, through a pipe srt reads) or renamed over it;
// git worktree add inside still records its worktree, whose directory
// then takes no symlink at it or above it (made, or moved there). The host repairs
// and removes after the run; the outside directories are untouched.
// Both users.
func TestGuardWorktreeGitdir(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		outside := filepath.Join(filepath.Dir(b.W), "outside")
		for _, d := range []string{"v1/wt1", "v2"} {
			os.MkdirAll(filepath.Join(outside, d), 0o755)
		}
		os.WriteFile(filepath.Join(outside, "v1/wt1/precious"), []byte("x"), 0o644)
		os.WriteFile(filepath.Join(outside, "v2/precious"), []byte("x"), 0o644)
		os.MkdirAll(filepath.Join(outside, "wt4"), 0o755)
		os.WriteFile(filepath.Join(outside, "wt4/precious"), []byte("x"), 0o644)
		hostGit(t, b.W, "init", "-q", "r")
		hostGit(t, b.path("r"), "commit", "-q", "--allow-empty", "-m", "1")
		hostGit(t, b.path("r"), "worktree", "add", "-q", "../wt1")
		script := fmt.Sprintf(`cd r && echo %[1]s/v1/wt1/.git > .git/worktrees/wt1/gitdir
mkdir -p .git/worktrees/w2 && cp .git/worktrees/wt1/HEAD .git/worktrees/w2/ && echo ../.. > .git/worktrees/w2/commondir && echo %[1]s/v2/.git > .git/worktrees/w2/gitdir
echo %[1]s/v2/.git > .git/g3 && mv -f .git/g3 .git/worktrees/w2/gitdir
ln -s %[1]s/v2 ../link && echo $(cd .. && pwd)/link/.git > .git/worktrees/w2/gitdir
git worktree add -q ../wt3 && echo ADDED
rm -rf ../wt3; ln -s %[1]s/v2 ../wt3; ln -s %[1]s/v2 ../t && mv -T ../t ../wt3
mkdir -p ../p && git worktree add -q ../p/wt4 && mv ../p ../p2 && ln -s %[1]s ../p
echo END`, outside)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "ADDED") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run, or git worktree add failed: %+v", r)
		}
		for i := 0; i < 50 && !strings.Contains(b.read("r/.git/worktrees/wt3/gitdir"), "wt3"); i++ {
			time.Sleep(20 * time.Millisecond) // srt writes it once the pipe closes
		}
		if got := b.read("r/.git/worktrees/wt3/gitdir"); got != b.path("wt3/.git")+"\n" {
			t.Errorf("git worktree add's link back did not land: %q", got)
		}
		for _, id := range []string{"wt1", "w2"} {
			if got := b.read("r/.git/worktrees/" + id + "/gitdir"); strings.Contains(got, outside) {
				t.Errorf("worktree %s's link back leads outside: %q", id, got)
			}
		}
		cmd := exec.Command("git", "worktree", "repair")
		cmd.Dir = b.path("r")
		cmd.CombinedOutput()
		for _, wt := range []string{"wt1", "wt3", "../p/wt4"} {
			cmd = exec.Command("git", "worktree", "remove", "--force", wt)
			cmd.Dir = b.path("r")
			cmd.CombinedOutput()
		}
		for _, f := range []string{"v1/wt1/precious", "v2/precious", "wt4/precious"} {
			if _, err := os.Stat(filepath.Join(outside, f)); err != nil {
				t.Errorf("the host's git worktree remove deleted a directory outside: %v", err)
			}
		}
		for _, g := range []string{"v2/.git", "wt4/.git"} {
			if _, err := os.Lstat(filepath.Join(outside, g)); err == nil {
				t.Errorf("the host's git worktree repair wrote a .git file outside: %s", g)
			}
		}
	})
}

// A write the guard judges when its pipe closes (a .git file) holds
// srt's descriptors until then: a command that keeps many open gets
// EMFILE past 64, and srt goes on serving. Both users.
func TestGuardDeferredWritesBounded(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		r := b.run(fsMap{"allowWrite": []string{"."}}, `python3 -c '
import os, errno
fds, err = [], None
os.makedirs("g")
for i in range(100):
    os.makedirs("d%d" % i)
    try:
        fds.append(os.open("d%d/.git" % i, os.O_WRONLY|os.O_CREAT, 0o644))
    except OSError as e:
        err = errno.errorcode[e.errno]
        break
print("OPENED", len(fds), err)
for fd in fds:
    os.write(fd, ("gitdir: " + os.getcwd() + "/g\n").encode()); os.close(fd)
'; sleep 0.2; cat d0/.git; echo END`)
		if !strings.Contains(r.stdout, "OPENED 64 EMFILE") || !strings.Contains(r.stdout, "gitdir: /") || !strings.Contains(r.stdout, "END") {
			t.Errorf("deferred writes were not bounded, or did not land: %+v", r)
		}
	})
}

// The guard reads a .git file, a commondir and a relative core.hooksPath
// as git does: "gitdir: " with the path's spaces kept, a relative path
// beneath the file's directory resolved by the kernel (symlinks before
// ".."); and no commondir is made in a repository's own git directory,
// where git would take another's config and hooks. Each spelling leads
// to a repository with core.hooksPath .husky/_; the host commits in
// each; nothing of the command's runs. Both users.
func TestGuardGitFileSpelling(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		ran := filepath.Join(filepath.Dir(b.W), "ran")
		for _, r := range []string{"proj", "h"} {
			hostGit(t, b.W, "init", "-q", r)
			hostGit(t, b.path(r), "commit", "-q", "--allow-empty", "-m", "1")
		}
		hostGit(t, b.path("proj"), "config", "core.hooksPath", ".husky/_")
		evil := fmt.Sprintf("#!/bin/sh\necho $0 >> %s\n", ran)
		script := fmt.Sprintf(`e=%q P=%q
put() { mkdir -p "$(dirname "$1")" && printf "$e" > "$1" && chmod +x "$1"; }
mkdir w1 && printf 'gitdir:  /.git\n' > w1/.git && ln -s "$P" 'w1/ '; put w1/.husky/_/pre-commit
mkdir w2 && printf 'gitdir: l/../.git\n' > w2/.git && ln -s "$P/.husky" w2/l; put w2/.husky/_/pre-commit
mkdir w3 && printf "gitdir: $P/.git\0x\n" > w3/.git; put w3/.husky/_/pre-commit
mkdir w4 && printf "gitdir: /proc/self/root$P/.git\n" > w4/.git; put w4/.husky/_/pre-commit
mkdir -p s1 d1 && printf 'gitdir: ../d1\n' > s1/.git; put s1/.husky/_/pre-commit; mv d1 d1x; ln -s "$P/.git" d1
mkdir -p s2 l2/.git && printf 'gitdir: ../l2/.git\n' > s2/.git; put s2/.husky/_/pre-commit; mv l2 l2x; ln -s "$P" l2
mkdir -p s3 d3 && printf 'gitdir: ../d3\n' > s3/.git; put s3/.husky/_/pre-commit; rmdir d3; ln -s "$P/.git" d3; mkdir -p m/.git && mv m d3 2>/dev/null
mkdir -p w5/deep && printf "gitdir: /proc/self/cwd/../../../../../../../../../..$P/.git\n" > w5/.git; put w5/.husky/_/pre-commit
mkdir -p w7 z/worktrees/g && printf "gitdir: $PWD/z/worktrees/g\n" > w7/.git && echo "ref: refs/heads/master" > z/worktrees/g/HEAD && printf "/proc/self/root$P/.git\n" > z/worktrees/g/commondir; touch w7/x; put w7/.husky/_/pre-commit
mkdir w6 && printf "gitdir: $P/.git\n" > w6/.git && mkdir -p w6/.husky/_ 2>/dev/null || echo REFUSED-AT-ONCE
printf "$P/.git\n" > h/.git/commondir; put h/.husky/_/pre-commit
W=$PWD; mkdir -p v1 x/worktrees/gd && printf "gitdir: $W/x/worktrees/gd\n" > v1/.git && echo "ref: refs/heads/master" > x/worktrees/gd/HEAD
echo $W/l1/.git > x/worktrees/gd/commondir; mkdir -p v1/.husky/_; ln -s "$P" l1; put v1/.husky/_/pre-commit
mkdir -p v2/.git && echo "ref: refs/heads/master" > v2/.git/HEAD && echo $W/l2/.git > v2/.git/commondir; mkdir -p v2/.husky/_; ln -s "$P" l2; put v2/.husky/_/pre-commit
mkdir v4 && ln -s $W/l4 v4/.git; mkdir -p v4/.husky/_; ln -s "$P/.git/." l4; put v4/.husky/_/pre-commit
mkdir -p v5 y/worktrees/gd && printf "gitdir: $W/y/worktrees/gd\n" > v5/.git && echo "ref: refs/heads/master" > y/worktrees/gd/HEAD
(exec 3>y/worktrees/gd/commondir; mkdir -p v5/.husky/_; echo "$P/.git" >&3); put v5/.husky/_/pre-commit
echo END`, evil, b.path("proj"))
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if !strings.Contains(r.stdout, "REFUSED-AT-ONCE") {
			t.Errorf("a .git file was not written by the command's next call: %+v", r)
		}
		for _, repo := range []string{"w1", "w2", "w3", "w4", "w5/deep", "w7", "h", "v1", "v2", "v4", "v5", "s1", "s2", "s3"} {
			cmd := exec.Command("git", "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-q", "--allow-empty", "-m", "x")
			cmd.Dir = b.path(repo)
			cmd.CombinedOutput()
		}
		noHookRan(t, ran, r)
	})
}

// noHookRan fails the test if a program of the command's (a hook, a
// script a hook runs) recorded in ran that the host's git ran it.
func noHookRan(t *testing.T, ran string, r result) {
	t.Helper()
	if got, err := os.ReadFile(ran); err == nil {
		t.Errorf("the host's git ran what the command made: %s\n%+v", got, r)
	}
}

// hostGit runs git in dir as the host, with an identity and local
// submodules allowed; a failure fails the test (Errorf: it may run on
// another goroutine, as whenReady's host does).
func hostGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := hostGitMay(dir, args...); err != nil {
		t.Errorf("git %v: %v %s", args, err, out)
	}
}

// hostGitMay is hostGit for a command that may fail (a push the
// command's doing left refused): what matters is what it ran.
func hostGitMay(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-c", "protocol.file.allow=always", "-c", "user.name=a", "-c", "user.email=a@example.com"}, args...)...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// No symlink is made inside a git directory — a .git, or one known by
// git's marks — by symlink, rename, hard link or a directory moved in,
// and a directory holding one does not become a git directory: the
// host's git writes there by fixed names (FETCH_HEAD, COMMIT_EDITMSG,
// logs/HEAD, rebase-merge, worktrees/<id>) and would write, or gc delete,
// where the link leads. The host then commits, fetches and prunes; the
// canary file outside stays unwritten and the victim directory keeps its
// file. Both users.
func TestGuardGitDirSymlinks(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		out := filepath.Join(filepath.Dir(b.W), "out")
		victim := filepath.Join(filepath.Dir(b.W), "victim")
		os.Mkdir(victim, 0o755)
		os.WriteFile(filepath.Join(victim, "keep"), []byte("x"), 0o644)
		hostGit(t, b.W, "init", "-q", "r")
		b.write("r/f", "1")
		hostGit(t, b.path("r"), "add", "f")
		hostGit(t, b.path("r"), "commit", "-q", "-m", "one")
		hostGit(t, b.path("r"), "remote", "add", "o", b.path("r"))
		script := fmt.Sprintf(`cd r
ln -s %[1]s .git/FETCH_HEAD; rm -f .git/COMMIT_EDITMSG; ln -s %[1]s .git/COMMIT_EDITMSG
mv .git/logs/HEAD ../lh; ln -s %[1]s .git/logs/HEAD
mkdir -p .git/worktrees; ln -s %[2]s .git/worktrees/x
mkdir ../d && ln -s %[2]s ../d/x && mv ../d .git/worktrees/y
ln -s %[1]s ../l1 && mv ../l1 .git/ORIG_HEAD; ln -s %[1]s ../l2 && ln -P ../l2 .git/AUTO_MERGE
ln -s ../../x .git/rebase-merge
cd .. && git init -q --bare B && ln -s %[1]s B/FETCH_HEAD
mkdir P && ln -s %[2]s P/worktrees && touch P/HEAD && mkdir P/objects P/refs
mkdir C && ln -s %[2]s C/worktrees && mkdir C/objects C/refs; mkdir -p C2/refs && ln -s %[2]s C2/objects
echo END`, out, victim)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		filepath.WalkDir(b.path("r/.git"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type()&fs.ModeSymlink != 0 {
				t.Errorf("a symlink was made in a git directory: %s", p)
			}
			return nil
		})
		if fi, err := os.Lstat(b.path("B/FETCH_HEAD")); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			t.Error("a symlink was made in a bare repository")
		}
		if _, err := os.Lstat(b.path("P/refs")); err == nil {
			t.Error("a directory holding a symlink became a git directory")
		}
		if _, err := os.Lstat(b.path("C/refs")); err == nil {
			t.Error("a directory holding a symlink at a git name became a common git directory")
		}
		if fi, err := os.Lstat(b.path("C2/objects")); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			t.Error("objects was made a symlink beside refs")
		}
		// What the command left must not lead the host's git out.
		if _, err := os.Stat(b.path("r/.git/logs/HEAD")); err != nil {
			os.Rename(b.path("lh"), b.path("r/.git/logs/HEAD"))
		}
		b.write("r/f", "2")
		hostGit(t, b.path("r"), "commit", "-q", "-am", "two")
		hostGit(t, b.path("r"), "fetch", "-q", "o")
		hostGit(t, b.path("r"), "worktree", "prune")
		if _, err := os.Stat(out); err == nil {
			t.Errorf("the host's git wrote through a link the command made: %q", b.read("../out"))
		}
		if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
			t.Errorf("the host's git pruned a directory outside the repository: %v", err)
		}
	})
}

// git's global config where XDG puts it, ~/.config/git/config, is kept
// as ~/.gitconfig is: one that exists is read-only, one that does not
// may not be made, also where ~/.config is a symlink into a dotfiles
// directory (the guard judges real paths, which do not hold the names),
// by a write, a copy, or a directory moved there. Other files of
// ~/.config stay writable. Judged from outside; both users.
func TestGuardXDGGitConfig(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("~/dot/config/htop/htoprc", "ORIG")
		if err := os.Symlink("dot/config", b.path("~/.config")); err != nil {
			t.Fatal(err)
		}
		b.write("proj/.config/git/config", "ORIG")
		evil := "[core]\n\tfsmonitor = " + b.canary + "\n"
		b.write("evil", evil)
		script := `mkdir -p ~/.config/git; cat evil > ~/.config/git/config; cp evil ~/dot/config/git/config
mkdir -p m/git && cp evil m/git/config && mv m/git ~/.config/g2 && rmdir ~/.config/git && mv ~/.config/g2 ~/.config/git
cat evil >> proj/.config/git/config; cp evil x && mv x proj/.config/git/config
echo new > ~/.config/htop/htoprc; echo END`
		r := b.run(fsMap{"allowWrite": []string{".", "~"}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, f := range []string{"~/dot/config/git/config", "proj/.config/git/config"} {
			if strings.Contains(b.read(f), b.canary) {
				t.Errorf("%s took the command's config: %q", f, b.read(f))
			}
		}
		if got := b.read("~/dot/config/htop/htoprc"); got != "new\n" {
			t.Errorf("another file of ~/.config was not written: %q (%+v)", got, r)
		}
	})
}

// A rebase left stopped names its merge strategy in its state, and the
// host's git rebase --continue runs "git-merge-<strategy>", with a slash
// from the work tree: no directory or symlink named git-merge-* is made,
// however (mkdir, a symlink, a rename); a file may be (git's sources
// hold git-merge-octopus.sh). Rebasing with a strategy still works. Judged from outside after the host continues; both users.
func TestGuardMergeStrategy(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		canary := filepath.Join(filepath.Dir(b.W), "ran")
		hostGit(t, b.W, "init", "-q", "r")
		for i := 1; i <= 3; i++ {
			b.write(fmt.Sprintf("r/f%d", i), "x")
			hostGit(t, b.path("r"), "add", ".")
			hostGit(t, b.path("r"), "commit", "-q", "-m", fmt.Sprint(i))
		}
		prog := fmt.Sprintf("#!/bin/sh\ntouch %s\n", canary)
		script := fmt.Sprintf(`export GIT_EDITOR=true GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
cd r && git rebase -q -X theirs HEAD~1 && echo STRATEGY-OK
GIT_SEQUENCE_EDITOR="sed -i 1s/^pick/edit/" git rebase -q -i HEAD~2 >/dev/null 2>&1; test -d .git/rebase-merge && echo STOPPED
git commit -q --amend -m amended; printf 'x/y\n' > .git/rebase-merge/strategy; printf 'x/y\n' > s.new && mv s.new .git/rebase-merge/strategy
m=.git/rebase-merge; printf 'resolve\n' > $m/s2 && perl -e 'rename($ARGV[0], $ARGV[1])' $m/s2 $m/strategy; printf ' --index-output=%[2]s\n' > $m/o2 && perl -e 'rename($ARGV[0], $ARGV[1])' $m/o2 $m/strategy_opts
mkdir git-merge-x && printf '%[1]s' > git-merge-x/y && chmod +x git-merge-x/y
mkdir -p p/q && printf '%[1]s' > p/q/y && chmod +x p/q/y && mv p/q git-merge-z; ln -s p/q git-merge-w; mv p Git-Merge-v; touch git-merge-u
echo END`, prog, filepath.Join(filepath.Dir(b.W), "written"))
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "STRATEGY-OK") || !strings.Contains(r.stdout, "STOPPED") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		matches, _ := filepath.Glob(b.path("r/[gG]it-[mM]erge-*"))
		for _, m := range matches {
			if fi, err := os.Lstat(m); err == nil && !fi.Mode().IsRegular() {
				t.Errorf("a merge program's directory or link was made: %s", m)
			}
		}
		if _, err := os.Lstat(b.path("r/git-merge-u")); err != nil {
			t.Errorf("a file named git-merge-u was not made: %v", err)
		}
		// The strategy itself, which a commit the host's own reset or
		// pick checks out could give a directory: only git's own.

		if strings.Contains(b.read("r/.git/rebase-merge/strategy_opts"), "index-output") {
			t.Errorf("the rebase's strategy options pass read-tree an option of the command's: %q", b.read("r/.git/rebase-merge/strategy_opts"))
		}
		if strings.Contains(b.read("r/.git/rebase-merge/strategy"), "x/y") {
			t.Errorf("the rebase's strategy names a program of the command's: %q", b.read("r/.git/rebase-merge/strategy"))
		}
		cont := exec.Command("git", "-C", b.path("r"), "-c", "user.name=a", "-c", "user.email=a@example.com", "rebase", "--continue")
		cont.Env = append(os.Environ(), "GIT_EDITOR=true")
		out, _ := cont.CombinedOutput()
		if _, err := os.Stat(canary); err == nil {
			t.Errorf("the host's git rebase --continue ran the command's program: %s", out)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(b.W), "written")); err == nil {
			t.Errorf("the host's git rebase --continue wrote outside through the strategy's options: %s", out)
		}
	})
}

// A stopped am keeps the options it passes git apply in
// rebase-apply/apply-opt, and the host's git am --skip or --continue
// passes them on: --build-fake-ancestor=<file> writes an index at any
// path. The file is kept like a config: git's own in-place write of it,
// empty, goes through as the emptying it is; anything written in it,
// renamed or linked over it, or brought by a directory moved in, or left
// before a directory becomes a git directory, is refused. Plain git am
// still works inside. Judged from outside after the host skips; both
// users.
func TestGuardApplyOpts(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		written := filepath.Join(filepath.Dir(b.W), "written")
		opt := fmt.Sprintf("'--build-fake-ancestor=%s'", written)
		script := fmt.Sprintf(`export GIT_EDITOR=true GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
git init -q r && cd r && echo a > f && git add f && git commit -qm 1 && echo b > f && git commit -qam 2 && echo c > g && git add g && git commit -qm 3
git format-patch -q -2 HEAD && git reset -q --hard HEAD~2 && echo z > f && git commit -qam z
git am -q 0001-*.patch 0002-*.patch >/dev/null 2>&1; test -d .git/rebase-apply && echo STOPPED
git am -q --skip && git log --format=%%s | head -1 && git reset -q --hard HEAD~1 && git am -q 0001-*.patch 0002-*.patch >/dev/null 2>&1; echo AGAIN
a=.git/rebase-apply/apply-opt opt=%[1]q
echo "$opt" > $a; echo "$opt" >> $a; printf %%s "$opt" | dd of=$a conv=notrunc 2>/dev/null
echo "$opt" > .git/rebase-apply/o2; mv -f .git/rebase-apply/o2 $a; echo "$opt" > .git/rebase-apply/o3; perl -e 'rename($ARGV[0], $ARGV[1])' .git/rebase-apply/o3 $a
echo "$opt" > .git/rebase-apply/o4; ln -f .git/rebase-apply/o4 $a; (exec 3<>$a; echo "$opt" >&3)
mkdir -p ../x/rebase-apply && echo "$opt" > ../x/rebase-apply/apply-opt; cd .. && git init -q q && mv x/rebase-apply q/.git/ 2>/dev/null
mkdir -p s/rebase-apply && echo "$opt" > s/rebase-apply/apply-opt && git init -q --bare s 2>/dev/null
echo END`, opt)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "STOPPED") || !strings.Contains(r.stdout, "\n3\n") && !strings.Contains(r.stdout, "3\nAGAIN") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("git am did not work inside: %+v", r)
		}
		for _, f := range []string{"r/.git/rebase-apply/apply-opt", "q/.git/rebase-apply/apply-opt"} {
			if strings.Contains(b.read(f), "fake-ancestor") {
				t.Errorf("%s took an option of the command's: %q", f, b.read(f))
			}
		}
		if _, err := os.Stat(b.path("s/HEAD")); err == nil && strings.Contains(b.read("s/rebase-apply/apply-opt"), "fake-ancestor") {
			t.Errorf("a directory holding an am's options became a git directory")
		}
		skip := exec.Command("git", "-C", b.path("r"), "-c", "user.name=a", "-c", "user.email=a@example.com", "am", "--skip")
		out, err := skip.CombinedOutput()
		if _, err := os.Stat(written); err == nil {
			t.Errorf("the host's git am --skip wrote outside through the am's options: %s", out)
		}
		if _, statErr := os.Stat(b.path("r/g")); err != nil || statErr != nil {
			t.Errorf("the host's git am --skip did not apply the next patch: %v %s", err, out)
		}
	})
}

// An index crafted byte by byte names .git/hooks/post-checkout and
// ../x: the host's git checkout -- . would write both (a hook, which it
// then runs, and a file outside the work tree). The guard takes an index
// only by a rename it judges, every path one git would let in; git's own
// work on indexes (add, commit, split and sparse indexes) still lands.
// The host checks out after the run; judged from outside; both users.
func TestGuardIndexPaths(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		canary := filepath.Join(filepath.Dir(b.W), "ran")
		hostGit(t, b.W, "init", "-q", "r")
		b.write("r/f", "1")
		hostGit(t, b.path("r"), "add", "f")
		hostGit(t, b.path("r"), "commit", "-q", "-m", "one")
		os.WriteFile(b.path("crafted"), craftIndex(t, b.path("r"), "#!/bin/sh\ntouch "+canary+"\n"), 0o644)
		script := `cd r; cp ../crafted x && mv x .git/index; cat ../crafted > .git/index; cp ../crafted .git/index.lock && mv .git/index.lock .git/index
ln -f ../crafted .git/index; cp ../crafted .git/sharedindex.0000000000000000000000000000000000000000
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
rm -f .git/index.lock; echo 2 > g && git add g && git commit -q -m two && git update-index --split-index && echo 3 > g && git add g && git commit -q -m three && echo INDEX-OK
git update-index --no-split-index; echo END`
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "INDEX-OK") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("git's work on the index failed: %+v", r)
		}
		out, _ := exec.Command("git", "-C", b.path("r"), "checkout", "--", ".").CombinedOutput()
		for _, p := range []string{b.path("r/.git/hooks/post-checkout"), b.path("canary-esc"), canary} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("the host's checkout of the command's index made %s: %s", p, out)
			}
		}
	})
}

// craftIndex makes, in repo (made by the host), an index the command
// could write with any program: entries .git/hooks/post-checkout
// (executable) and ../canary-esc, holding payload, made with git under
// placeholder names of the same length and patched, the SHA-1 trailer
// made right. The repository's own index is not touched.
func craftIndex(t *testing.T, repo, payload string) []byte {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), "index")
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+tmp)
		if strings.HasPrefix(args[0], "hash-object") {
			cmd.Stdin = strings.NewReader(payload)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	id := run("hash-object", "-w", "--stdin")
	run("update-index", "--add", "--cacheinfo", "100755,"+id+",xgit/hooks/post-checkout")
	run("update-index", "--add", "--cacheinfo", "100644,"+id+",xx/canary-esc")
	crafted, err := os.ReadFile(tmp)
	if err != nil {
		t.Fatal(err)
	}
	crafted = bytes.ReplaceAll(crafted, []byte("xgit/hooks"), []byte(".git/hooks"))
	crafted = bytes.ReplaceAll(crafted, []byte("xx/canary-esc"), []byte("../canary-esc"))
	sum := sha1.Sum(crafted[:len(crafted)-20])
	copy(crafted[len(crafted)-20:], sum[:])
	return crafted
}

// A git directory the command makes in a work tree (a --separate-git-dir
// put inside it, a bare repository, one moved in) would take files the
// host's checkout writes there, a hook among them, which git then runs;
// and a directory that becomes a git directory keeps no index, todo list
// or symlink the guard would not have taken in one (a common directory,
// with objects and refs but no HEAD, included). The host checks out,
// restores and prunes after the run; judged from outside; both users.
func TestGuardGitDirsInWorkTrees(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		canary := filepath.Join(filepath.Dir(b.W), "ran")
		victim := filepath.Join(filepath.Dir(b.W), "victim")
		os.Mkdir(victim, 0o755)
		os.WriteFile(filepath.Join(victim, "keep"), []byte("x"), 0o644)
		hostGit(t, b.W, "init", "-q", "scratch")
		// A drop box: another user's directory the command may write in
		// but not read (root's run only: the host must chown it).
		b.write("r7/drop/", "")
		if os.Geteuid() == 0 {
			os.Chown(b.path("r7/drop"), 12345, 12345)
			os.Chmod(b.path("r7/drop"), 0o733)
		}
		b.write("crafted", string(craftIndex(t, b.path("scratch"), "#!/bin/sh\ntouch "+canary+"\n")))
		script := fmt.Sprintf(`export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
mkdir r1 && cd r1 && git init -q --separate-git-dir=$PWD/gd . 2>/dev/null; cd ..
git init -q r2 && git init -q --bare r2/inner.git 2>/dev/null; git init -q --bare moved.git && mv moved.git r2/ 2>/dev/null
mkdir -p r3/x && cp crafted r3/x/index && mkdir -p r3/x/objects r3/x/refs/heads 2>/dev/null; echo 'ref: refs/heads/main' > r3/x/HEAD; echo 'gitdir: x' > r3/.git
mkdir -p r4/x/rebase-merge && echo 'exec touch %[1]s' > r4/x/rebase-merge/git-rebase-todo && mkdir -p r4/x/objects r4/x/refs 2>/dev/null; echo 'gitdir: x' > r4/.git
mkdir -p r5/D/objects r5/D/refs/heads r5/G && ln -s %[2]s r5/D/worktrees 2>/dev/null
mkdir -p r6/a && git init -q --bare r6/a/b.git && git init -q r6 2>/dev/null
cd r7 && git init -q --bare drop/gd 2>/dev/null; printf 'gitdir: drop/gd\n' > .git 2>/dev/null; cd ..
echo END`, canary, victim)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		// No git directory but .git lies in a work tree, and none holds
		// what the guard refuses in one. A git directory is what git
		// takes for one: HEAD, and a commondir or objects and refs. (The
		// order mv's copy of moved.git makes its entries in varies under
		// load, and the mark refused, the last of the three, with it:
		// objects and refs without HEAD, which git takes for no
		// repository, failed the old, looser check about one run in
		// five on two busy CPUs.)
		isGitDir := func(p string) bool {
			has := func(n string) bool { _, err := os.Lstat(filepath.Join(p, n)); return err == nil }
			return has("HEAD") && (has("commondir") || has("objects") && has("refs"))
		}
		if _, err := os.Lstat(b.path("r7/.git")); err == nil && os.Geteuid() == 0 {
			t.Error("a .git was made over a git directory hidden in a drop box")
		}
		for _, p := range []string{"r1/gd", "r2/inner.git", "r2/moved.git", "r3/x", "r4/x", "r6/.git"} {
			if isGitDir(b.path(p)) && (p != "r6/.git" || isGitDir(b.path("r6/a/b.git"))) {
				t.Errorf("%s became a git directory in a work tree", p)
			}
		}
		if fi, err := os.Lstat(b.path("r5/D/worktrees")); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			t.Error("a symlink was made in a common directory")
		}
		// The host's ordinary commands in what the command left.
		for _, dir := range []string{"r1", "r2", "r3", "r4"} {
			for _, args := range [][]string{{"checkout", "--", "."}, {"restore", "."}, {"rebase", "--continue"}, {"worktree", "prune"}} {
				cmd := exec.Command("git", append([]string{"-C", b.path(dir)}, args...)...)
				cmd.Env = append(os.Environ(), "GIT_EDITOR=true")
				cmd.Run()
			}
		}
		for _, p := range []string{canary, b.path("canary-esc"), b.path("r3/canary-esc")} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("the host's git made %s", p)
			}
		}
		if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
			t.Errorf("the host's git pruned outside: %v", err)
		}
	})
}

// requireGit skips a test that needs the host's git, saying so.
func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("requires git")
	}
}

// What only looks like git's in part stays ordinary: directories named
// objects and refs side by side (a project's src/), symlinks beneath
// them (npm's .bin), git init over a tree that holds such a pair, files
// named git-merge-*, and, as root's guard acts as no other user, git init
// over another user's directory it cannot read (a database's volume).
// Both users.
func TestGuardLooksLikeGit(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		hostGit(t, b.W, "init", "-q", "w")
		b.write("ip/node_modules/p/lib/objects/o.js", "x")
		b.write("ip/node_modules/p/lib/refs/r.js", "x")
		b.write("ip/pgdata/x", "x")
		if os.Geteuid() == 0 {
			os.Chown(b.path("ip/pgdata"), 12345, 12345)
			os.Chmod(b.path("ip/pgdata"), 0o700)
		}
		script := `cd w && mkdir -p src/objects src/refs && echo x > src/refs/useRef.js && mkdir -p src/a && ln -s ../x src/a/link && printf x > git-merge-octopus.sh && echo W-OK
cd ../ip && git init -q && echo INIT-OK`
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		for _, want := range []string{"W-OK", "INIT-OK"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s missing: %+v", want, r)
			}
		}
	})
}

// Removing a name is writing it: a protected name deeper than the
// launch's walk, one the host makes while the command runs, a deny
// entry's match, a repository's hook and the hooks its core.hooksPath
// keeps cannot be removed — by rm, unlink(2), rmdir(2), unlinkat from a
// directory's descriptor, find -delete, through a symlink to their
// directory (also one swapped by a racing loop) or /proc/self/cwd — nor
// what a launch's mount keeps (srt is outside the sandbox's mount
// namespace, where that mount does not stop it). What the command may
// write it still removes: its own files and directories, a repository it
// made, whole, a hook's sample. Judged from outside; both users.
func TestGuardRemove(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		const deep = "a/b/c/d/e"
		names := []string{".env", "keys/k.pem"}
		var kept []string
		for _, f := range names {
			kept = append(kept, deep+"/"+f, f) // deeper than the walk, and a launch's mount
		}
		// A shell's startup file or a project's configuration may be
		// removed (the host runs nothing from a name that is not
		// there), and nothing may be made at it again.
		project := []string{".bashrc", ".mcp.json", ".gitmodules", ".vscode/settings.json", ".idea/workspace.xml", ".claude/commands/x.md"}
		var removable []string
		for _, f := range project {
			removable = append(removable, deep+"/"+f)
			b.write(deep+"/"+f, b.canary)
		}
		b.write(deep+"/", "")
		hostGit(t, b.path("a"), "init", "-q", "r")
		hostGit(t, b.path(deep), "init", "-q", "h")
		hostGit(t, b.path(deep+"/h"), "config", "core.hooksPath", ".githooks")
		b.write(deep+"/h/.githooks/pre-commit", b.canary)
		kept = append(kept, "a/r/.git/hooks/pre-commit", deep+"/h/.githooks/pre-commit")
		for _, f := range kept {
			b.write(f, b.canary)
		}
		late := []string{"late/.env", "late/keys/k.pem"}
		removable = append(removable, "late/.bashrc", "late/.vscode/settings.json")
		b.write("late/", "")
		b.whenReady("ready", "go", 10*time.Second, func() {
			for _, f := range append(late, "late/.bashrc", "late/.vscode/settings.json") {
				b.write(f, b.canary)
			}
		})
		kept = append(kept, late...)
		script := `touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done
for f in ` + strings.Join(kept, " ") + `; do
  rm -f "$f"; perl -e 'unlink $ARGV[0]' "$f"; rm -f "/proc/self/cwd/$f"
  python3 -c 'import os, sys; d, n = os.path.split(sys.argv[1]); os.unlink(n, dir_fd=os.open(d, os.O_RDONLY))' "$f" 2>/dev/null
done
for f in ` + strings.Join(removable, " ") + `; do
  rm -f "$f" && echo "REMOVED $f"; mkdir -p "$(dirname "$f")"; echo AGAIN > "$f"
done
rm -rf late && mkdir -p late/.vscode && echo AGAIN > late/.vscode/settings.json
ln -s ` + deep + ` via; rm -f via/.bashrc via/.vscode/settings.json via/keys/k.pem
rm -rf ` + deep + `/.vscode ` + deep + `/.idea late/.vscode ` + deep + `/h/.githooks; perl -e 'rmdir $ARGV[0] or print "rmdir: $!\n"' ` + deep + `/.claude/commands
find a late -name '*.pem' -delete
mkdir own; (for i in $(seq 200); do ln -sfn ` + deep + ` sw; ln -sfn own sw; done) & for i in $(seq 200); do rm -f sw/.bashrc sw/.mcp.json 2>/dev/null; done; wait
git init -q mine && git -C mine -c user.name=a -c user.email=a@example.com commit -q --allow-empty -m x && rm -rf mine && echo MINE-GONE
mkdir -p x/y && echo 1 > x/y/f && perl -e 'unlink "x/y/f" and rmdir "x/y" and rmdir "x" and print "OWN-GONE\n"'
python3 -c 'import os; os.mkdir("z"); open("z/f", "w").close(); d = os.open("z", os.O_RDONLY); os.unlink("f", dir_fd=d); os.rmdir("z"); print("AT-GONE")'
rm ` + deep + `/h/.git/hooks/pre-push.sample && echo SAMPLE-GONE; echo END; exit 7`
		r := b.run(fsMap{"allowWrite": []string{"."}, "denyWrite": []string{"**/.env", "**/*.pem"}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, f := range kept {
			if got := b.read(f); got != b.canary {
				t.Errorf("%s was removed: %q", f, got)
			}
		}
		for _, f := range removable {
			if !strings.Contains(r.stdout, "REMOVED "+f) {
				t.Errorf("%s could not be removed: %+v", f, r)
			}
			if got := b.read(f); strings.Contains(got, "AGAIN") {
				t.Errorf("%s was made again after its removal: %q", f, got)
			}
		}
		for _, want := range []string{"MINE-GONE", "OWN-GONE", "AT-GONE", "SAMPLE-GONE"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the command could not remove what it may write (%s): %+v", want, r)
			}
		}
		for _, gone := range []string{"mine", "x", "z", deep + "/h/.git/hooks/pre-push.sample"} {
			if _, err := os.Lstat(b.path(gone)); err == nil {
				t.Errorf("%s was left", gone)
			}
		}
		if !strings.Contains(r.stderr, "blocked: unlink") {
			t.Errorf("no removal was reported: %+v", r)
		}
	})
}

// What a repository keeps stays kept for the run: a core.hooksPath
// directory's hooks once the command unsets the key (a config change the
// guard lets through), removes the config, or removes the whole .git —
// left writable, they would wait for the host's next git config
// core.hooksPath (a project's setup script, husky's install) to run
// them; nor is a directory that holds them moved away (copied, EXDEV,
// they stay). And a bare repository's hooks stay its own: the last of its
// marks (HEAD, objects, refs) is not removed or moved away while its
// hooks hold more than samples. Judged from outside; both users.
func TestGuardHooksStayKept(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		const deep = "a/b/c/d"
		b.write(deep+"/", "")
		for _, r := range []string{"r1", "r2", deep + "/r3", deep + "/r5"} {
			hostGit(t, b.W, "init", "-q", r)
			hostGit(t, b.path(r), "config", "core.hooksPath", ".githooks")
			b.write(r+"/.githooks/pre-commit", b.canary)
		}
		hostGit(t, b.W, "init", "-q", "r4")
		hostGit(t, b.path("r4"), "config", "core.hooksPath", ".husky/_")
		b.write("r4/.husky/_/pre-commit", b.canary)
		hostGit(t, b.W, "init", "-q", "--bare", "bare.git")
		b.write("bare.git/hooks/pre-receive", b.canary)
		script := `(cd r1 && git config --unset core.hooksPath); ln -s x y; rm y
rm -f r2/.git/config; ln -s x y; rm y
rm -rf ` + deep + `/r3/.git; ln -s x y; rm y
for r in r1 r2 ` + deep + `/r3; do echo EVIL > $r/.githooks/pre-commit; rm -f $r/.githooks/pre-commit; mv $r/.githooks $r/moved; done
mv r4/.husky r4/h2; echo EVIL > r4/h2/_/pre-commit
git -C ` + deep + `/r5 config --unset core.hooksPath; mv ` + deep + `/r5 ` + deep + `/r5x; echo EVIL > ` + deep + `/r5x/.githooks/pre-commit; mv ` + deep + `/r5x ` + deep + `/r5
rm -rf bare.git/HEAD bare.git/objects bare.git/refs; mv bare.git/HEAD bare.git/H; rm -f bare.git/hooks/pre-receive; echo EVIL > bare.git/hooks/pre-receive
echo END; exit 7`
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, f := range []string{"r1/.githooks/pre-commit", "r2/.githooks/pre-commit", deep + "/r3/.githooks/pre-commit", "r4/.husky/_/pre-commit", deep + "/r5/.githooks/pre-commit", "bare.git/hooks/pre-receive"} {
			if got := b.read(f); got != b.canary {
				t.Errorf("%s was written or removed: %q", f, got)
			}
		}
		marked := false
		for _, m := range []string{"HEAD", "objects", "refs"} {
			if _, err := os.Lstat(b.path("bare.git/" + m)); err == nil {
				marked = true
			}
		}
		if !marked {
			t.Errorf("the bare repository lost its last mark")
		}
		if !strings.Contains(r.stderr, "blocked: ") {
			t.Errorf("nothing was reported: %+v", r)
		}
	})
}

// A .git other than a directory, and a worktree's commondir, lead only
// into the trees the command may write: the host's git in a work tree
// writes the objects, refs and index of the repository its .git names,
// and a commit there would land on a branch outside. A .git file or a
// commondir is written in place, as git writes them (judged as it lands);
// moved or linked there it is refused (the command could still change it
// through another name); a .git symlink must lead into a writable tree.
// One that leads to the command's own repository, and git clone
// --separate-git-dir, still work. Judged from outside with the host's
// git; both users.
func TestGuardGitFileLeadsInWritable(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		outside := filepath.Join(filepath.Dir(b.W), "outside")
		os.MkdirAll(outside, 0o755)
		hostGit(t, outside, "init", "-q", "o")
		hostGit(t, filepath.Join(outside, "o"), "commit", "-q", "--allow-empty", "-m", "base")
		hostGit(t, b.W, "init", "-q", "r")
		hostGit(t, b.path("r"), "commit", "-q", "--allow-empty", "-m", "r")
		od := filepath.Join(outside, "o/.git")
		script := fmt.Sprintf(`mkdir d1 d2 d3 d4 d5 d6
echo "gitdir: %[1]s" > d1/.git
echo "gitdir: %[1]s" > d2/t && mv d2/t d2/.git
ln -s %[1]s d3/.git
echo "gitdir: %[1]s" > t4 && ln t4 d4/.git
ln -s %[2]s d5/link && ln -s link/.git d5/l && mv d5/l d5/.git
cd r && mkdir -p .git/worktrees/w1 .git/worktrees/w2 && cp .git/HEAD .git/worktrees/w1/ && cp .git/HEAD .git/worktrees/w2/
echo %[1]s > .git/worktrees/w1/commondir; echo %[1]s > c && mv c .git/worktrees/w2/commondir
echo "gitdir: $PWD/.git/worktrees/w1" > ../d6/.git; mkdir ../d7 && echo "gitdir: $PWD/.git/worktrees/w2" > ../d7/.git
cd .. && git init -q own && mkdir j && ln -s ../own/.git j/.git && git -C j status >/dev/null && echo OWN
git clone -q --separate-git-dir="$PWD/sep" r cl && echo SEPARATE
echo END`, od, outside)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		for _, want := range []string{"OWN", "SEPARATE"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s failed inside: %+v", want, r)
			}
		}
		time.Sleep(100 * time.Millisecond) // srt settles what the command wrote through a pipe
		for _, d := range []string{"d1", "d2", "d3", "d4", "d5", "d6", "d7"} {
			cmd := exec.Command("git", "-c", "user.name=h", "-c", "user.email=h@example.com", "commit", "-q", "--allow-empty", "-m", "host-"+d)
			cmd.Dir = b.path(d)
			cmd.CombinedOutput()
		}
		cmd := exec.Command("git", "log", "--format=%s")
		cmd.Dir = filepath.Join(outside, "o")
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "base" {
			t.Errorf("the host's git committed to a repository outside through a .git or commondir the command made: %v\n%s", err, out)
		}
	})
}

// git reads a remote's legacy files (.git/remotes/<name>, and
// .git/branches/<name>) when the config gives it no URL, with their
// Push: lines, which the config may not hold (remote.*.push is off its
// list: a refspec that deletes the remote's branches at the host's git
// push). Nothing is made in those directories, written, moved or linked,
// in a .git or a bare repository. Judged from outside with the host's
// git push; both users.
func TestGuardLegacyRemotes(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		remote := filepath.Join(filepath.Dir(b.W), "remote.git")
		hostGit(t, filepath.Dir(b.W), "init", "-q", "--bare", "-b", "main", remote)
		hostGit(t, b.W, "clone", "-q", remote, "p")
		hostGit(t, b.path("p"), "commit", "-q", "--allow-empty", "-m", "i")
		hostGit(t, b.path("p"), "push", "-q", "origin", "main", "main:precious")
		hostGit(t, b.W, "init", "-q", "--bare", "bare.git")
		script := fmt.Sprintf(`cd p && git remote remove origin && git config branch.main.remote origin && git config branch.main.merge refs/heads/main
mkdir -p .git/remotes .git/branches && echo MADE
printf 'URL: %[1]s\nPush: :refs/heads/precious\n' > .git/remotes/origin
printf '%[1]s\n' > .git/branches/origin
mkdir -p ../prep/remotes && printf 'URL: %[1]s\nPush: :refs/heads/precious\n' > ../prep/remotes/origin; rmdir .git/remotes; mv ../prep/remotes .git/remotes
printf 'URL: %[1]s\nPush: :refs/heads/precious\n' > r && mv r .git/remotes/origin; ln r .git/remotes/origin 2>/dev/null
cd .. && mkdir -p bare.git/remotes && printf 'URL: %[1]s\nPush: :refs/heads/precious\n' > bare.git/remotes/origin
echo END`, remote)
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "MADE") || !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run, or git's legacy directories could not be made: %+v", r)
		}
		for _, f := range []string{"p/.git/remotes/origin", "p/.git/branches/origin", "bare.git/remotes/origin"} {
			if _, err := os.Lstat(b.path(f)); err == nil {
				t.Errorf("%s was made: %q", f, b.read(f))
			}
		}
		cmd := exec.Command("git", "push", "-q")
		cmd.Dir = b.path("p")
		cmd.CombinedOutput()
		cmd = exec.Command("git", "branch", "--list", "precious")
		cmd.Dir = remote
		if out, _ := cmd.CombinedOutput(); !strings.Contains(string(out), "precious") {
			t.Errorf("the host's git push deleted the remote's branch")
		}
	})
}

// A repository's core.hooksPath may name a directory outside its work
// tree (../shared-hooks, an absolute path): a write there names no work
// tree that would lead the guard to the repository, so the guard reads
// the repositories the launch's walk found before it judges a first
// write, and keeps such a directory wherever it is: no hook is made,
// written or removed there, nor is it moved away. The host's next git
// commit runs nothing of the command's. Both users.
func TestGuardHooksPathOutsideTree(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		ran := filepath.Join(filepath.Dir(b.W), "ran")
		b.write("shared-hooks/post-commit", b.canary)
		b.write("abs-hooks/", "")
		hostGit(t, b.W, "init", "-q", "r1")
		hostGit(t, b.path("r1"), "config", "core.hooksPath", "../shared-hooks")
		hostGit(t, b.W, "init", "-q", "r2")
		hostGit(t, b.path("r2"), "config", "core.hooksPath", b.path("abs-hooks"))
		// Repositories the walk knows otherwise: a bare one (relative to
		// itself), a linked worktree whose main repository lies outside
		// the writable trees, a submodule, a worktree's config.worktree.
		hostGit(t, b.W, "init", "-q", "--bare", "b.git")
		hostGit(t, b.path("b.git"), "config", "core.hooksPath", "../h-bare")
		main := filepath.Join(filepath.Dir(b.W), "main")
		hostGit(t, filepath.Dir(b.W), "init", "-q", main)
		hostGit(t, main, "commit", "-q", "--allow-empty", "-m", "i")
		hostGit(t, main, "config", "core.hooksPath", b.path("h-wt"))
		hostGit(t, main, "worktree", "add", "-q", b.path("wt"))
		hostGit(t, b.W, "init", "-q", "sub")
		hostGit(t, b.path("sub"), "commit", "-q", "--allow-empty", "-m", "i")
		hostGit(t, b.W, "init", "-q", "sup")
		hostGit(t, b.path("sup"), "submodule", "add", "-q", b.path("sub"), "s")
		hostGit(t, b.path("sup/s"), "config", "core.hooksPath", b.path("h-sub"))
		hostGit(t, b.W, "init", "-q", "m2")
		hostGit(t, b.path("m2"), "commit", "-q", "--allow-empty", "-m", "i")
		hostGit(t, b.path("m2"), "config", "extensions.worktreeConfig", "true")
		hostGit(t, b.path("m2"), "worktree", "add", "-q", "../wt2")
		hostGit(t, b.path("wt2"), "config", "--worktree", "core.hooksPath", b.path("h-cw"))
		hook := fmt.Sprintf(`#!/bin/sh
touch %s
`, ran)
		b.write("hook", hook)
		r := b.run(fsMap{"allowWrite": []string{"."}}, `chmod +x hook
cp hook shared-hooks/pre-commit; cp hook abs-hooks/pre-commit; rm -f shared-hooks/post-commit
mkdir x && cp hook x/pre-commit && mv shared-hooks old && mv x shared-hooks; ln -s ../hook abs-hooks/commit-msg
for d in h-bare h-wt h-sub h-cw; do mkdir $d; cp hook $d/pre-commit; cp hook $d/pre-receive; done
echo END`)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if got := b.read("shared-hooks/post-commit"); got != b.canary {
			t.Errorf("a hook in a hooks directory outside the work tree was removed or written: %q", got)
		}
		for _, repo := range []string{"r1", "r2", "wt", "sup/s", "wt2"} {
			cmd := exec.Command("git", "-c", "user.name=h", "-c", "user.email=h@example.com", "commit", "-q", "--allow-empty", "-m", "host")
			cmd.Dir = b.path(repo)
			cmd.CombinedOutput()
		}
		cmd := exec.Command("git", "push", "-q", b.path("b.git"), "HEAD:main")
		cmd.Dir = b.path("r1")
		cmd.CombinedOutput()
		for _, d := range []string{"h-bare", "h-wt", "h-sub", "h-cw"} {
			if _, err := os.Lstat(b.path(d + "/pre-commit")); err == nil {
				t.Errorf("a hook was made in %s, a hooks directory outside a repository's work tree", d)
			}
		}
		if _, err := os.Stat(ran); err == nil {
			t.Errorf("the host's git commit ran a hook the command made outside the work tree: %+v", r)
		}
	})
}

// nsBind is a Python program that makes a user and a mount namespace of
// its own (which allowNestedUserNamespaces allows), binds each pair of
// its arguments (source, then where) up to "--", and runs the rest.
const nsBind = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000 | 0x00020000) != 0:
    print("NO-NESTED", os.strerror(ctypes.get_errno())); sys.exit(0)
cut = sys.argv.index("--")
pairs, cmd = sys.argv[1:cut], sys.argv[cut+1:]
for i in range(0, len(pairs), 2):
    if libc.mount(pairs[i].encode(), pairs[i+1].encode(), None, 4096 | 16384, None) != 0:
        print("NO-BIND", pairs[i], os.strerror(ctypes.get_errno())); sys.exit(0)
os.execvp(cmd[0], cmd)
`

// nsChroot is a Python program that makes a user namespace of its own
// (no mount namespace), chroots into its first argument and writes each
// other argument there, then removes the first of them.
const nsChroot = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000) != 0:
    print("NO-NESTED", os.strerror(ctypes.get_errno())); sys.exit(0)
os.chroot(sys.argv[1]); os.chdir("/")
for name in sys.argv[2:]:
    try:
        with open("/" + name, "w") as f: f.write("EVIL")
    except OSError: pass
try: os.unlink("/" + sys.argv[2])
except OSError: pass
print("CHROOTED")
`

// nsRebind is a Python program that makes a user and a mount namespace
// of its own, binds its directory own at its second argument and a
// directory whose path holds a vertical tab (third argument) at its
// fourth, writes settings.json in the latter and a file in the former,
// then, ten times, unbinds own and binds its first argument there
// instead (the kernel gives the freed mount id again), writes
// settings.json there, and binds own back.
const nsRebind = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000 | 0x00020000) != 0:
    print("NO-NESTED"); sys.exit(0)
def write(p):
    try:
        with open(p, "w") as f: f.write("EVIL")
    except OSError: pass
libc.mount(b"own", sys.argv[2].encode(), None, 4096, None)
libc.mount(sys.argv[3].encode(), sys.argv[4].encode(), None, 4096, None)
write(sys.argv[4] + "/settings.json")
for i in range(10):
    write(sys.argv[2] + "/x")
    libc.umount2(sys.argv[2].encode(), 0)
    libc.mount(sys.argv[1].encode(), sys.argv[2].encode(), None, 4096, None)
    write(sys.argv[2] + "/settings.json")
    libc.umount2(sys.argv[2].encode(), 0)
    libc.mount(b"own", sys.argv[2].encode(), None, 4096, None)
print("REBOUND")
`

// Under allowNestedUserNamespaces, what the guard alone keeps (deeper
// than the launch's walk, or made by the host during the run) bound at an
// ordinary name in a mount namespace of the command's is judged where the
// sandbox has it: a .vscode bound as alias, a .bashrc onto foo, a hooks
// directory as hk, a denyWrite match the host made during the run onto
// bar, a repository's core.hooksPath directory as hp take no write,
// removal or new file there; nor does a .vscode a process chroots into
// (in the sandbox's own mount namespace); nor is a denyRead file the
// host made during the run read through an overlay of its directory. Judged from outside; both
// users.
func TestGuardNestedAlias(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		const deep = "a/b/c/d/e"
		b.write(deep+"/.vscode/settings.json", b.canary)
		b.write(deep+"/.bashrc", b.canary)
		b.write(deep+"/r/.git/HEAD", "ref: refs/heads/main\n")
		b.write(deep+"/r/.git/hooks/pre-commit", b.canary)
		hostGit(t, b.path(deep), "init", "-q", "r2")
		hostGit(t, b.path(deep+"/r2"), "config", "core.hooksPath", ".hk")
		b.write(deep+"/r2/.hk/pre-commit", b.canary)
		b.write("z/", "")
		b.write("zz/", "")
		b.write("ov/", "")
		b.whenReady("ready", "go", 10*time.Second, func() {
			b.write(deep+"/.env", b.canary)
			b.write("z/secret.txt", "LATE-"+b.canary)
		})
		b.write("hp/", "")
		b.write("bar", "")
		b.write("alias/", "")
		b.write("hk/", "")
		b.write("foo", "")
		b.write("bind.py", nsBind)
		b.write("chroot.py", nsChroot)
		b.write("rebind.py", nsRebind)
		b.write("d2/", "")
		b.write("own/", "")
		b.write("cr/", "")
		b.write("m/n/o/p/q/.vscode/settings.json", b.canary)
		b.write("d3/", "")
		b.write("fchmod.py", "import os, sys\nfor p in sys.argv[1:]:\n    try: os.fchmod(os.open(p, os.O_RDONLY), 0o755)\n    except OSError: pass\n")
		settings := map[string]any{
			"allowNestedUserNamespaces": true,
			"network":                   map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}},
			"filesystem":                fsMap{"allowWrite": []string{"."}, "denyRead": []string{"**/secret.txt"}, "denyWrite": []string{"**/.env"}},
		}
		script := `touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done; touch ` + deep + `/r2/x
python3 bind.py ` + deep + `/.vscode alias ` + deep + `/.bashrc foo ` + deep + `/r/.git/hooks hk ` + deep + `/.env bar ` + deep + `/r2/.hk hp -- sh -c '
echo EVIL > alias/settings.json; echo EVIL >> foo; rm -f alias/settings.json hk/pre-commit; echo EVIL > alias/tasks.json; echo EVIL > hk/post-checkout
python3 fchmod.py hk/pre-commit alias/settings.json foo hp/pre-commit
echo EVIL > bar; echo EVIL > hp/pre-commit; echo EVIL > hp/post-commit
mv alias/settings.json alias/x; echo BOUND'; python3 chroot.py ` + deep + `/.vscode settings.json launch.json; python3 chroot.py cr gone kept
python3 -c 'import ctypes, os; l = ctypes.CDLL(None); l.unshare(0x10000000 | 0x20000); l.mount(b"overlay", b"ov", b"overlay", 0, ("lowerdir=" + os.path.abspath("z") + ":" + os.path.abspath("zz")).encode()); os.system("cat ov/secret.txt")' 
V=$(printf '\v'); mv m/n/o/p "m/n/o/x${V}y" && python3 rebind.py "m/n/o/x${V}y/q/.vscode" d2 "m/n/o/x${V}y/q/.vscode" d3; mv "m/n/o/x${V}y" m/n/o/p; echo END`
		r := b.runSettings(settings, nil, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if strings.Contains(r.stdout, "NO-") || !strings.Contains(r.stdout, "BOUND") {
			t.Skipf("the command could not bind in a namespace of its own here: %+v", r)
		}
		for _, f := range []string{deep + "/.vscode/settings.json", deep + "/.bashrc", deep + "/r/.git/hooks/pre-commit", deep + "/.env", deep + "/r2/.hk/pre-commit", "m/n/o/p/q/.vscode/settings.json"} {
			got := b.read(f)
			if _, err := os.Lstat(b.path(f)); err != nil && (strings.Contains(f, ".vscode") || strings.HasSuffix(f, ".bashrc")) {
				continue // a project's configuration may be removed: nothing comes back at it
			}
			if got != b.canary {
				t.Errorf("%s was written or removed through a bind at another name: %q", f, got)
			}
		}
		for _, f := range []string{deep + "/.vscode/settings.json", deep + "/.bashrc", deep + "/r/.git/hooks/pre-commit", deep + "/r2/.hk/pre-commit"} {
			if fi, err := os.Stat(b.path(f)); err == nil && fi.Mode().Perm() != 0o644 {
				t.Errorf("%s changed mode through a descriptor opened at another name: %v", f, fi.Mode())
			}
		}
		if strings.Contains(r.stdout, "LATE-"+b.canary) {
			t.Errorf("a denyRead file the host made during the run was read through an overlay: %+v", r)
		}
		if b.read("cr/kept") != "EVIL" {
			t.Errorf("a process chrooted into a directory of its own could not write there: %+v", r)
		}
		if !strings.Contains(r.stdout, "CHROOTED") {
			t.Errorf("the chroot was not tried: %+v", r)
		}
		for _, f := range []string{deep + "/.vscode/tasks.json", deep + "/.vscode/launch.json", deep + "/r/.git/hooks/post-checkout", deep + "/r2/.hk/post-commit"} {
			if _, err := os.Lstat(b.path(f)); err == nil {
				t.Errorf("%s was made through a bind at another name", f)
			}
		}
	})
}

// raceC binds its first argument onto its second and unbinds it, on one
// thread, over and over, in a user and mount namespace of its own, while
// two threads open the second for appending (writing when they reached
// the first), chmod it and read it (saying so when they read a secret),
// for its third argument's seconds.
const raceC = `#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
static const char *target, *decoy;
static struct stat tst;
static volatile int stop;
static void *binder(void *a) {
	while (!stop) {
		mount(target, decoy, NULL, MS_BIND, NULL);
		umount2(decoy, MNT_DETACH);
	}
	return NULL;
}
static void *user(void *a) {
	while (!stop) {
		struct stat st;
		int fd = open(decoy, O_WRONLY | O_APPEND);
		if (fd >= 0) {
			if (fstat(fd, &st) == 0 && st.st_ino == tst.st_ino && st.st_dev == tst.st_dev && write(fd, "RACED\n", 6) == 6)
				printf("HIT write\n");
			close(fd);
		}
		chmod(decoy, 0755);
		fd = open(decoy, O_RDONLY);
		if (fd >= 0) {
			char buf[64] = {0};
			if (read(fd, buf, sizeof buf - 1) > 0 && strstr(buf, "SECRET"))
				printf("HIT read\n");
			close(fd);
		}
		fflush(stdout);
	}
	return NULL;
}
int main(int argc, char **argv) {
	target = argv[1]; decoy = argv[2];
	if (stat(target, &tst) != 0 || unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) { printf("NO-NESTED\n"); return 0; }
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	pthread_t t[3];
	pthread_create(&t[0], NULL, binder, NULL);
	pthread_create(&t[1], NULL, user, NULL);
	pthread_create(&t[2], NULL, user, NULL);
	sleep(atoi(argv[3]));
	stop = 1;
	for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
	printf("RACE-DONE\n");
	return 0;
}
`

// Under allowNestedUserNamespaces, a thread that binds a protected file
// (deeper than the launch's walk) onto an ordinary name and unbinds it,
// over and over, while others open that name for writing, chmod it and
// read it, never gets the guard to reach the protected file, nor a
// denyRead file the host made during the run: what the guard opens or
// changes there must lie on the mount it judged. Judged from outside
// (content and mode) and by the secret not read; both users.
func TestGuardNestedMountRace(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		gcc, err := exec.LookPath("gcc")
		if err != nil {
			t.Skip("requires gcc to build the racing program")
		}
		b := newBox(t)
		const target = "a/b/c/d/e/.vscode/settings.json"
		b.write(target, b.canary)
		b.write("decoy", "")
		b.write("race.c", raceC)
		if out, err := exec.Command(gcc, "-O2", "-pthread", "-o", b.path("race"), b.path("race.c")).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		settings := map[string]any{
			"allowNestedUserNamespaces": true,
			"network":                   map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}},
			"filesystem":                fsMap{"allowWrite": []string{"."}, "denyRead": []string{"**/secret.txt"}, "denyWrite": []string{}},
		}
		b.whenReady("ready", "go", 10*time.Second, func() { b.write("late/secret.txt", "SECRET-"+b.canary) })
		b.write("late/", "")
		r := b.runSettings(settings, nil, `touch ready; for i in $(seq 200); do [ -e go ] && break; sleep 0.05; done
./race `+target+` decoy 2; ./race late/secret.txt decoy 2`)
		if strings.Contains(r.stdout, "NO-NESTED") {
			t.Skipf("the command could not make a namespace of its own here: %+v", r)
		}
		if !strings.Contains(r.stdout, "RACE-DONE") {
			t.Fatalf("the race did not run: %+v", r)
		}
		if got := b.read(target); got != b.canary {
			t.Errorf("the protected file was written through a racing bind: %q", got)
		}
		if fi, err := os.Stat(b.path(target)); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("the protected file changed mode through a racing bind: %v %v", fi, err)
		}
		if strings.Contains(r.stdout, "HIT") || strings.Contains(r.stdout, b.canary) {
			t.Errorf("the guard opened a protected or hidden file for the command through a racing bind: %d hits", strings.Count(r.stdout, "HIT"))
		}
	})
}

// The guard holds a caller on the serving thread's CPU while it hands
// over a descriptor (cpuPin): the command must never see that. A child
// forked right after each guarded open, and the caller itself, keep the
// command's mask; a mask the command chose stays chosen. It fails on a
// guard that lets the caller run, or fork, before the mask is back.
// Run as both users.
func TestGuardKeepsCPUMask(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("needs python3")
		}
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() < 2 {
			t.Skipf("needs two CPUs to run on (%d): one CPU holds nothing to keep", set.Count())
		}
		b := newBox(t)
		b.write("mask.py", `import os
cpus = os.sched_getaffinity(0)
bad = []
for i in range(400):
    fd = os.open("f%d" % i, os.O_WRONLY | os.O_CREAT, 0o644)
    pid = os.fork()
    if pid == 0:
        os._exit(0 if os.sched_getaffinity(0) == cpus else 1)
    if os.sched_getaffinity(0) != cpus:
        bad.append("caller %d: %s" % (i, sorted(os.sched_getaffinity(0))))
    os.close(fd)
    if os.waitpid(pid, 0)[1] != 0:
        bad.append("child %d" % i)
last = {max(cpus)}
os.sched_setaffinity(0, last)
for i in range(400):
    os.close(os.open("g%d" % i, os.O_WRONLY | os.O_CREAT, 0o644))
    if os.sched_getaffinity(0) != last:
        bad.append("chosen %d: %s" % (i, sorted(os.sched_getaffinity(0))))
print("BAD %d %s" % (len(bad), bad[:5]) if bad else "KEPT")
`)
		r := b.run(fsMap{"allowWrite": []string{"."}}, "python3 mask.py")
		if !strings.Contains(r.stdout, "KEPT") {
			t.Errorf("the command's CPU mask changed under it: %+v", r)
		}
		if _, err := os.Stat(b.path("g399")); err != nil {
			t.Errorf("the files were not made: %v", err)
		}
	})
}

// A push to a repository on this machine runs that repository's hooks,
// and a commit can hold any tree, a bare repository with a pre-receive
// hook included, which the host's git writes out when it checks the
// commit out (a pull, a push with receive.denyCurrentBranch=updateInstead).
// So a config's new URL, pushurl or branch remote may lead to this
// machine only to a repository the command cannot have shaped, and a
// push may not check files out. Each way the command tries to aim the
// host's next push at a repository its commit will write, after which
// the host pushes and pulls (judged from outside by a canary the hook
// would write); a local clone still works. Run as both users.
func TestGuardLocalRemotes(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		canary := filepath.Join(filepath.Dir(b.W), "PWNED")
		// A repository of the host's, outside the tree the command may
		// write: a URL may name it, though not through a symlink the
		// command made (it could re-aim it at one of its own).
		outside := filepath.Join(filepath.Dir(b.W), "host-repo")
		hostGit(t, filepath.Dir(b.W), "init", "-q", "host-repo")
		b.write("attack.sh", `D=$(pwd)
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a
git init -q -b master t && git -C t commit -q --allow-empty -m base
git -C t config receive.denyCurrentBranch updateInstead && echo TAKEN updateInstead
git clone -q t w && echo CLONED
cd w
H=$(printf '#!/bin/sh\necho "$0" > `+canary+`\n' | git hash-object -w --stdin)
R=$(echo 'ref: refs/heads/master' | git hash-object -w --stdin)
E=$(git hash-object -w --stdin </dev/null)
git update-index --add --cacheinfo 100755,$H,evil/hooks/pre-receive --cacheinfo 100755,$H,evil/hooks/update \
  --cacheinfo 100644,$R,evil/HEAD --cacheinfo 100644,$E,evil/objects/.keep --cacheinfo 100644,$E,evil/refs/.keep
git update-ref refs/heads/master $(git commit-tree $(git write-tree) -p HEAD -m update)
git push -q origin master:side
try() { git config "$@" 2>/dev/null && echo TAKEN "$@"; }
try --add remote.origin.pushurl ../t/evil
try --add remote.origin.pushurl "$D/t/evil"
try --add remote.origin.pushurl "file://$D/w/evil"
try --add remote.origin.pushurl "localhost:$D/w/evil"
try remote.evil.url "$D/w/evil"
try branch.master.pushRemote "$D/w/evil"
try branch.master.pushRemote evil/x
try remote.origin.url "ext::sh -c touch% `+canary+`"
ln -s "`+outside+`" "$D/lnk" && try remote.viaLink.url "$D/lnk"
try remote.up.url "$D/lnk/../w/evil"
try remote.host.url "`+outside+`"
echo END
`)
		r := b.run(fsMap{"allowWrite": []string{"."}}, "sh attack.sh")
		if !strings.Contains(r.stdout, "END") || !strings.Contains(r.stdout, "CLONED") {
			t.Fatalf("the script did not run, or a local clone failed: %+v", r)
		}
		if strings.Contains(strings.ReplaceAll(r.stdout, "TAKEN remote.host.url", ""), "TAKEN") {
			t.Errorf("a config took a value that aims the host's git at this machine: %s", r.stdout)
		}
		if !strings.Contains(r.stdout, "TAKEN remote.host.url") {
			t.Errorf("a URL naming the host's repository outside the writable tree was refused: %+v", r)
		}
		// The host goes on: checks the command's commit out where the
		// pushes would land, then pushes and pulls as usual.
		hostGit(t, b.path("w"), "reset", "-q", "--hard")
		hostGit(t, b.path("t"), "merge", "-q", "--ff-only", "side")
		for _, args := range [][]string{{"push", "-q", "origin", "master:other"}, {"pull", "-q", "--no-rebase"}, {"push", "-q"}} {
			hostGitMay(b.path("w"), args...) // a refused push is fine; a hook run is not
		}
		noHookRan(t, canary, r)
	})
}

// A .git file, a .git symlink or a commondir may not lead into a work
// tree: git never checks a path in a .git out, but anywhere else the
// host's checkout of a commit of the command's writes what it holds — a
// git directory's config with core.fsmonitor, which the host's git
// status then runs in the repository the .git names. Nor may a .git be
// made above where one leads once it is taken. Each way is tried, then
// the host checks the commit out and runs git status in every
// repository the command left (judged by a canary). Run as both users.
func TestGuardGitFileIntoWorkTree(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		canary := filepath.Join(filepath.Dir(b.W), "PWNED")
		hostGit(t, b.W, "init", "-q", "-b", "master", "w")
		hostGit(t, b.path("w"), "commit", "-q", "--allow-empty", "-m", "base")
		b.write("attack.sh", `D=$(pwd)
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a
mkdir -p w/C w/S w/M
mkdir t1 t2 t3 t4 n
printf 'gitdir: %s/w/C\n' "$D" > t1/.git
ln -s "$D/w/S" t2/.git
mkdir -p x/.git/worktrees/a && echo "$D/w/M" > x/.git/worktrees/a/commondir
mkdir -p n/C && printf 'gitdir: %s/n/C\n' "$D" > t4/.git && git init -q n
cd w
R=$(echo 'ref: refs/heads/master' | git hash-object -w --stdin)
E=$(git hash-object -w --stdin </dev/null)
CFG=$(printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "echo $0 > `+canary+`; false"\n' | git hash-object -w --stdin)
for d in C S M; do
  git update-index --add --cacheinfo 100644,$R,$d/HEAD --cacheinfo 100644,$E,$d/objects/.keep --cacheinfo 100644,$E,$d/refs/.keep --cacheinfo 100644,$CFG,$d/config
done
git update-ref refs/heads/master $(git commit-tree $(git write-tree) -p HEAD -m update)
echo END
`)
		r := b.run(fsMap{"allowWrite": []string{"."}}, "sh attack.sh")
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		hostGit(t, b.path("w"), "reset", "-q", "--hard")
		for _, d := range []string{"t1", "t2", "t4", "x", "n"} {
			hostGitMay(b.path(d), "status") // a broken repository is fine; a program run is not
		}
		noHookRan(t, canary, r)
	})
}

// A remote git knows no URL of is a path to git, its own name: a remote
// of the host's that loses its URL (git config --unset, git remote
// remove) would send the host's next push to ./origin, where the
// command's commit puts a bare repository with a pre-receive hook. And
// a repository inside another's work tree is no URL's target, even one
// the launch found (a checkout before the run may have written it from
// the command's commit). The host merges and pushes after the run;
// judged by a canary. Run as both users.
func TestGuardRemoteLosesURL(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		b := newBox(t)
		canary := filepath.Join(filepath.Dir(b.W), "PWNED")
		hostGit(t, b.W, "init", "-q", "--bare", "up.git")
		hostGit(t, b.W, "clone", "-q", "up.git", "r")
		hostGit(t, b.path("r"), "commit", "-q", "--allow-empty", "-m", "base")
		hostGit(t, b.path("r"), "push", "-q", "-u", "origin", "HEAD:master")
		hostGit(t, b.path("r"), "remote", "set-url", "origin", "https://example.invalid/up.git")
		// A bare repository inside the work tree at launch, as a checkout
		// of an earlier run's commit would have left it.
		for _, d := range []string{"r/emb/objects/", "r/emb/refs/", "r/emb/hooks/"} {
			b.write(d, "")
		}
		b.write("r/emb/HEAD", "ref: refs/heads/master\n")
		b.write("r/emb/hooks/pre-receive", "#!/bin/sh\necho emb > "+canary+"\n")
		if err := os.Chmod(b.path("r/emb/hooks/pre-receive"), 0o755); err != nil {
			t.Fatal(err)
		}
		b.write("attack.sh", `export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
D=$(pwd); cd r
H=$(printf '#!/bin/sh\necho origin > `+canary+`\n' | git hash-object -w --stdin)
R=$(printf 'ref: refs/heads/master\n' | git hash-object -w --stdin)
E=$(git hash-object -w --stdin </dev/null)
K=$(printf '100644 blob %s\t.keep\n' $E | git mktree)
HK=$(printf '100755 blob %s\tpre-receive\n' $H | git mktree)
O=$(printf '100644 blob %s\tHEAD\n040000 tree %s\thooks\n040000 tree %s\tobjects\n040000 tree %s\trefs\n' $R $HK $K $K | git mktree)
T=$(printf '040000 tree %s\torigin\n' $O | git mktree)
git branch fixtures $(git commit-tree -p HEAD -m fixtures $T)
try() { "$@" 2>/dev/null && echo TAKEN "$@"; }
try git config --unset remote.origin.url
try git config --remove-section remote.origin
try git remote remove origin
try git config remote.emb.url "$D/r/emb"
try git config remote.emb2.url "file://$D/r/emb"
echo END
`)
		r := b.run(fsMap{"allowWrite": []string{"."}}, "sh attack.sh")
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run: %+v", r)
		}
		if strings.Contains(r.stdout, "TAKEN") {
			t.Errorf("a remote lost its URL, or a URL named a repository in a work tree: %s", r.stdout)
		}
		hostGit(t, b.path("r"), "merge", "-q", "--ff-only", "fixtures")
		// (A push to emb by name would reach ./emb whatever the config
		// says: the URLs are judged by the TAKEN lines above.)
		for _, args := range [][]string{{"push", "-q"}, {"push", "-q", "origin", "HEAD:x"}} {
			hostGitMay(b.path("r"), args...) // refused pushes are fine; a hook run is not
		}
		noHookRan(t, canary, r)
	})
}

// Every change of a file's owner or times goes to the guard, by
// descriptor too: a chown, even to the owner it has, clears a file's
// setuid and setgid bits and its capabilities, and may give it the one
// group the user namespace maps; a futimens sets its times. Through a
// hard link made before the run to a file outside allowWrite, through a
// descriptor the command inherited from the host (on the host's own
// mount, which no read-only mount of the sandbox covers), and on a
// protected name, none may change (an attack round landed all three
// when the namespace sandbox let these calls reach the kernel). Judged
// from outside, as both users.
func TestGuardMetadataHostFiles(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("requires python3")
		}
		b := newBox(t)
		outside := filepath.Join(filepath.Dir(b.W), "outside-meta.txt")
		os.WriteFile(outside, []byte("x"), 0o644)
		t.Cleanup(func() { os.Remove(outside) })
		b.write(".bashrc", "ORIGINAL")
		b.write("attack.py", `import os, sys
for name in sys.argv[1:]:
    fd = 0 if name == "stdin" else os.open(name, os.O_RDONLY)
    for what, f in [("futimens", lambda: os.utime(fd, (1000000, 1000000))),
                    ("fchown-same", lambda: os.chown(fd, -1, -1)),
                    ("fchown-ids", lambda: os.chown(fd, os.getuid(), os.getgid())),
                    ("fchownat-empty", lambda: os.chown(os.open(name if name != "stdin" else "/proc/self/fd/0", os.O_PATH), -1, os.getgid())),
                    ("lchown", lambda: name != "stdin" and os.lchown(name, -1, -1))]:
        try:
            f()
            print(name, what, "ok")
        except OSError as e:
            print(name, what, e.errno)
print("END")
`)
		for _, p := range []string{outside, b.path(".bashrc")} {
			if err := os.Chmod(p, 0o755|os.ModeSetgid); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Link(outside, b.path("hl")); err != nil {
			t.Fatal(err)
		}
		before := map[string]string{outside: fileMeta(t, outside), b.path(".bashrc"): fileMeta(t, b.path(".bashrc"))}
		r := b.run(fsMap{"allowWrite": []string{"."}}, "python3 attack.py hl .bashrc stdin < "+shellQuote([]string{outside}))
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run through: %+v", r)
		}
		for p, was := range before {
			if now := fileMeta(t, p); now != was {
				t.Errorf("%s changed: %s, was %s\n%s", p, now, was, r.stdout)
			}
		}
	})
}

// A directory the command made unreadable (mode 0311), holding a bare
// repository, is not moved whole into a work tree: what it holds cannot
// be looked through, so it may hold a git directory, and the rename gets
// EXDEV (a differential attack on the guard's move to package pathguard
// found it let through). Judged from outside, as both users.
func TestGuardUnreadableMovedIntoWorkTree(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		requireGit(t)
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("requires python3")
		}
		b := newBox(t)
		b.write("x/keep", "x")
		script := `git init -q y && git init -q --bare x/b.git && chmod 0311 x/b.git &&
python3 -c "
import os
try:
    os.rename('x/b.git', 'y/b.git'); print('MOVED')
except OSError as e:
    print('ERRNO', e.errno)
"; chmod 0755 x/b.git 2>/dev/null; echo END`
		r := b.run(fsMap{"allowWrite": []string{"."}}, script)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("the script did not run through: %+v", r)
		}
		if _, err := os.Stat(b.path("y/b.git")); err == nil || strings.Contains(r.stdout, "MOVED") {
			t.Errorf("an unreadable directory holding a repository was moved into a work tree: %+v", r)
		}
		if !strings.Contains(r.stdout, "ERRNO 18") {
			t.Errorf("the rename did not get EXDEV: %+v", r)
		}
		os.Chmod(b.path("x/b.git"), 0o755)
	})
}
