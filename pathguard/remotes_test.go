package pathguard

import (
	"strings"
	"testing"
)

// Where a repository of the launch goes stays where it went: each way
// of sending it elsewhere is refused, and everyday changes go through.
func TestRemotesKept(t *testing.T) {
	launch := `[core]
	bare = false
[remote "origin"]
	url = https://github.com/me/r.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[remote "up"]
	url = https://github.com/them/r.git
	pushurl = https://github.com/me/r.git
[branch "main"]
	remote = origin
	merge = refs/heads/main
`
	r, err := ReadRemotes([]byte(launch))
	if err != nil {
		t.Fatal(err)
	}
	r.Branches = map[string]bool{"main": true, "dev": true}
	add := func(s string) string { return launch + s }
	for _, c := range []struct {
		what, content, refused string
	}{
		{"unchanged", launch, ""},
		{"a remote added", add("[remote \"fork\"]\n\turl = https://github.com/me/fork.git\n"), ""},
		{"a new branch tracking a new remote", add("[remote \"fork\"]\n\turl = https://x.example/f.git\n[branch \"feat\"]\n\tremote = fork\n\tpushRemote = fork\n"), ""},
		{"an existing branch tracking another remote of the launch", strings.Replace(launch, "remote = origin", "remote = up", 1), ""},
		{"a branch of the launch given an upstream of the launch", add("[branch \"dev\"]\n\tremote = origin\n"), ""},
		{"a branch's pushRemote a remote of the launch", add("[branch \"dev\"]\n\tpushRemote = up\n"), ""},
		{"a pushurl removed", strings.Replace(launch, "\tpushurl = https://github.com/me/r.git\n", "", 1), ""},
		{"user settings", add("[user]\n\tname = x\n"), ""},
		{"origin's url changed", strings.Replace(launch, "me/r.git\n\tfetch", "evil/r.git\n\tfetch", 1), "remote.origin.url"},
		{"a second url for origin", strings.Replace(launch, "\tfetch =", "\turl = https://evil.example/x\n\tfetch =", 1), "remote.origin.url"},
		{"a pushurl added", strings.Replace(launch, "\tfetch =", "\tpushurl = https://evil.example/x\n\tfetch =", 1), "remote.origin.pushurl"},
		{"a pushurl changed", strings.Replace(launch, "pushurl = https://github.com/me/r.git", "pushurl = https://evil.example/x", 1), "remote.up.pushurl"},
		{"origin removed", strings.Replace(launch, "[remote \"origin\"]\n\turl = https://github.com/me/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n", "", 1), "remote.origin.url"},
		{"origin renamed and a new origin", strings.Replace(strings.Replace(launch, "[remote \"origin\"]\n\turl = https://github.com/me/r.git", "[remote \"old\"]\n\turl = https://github.com/me/r.git", 1), "[branch", "[remote \"origin\"]\n\turl = https://evil.example/x\n[branch", 1), "remote.origin.url"},
		{"main pushes to a new remote", add("[remote \"evil\"]\n\turl = https://evil.example/x\n[branch \"main\"]\n\tpushRemote = evil\n"), "branch.main.pushRemote"},
		{"main tracks a new remote", strings.Replace(launch, "remote = origin", "remote = evil", 1) + "[remote \"evil\"]\n\turl = https://evil.example/x\n", "branch.main.remote"},
		{"main loses its remote", strings.Replace(launch, "\tremote = origin\n", "", 1), "branch.main.remote unset"},
		{"dev (a ref of the launch) pushes to a new remote", add("[remote \"evil\"]\n\turl = https://evil.example/x\n[branch \"dev\"]\n\tpushRemote = evil\n"), "branch.dev.pushRemote"},
		{"pushDefault a new remote", add("[remote \"evil\"]\n\turl = https://evil.example/x\n[remote]\n\tpushDefault = evil\n"), "remote.pushDefault"},
		{"a config git cannot read", "[", ""}, // refused as written, not here
	} {
		err := r.Kept([]byte(c.content))
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", c.what, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s: %v, want a refusal naming %s", c.what, err, c.refused)
		}
	}
	if _, err := ReadRemotes([]byte("[")); err == nil {
		t.Error("an unreadable config read")
	}
}
