package pathguard

import (
	"crypto/sha1"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzGitConfigSafe: a config the guard accepts holds, as git itself
// reads it, only keys on the list — so no spelling git accepts and the
// guard's parser misreads (a continuation, a quote, a section header
// with a key after it) can slip a key past it. Without git the property
// is only that the parser never panics.
func FuzzGitConfigSafe(f *testing.F) {
	for _, s := range []string{
		"[core]\n\tbare = false\n",
		"[user] name = x\n",
		"[remote \"o\"]\n\turl = https://x\n",
		"[user]\n\tname = a \\\n[core]\n\tfsmonitor = x\n",
		"[user]\n\tname = \"a ; b\" # c\n",
		"[remote.o]\n\turl = x\n",
		"[core]\n\tfsmonitor = x\n",
		"[user]\n\tname = \"a\\\n\"#\\\n[core] fsmonitor = \"x\"\n",
		"[user]\n\tname = \"a\\\n # still quoted\"\n",
	} {
		f.Add([]byte(s))
	}
	git, _ := exec.LookPath("git")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if GitConfigSafe(data) != nil || git == "" {
			return
		}
		file := filepath.Join(dir, "config")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(git, "config", "--file", file, "--list", "--name-only")
		cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin"}
		out, err := cmd.Output()
		if err != nil {
			return // git refuses the file: it sets nothing
		}
		for _, name := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if name == "" {
				continue
			}
			if !safeGitName(name) {
				t.Fatalf("accepted %q, where git reads the key %q", data, name)
			}
		}
	})
}

// safeGitName says whether a key as git lists it (section[.subsection].key)
// is on the list.
func safeGitName(name string) bool {
	first, last := strings.IndexByte(name, '.'), strings.LastIndexByte(name, '.')
	if first < 0 {
		return false
	}
	section, key := strings.ToLower(name[:first]), strings.ToLower(name[last+1:])
	if first == last {
		return safeGitKeys[section+"."+key]
	}
	return safeGitKeys[section+".*."+key]
}

// FuzzGuardJudge: Judge never panics, and every protected name of spec
// c.5 is protected wherever it is and however it is spelled in case.
func FuzzGuardJudge(f *testing.F) {
	for _, s := range []string{"/w/.bashrc", "/w/a/.VSCODE/x", "/w/.git/hooks/pre-commit.sample", "/w/.git/modules/a/b/hooks/x",
		"/w/.claude/commands", "", "/", "//", "a/../.git/config", "/w/.git/worktrees/x/config.worktree"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		n, rule := Rules{}.Judge(p)
		parts := strings.Split(strings.ToLower(strings.Trim(p, "/")), "/")
		last := parts[len(parts)-1]
		protected := slices.Contains(protectedFiles, last)
		for i, c := range parts {
			if c == ".vscode" || c == ".idea" || c == ".claude" && i+1 < len(parts) && (parts[i+1] == "commands" || parts[i+1] == "agents" || parts[i+1] == "settings.json" || parts[i+1] == "settings.local.json" || parts[i+1] == "hooks") {
				protected = true
			}
		}
		if protected && n != Protected {
			t.Fatalf("Judge(%q) = %v, want protected", p, n)
		}
		if n != Free && n != Context && rule == "" {
			t.Fatalf("Judge(%q) = %v with no rule", p, n)
		}
	})
}

// FuzzGitIndexSafe: an index the guard accepts holds, as git itself
// lists it, only paths git would check out inside the work tree (the
// trailing SHA-1 is made right first, so git reads what it is given).
// Without git the property is only that the reader never panics.
func FuzzGitIndexSafe(f *testing.F) {
	git, _ := exec.LookPath("git")
	dir := f.TempDir()
	repo := filepath.Join(dir, "r")
	if git != "" {
		if out, err := gitCmd(dir, "init", "-q", "r"); err != nil {
			f.Fatalf("git init: %v %s", err, out)
		}
		for _, p := range []string{"a", "d/b", "xgit/hooks/x"} {
			os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755)
			os.WriteFile(filepath.Join(repo, p), []byte(p), 0o644)
		}
		for _, v := range []string{"2", "4"} {
			gitCmd(repo, "add", ".")
			gitCmd(repo, "-c", "index.threads=2", "-c", "index.recordOffsetTable=true", "-c", "index.recordEndOfIndexEntries=true",
				"update-index", "--index-version", v, "--force-write-index")
			if b, err := os.ReadFile(filepath.Join(repo, ".git/index")); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00" + strings.Repeat("\x00", 20)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) >= 32 {
			sum := sha1.Sum(data[:len(data)-20])
			data = append(data[:len(data)-20:len(data)-20], sum[:]...)
		}
		if GitIndexSafe(data, 20) != nil || git == "" {
			return
		}
		if err := os.WriteFile(filepath.Join(repo, ".git/index"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		// In order, and with threads (git then reads the blocks of an
		// offset table).
		for _, threads := range []string{"index.threads=1", "index.threads=4"} {
			cmd := exec.Command(git, "-c", threads, "ls-files", "-s", "-z", "--sparse")
			cmd.Dir = repo
			cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin"}
			out, err := cmd.Output()
			if err != nil {
				continue // git refuses the index: it checks nothing out
			}
			for _, line := range strings.Split(string(out), "\x00") {
				// "mode object stage\tpath"
				meta, path, ok := strings.Cut(line, "\t")
				if !ok {
					continue
				}
				mode, _ := strconv.ParseUint(strings.Fields(meta)[0], 8, 32)
				if err := checkoutPath(path, uint32(mode)); err != nil {
					t.Fatalf("accepted an index where git (%s) lists %q (mode %o): %v", threads, path, mode, err)
				}
			}
		}
	})
}

// FuzzGitConfigSafeBeside: beside a config that holds no key off the
// list (nor a remote's URL), a config is taken exactly when
// GitConfigSafe takes it; beside one that does, every config
// GitConfigSafe takes is taken too.
func FuzzGitConfigSafeBeside(f *testing.F) {
	f.Add([]byte("[core]\n\thooksPath = .husky/_\n"), []byte("[core]\n\thooksPath = .husky/_\n[user]\n\tname = x\n"))
	f.Add([]byte("[core]\n\tbare = false\n"), []byte("[core]\n\tfsmonitor = x\n"))
	f.Fuzz(func(t *testing.T, old, content []byte) {
		safe := GitConfigSafe(content) == nil
		beside := GitConfigSafeBeside(content, old, nil) == nil
		rec := &valuesSafe{recordOnly: true}
		if gitConfigFrozen(old, func(string) bool { return true }, meaningKeys, rec) == nil && len(rec.urls) > 0 {
			// Beside one whose remotes have URLs, a config that drops
			// one is refused though it is safe alone.
			return
		}
		if safe && !beside {
			t.Fatalf("taken alone, refused beside %q: %q", old, content)
		}
		if GitConfigSafe(old) == nil && beside != safe {
			t.Fatalf("beside a safe %q, taken %v, alone %v: %q", old, beside, safe, content)
		}
	})
}

// FuzzRemoteSafe: a URL taken with no repository judge asks none with
// one; the judge is asked only about absolute paths.
func FuzzRemoteSafe(f *testing.F) {
	for _, u := range []string{"https://example.com/x.git", "git@github.com:x/y", "/abs/repo", "file:///abs/r", "ssh://localhost/abs/r",
		"localhost:/abs", "ext::sh -c x", "../rel", "[::1]:/abs", "ssh://[::1]:22/abs/../r", "https::example.com/x"} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) {
		var asked []string
		judge := func(p string) error {
			asked = append(asked, p)
			return nil
		}
		alone := remoteSafe(u, nil)
		judged := remoteSafe(u, judge)
		if alone == nil && (judged != nil || len(asked) > 0) {
			t.Fatalf("%q: taken alone, but judged (%v, asked %q)", u, judged, asked)
		}
		for _, p := range asked {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("%q: the judge was asked %q", u, p)
			}
		}
	})
}
