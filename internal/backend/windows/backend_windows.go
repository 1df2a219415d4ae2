// Package windows is srt's Windows backend, an alpha: the glue between
// the facade's one backend interface (internal/backend) and package
// winsec. It makes the one-time install, and runs a session: the policy
// proxies on loopback, each run through its keeper (srt itself, in the
// keeper role), which holds the command's job.
//
// A run as the sandbox account — its ACEs, its WFP fence, the keeper
// started as the account — is not built yet (issue #35). Until it is,
// the backend refuses to run anything, except in its test mode
// (SRT_WINDOWS_TEST_MODE=1), which runs the command as the user, with
// no ACEs and no fence, and says so: the mode the tests under wine use,
// where there are no accounts and no WFP to use.
package windows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
	"github.com/srt-go/srt/winsec"
	"golang.org/x/sys/windows"
)

// TestModeVar, set to 1, runs commands as the user with no ACEs and no
// network fence: for tests under wine only.
const TestModeVar = "SRT_WINDOWS_TEST_MODE"

func testMode() bool { return os.Getenv(TestModeVar) == "1" }

// errNoAccountLaunch is why nothing runs outside the test mode.
var errNoAccountLaunch = &backend.UnsupportedError{Missing: "a launch as the Windows sandbox account",
	Err: errors.New("srt's Windows backend is an alpha: running a command as the sandbox account, behind its ACEs and network fence, is not built yet")}

// New is the Windows backend of h's session.
func New(h backend.Host) backend.Backend {
	return &windowsBackend{host: h, runs: map[*exec.Cmd]*run{}}
}

type windowsBackend struct {
	host    backend.Host
	proxies backend.Proxies

	mu   sync.Mutex
	runs map[*exec.Cmd]*run
}

var _ backend.Installer = (*windowsBackend)(nil)

// run is one command's: its proxies' listeners and its directory.
type run struct {
	key, text string
	client    *proxy.Client
	dir       string
	listeners []net.Listener
}

func (r *run) close() {
	for _, ln := range r.listeners {
		ln.Close()
	}
	os.RemoveAll(r.dir)
}

func (s *windowsBackend) Supported() error {
	if !testMode() {
		return errNoAccountLaunch
	}
	return nil
}

func (s *windowsBackend) Start(settings *config.Settings) error {
	if err := s.Supported(); err != nil {
		return err
	}
	s.host.Warn(TestModeVar + "=1: commands run as you, with no ACEs and no network fence (the proxies alone decide what they reach through them); for tests only")
	return s.proxies.Start(s.host, settings, func(d proxy.Decision) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range s.runs {
			if r.client == d.Client {
				s.host.Record(r.key, r.text, backend.FromDecision(d))
			}
		}
	})
}

func (s *windowsBackend) SetNetwork(n config.Network, p *netfilter.Policy) error {
	return s.proxies.SetNetwork(n, p)
}

// Stop ends the session's runs and its proxies.
func (s *windowsBackend) Stop() {
	s.mu.Lock()
	runs := s.runs
	s.runs = map[*exec.Cmd]*run{}
	s.mu.Unlock()
	for cmd, r := range runs {
		if cmd.Process != nil {
			cmd.Process.Kill() // the keeper: its job goes with it
		}
		r.close()
	}
	s.proxies.Stop()
}

func (s *windowsBackend) Enforcement(*config.Settings) backend.Enforcement {
	if testMode() {
		return backend.Enforcement{Level: backend.None, Layers: []string{"a job object (kill on close, no breakaway)", "network through the policy proxies for programs that use them"},
			Lacks: []string{TestModeVar + "=1: the command runs as you, with no ACEs and no network fence"}}
	}
	return backend.WindowsEnforcement()
}

func (s *windowsBackend) HostWritable(string) bool     { return false }
func (s *windowsBackend) Settle(string)                {}
func (s *windowsBackend) ExplainStart(err error) error { return err }
func (s *windowsBackend) LandlockABI() int             { return 0 }

func (s *windowsBackend) Doctor() *backend.Report {
	r := &backend.Report{Enforcement: s.Enforcement(nil)}
	if err := s.Supported(); err != nil {
		r.Enforcement = backend.Enforcement{Level: backend.None}
		r.Why = err.Error()
	}
	return r
}

func (s *windowsBackend) Wrap(backend.Run, []string) ([]string, error) {
	return nil, errors.New("srt's Windows backend cannot wrap a command yet; start it with Command")
}

// Command prepares one run: its proxies on loopback (in the settings'
// port range), asking the run's credential; its environment; the keeper
// that will start it in its job.
func (s *windowsBackend) Command(ctx context.Context, o backend.Run, argv []string) (*exec.Cmd, error) {
	if err := s.Supported(); err != nil {
		return nil, err
	}
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	settings, err := s.host.Settings()
	if err != nil {
		return nil, err
	}
	in, err := backend.RunInputs(s.host, o, settings, argv)
	if err != nil {
		return nil, err
	}
	opts, err := winsec.OptionsOf(in.Settings)
	if err != nil {
		return nil, err
	}
	r := &run{key: in.Key, text: in.Text, client: in.Client}
	ok := false
	defer func() {
		if !ok {
			r.close()
		}
	}()
	base := winsec.RunDirs()
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, err
	}
	if r.dir, err = os.MkdirTemp(base, "run-"); err != nil {
		return nil, err
	}
	opts.TempDir = filepath.Join(r.dir, "tmp")
	if err := os.Mkdir(opts.TempDir, 0o700); err != nil {
		return nil, err
	}
	cred, err := proxy.NewCredential()
	if err != nil {
		return nil, err
	}
	r.client.Credential = cred
	serveHTTP := func(ln net.Listener) { s.proxies.Server.ServeHTTP(ln, r.client) }
	serveSOCKS := func(ln net.Listener) { s.proxies.Server.ServeSOCKS(ln, r.client) }
	ports, err := listenInRange(opts.PortRange, 2)
	if err != nil {
		return nil, err
	}
	r.listeners = ports
	go serveHTTP(ports[0])
	go serveSOCKS(ports[1])
	env := append([]string(nil), in.Env...)
	env = append(env, winsec.RunEnv(opts, port(ports[0]), port(ports[1]), cred.User, cred.Password)...)
	spec, err := json.Marshal(keeperSpec{Argv: argv, Dir: in.Cwd, Env: env, Parent: os.Getpid()})
	if err != nil {
		return nil, err
	}
	specFile := filepath.Join(r.dir, "keeper.json")
	if err := os.WriteFile(specFile, spec, 0o600); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, keeperRole, specFile)
	cmd.Dir = in.Cwd
	s.mu.Lock()
	s.runs[cmd] = r
	s.mu.Unlock()
	ok = true
	return cmd, nil
}

// StartCommand starts a run's keeper, and ends the run (its proxies, its
// directory) once the keeper has exited.
func (s *windowsBackend) StartCommand(cmd *exec.Cmd) error {
	s.mu.Lock()
	r := s.runs[cmd]
	s.mu.Unlock()
	if err := cmd.Start(); err != nil {
		s.forget(cmd, r)
		return err
	}
	if r == nil {
		return nil
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(cmd.Process.Pid))
	if err != nil {
		return nil // the keeper is gone already; Stop ends the run
	}
	go func() {
		windows.WaitForSingleObject(h, windows.INFINITE)
		windows.CloseHandle(h)
		s.forget(cmd, r)
	}()
	return nil
}

func (s *windowsBackend) forget(cmd *exec.Cmd, r *run) {
	s.mu.Lock()
	delete(s.runs, cmd)
	s.mu.Unlock()
	if r != nil {
		r.close()
	}
}

// listenInRange listens on n loopback ports within the port range r (the
// default when zero), the ports a sandbox account's fence lets through.
func listenInRange(r [2]int, n int) ([]net.Listener, error) {
	if r == [2]int{} {
		r = winsec.DefaultPortRange
	}
	var out []net.Listener
	for p := r[0]; p <= r[1] && len(out) < n; p++ {
		if ln, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", p)); err == nil {
			out = append(out, ln)
		}
	}
	if len(out) < n {
		for _, ln := range out {
			ln.Close()
		}
		return nil, fmt.Errorf("no %d free loopback ports in %d-%d (windows.proxyPortRange)", n, r[0], r[1])
	}
	return out, nil
}

func port(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

// Install makes what Windows sandboxing needs once, from an elevated
// prompt: the sandbox account (account, or the default), its group, and
// its DPAPI-protected password. Run again it changes nothing; with force
// the account gets a new password.
func (*windowsBackend) Install(account string, force bool) error {
	return winsec.InstallSandbox(winsec.InstallOptions{Account: account, Force: force})
}

// Uninstall removes what Install made.
func (*windowsBackend) Uninstall() error { return winsec.UninstallSandbox() }
