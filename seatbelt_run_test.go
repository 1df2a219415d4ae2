//go:build unix

package srt

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/environ"
	"github.com/srt-go/srt/internal/testtree"
	"github.com/srt-go/srt/proxy"
	"github.com/srt-go/srt/seatbelt"
)

// A macOS run, prepared on Linux (everything but applying the profile):
// the command's environment holds sentinels and the proxies' credential,
// its directory the trust bundle and the profile, which passes through a
// descriptor, never argv, and means the settings.
func TestPrepareSeatbelt(t *testing.T) {
	w := testtree.Tree(t, "home/.ssh/id", "home/.token", "home/proj/a")
	home, proj := filepath.Join(w, "home"), filepath.Join(w, "home/proj")
	t.Setenv("HOME", home)
	os.WriteFile(filepath.Join(home, ".token"), []byte("FILE-REAL-SECRET-0123"), 0o600)
	doc := `{"network":{"allowedDomains":["example.com"],"deniedDomains":[],"tlsTerminate":{}},
		"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]},
		"credentials":{"envVars":[{"name":"TOKEN","mode":"mask"}],"files":[{"path":"~/.token","mode":"mask"}]}}`
	settings, _, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := &Sandbox{debugf: func(string, ...any) {}, warn: func(string) {}, runs: map[*run]struct{}{}}
	var ps proxySession
	if err := ps.startProxies(s, settings, func(proxy.Decision) {}); err != nil {
		t.Fatal(err)
	}
	defer ps.stopProxies()
	real := "ENV-REAL-SECRET-0123456789"
	sr, err := s.prepareSeatbelt(context.Background(), &ps, "sess", Run{ID: "cmd", Dir: proj, Env: []string{"PATH=/usr/bin:/bin", "TOKEN=" + real}},
		settings, []string{"/bin/echo", "hi"})
	if err != nil {
		t.Fatal(err)
	}
	defer sr.close()
	if got := strings.Join(sr.cmd.Args, " "); got != "/bin/echo "+trampolineRole+" /bin/echo hi" {
		t.Errorf("argv %q", got)
	}
	if sr.cmd.SysProcAttr == nil || !sr.cmd.SysProcAttr.Setsid {
		t.Error("the command keeps the caller's controlling terminal (TIOCSTI)")
	}
	env := strings.Join(sr.cmd.Env, "\n")
	if strings.Contains(env, real) || !strings.Contains(env, "TOKEN=fake_value_") {
		t.Errorf("the environment holds no sentinel, or the real value")
	}
	tmpdir, _ := environ.Lookup(sr.cmd.Env, "TMPDIR")
	bundle, _ := environ.Lookup(sr.cmd.Env, "SSL_CERT_FILE")
	if tmpdir != filepath.Join(sr.dir, "tmp") || bundle != filepath.Join(sr.dir, "trust-bundle.crt") {
		t.Errorf("TMPDIR %q, SSL_CERT_FILE %q, dir %q", tmpdir, bundle, sr.dir)
	}
	if fi, err := os.Stat(bundle); err != nil || fi.Mode().Perm() != 0o444 {
		t.Errorf("the bundle: %v", err)
	}
	text, err := io.ReadAll(sr.cmd.ExtraFiles[0])
	if err != nil || string(text) != sr.profile.String() {
		t.Fatalf("the profile's descriptor: %v", err)
	}
	if strings.Contains(string(text), real) || strings.Contains(string(text), "FILE-REAL-SECRET") {
		t.Error("a real value is in the profile")
	}
	for _, ln := range sr.listeners {
		if want := fmt.Sprintf(`(remote ip "localhost:%d")`, ln.Addr().(*net.TCPAddr).Port); !strings.Contains(string(text), want) {
			t.Errorf("the profile does not let the command reach its proxy: no %s", want)
		}
	}
	if !strings.Contains(string(text), `_sess_SBX")`) {
		t.Error("the profile's tag does not end in the session's suffix")
	}
	c, err := seatbelt.Compile(string(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op, path string
		want     bool
	}{
		{"file-read-data", filepath.Join(home, ".ssh/id"), false},
		{"file-read-data", filepath.Join(home, ".token"), false}, // masked: hidden on macOS
		{"file-write-data", filepath.Join(proj, "a"), true},
		{"file-write-data", filepath.Join(tmpdir, "x"), true},
		{"file-write-data", filepath.Join(sr.dir, "profile.sb"), false},
		{"file-read-data", filepath.Join(sr.dir, "profile.sb"), false}, // its tag is srt's
		{"file-read-data", filepath.Join(filepath.Dir(sr.dir), "run-other", "profile.sb"), false},
		{"file-read-data", "/dev/ttys003", false}, // another window's terminal
		{"file-ioctl", "/dev/tty", false},
	} {
		if got := c.Allowed(tc.op, tc.path); got != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.op, tc.path, got, tc.want)
		}
	}
	// The proxy asks the run's credential.
	proxyURL, _ := environ.Lookup(sr.cmd.Env, "HTTP_PROXY")
	if !strings.Contains(proxyURL, "@") {
		t.Errorf("HTTP_PROXY %q carries no credential", proxyURL)
	}
	conn, err := net.Dial("tcp", sr.listeners[0].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	conn.Close()
	if err != nil || resp.StatusCode != http.StatusProxyAuthRequired {
		t.Errorf("a request without the credential: %v %v", resp, err)
	}
	dir := sr.dir
	sr.close()
	if _, err := os.Stat(dir); err == nil {
		t.Error("the run's directory is left behind")
	}
}

// The macOS backend's session, on Linux (all but the trampoline's start):
// it refuses to run until the user accepts an untried backend; a run is
// kept with its proxies and directory; a denial from the system log is
// recorded for the run whose tag it carries, and one of another session
// is not; the session's end removes what its runs made.
func TestSeatbeltBackend(t *testing.T) {
	w := testtree.Tree(t, "home/proj/a")
	t.Setenv("HOME", filepath.Join(w, "home"))
	settings := config.Default()
	s := &Sandbox{debugf: func(string, ...any) {}, warn: func(string) {}, runs: map[*run]struct{}{}, plans: map[string]*planInfo{}}
	s.settings, s.store = settings, newStore(nil, nil)
	b := &seatbeltBackend{Sandbox: s}
	t.Setenv(experimentalDarwin, "")
	if b.supported() == nil || b.doctor().Enforcement.Level != None {
		t.Error("the untried backend runs without the user's consent")
	}
	t.Setenv(experimentalDarwin, "1")
	if err := b.supported(); err != nil || b.doctor().Enforcement.Level != Partial {
		t.Errorf("with consent: %v", err)
	}
	if fs := fmt.Sprint(b.doctor().Features); !strings.Contains(fs, "enableWeakerNetworkIsolation") {
		t.Errorf("srt doctor does not say when trustd is needed: %s", fs)
	}
	if err := b.start(settings); err != nil {
		t.Fatal(err)
	}
	cmd, err := b.command(context.Background(), Run{ID: "cmd", Dir: filepath.Join(w, "home/proj")}, []string{"/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	r := b.find(func(r *seatbeltCmd) bool { return r.cmd == cmd })
	if r == nil {
		t.Fatal("the run is not kept")
	}
	dir := r.dir
	b.denied(seatbelt.Denial{Tag: seatbelt.NewTag(b.session, r.tag), Process: "cat", PID: 1, Operation: "file-read-data", Target: "/x"})
	b.denied(seatbelt.Denial{Tag: seatbelt.NewTag("other", r.tag), Process: "cat", PID: 1, Operation: "file-read-data", Target: "/y"})
	if v := fmt.Sprint(s.store.of("cmd")); !strings.Contains(v, "file-read-data /x") || strings.Contains(v, "/y") {
		t.Errorf("violations: %s", v)
	}
	b.stop()
	if _, err := os.Stat(dir); err == nil {
		t.Error("the run's directory is left behind")
	}
	if b.find(func(*seatbeltCmd) bool { return true }) != nil {
		t.Error("a run outlives the session")
	}
}
