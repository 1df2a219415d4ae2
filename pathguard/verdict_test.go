package pathguard

import (
	"strings"
	"testing"
)

// Every refusal names the rule and says how to allow it where the user
// may: a repository's file by allowGitConfig, a project's name in a tree
// the command makes, and nothing for what the host's git would run.
func TestReasons(t *testing.T) {
	g := Rules{}
	for _, c := range []struct {
		rule string
		n    Name
		want []string
	}{
		{"/p/.git/config", GitConfig, []string{"a repository's config", "allowGitConfig"}},
		{"/p/.git/index", GitConfig, []string{"a repository's index", "allowGitConfig"}},
		{"/p/.git/rebase-merge/git-rebase-todo", GitConfig, []string{"a rebase's todo list"}},
		{"/p/.git/hooks", HooksDir, []string{"hooks directory", "the host's git would run what it holds"}},
		{"/p/.git/hooks/pre-commit", Protected, []string{"protected name /p/.git/hooks/pre-commit", "not allowed: the host's git would run it"}},
		{"/p/.vscode", Protected, []string{"the host runs it from /p", "a tree the command makes may hold it"}},
		{"/p/sub/.bashrc", Protected, []string{"from /p/sub, which existed when the command started"}},
	} {
		got := g.Reason(c.rule, c.n)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("Reason(%s, %v) = %q, lacks %q", c.rule, c.n, got, w)
			}
		}
	}
	for name, want := range map[string]string{RebaseStrategy: "merge strategy", ApplyOpts: "am's options", MergeRR: "rerere", WorktreeGitdir: "link back",
		".git": "a .git file", "commondir": "common directory", "sharedindex.x": "index"} {
		if !strings.Contains(FileIs(name), want) {
			t.Errorf("FileIs(%s) = %q", name, FileIs(name))
		}
	}
	for n, want := range map[Name]bool{Free: false, Protected: true, HooksDir: true, HookSample: false, GitConfig: true, Context: false} {
		if Blocked(n) != want {
			t.Errorf("Blocked(%v) = %v", n, !want)
		}
	}
}

// A project's name is free in a tree the command made, and only there;
// a repository's names, which have no anchor, never are.
func TestJudgeMade(t *testing.T) {
	g := Rules{}
	var asked []string
	made := func(anchor string) bool { asked = append(asked, anchor); return anchor == "/w/clone" }
	if n, _ := g.JudgeMade("/w/clone/.vscode/settings.json", made); n != Free {
		t.Errorf("a project's name in a made tree: %v", n)
	}
	if n, _ := g.JudgeMade("/w/.vscode/settings.json", made); n != Protected {
		t.Errorf("a project's name where the launch's tree is: %v", n)
	}
	if n, _ := g.JudgeMade("/w/clone/.git/hooks/pre-commit", made); n != Protected {
		t.Errorf("a hook in a made tree: %v", n)
	}
	if n, _ := g.JudgeMade("/w/clone/src/main.go", made); n != Free || len(asked) != 2 {
		t.Errorf("a free name: %v (made asked %v)", n, asked)
	}
	if Free.String() != "free" || GitConfig.String() != "git config" {
		t.Error("Name.String")
	}
}
