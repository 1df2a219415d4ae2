package windows

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/proxy"
	"golang.org/x/sys/windows"
)

// The test binary is also the run's keeper (srt, in the keeper role)
// and the command, by role.
const roleVar = "WINDOWS_BACKEND_TEST_ROLE"

func TestMain(m *testing.M) {
	MaybeRunKeeper()
	switch os.Getenv(roleVar) {
	case "sleeper":
		time.Sleep(5 * time.Minute) // bounds a failed run
		os.Exit(0)
	case "leaves":
		// The command: starts a grandchild, prints its pid and exits,
		// leaving it behind.
		g := exec.Command(os.Args[0])
		g.Env = append(os.Environ(), roleVar+"=sleeper")
		if err := g.Start(); err != nil {
			fmt.Println("no grandchild:", err)
			os.Exit(2)
		}
		fmt.Println(g.Process.Pid)
		os.Exit(3)
	}
	if os.Getenv(roleVar) == "fetch" {
		// The command: two requests through the proxy the environment
		// names, one to an allowed host, one to a denied one.
		for _, u := range []string{"http://allowed.test/hello", "http://denied.test/"} {
			resp, err := http.Get(u)
			if err != nil {
				fmt.Println(u, "error", err)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Println(u, resp.StatusCode, strings.TrimSpace(string(body)))
		}
		os.Exit(4)
	}
	os.Exit(m.Run())
}

// host is the facade as a backend sees it.
type host struct {
	settings *config.Settings
	mu       sync.Mutex
	recorded []backend.Violation
	warned   []string
}

func (h *host) Settings() (*config.Settings, error) { return h.settings, nil }
func (h *host) Record(_, _ string, v backend.Violation) {
	h.mu.Lock()
	h.recorded = append(h.recorded, v)
	h.mu.Unlock()
}
func (h *host) Failed(string, error)                                              {}
func (h *host) Planned(_, _, _, _ string, _ *policy.Policy, _ []config.PathEntry) {}
func (h *host) Debug() bool                                                       { return false }
func (h *host) Debugf(string, ...any)                                             {}
func (h *host) Warn(w string)                                                     { h.warned = append(h.warned, w) }
func (h *host) Filter() proxy.RequestFilter                                       { return nil }
func (h *host) Ask() func(string, string, uint16) (bool, string, error)           { return nil }

// Outside its test mode the backend refuses to run anything: a launch as
// the sandbox account is not built, and nothing runs unconfined.
func TestRefusesOutsideTestMode(t *testing.T) {
	t.Setenv(TestModeVar, "")
	b := New(&host{settings: config.Default()})
	if err := b.Supported(); err == nil {
		t.Fatal("supported outside the test mode")
	}
	if err := b.Start(config.Default()); err == nil {
		t.Fatal("a session started outside the test mode")
	}
	if _, err := b.Command(context.Background(), backend.Run{}, []string{"cmd", "/c", "echo x"}); err == nil {
		t.Fatal("a run prepared outside the test mode")
	}
}

// In the test mode, a run goes through its keeper into a job: cmd's
// output and exit code come back; the command's requests go through the
// run's proxy, which asks its credential: the allowed host is reached
// (through the settings' parent proxy, a server of the test's), the
// denied one gets 403 and is recorded as a violation.
func TestRunInTestMode(t *testing.T) {
	t.Setenv(TestModeVar, "1")
	// The parent proxy: answers for any host it is asked.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The parent proxy: takes a CONNECT tunnel (srt's proxy reaches an
	// allowed host through one) and answers the request inside it for
	// whatever host it names.
	parent := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		io.WriteString(conn, "HTTP/1.1 200 OK\r\n\r\n")
		req, err := http.ReadRequest(rw.Reader)
		if err != nil {
			return
		}
		body := "hello from " + req.Host
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	})}
	go parent.Serve(ln)
	defer parent.Close()
	s := config.Default()
	s.Network.AllowedDomains = []string{"allowed.test"}
	s.Network.ParentProxy = &config.ParentProxy{HTTP: "http://" + ln.Addr().String()}
	h := &host{settings: s}
	b := New(h)
	if err := b.Start(s); err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	if len(h.warned) == 0 || !strings.Contains(h.warned[0], TestModeVar) {
		t.Errorf("the test mode is not told: %q", h.warned)
	}
	run := func(argv []string, env []string) (string, int) {
		t.Helper()
		cmd, err := b.Command(context.Background(), backend.Run{Env: append(os.Environ(), env...)}, argv)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := b.StartCommand(cmd); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		return out.String(), cmd.ProcessState.ExitCode()
	}
	if out, code := run([]string{"cmd", "/c", "echo hello& exit 7"}, nil); code != 7 || !strings.Contains(out, "hello") {
		t.Errorf("cmd: exit %d, %q", code, out)
	}
	exe, _ := os.Executable()
	out, code := run([]string{exe}, []string{roleVar + "=fetch"})
	if code != 4 {
		t.Errorf("the fetch exited %d: %s", code, out)
	}
	if !strings.Contains(out, "http://allowed.test/hello 200 hello from allowed.test") {
		t.Errorf("the allowed request: %s", out)
	}
	if !strings.Contains(out, "http://denied.test/ 403") {
		t.Errorf("the denied request: %s", out)
	}
	// What the command leaves behind dies with its job, when the run
	// ends.
	out, code = run([]string{exe}, []string{roleVar + "=leaves"})
	var pid uint32
	if _, err := fmt.Sscan(out, &pid); err != nil || code != 3 {
		t.Fatalf("the command that leaves a grandchild: exit %d, %q", code, out)
	}
	g, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		t.Fatalf("the grandchild (%d) is gone before it could be watched: %v", pid, err)
	}
	defer windows.CloseHandle(g)
	if ev, _ := windows.WaitForSingleObject(g, 10000); ev != windows.WAIT_OBJECT_0 {
		windows.TerminateProcess(g, 1)
		t.Error("the grandchild outlived its run")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.recorded) == 0 || !strings.Contains(fmt.Sprint(h.recorded), "denied.test") {
		t.Errorf("no violation recorded for denied.test: %+v", h.recorded)
	}
}
