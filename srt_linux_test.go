package srt_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/srt-go/srt"
	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/testenv"
)

// The test binary is also the sandbox's init.
func TestMain(m *testing.M) {
	srt.MaybeRunInit()
	os.Exit(m.Run())
}

func settings(t testing.TB, doc string) *config.Settings {
	t.Helper()
	s, _, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func needCurl(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("requires curl on PATH")
	}
}

// Twenty commands at once on one session, each with its own id and its
// own denied host; half are also allowed a loopback server for
// themselves alone. Every command's violations are its own, and the
// allowance of one reaches no other: the server counts the connections.
func TestConcurrentCommandsAttribution(t *testing.T) {
	testenv.BothUsers(t, nil, testConcurrentCommandsAttribution)
}

func testConcurrentCommandsAttribution(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	needCurl(t)
	// Runtime dirs of this test's own, to count what is left behind.
	t.Setenv("TMPDIR", testenv.SharedTempDir(t))
	local, hits := testenv.ServeOK(t)
	sb, err := srt.New(context.Background(), settings(t, `{"network":{"allowedDomains":[],"deniedDomains":["denied.example"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	const n = 20
	outs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := srt.Run{ID: fmt.Sprintf("command-%02d-of-the-concurrency-test", i), Text: fmt.Sprintf("fetch %d", i)}
			if i%2 == 0 {
				r.AllowedDomains = []string{local}
			}
			script := fmt.Sprintf(`curl --noproxy '' -s -o /dev/null -w '%%{http_code} ' http://host-%d.example/; curl --noproxy '' -s -o /dev/null -w '%%{http_code}' http://%s/`, i, local)
			out, err := sb.CommandRun(context.Background(), r, "/bin/sh", "-c", script).Output()
			outs[i], errs[i] = string(out), err
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			var stderr []byte
			if ee, ok := errs[i].(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("command %d: %v %s", i, errs[i], stderr)
		}
		want := "403 403"
		if i%2 == 0 {
			want = "403 200"
		}
		if outs[i] != want {
			t.Errorf("command %d: status codes %q, want %q", i, outs[i], want)
		}
		id := fmt.Sprintf("command-%02d-of-the-concurrency-test", i)
		var got []string
		for _, v := range sb.Violations(id) {
			if v.CommandID != id || v.Command != fmt.Sprintf("fetch %d", i) {
				t.Errorf("command %d: foreign violation %+v", i, v)
			}
			if v.Probe() {
				continue // curl's try of nscd's socket
			}
			if v.Kind != srt.KindNetwork {
				t.Errorf("command %d: violation %+v", i, v)
			}
			got = append(got, v.Target)
		}
		wantT := []string{fmt.Sprintf("host-%d.example:80", i)}
		if i%2 == 1 {
			wantT = append(wantT, local)
		}
		if fmt.Sprint(got) != fmt.Sprint(wantT) {
			t.Errorf("command %d: violations %q, want %q", i, got, wantT)
		}
	}
	sb.Close()
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("srt-%d", os.Getuid()), "run-*")); len(left) > 0 {
		t.Errorf("runtime dirs left after Close: %q", left)
	}
	if hits() != n/2 {
		t.Errorf("the loopback server saw %d connections, want %d (the allowed commands only)", hits(), n/2)
	}
}

// Update changes the lists for the next connection of a running
// command; an invalid update is refused and the previous lists stay.
func TestUpdateMidRun(t *testing.T) { testenv.BothUsers(t, nil, testUpdateMidRun) }

func testUpdateMidRun(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	needCurl(t)
	local, _ := testenv.ServeOK(t)
	deny := settings(t, `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`)
	allow := settings(t, `{"network":{"allowedDomains":["`+local+`"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`)
	sb, err := srt.New(context.Background(), deny)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	got := fetchTwice(t, sb, srt.Run{}, local, func() {
		bad := *allow
		bad.Network.AllowedDomains = []string{"*"}
		if err := sb.Update(&bad); err == nil {
			t.Error(`allowedDomains ["*"] was accepted`)
		}
		if err := sb.Update(allow); err != nil {
			t.Fatal(err)
		}
	})
	if got != "403 200" {
		t.Errorf("before and after the update: %q, want \"403 200\"", got)
	}
}

// fetchTwice runs a command of run that fetches http://addr/, waits
// while between runs, fetches again, and returns both status codes.
func fetchTwice(t *testing.T, sb *srt.Sandbox, run srt.Run, addr string, between func()) string {
	t.Helper()
	cmd := sb.CommandRun(context.Background(), run, "/bin/sh", "-c",
		`curl --noproxy '' -s -o /dev/null -w '%{http_code} ' http://`+addr+`/; read x; curl --noproxy '' -s -o /dev/null -w '%{http_code}' http://`+addr+`/`)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 4)
	if _, err := io.ReadFull(stdout, first); err != nil {
		t.Fatal(err)
	}
	between()
	stdin.Write([]byte("go\n"))
	stdin.Close()
	rest, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return string(first) + string(rest)
}

// Without allowUnixSockets, creating a Unix socket is refused and told
// once per run. With it, a connect to a socket outside the list is
// refused and told with its path; a path with no socket is no
// violation. The host's listener gets no connection either way.
func TestUnixSocketViolation(t *testing.T) { testenv.BothUsers(t, nil, unixSocketViolation) }

func unixSocketViolation(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("requires python3")
	}
	// Short: a socket path must fit in sun_path's 108 bytes, whatever
	// TMPDIR's length.
	dir, err := os.MkdirTemp("/tmp", "srt-unix-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "host.sock")
	connected := testenv.ListenUnix(t, path)
	os.Mkdir(filepath.Join(dir, "allowed"), 0o755)
	const script = `
import socket, sys
for p in sys.argv[1:]:
    try:
        socket.socket(socket.AF_UNIX).connect(p)
        print("connected")
    except OSError as e:
        print(e.errno)
`
	for _, tc := range []struct {
		name, doc, out string
		want           []string
	}{
		{"none allowed", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`,
			"1\n1\n", []string{"unix-socket socket AF_UNIX"}},
		{"by path", `{"network":{"allowedDomains":[],"deniedDomains":[],"allowUnixSockets":["` + filepath.Join(dir, "allowed") + `"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`,
			"13\n2\n", []string{"unix-socket connect " + path}},
	} {
		sb, err := srt.New(context.Background(), settings(t, tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		out, err := sb.CommandRun(context.Background(), srt.Run{ID: "unix"}, "python3", "-c", script, path, filepath.Join(dir, "missing.sock")).Output()
		if err != nil || string(out) != tc.out {
			t.Errorf("%s: connect inside: %q %v, want %q", tc.name, out, err, tc.out)
		}
		var got []string
		for _, v := range sb.Violations("unix") {
			got = append(got, v.Kind+" "+v.Operation+" "+v.Target)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: violations %q, want %q", tc.name, got, tc.want)
		}
		sb.Close()
	}
	if connected() {
		t.Fatal("the host's listener got a connection from the sandbox")
	}
}

// Wrap's argv works under a TMPDIR long enough that the run's socket
// path exceeds sun_path's 108 bytes: the trampoline reaches it by way of
// its directory.
func TestWrapLongTMPDIR(t *testing.T) { testenv.BothUsers(t, nil, wrapLongTMPDIR) }

func wrapLongTMPDIR(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	long := filepath.Join(t.TempDir(), strings.Repeat("x", 110))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	argv, env, err := sb.Wrap(srt.Run{ID: "long"}, "/bin/sh", "-c", "echo wrapped")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out, errOut, code, err := testenv.Output(cmd)
	if err != nil || code != 0 || out != "wrapped\n" {
		t.Errorf("wrapped run: %q, exit %d, %v, stderr %q", out, code, err, errOut)
	}
}

// A program that ignores the proxy variables resolves through the DNS
// stub, which refuses a name the policy denies and reports it; no query
// leaves the sandbox.
func TestDNSStubViolation(t *testing.T) { testenv.BothUsers(t, nil, dnsStubViolation) }

func dnsStubViolation(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("requires python3")
	}
	sb, err := srt.New(context.Background(), settings(t, `{"network":{"allowedDomains":["ok.example"],"deniedDomains":["bad.example"],"deniedDomainReasons":{"bad.example":"bad is bad"}},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	out, err := sb.CommandRun(context.Background(), srt.Run{ID: "dns"}, "python3", "-c", `
import socket
for n in ("ok.example", "bad.example"):
    try:
        socket.gethostbyname(n)
        print(n, "resolved")
    except OSError:
        print(n, "refused")
`).Output()
	if err != nil || string(out) != "ok.example resolved\nbad.example refused\n" {
		t.Fatalf("resolving inside: %q %v", out, err)
	}
	vs := sb.Violations("dns")
	if len(vs) == 0 {
		t.Fatal("no violation for the refused name")
	}
	for _, v := range vs {
		if v.Probe() {
			continue
		}
		if v.Operation != "resolve" || v.Target != "bad.example" || v.Rule != `deniedDomains "bad.example"` || v.Reason != "bad is bad" {
			t.Errorf("violation %+v", v)
		}
	}
}

// A program that ignores the proxy variables and connects to an address
// is refused by the transparent path, and the refusal is the command's
// violation: named by the host its request asks for where it asks for
// one (and decided by it), by the address otherwise.
func TestTransparentViolation(t *testing.T) { testenv.BothUsers(t, nil, transparentViolation) }

func transparentViolation(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	needCurl(t)
	sb, err := srt.New(context.Background(), settings(t, `{"network":{"allowedDomains":["ok.example"],"deniedDomains":["bad.example"],"deniedDomainReasons":{"bad.example":"bad is bad"}},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	out, err := sb.CommandRun(context.Background(), srt.Run{ID: "transparent"}, "sh", "-c",
		`curl -s --noproxy '*' -o /dev/null -w '%{http_code} ' -H 'Host: bad.example' http://198.51.100.9:8080/
curl -s --noproxy '*' -o /dev/null -w '%{http_code}' http://198.51.100.9:8081/`).Output()
	if err == nil || string(out) != "000 000" {
		t.Fatalf("connecting inside: %q %v", out, err)
	}
	var got []string
	for _, v := range sb.Violations("transparent") {
		if !v.Probe() {
			got = append(got, fmt.Sprintf("%s %s %s | %s | %s", v.Kind, v.Operation, v.Target, v.Rule, v.Reason))
		}
	}
	want := []string{
		`network connect bad.example:8080 | deniedDomains "bad.example" | bad is bad`,
		`network connect 198.51.100.9:8081 |  | host is not on the allow list`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
}

// A session that runs command after command keeps nothing of the runs
// that ended: no descriptor (the proxy ports' listening sockets it is
// handed would keep each run's network namespace alive), no runtime dir.
func TestSessionLeavesNoDescriptors(t *testing.T) {
	testenv.BothUsers(t, nil, sessionLeavesNoDescriptors)
}

func sessionLeavesNoDescriptors(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	needCurl(t)
	sb, err := srt.New(context.Background(), settings(t, `{"network":{"allowedDomains":["example.com"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	run := func() {
		// The proxy answers inside (its refusal): the listening sockets
		// were handed over and served.
		out, err := sb.CommandRun(context.Background(), srt.Run{}, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://not-allowed.test/").Output()
		if err != nil || string(out) != "403" {
			t.Fatalf("curl through the proxy: %q %v", out, err)
		}
	}
	run() // the session's own lasting descriptors are made by the first run
	before := fds()
	for range 10 {
		run()
	}
	var after int
	for try := 0; try < 50; try++ { // a run's cleanup follows its end
		if after = fds(); after <= before {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("descriptors: %d before ten runs, %d after", before, after)
}

// A sandbox that cannot be built comes back from Start as a typed error,
// with the step, the path, the errno and a fix, and nothing of the
// command runs; the command's stderr gets nothing. A Cmd started with
// its own Start still gets the failure, as text on its stderr and exit
// status 1. The working directory is the failing step here: missing on
// the host, or hidden inside by denyRead (its directory is empty there).
func TestStartSetupError(t *testing.T) { testenv.BothUsers(t, nil, startSetupError) }

func startSetupError(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	dir := t.TempDir()
	hidden := filepath.Join(dir, "hidden")
	inside := filepath.Join(hidden, "project")
	if err := os.MkdirAll(inside, 0o700); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "ran")
	sb, err := srt.New(context.Background(), settings(t, fmt.Sprintf(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[%q],"allowWrite":[%q],"denyWrite":[]}}`, hidden, dir)))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	for _, wd := range []string{filepath.Join(dir, "missing"), inside} {
		var stderr strings.Builder
		cmd := sb.CommandRun(context.Background(), srt.Run{Dir: wd}, "touch", marker)
		cmd.Stderr = &stderr
		err := sb.Start(cmd)
		var se *srt.SetupError
		if !errors.As(err, &se) {
			t.Fatalf("in %s: Start = %v, want a *SetupError", wd, err)
		}
		if se.Path != wd || !errors.Is(err, syscall.ENOENT) || se.Fix == "" || !strings.Contains(se.Step, "working directory") {
			t.Errorf("in %s: %#v", wd, se)
		}
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
			t.Errorf("in %s: the failed process was not waited for: %v", wd, cmd.ProcessState)
		}
		if strings.Contains(stderr.String(), "working directory") {
			t.Errorf("in %s: the failure was also printed: %q", wd, stderr.String())
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("in %s: the command ran", wd)
		}
	}
	var stderr strings.Builder
	cmd := sb.CommandRun(context.Background(), srt.Run{Dir: inside}, "touch", marker)
	cmd.Stderr = &stderr
	err = cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), "entering the working directory") || !strings.Contains(stderr.String(), "denyRead") {
		t.Errorf("cmd.Run: %v, stderr %q", err, stderr.String())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran")
	}
	// A sandbox that is built: Start returns nil, and Wait the status.
	cmd = sb.CommandRun(context.Background(), srt.Run{Dir: dir}, "sh", "-c", "exit 7")
	if err := sb.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 7 {
		t.Errorf("Wait = %v", err)
	}
}

// A library user's goroutine that locks its thread, starts a sandbox
// and returns (ending the thread) does not end the sandbox: its
// processes live on, and the command finishes. Judged by what the
// command left on the host and its exit status.
func TestStartThreadEnds(t *testing.T) { testenv.BothUsers(t, nil, startThreadEnds) }

func startThreadEnds(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "alive")
	sb, err := srt.New(context.Background(), settings(t, fmt.Sprintf(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[%q],"denyWrite":[]}}`, dir)))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	cmd := sb.Command(context.Background(), "sh", "-c", "sleep 1; echo alive > "+marker)
	started := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		started <- sb.Start(cmd)
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the sandbox ended with the thread that started it: %v", err)
	}
	if data, err := os.ReadFile(marker); err != nil || string(data) != "alive\n" {
		t.Errorf("the command did not finish: %q %v", data, err)
	}
}
