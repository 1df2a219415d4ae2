package srt

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
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
// text makes the reader panic, report a relative or unclean path, or a
// path no rule and no host check denied.
func FuzzInferFilesystem(f *testing.F) {
	f.Add("touch: cannot touch '/work/secret.txt': Read-only file system\n")
	f.Add("PermissionError: [Errno 13] Permission denied: '/etc/hosts'")
	f.Add("sh: 1: cannot create ../x: Permission denied\r\n")
	f.Add("‘/home/u/.ssh/id’: Operation not permitted")
	rules := []fsRule{{path: "/work"}, {path: "/work/secret.txt", readOnly: true, why: "denyWrite"}, {path: "/home/u/.ssh", hidden: true, why: "denyRead"}}
	f.Fuzz(func(t *testing.T, stderr string) {
		for _, v := range inferFilesystem(stderr, "/work", rules, func(p string) bool { return p == "/etc/hosts" }) {
			if !strings.HasPrefix(v.Target, "/") || filepath.Clean(v.Target) != v.Target {
				t.Fatalf("target %q", v.Target)
			}
			if v.Rule == "" && v.Target != "/etc/hosts" && v.Reason != "not under any allowWrite entry" {
				t.Fatalf("reported %+v", v)
			}
		}
	})
}

// A command refused for its connection cap reads, in the exit summary
// and the violations block, as what it tried and why it was refused.
func TestConnectionCapViolation(t *testing.T) {
	policy, err := netfilter.NewPolicy([]string{"example.com"}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := proxy.New(policy)
	p.MaxConnsPerClient = 1
	decided := make(chan proxy.Decision, 1)
	p.OnDecision = func(d proxy.Decision) { decided <- d }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go p.ServeHTTP(ln, &proxy.Client{ID: "cmd"})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 2 { // the cap's one connection, then the one refused
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	io.WriteString(held[1], "CONNECT example.com:443 HTTP/1.1\r\n\r\n")
	v := fromDecision(<-decided)
	if got, want := v.Summary(), "blocked: connect example.com:443 (too many open connections from this sandbox, limit 1)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got, want := v.String(), "deny network-outbound example.com:443 (too many open connections from this sandbox, limit 1)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}
