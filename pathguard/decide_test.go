package pathguard

import (
	"strings"
	"testing"
)

// Removal, one case per rule, on a fake tree: a project's names and a
// shell's startup files may go; a repository's may not, nor a deny
// entry's, nor what lies outside the writable trees, nor a bare
// repository's last mark while its hooks are kept.
func TestDecideRemove(t *testing.T) {
	ft := newFakeTree("w/.bashrc=x", "w/.vscode/settings.json={}", "w/src/a.go=x",
		"w/r/.git/HEAD=x", "w/r/.git/hooks/pre-commit=#", "w/r/.git/config=[core]",
		"w/bare/HEAD=x", "w/bare/hooks/post-update=#", "w/plain/HEAD=x",
		"w/secret.pem=x", "out/x=1")
	d := Decider{Repos: Repos{Tree: ft},
		Later: func(full string) (string, bool) {
			return `filesystem.denyWrite.0 "*.pem"`, strings.HasSuffix(full, ".pem")
		},
		Writable: func(full string) bool { return Under(full, "/w") },
	}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	for _, c := range []struct {
		at     At
		reason string // "" allowed
		first  bool   // the kernel's EROFS first on a read-only mount
	}{
		{at("/w", ".bashrc"), "", false},
		{at("/w/.vscode", "settings.json"), "", false},
		{at("/w/src", "a.go"), "", false},
		{at("/w/r/.git/hooks", "pre-commit"), "protected name /w/r/.git/hooks;", true},
		{at("/w/r/.git", "config"), "", false}, // git config: judged by content when made, not refused removed
		{at("/w/bare/hooks", "post-update"), "protected name /w/bare/hooks", true},
		{at("/w/bare", "HEAD"), "the last mark of a git directory", false},
		{at("/w/plain", "HEAD"), "", false},
		{at("/w", "secret.pem"), `filesystem.denyWrite.0 "*.pem"`, true},
		{at("/out", "x"), "not writable here (allowWrite)", true},
	} {
		v := d.Remove(c.at)
		switch {
		case c.reason == "" && v.Refused():
			t.Errorf("remove %s/%s refused: %+v", c.at.Path, c.at.Name, v)
		case c.reason != "" && (!v.Refused() || !strings.HasPrefix(v.Reason, c.reason) || v.KernelFirst != c.first || v.Errno != EACCES):
			t.Errorf("remove %s/%s: %+v, want %q (kernel first %v)", c.at.Path, c.at.Name, v, c.reason, c.first)
		}
	}
	// With no later entries and no bound on writes (the namespace
	// sandbox's mounts decide), only the names decide.
	if v := (Decider{Repos: Repos{Tree: ft}}).Remove(at("/w", "secret.pem")); v.Refused() {
		t.Errorf("refused with no deny entry: %+v", v)
	}
}
