package policy

import (
	"os"
	"os/exec"
	"path/filepath"
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
		n, rule := Guard{}.Judge(p)
		parts := strings.Split(strings.ToLower(strings.Trim(p, "/")), "/")
		last := parts[len(parts)-1]
		protected := contains(protectedFiles, last)
		for i, c := range parts {
			if c == ".vscode" || c == ".idea" || c == ".claude" && i+1 < len(parts) && (parts[i+1] == "commands" || parts[i+1] == "agents") {
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
