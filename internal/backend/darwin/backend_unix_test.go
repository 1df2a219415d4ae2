//go:build unix

package darwin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/internal/environ"
	"github.com/srt-go/srt/internal/proc"
	"github.com/srt-go/srt/internal/testenv"
	"github.com/srt-go/srt/internal/testtree"
	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/proxy"
	"github.com/srt-go/srt/seatbelt"
)

// testHost is the facade as the backend's tests need it: the session's
// settings, and the violations recorded by attribution key.
type testHost struct {
	settings *config.Settings
	mu       sync.Mutex
	recorded []backend.Violation
}

func (h *testHost) Settings() (*config.Settings, error) { return h.settings, nil }

func (h *testHost) Record(key, text string, v backend.Violation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v.CommandID, v.Command = key, text
	h.recorded = append(h.recorded, v)
}

// violations are the recorded violations of key, oldest first.
func (h *testHost) violations(key string) []backend.Violation {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []backend.Violation
	for _, v := range h.recorded {
		if v.CommandID == key {
			out = append(out, v)
		}
	}
	return out
}

func (h *testHost) Failed(string, error)                                                       {}
func (h *testHost) Planned(string, string, string, string, *policy.Policy, []config.PathEntry) {}
func (h *testHost) Debug() bool                                                                { return false }
func (h *testHost) Debugf(string, ...any)                                                      {}
func (h *testHost) Warn(string)                                                                {}
func (h *testHost) Filter() proxy.RequestFilter                                                { return nil }
func (h *testHost) Ask() func(string, string, uint16) (bool, string, error)                    { return nil }

// The test binary is also the macOS backend's keeper, on Linux without
// the profile (sandbox_init is macOS's): what runs around it is tested.
func init() { seatbeltRole(func(string) error { return nil }) }

// A macOS run, prepared on Linux (everything but applying the profile):
// the command's environment holds sentinels and the proxies' credential,
// its directory the trust bundle and the profile, which passes through a
// descriptor, never argv, and means the settings.
func TestPrepareSeatbelt(t *testing.T) {
	w := testtree.Tree(t, "home/.ssh/id", "home/.token", "home/proj/a")
	home, proj := filepath.Join(w, "home"), filepath.Join(w, "home/proj")
	t.Setenv("HOME", home)
	// TMPDIR behind a symlink, as macOS's is (/var → /private/var):
	// Seatbelt sees the real paths.
	realTmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "tmp-link")
	if err := os.Symlink(realTmp, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", link)
	os.WriteFile(filepath.Join(home, ".token"), []byte("FILE-REAL-SECRET-0123"), 0o600)
	doc := `{"network":{"allowedDomains":["example.com"],"deniedDomains":[],"tlsTerminate":{},"allowAllUnixSockets":true},
		"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]},
		"credentials":{"envVars":[{"name":"TOKEN","mode":"mask"}],"files":[{"path":"~/.token","mode":"mask"}]}}`
	settings, _, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	h := &testHost{settings: settings}
	var ps backend.Proxies
	if err := ps.Start(h, settings, func(proxy.Decision) {}); err != nil {
		t.Fatal(err)
	}
	defer ps.Stop()
	real := "ENV-REAL-SECRET-0123456789"
	sr, err := prepareSeatbelt(context.Background(), h, &ps, "sess", backend.Run{ID: "cmd", Dir: proj, Env: []string{"PATH=/usr/bin:/bin", "TOKEN=" + real}},
		settings, []string{"/bin/echo", "hi"})
	if err != nil {
		t.Fatal(err)
	}
	defer sr.close()
	if got := strings.Join(sr.cmd.Args, " "); got != "/bin/echo "+trampolineRole+" v1 /bin/echo hi" {
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
	// The run's paths are real ones, the ones Seatbelt compares.
	realDir := sr.dir
	if !strings.HasPrefix(realDir, realTmp+"/") {
		t.Fatalf("the run's directory %s is not named by its real path in %s", sr.dir, realTmp)
	}
	for _, tc := range []struct {
		op, path string
		want     bool
	}{
		{"file-read-data", filepath.Join(home, ".ssh/id"), false},
		{"file-read-data", filepath.Join(home, ".token"), false}, // masked: hidden on macOS
		{"file-write-data", filepath.Join(proj, "a"), true},
		{"file-write-data", filepath.Join(realDir, "tmp", "x"), true},
		{"file-read-data", filepath.Join(realDir, "trust-bundle.crt"), true},
		{"file-write-data", filepath.Join(realDir, "profile.sb"), false},
		{"file-read-data", filepath.Join(realDir, "profile.sb"), false}, // its tag is srt's
		{"file-read-data", filepath.Join(filepath.Dir(realDir), "run-other", "profile.sb"), false},
		{"file-read-data", "/dev/ttys003", false}, // another window's terminal
		{"file-ioctl", "/dev/tty", false},
		// allowAllUnixSockets: every socket but the resolver and srt's
		// own (a wrapped run's, which a command could flood or take).
		{"network-outbound", "/var/run/docker.sock", true},
		{"network-outbound", "/var/run/mDNSResponder", false},
		{"network-outbound", filepath.Join(filepath.Dir(realDir), "run-other", "wrap.sock"), false},
		{"network-bind", filepath.Join(realDir, "tmp", "s.sock"), true},
		{"network-outbound", filepath.Join(realDir, "tmp", "s.sock"), true},
		{"network-outbound", filepath.Join(filepath.Dir(realDir), "run-other", "tmp", "s.sock"), false},
		{"network-bind", filepath.Join(realDir, "s.sock"), false},
		{"network-bind", "/tmp/elsewhere.sock", true},
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
	h := &testHost{settings: settings}
	b := &seatbeltBackend{host: h, procs: linuxProcs}
	t.Setenv(experimentalDarwin, "")
	if b.Supported() == nil || b.Doctor().Enforcement.Level != backend.None {
		t.Error("the untried backend runs without the user's consent")
	}
	t.Setenv(experimentalDarwin, "1")
	// The probe runs through the keeper, which applies nothing on Linux:
	// srt doctor finds the profile unenforced, and says so.
	if r := b.Doctor(); r.Enforcement.Level != backend.None || !strings.Contains(r.Why, "not enforced") || r.Features[0].OK {
		t.Errorf("an unenforced profile passes the probe: %+v", r)
	}
	b.probe = func() error { return nil }
	if err := b.Supported(); err != nil || b.Doctor().Enforcement.Level != backend.Partial {
		t.Errorf("with consent: %v", err)
	}
	if fs := fmt.Sprint(b.Doctor().Features); !strings.Contains(fs, "enableWeakerNetworkIsolation") {
		t.Errorf("srt doctor does not say when trustd is needed: %s", fs)
	}
	if err := b.Start(settings); err != nil {
		t.Fatal(err)
	}
	cmd, err := b.Command(context.Background(), backend.Run{ID: "cmd", Dir: filepath.Join(w, "home/proj")}, []string{"/bin/true"})
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
	if v := fmt.Sprint(h.violations("cmd")); !strings.Contains(v, "file-read-data /x") || strings.Contains(v, "/y") {
		t.Errorf("violations: %s", v)
	}
	// Commands run through the keeper: their status is theirs, a stop
	// is told, and each run's directory goes when it ends.
	start := func(o backend.Run, argv ...string) (*exec.Cmd, *seatbeltCmd) {
		t.Helper()
		o.Dir = filepath.Join(w, "home/proj")
		cmd, err := b.Command(context.Background(), o, argv)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.StartCommand(cmd); err != nil {
			t.Fatal(err)
		}
		return cmd, b.find(func(r *seatbeltCmd) bool { return r.cmd == cmd })
	}
	stopped := make(chan bool, 1)
	cmd2, r2 := start(backend.Run{ID: "two", OnStop: func(asked bool) {
		select {
		case stopped <- asked:
		default:
		}
	}}, "sh", "-c", `test -d "$TMPDIR" || exit 90; kill -STOP $$; exit 3`)
	dir2 := r2.dir
	select {
	case asked := <-stopped:
		if asked {
			t.Error("the command's own stop is told as asked for")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stop is not told")
	}
	cmd2.Process.Signal(syscall.SIGCONT)
	if err := cmd2.Wait(); cmd2.ProcessState.ExitCode() != 3 {
		t.Errorf("status %v", err)
	}
	for i := 0; i < 250 && b.find(func(r *seatbeltCmd) bool { return r == r2 }) != nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(dir2); err == nil {
		t.Error("an ended run's directory is left behind")
	}
	// The session's end kills what runs, its group included.
	// (One in its group, one that left it with setsid, as a daemon does:
	// the tree's watch finds it.)
	cmd3, _ := start(backend.Run{ID: "three", Terminal: false}, "sh", "-c",
		`sleep 100 & echo $! > "$TMPDIR/../bg"; setsid sleep 102 & echo $! > "$TMPDIR/../esc"; exec sleep 101`)
	var bg, esc int
	for i := 0; i < 250 && (bg == 0 || esc == 0); i++ {
		time.Sleep(20 * time.Millisecond)
		if r3 := b.find(func(r *seatbeltCmd) bool { return r.cmd == cmd3 }); r3 != nil {
			b, _ := os.ReadFile(filepath.Join(r3.seatbeltRun.dir, "bg"))
			bg, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			e, _ := os.ReadFile(filepath.Join(r3.seatbeltRun.dir, "esc"))
			esc, _ = strconv.Atoi(strings.TrimSpace(string(e)))
		}
	}
	if bg == 0 || esc == 0 {
		t.Fatal("the command did not start")
	}
	time.Sleep(300 * time.Millisecond) // a few looks at the process table
	b.Stop()
	cmd3.Wait()
	if _, err := os.Stat(dir); err == nil {
		t.Error("the run's directory is left behind")
	}
	if b.find(func(*seatbeltCmd) bool { return true }) != nil {
		t.Error("a run outlives the session")
	}
	for i := 0; i < 100 && syscall.Kill(bg, 0) == nil && !zombie(bg); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if syscall.Kill(bg, 0) == nil && !zombie(bg) {
		t.Error("what the command started outlives the session")
	}
	for i := 0; i < 100 && syscall.Kill(esc, 0) == nil && !zombie(esc); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if syscall.Kill(esc, 0) == nil && !zombie(esc) {
		syscall.Kill(esc, syscall.SIGKILL)
		t.Error("what left the command's process group outlives the session")
	}
}

// linuxProcs is the process table of /proc, as the macOS backend's tree
// watch reads kern.proc.all there.
func linuxProcs() ([]procEntry, error) {
	all, err := proc.All()
	if err != nil {
		return nil, err
	}
	out := make([]procEntry, len(all))
	for i, p := range all {
		out[i] = procEntry{pid: p.Pid, ppid: p.PPid, start: p.Start}
	}
	return out, nil
}

// zombie says whether pid has ended and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	return err == nil && strings.Contains(s, ") Z ")
}

// A wrapped macOS run, on Linux: the argv the caller starts takes the run
// from the session once, runs the command through its keeper with its
// status and signals, and the run ends with it; a run never started ends
// with the session; a TMPDIR too long for the run's socket is refused
// with a message.
func TestSeatbeltWrap(t *testing.T) {
	w := testtree.Tree(t, "home/proj/a")
	t.Setenv("HOME", filepath.Join(w, "home"))
	// A short TMPDIR of the test's own: the run's socket path must fit.
	short := testenv.ShortTempDir(t, "sw")
	t.Setenv("TMPDIR", short)
	t.Setenv(experimentalDarwin, "1")
	settings := config.Default()
	h := &testHost{settings: settings}
	b := &seatbeltBackend{host: h}
	if err := b.Start(settings); err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	proj := filepath.Join(w, "home/proj")
	argv, err := b.Wrap(backend.Run{ID: "w", Dir: proj}, []string{"sh", "-c", `echo "$TMPDIR" > "$TMPDIR/../seen"; pwd; exit 5`})
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	if len(argv) != 4 || argv[0] != self || argv[1] != seatbeltWrapRole {
		t.Fatalf("argv %q", argv)
	}
	r := b.find(func(*seatbeltCmd) bool { return true })
	dir := r.dir
	// Another process that reaches the socket without the run's secret
	// takes nothing; one that connects and says nothing holds up neither
	// the run nor the session.
	for _, said := range []string{"not-the-secret\n", ""} {
		c, err := net.Dial("unix", argv[2])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(c, said)
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if n, _ := c.Read(make([]byte, 1)); n > 0 {
			t.Errorf("a peer that said %q got the run", said)
		}
		defer c.Close()
	}
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if code := exitCode(err); code != 5 || strings.TrimSpace(string(out)) != proj {
		t.Fatalf("status %d, output %q (%v)", code, out, err)
	}
	for i := 0; i < 250 && b.find(func(*seatbeltCmd) bool { return true }) != nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the wrapped run's directory is left behind")
	}
	if _, err := exec.Command(argv[0], argv[1:]...).Output(); exitCode(err) != 125 {
		t.Errorf("the run is taken twice: %v", err)
	}

	// Signals reach the command.
	argv, err = b.Wrap(backend.Run{ID: "w2", Dir: proj}, []string{"sleep", "100"})
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(argv[0], argv[1:]...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 250; i++ {
		if r := b.find(func(r *seatbeltCmd) bool { return r.key == "w2" }); r != nil {
			r.mu.Lock()
			pid := r.pid
			r.mu.Unlock()
			if pid > 0 {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Signal(syscall.SIGTERM)
	if code := exitCode(c.Wait()); code != 143 {
		t.Errorf("status %d after SIGTERM", code)
	}

	// Never started: it goes with the session.
	if _, err := b.Wrap(backend.Run{ID: "w3", Dir: proj}, []string{"true"}); err != nil {
		t.Fatal(err)
	}
	r3 := b.find(func(r *seatbeltCmd) bool { return r.key == "w3" })
	dir3 := r3.dir
	// (a peer that never speaks is connected to its socket meanwhile)
	silent, err := net.Dial("unix", filepath.Join(dir3, "wrap.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	stopped := make(chan struct{})
	go func() {
		b.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the session's end waits on a wrap peer that never speaks")
	}
	if _, err := os.Stat(dir3); err == nil {
		t.Error("an unstarted wrapped run's directory is left behind")
	}

	long := filepath.Join(short, strings.Repeat("l", 110))
	os.Mkdir(long, 0o700)
	t.Setenv("TMPDIR", long)
	b = &seatbeltBackend{host: h}
	if err := b.Start(settings); err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	if _, err := b.Wrap(backend.Run{ID: "w4", Dir: proj}, []string{"true"}); err == nil || !strings.Contains(err.Error(), "TMPDIR") {
		t.Errorf("a socket path too long: %v", err)
	}
	if b.find(func(*seatbeltCmd) bool { return true }) != nil {
		t.Error("a refused run is kept")
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// The keeper runs under the profile with the command, so what it reports
// is believed only of its own session: a command that took it over and
// named another process group of the user's gets that group spared.
func TestSeatbeltStopBelievesOnlyTheSession(t *testing.T) {
	keeper := exec.Command("sleep", "100")
	keeper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	victim := exec.Command("sleep", "100")
	victim.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	for _, c := range []*exec.Cmd{keeper, victim} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer c.Process.Kill()
	}
	r := &seatbeltCmd{seatbeltRun: &seatbeltRun{}, keeper: keeper.Process.Pid, pid: victim.Process.Pid}
	r.stop()
	if err := keeper.Wait(); err == nil {
		t.Error("the keeper's session was not killed")
	}
	// (A kill takes effect a moment later: watch for a while.)
	for i := 0; i < 20; i++ {
		if syscall.Kill(victim.Process.Pid, 0) != nil || zombie(victim.Process.Pid) {
			t.Fatal("a process group outside the keeper's session was killed on its word")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
