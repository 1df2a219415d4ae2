package pathguard

import (
	"io/fs"
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

// Making a name, one case per rule, on a fake tree.
func TestDecideMake(t *testing.T) {
	ft := newFakeTree("w/src/", "w/r/.git/HEAD=x", "w/r/.git/hooks/", "w/bare/HEAD=x", "w/bare/objects/", "w/bare/refs/",
		"w/clone/", "w/wt/x=1", "w/alone/", "w/target/")
	d := Decider{Repos: Repos{Tree: ft},
		Later:          func(full string) (string, bool) { return "denyWrite", strings.HasSuffix(full, ".pem") },
		Writable:       func(full string) bool { return Under(full, "/w") },
		Made:           func(a At, anchor string) bool { return anchor == "/w/clone" },
		TargetsBeneath: func(dir string) bool { return dir == "/w/target" },
	}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	for _, c := range []struct {
		at           At
		dir          bool
		reason       string
		first, exist bool
	}{
		{at("/w/src", "main.go"), false, "", false, false},
		{at("/w", ".bashrc"), false, "protected name /w/.bashrc: the host runs it from /w", true, true},
		{at("/w/clone", ".bashrc"), false, "", false, false},
		{at("/w/clone", ".vscode"), true, "", false, false},
		{at("/w/r/.git", "hooks"), true, "", false, false},
		{at("/w/r/.git", "hooks"), false, "a repository's hooks directory", true, true},
		{at("/w/r/.git/hooks", "pre-commit"), false, "protected name /w/r/.git/hooks", true, true},
		{at("/w/bare", "config"), false, "a repository's config", true, true},
		{at("/w", "k.pem"), false, "denyWrite", true, true},
		{at("/", "elsewhere"), false, "not writable here", false, false},
		{at("/w/target", ".git"), true, "a .git file or a commondir leads beneath", false, false},
		{at("/w/wt", ".git"), false, "a .git file is made or written only in a directory that holds nothing else", false, false},
		{at("/w/alone", ".git"), false, "", false, false},
		{at("/w/wt", ".git"), true, "", false, false},
	} {
		_, v := d.Make(c.at, c.dir)
		switch {
		case c.reason == "" && v.Refused():
			t.Errorf("make %s/%s (dir %v) refused: %+v", c.at.Path, c.at.Name, c.dir, v)
		case c.reason != "" && (!v.Refused() || !strings.HasPrefix(v.Reason, c.reason) || v.KernelFirst != c.first || v.ExistsFirst != c.exist):
			t.Errorf("make %s/%s (dir %v): %+v, want %q (kernel first %v, exists first %v)", c.at.Path, c.at.Name, c.dir, v, c.reason, c.first, c.exist)
		}
	}
}

// A symlink, one case per rule; its second name (link) and one moved
// there (rename) by the same rules, but git's probe.
func TestDecideSymlink(t *testing.T) {
	ft := newFakeTree("w/src/", "w/r/.git/HEAD=x", "w/bare/HEAD=x", "w/bare/objects/", "w/bare/refs/",
		"w/half/HEAD=x", "w/half/objects=file", "w/half/refs/", "w/secret/")
	d := Decider{Repos: Repos{Tree: ft},
		LeadsAway: func(full, target string) (string, bool) {
			return "filesystem.denyRead.0 lies beneath", full == "/w/secret"
		},
	}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	for _, c := range []struct {
		at     At
		target string
		reason string
	}{
		{at("/w/src", "link"), "../x", ""},
		{at("/w/r/.git", "HEAD2"), "x", reasonSymlinkInGitDir},
		{at("/w/r/.git", "tAb12Cd"), "testing", ""},
		{at("/w/r/.git", "tAb12Cd"), "elsewhere", reasonSymlinkInGitDir},
		{at("/w/bare", "tAb12Cd"), "testing", ""},
		{at("/w/half", "tAb12Cd"), "testing", reasonSymlinkInGitDir},
		{at("/w/bare/refs", "x"), "/etc", reasonSymlinkInGitDir},
		{at("/w/src", "git-merge-x"), "/bin", reasonMergeProgramDir},
		{at("/w/src", ".CLAUDE"), "/elsewhere", claudeLink},
		{at("/w", "secret"), "/tmp", "filesystem.denyRead.0 lies beneath"},
		{at("/w", ".bashrc"), "/tmp/x", "protected name /w/.bashrc"},
	} {
		v := d.Symlink(c.at, c.target)
		switch {
		case c.reason == "" && v.Refused():
			t.Errorf("symlink %s/%s -> %s refused: %+v", c.at.Path, c.at.Name, c.target, v)
		case c.reason != "" && (!v.Refused() || !strings.HasPrefix(v.Reason, c.reason)):
			t.Errorf("symlink %s/%s -> %s: %+v, want %q", c.at.Path, c.at.Name, c.target, v, c.reason)
		}
	}
	// By link, git's probe is no probe; moved there, only what a link
	// leads away counts (a rename judges the rest itself).
	if v := d.SymlinkName(at("/w/r/.git", "tAb12Cd"), "testing"); v.Reason != reasonSymlinkInGitDir {
		t.Errorf("a probe's name by link: %+v", v)
	}
	if v := d.SymlinkName(at("/w/src", "ok"), "x"); v.Refused() {
		t.Errorf("a plain second name: %+v", v)
	}
	if v := d.Lead(at("/w/r/.git", "x"), "y"); v.Refused() {
		t.Errorf("Lead judges a git directory: %+v", v)
	}
	if v := d.Lead(at("/w", "secret"), "y"); !v.Refused() {
		t.Error("Lead lets a deny entry's path be led away")
	}
}

// What a rename may put where, one case per rule, on a fake tree.
func TestDecideMove(t *testing.T) {
	ft := newFakeTree("w/src/", "w/r/.git/HEAD=x", "w/r/.git/hooks/", "w/bare/HEAD=x", "w/bare/objects/", "w/bare/refs/",
		"w/wt/x=1", "w/alone/", "w/led/", "w/target/")
	d := Decider{Repos: Repos{Tree: ft},
		Writable:       func(full string) bool { return Under(full, "/w") },
		TargetAbove:    func(full string) bool { return full == "/w/led" },
		TargetsBeneath: func(dir string) bool { return dir == "/w/target" },
	}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	const reg, dir, link, fifo = fs.FileMode(0), fs.ModeDir, fs.ModeSymlink, fs.ModeNamedPipe
	for _, c := range []struct {
		at     At
		kind   fs.FileMode
		flags  bool
		also   []string
		want   Errno
		reason string
		name   Name
	}{
		{at("/w/src", "a.go"), reg, false, nil, 0, "", Free},
		{at("/w", ".bashrc"), reg, false, nil, EACCES, "protected name /w/.bashrc", Protected},
		{at("/w", ".claude"), dir, false, nil, EXDEV, "", Context},
		{at("/w/r/.git", "x"), dir, false, nil, EXDEV, "", Context},
		{at("/w/bare", "x"), dir, false, nil, EXDEV, "", Context},
		{at("/w/bare", "x"), link, false, nil, EACCES, reasonSymlinkInGitDir, Free},
		{at("/w/src", "git-merge-y"), dir, false, nil, EACCES, reasonMergeProgramDir, Free},
		{at("/w/src", "git-merge-y"), reg, false, nil, 0, "", Free},
		{at("/w/r/.git", "hooks"), dir, false, nil, EXDEV, "", HooksDir},
		{at("/w/r/.git", "hooks"), reg, false, nil, EACCES, "a repository's hooks directory", HooksDir},
		{at("/w/r/.git", "config"), reg, false, nil, 0, "", GitConfig},
		{at("/w/r/.git", "config"), reg, true, nil, EACCES, "a repository's config", GitConfig},
		{at("/w/r/.git", "config"), fifo, false, nil, EACCES, "a repository's config", GitConfig},
		{at("/w", "led"), reg, false, nil, EACCES, "a .git file or a commondir leads here", Free},
		{at("/w/target", ".git"), dir, false, nil, EXDEV, "", Context},
		{at("/w/target", ".git"), reg, false, nil, EACCES, reasonTargetsBeneath, Context},
		{at("/w/wt", ".git"), reg, false, nil, EACCES, reasonGitFileAlone, Context},
		{at("/w/wt", ".git"), reg, false, []string{"x"}, 0, "", Context},
		{at("/w/alone", ".git"), reg, false, nil, 0, "", Context},
		{at("/", "elsewhere"), reg, false, nil, EACCES, "not writable here", Free},
	} {
		n, v := d.Move(c.at, c.kind, c.flags, c.also...)
		if v.Errno != c.want || !strings.HasPrefix(v.Reason, c.reason) || n != c.name {
			t.Errorf("move %v to %s/%s (flags %v, also %v): %v %+v, want %v %v %q", c.kind, c.at.Path, c.at.Name, c.flags, c.also, n, v, c.name, c.want, c.reason)
		}
	}
}

// Writing an existing file, one case per rule; a file's other names.
func TestDecideWrite(t *testing.T) {
	ft := newFakeTree("w/a.txt=x", "w/wt/.git=gitdir: /r", "w/wt/x=1", "w/alone/.git=gitdir: /r", "w/k.pem=x")
	d := Decider{Repos: Repos{Tree: ft},
		Later:    func(full string) (string, bool) { return "denyWrite", strings.HasSuffix(full, ".pem") },
		Writable: func(full string) bool { return Under(full, "/w") },
	}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	one := File{Nlink: 1}
	for _, c := range []struct {
		at     At
		n      Name
		f      File
		excl   bool
		want   Errno
		reason string
		first  bool
	}{
		{at("/w", "a.txt"), Free, one, false, 0, "", false},
		{at("/w", ".bashrc"), Protected, one, false, EROFS, "protected name", false},
		{at("/w", "a.txt"), Free, one, true, EEXIST, "", false},
		{at("/", "a.txt"), Free, one, false, EACCES, "not writable here", false},
		{at("/w", "k.pem"), Free, one, false, EACCES, "denyWrite", true},
		{at("/w", "a.txt"), Free, File{Nlink: 2}, false, EACCES, "a file with 2 hard links", false},
		{at("/w", "a.txt"), Free, File{Nlink: 2, OwnLinks: true}, false, 0, "", false},
		{at("/w", "a.txt"), Free, File{Kind: fs.ModeNamedPipe, Nlink: 2}, false, 0, "", false},
		{at("/w/wt", ".git"), Context, one, false, EACCES, reasonGitFileAlone, false},
		{at("/w/alone", ".git"), Context, one, false, 0, "", false},
	} {
		rule := ""
		if c.n != Free && c.n != Context {
			rule = c.at.Path + "/" + c.at.Name
		}
		v := d.Write(c.at, c.n, rule, c.f, c.excl)
		if v.Errno != c.want || !strings.HasPrefix(v.Reason, c.reason) || v.KernelFirst != c.first {
			t.Errorf("write %s/%s (%+v, excl %v): %+v, want %v %q", c.at.Path, c.at.Name, c.f, c.excl, v, c.want, c.reason)
		}
	}
	// A metadata change counts every kind but a directory; a name gone
	// counts every other.
	for _, c := range []struct {
		f        File
		metadata bool
		want     bool
	}{
		{File{Kind: fs.ModeNamedPipe, Nlink: 2}, true, true},
		{File{Kind: fs.ModeDir, Nlink: 5}, true, false},
		{File{Nlink: 1, Unlinked: true}, false, true},
		{File{Nlink: 0, Unlinked: true}, false, false},
	} {
		if _, got := c.f.LinkedElsewhere(c.metadata); got != c.want {
			t.Errorf("LinkedElsewhere(%+v, metadata %v) = %v", c.f, c.metadata, got)
		}
	}
}

// A file an open makes: as Make, but a worktree's .git may be written
// where its link back leads.
func TestDecideCreate(t *testing.T) {
	ft := newFakeTree("w/wt/", "w/crowd/x=1")
	d := Decider{Repos: Repos{Tree: ft},
		Later:          func(full string) (string, bool) { return "denyWrite", strings.HasSuffix(full, ".pem") },
		TargetsBeneath: func(dir string) bool { return dir == "/w/wt" },
	}
	at := func(dir, name string) At { return At{Dir: ft.handle(dir), Path: dir, Name: name} }
	if v := d.Create(at("/w/wt", ".git"), Context, ""); v.Refused() {
		t.Errorf("a worktree's .git where its link back leads: %+v", v)
	}
	if _, v := d.Make(at("/w/wt", ".git"), false); v.Reason != reasonTargetsBeneath {
		t.Errorf("a .git linked or made otherwise there: %+v", v)
	}
	if v := d.Create(at("/w/crowd", ".git"), Context, ""); v.Reason != reasonGitFileAlone {
		t.Errorf("a .git beside others: %+v", v)
	}
	if v := d.Create(at("/w", "k.pem"), Free, ""); !v.KernelFirst || !v.ExistsFirst || v.Reason != "denyWrite" {
		t.Errorf("a deny entry's file: %+v", v)
	}
	if v := d.Create(at("/w", ".bashrc"), Protected, "/w/.bashrc"); !v.KernelFirst || !strings.Contains(v.Reason, "protected name /w/.bashrc") {
		t.Errorf("a protected name: %+v", v)
	}
}

// How an open of a repository's file goes, one case per rule.
func TestDefer(t *testing.T) {
	no, yes := func() bool { return false }, func() bool { return true }
	w := Open{WriteOnly: true}
	made := Open{WriteOnly: true, Create: true, Excl: true}
	for _, c := range []struct {
		name  string
		n     Name
		isDir func() bool
		o     Open
		want  Deferral
		deny  bool
	}{
		{".git", Context, no, Open{ReadWrite: true}, Now, true},
		{".git", Context, yes, Open{ReadWrite: true}, Now, false},
		{".git", Context, no, w, AsWritten, false},
		{".git", Context, no, Open{WriteOnly: true, TruncateCall: true}, Now, false},
		{"commondir", Free, no, w, AsWritten, false},
		{"commondir", Protected, no, w, Now, false},
		{WorktreeGitdir, GitConfig, no, w, AsWritten, false},
		{WorktreeGitdir, Free, no, w, Now, false},
		{"config", GitConfig, no, made, MadeWhole, false},
		{"index", GitConfig, no, made, MadeWhole, false},
		{"config", GitConfig, no, Open{WriteOnly: true, Create: true, Excl: true, Append: true}, Now, false},
		{"config", GitConfig, no, Open{WriteOnly: true, Create: true}, Now, false},
		{"config", Free, no, made, Now, false},
		{ApplyOpts, GitConfig, no, Open{WriteOnly: true, Trunc: true}, Emptied, false},
		{ApplyOpts, GitConfig, no, w, Now, false},
		{"a.go", Free, no, made, Now, false},
	} {
		d, v := Defer(c.name, c.n, c.isDir, c.o)
		if d != c.want || v.Refused() != c.deny {
			t.Errorf("Defer(%s, %v, %+v) = %v %+v, want %v (refused %v)", c.name, c.n, c.o, d, v, c.want, c.deny)
		}
	}
}
