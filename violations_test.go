package srt

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
)

func TestInferFilesystem(t *testing.T) {
	rules := []fsRule{
		{path: "/work", why: `allowWrite "."`},
		{path: "/work/.git/hooks", readOnly: true, why: "protected name .git/hooks"},
		{path: "/work/secret.txt", readOnly: true, why: `denyWrite "secret.txt"`},
		{path: "/home/u/.ssh", hidden: true, why: `denyRead "~/.ssh"`},
	}
	hostWritable := func(p string) bool { return p == "/etc/hosts" }
	stderr := `/bin/sh: 1: cannot create secret.txt: Read-only file system
touch: cannot touch '/work/.git/hooks/pre-commit': Read-only file system
cat: /home/u/.ssh/id_rsa: Permission denied
PermissionError: [Errno 13] Permission denied: '/etc/hosts'
sh: 1: cannot create /etc/shadow: Permission denied
rm: cannot remove '/work/own.txt': Permission denied
touch: cannot touch '/work/secret.txt': Read-only file system
unrelated line`
	var got []string
	for _, v := range inferFilesystem(stderr, "/work", rules, hostWritable) {
		got = append(got, fmt.Sprintf("%s %s %s [%s]", v.Operation, v.Target, v.Rule, v.Reason))
	}
	want := []string{
		`write /work/secret.txt denyWrite "secret.txt" [Read-only file system]`,
		`write /work/.git/hooks/pre-commit protected name .git/hooks [Read-only file system]`,
		`read /home/u/.ssh/id_rsa denyRead "~/.ssh" [Permission denied]`,
		`write /etc/hosts  [not under any allowWrite entry]`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// formsRules is a plan for the tests of the forms a denial takes: a
// writable work tree with a denyWrite hole, a hidden ~/.ssh, and two
// allowWrite entries the plan skipped (a path and a pattern that named
// nothing when the command started).
func formsRules(t testing.TB) []fsRule {
	g, err := config.CompileGlob("/home/u/out-*")
	if err != nil {
		t.Fatal(err)
	}
	return []fsRule{
		{path: "/work", why: `allowWrite "."`},
		{path: "/work/secret.txt", readOnly: true, why: `denyWrite "secret.txt"`},
		{path: "/home/u/.ssh", hidden: true, why: `denyRead "~/.ssh"`},
		{path: "/home/u/proj", skipped: true, why: `allowWrite entry "~/proj" did not exist when the command started`},
		{path: g.Root(), glob: g, skipped: true, why: `allowWrite entry "~/out-*" matched nothing when the command started`},
	}
}

// inferred is inferFilesystem's reading of stderr under formsRules, one
// "operation target rule [reason]" a violation; the user could write
// /etc/hosts and under /home/u on the host, not /etc/shadow.
func inferred(t testing.TB, stderr string) []string {
	hostWritable := func(p string) bool { return p == "/etc/hosts" || strings.HasPrefix(p, "/home/u/") }
	var got []string
	for _, v := range inferFilesystem(stderr, "/work", formsRules(t), hostWritable) {
		got = append(got, fmt.Sprintf("%s %s %s [%s]", v.Operation, v.Target, v.Rule, v.Reason))
	}
	return got
}

// Go's errors are lower-case ("op path: text"), and so are Node's
// ("CODE: text, op 'path'"); both are read, and lower-case words in
// other shapes (a socket's error, prose) are no denial.
func TestInferGoAndNodeErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"mkdir /home/u/go: read-only file system", "write /home/u/go  [not under any allowWrite entry]"},
		{"go: creating work dir: mkdir /home/u/gotmp: read-only file system", "write /home/u/gotmp  [not under any allowWrite entry]"},
		{"open /home/u/.ssh/id_rsa: permission denied", `read /home/u/.ssh/id_rsa denyRead "~/.ssh" [permission denied]`},
		{"rename /work/a /work/secret.txt: read-only file system", `write /work/secret.txt denyWrite "secret.txt" [read-only file system]`},
		{"chmod /home/u/x: operation not permitted", "write /home/u/x  [not under any allowWrite entry]"},
		{"Error: EROFS: read-only file system, mkdir '/home/u/n'", "write /home/u/n  [not under any allowWrite entry]"},
		{"Error: EACCES: permission denied, open '/home/u/.ssh/config'", `read /home/u/.ssh/config denyRead "~/.ssh" [permission denied]`},
		{"Error: EROFS: read-only file system, rename '/work/b' -> '/work/secret.txt'", `write /work/secret.txt denyWrite "secret.txt" [read-only file system]`},
		// A read of a file a rebind keeps read-only is not refused by it.
		{"stat /work/secret.txt: permission denied", ""},
		// The host would refuse it too.
		{"open /etc/shadow: permission denied", ""},
		// Not a file call, or not Go's shape.
		{"dial unix /home/u/agent.sock: connect: permission denied", ""},
		{"listen tcp :80: bind: permission denied", ""},
		{"the server said: permission denied", ""},
		{"remote: permission denied to /home/u/x", ""},
		{"mkdir /home/u/later: read-only file system, retrying", ""},
		{"note: EROFS: read-only file system, mkdir /home/u/bare", ""},
	} {
		got := strings.Join(inferred(t, tc.line), "; ")
		if got != tc.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tc.line, got, tc.want)
		}
	}
}

// The operation is what the failing call did, as its message or its
// words say, not what the rule denies: a write into a denyRead tree is a
// write.
func TestInferOperation(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"touch: cannot touch '/home/u/.ssh/new': Read-only file system", `write /home/u/.ssh/new denyRead "~/.ssh" [Read-only file system]`},
		{"/bin/sh: 1: cannot create /home/u/.ssh/k: Permission denied", `write /home/u/.ssh/k denyRead "~/.ssh" [Permission denied]`},
		{"OSError: [Errno 30] Read-only file system: '/home/u/.ssh/d'", `write /home/u/.ssh/d denyRead "~/.ssh" [Read-only file system]`},
		{"chmod: changing permissions of '/home/u/.ssh/e': Operation not permitted", `write /home/u/.ssh/e denyRead "~/.ssh" [Operation not permitted]`},
		{"cat: /home/u/.ssh/id: Permission denied", `read /home/u/.ssh/id denyRead "~/.ssh" [Permission denied]`},
		{"head: cannot open '/home/u/.ssh/f' for reading: Permission denied", `read /home/u/.ssh/f denyRead "~/.ssh" [Permission denied]`},
		{"Error: failed to create '/home/u/.ssh/r': Permission denied (os error 13)", `write /home/u/.ssh/r denyRead "~/.ssh" [Permission denied]`},
		// A path's own words say nothing of the call.
		{"cat: '/home/u/.ssh/cannot create': Permission denied", `read /home/u/.ssh/cannot create denyRead "~/.ssh" [Permission denied]`},
		// A read outside every mask was not refused by the sandbox.
		{"ls: cannot open directory '/home/u/later': Permission denied", ""},
	} {
		got := strings.Join(inferred(t, tc.line), "; ")
		if got != tc.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tc.line, got, tc.want)
		}
	}
}

// A write refused where an allowWrite entry points that the plan skipped
// says so, rather than that no entry allows it.
func TestInferSkippedAllowWrite(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"mkdir: cannot create directory '/home/u/proj': Read-only file system", `write /home/u/proj  [allowWrite entry "~/proj" did not exist when the command started]`},
		{"mkdir /home/u/proj/sub: read-only file system", `write /home/u/proj/sub  [allowWrite entry "~/proj" did not exist when the command started]`},
		{"touch: cannot touch '/home/u/out-1': Read-only file system", `write /home/u/out-1  [allowWrite entry "~/out-*" matched nothing when the command started]`},
		{"touch: cannot touch '/home/u/project': Read-only file system", "write /home/u/project  [not under any allowWrite entry]"},
		{"ls: cannot open directory '/home/u/proj': Permission denied", ""},
	} {
		got := strings.Join(inferred(t, tc.line), "; ")
		if got != tc.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tc.line, got, tc.want)
		}
	}
}

// /proc and /dev are the sandbox's own: no settings rule governs them,
// so what the kernel refuses there is no violation ("unshare -Ur" cannot
// write uid_map as root without CAP_SETFCAP).
func TestInferSandboxOwnPaths(t *testing.T) {
	stderr := `unshare: write failed /proc/self/uid_map: Operation not permitted
/bin/sh: 1: cannot create /proc/sys/kernel/hostname: Read-only file system
/bin/sh: 1: cannot create /dev/foo: Read-only file system
open /proc/self/setgroups: permission denied`
	hostWritable := func(string) bool { return true }
	if got := inferFilesystem(stderr, "/work", formsRules(t), hostWritable); len(got) != 0 {
		t.Errorf("violations in the sandbox's own /proc and /dev: %+v", got)
	}
}

func TestIgnoreViolations(t *testing.T) {
	rules := map[string][]string{"*": {"ignored.example"}, "curl -s http://quiet": {"quiet.example"}}
	for _, tc := range []struct {
		command, line string
		want          bool
	}{
		{"anything", "deny network-outbound ignored.example:80", true},
		{"", "deny network-outbound ignored.example:80", true},
		{"curl -s http://quiet/x", "deny network-outbound quiet.example:80", true},
		{"curl -s http://quiet/x", "deny network-outbound loud.example:80", false},
		{"", "deny network-outbound quiet.example:80", false},
		{"other", "deny network-outbound quiet.example:80", false},
	} {
		if got := ignored(rules, tc.command, tc.line); got != tc.want {
			t.Errorf("ignored(%q, %q) = %v", tc.command, tc.line, got)
		}
	}
}

// The store keeps the last ViolationBuffer violations, sanitised, and
// leaves out ignored ones.
func TestStoreBoundsAndSanitising(t *testing.T) {
	var seen int
	s := newStore(map[string][]string{"*": {"skip.example"}}, func(Violation) { seen++ })
	for i := range ViolationBuffer + 50 {
		s.add(Violation{CommandID: "k", Kind: KindNetwork, Operation: "connect", Target: fmt.Sprintf("h%d.example:80", i)})
	}
	s.add(Violation{CommandID: "k", Kind: KindNetwork, Operation: "connect", Target: "skip.example:80"})
	s.add(Violation{CommandID: "k", Kind: KindNetwork, Operation: "connect", Target: "a\x00\u200bb<c>\nd"})
	vs := s.of("k")
	if len(vs) != ViolationBuffer || s.total != ViolationBuffer+51 || seen != ViolationBuffer+51 {
		t.Fatalf("kept %d, total %d, notified %d", len(vs), s.total, seen)
	}
	if vs[0].Target != "h51.example:80" || vs[len(vs)-1].Target != "a bc d" {
		t.Errorf("oldest %q, newest %q", vs[0].Target, vs[len(vs)-1].Target)
	}
	if got := annotate("ERR", vs[len(vs)-1:]); got != "ERR\n<sandbox_violations>\ndeny network-outbound a bc d\n</sandbox_violations>" {
		t.Errorf("annotate: %q", got)
	}
	if got := annotate("ERR", nil); got != "ERR" {
		t.Errorf("annotate without violations: %q", got)
	}
}

// FuzzInferFilesystem: a command's stderr is the command's to write; no
// text makes the reader panic, report a relative or unclean path, a path
// in the sandbox's own /proc or /dev, a read that no mask refused, or a
// path no rule and no host check denied.
func FuzzInferFilesystem(f *testing.F) {
	f.Add("touch: cannot touch '/work/secret.txt': Read-only file system\n")
	f.Add("PermissionError: [Errno 13] Permission denied: '/etc/hosts'")
	f.Add("sh: 1: cannot create ../x: Permission denied\r\n")
	f.Add("‘/home/u/.ssh/id’: Operation not permitted")
	f.Add("go: creating work dir: mkdir /home/u/proj/x: read-only file system")
	f.Add("Error: EACCES: permission denied, open '/home/u/.ssh/id'")
	rules := []fsRule{{path: "/work"}, {path: "/work/secret.txt", readOnly: true, why: "denyWrite"}, {path: "/home/u/.ssh", hidden: true, why: "denyRead"},
		{path: "/home/u/proj", skipped: true, why: "skipped allowWrite"}}
	f.Fuzz(func(t *testing.T, stderr string) {
		for _, v := range inferFilesystem(stderr, "/work", rules, func(p string) bool { return p == "/etc/hosts" }) {
			if !strings.HasPrefix(v.Target, "/") || filepath.Clean(v.Target) != v.Target {
				t.Fatalf("target %q", v.Target)
			}
			if v.Target == "/proc" || v.Target == "/dev" || strings.HasPrefix(v.Target, "/proc/") || strings.HasPrefix(v.Target, "/dev/") {
				t.Fatalf("reported the sandbox's own %q", v.Target)
			}
			switch {
			case v.Operation == "read" && v.Rule == "denyRead", v.Operation == "write" && v.Rule != "":
			case v.Operation == "write" && v.Reason == "skipped allowWrite" && (v.Target == "/home/u/proj" || strings.HasPrefix(v.Target, "/home/u/proj/")):
			case v.Operation == "write" && v.Reason == "not under any allowWrite entry":
			default:
				t.Fatalf("reported %+v", v)
			}
		}
	})
}
