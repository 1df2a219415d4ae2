// Package linux is srt's Linux backend: the glue between the facade's
// one backend interface (internal/backend) and nsexec, which plans,
// builds and runs each sandbox. It holds the session's proxies, whether
// its commands run in the fallback sandbox, and its runs: how each
// reaches the proxies, its launch, and its violations as the seccomp
// supervisor and the proxies report them.
package linux

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/internal/environ"
	"github.com/srt-go/srt/landlock"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/nsexec"
	"github.com/srt-go/srt/proxy"
	"github.com/srt-go/srt/seccomp"
)

// The loopback ports inside the sandbox where the command finds the
// proxies (the reference's).
const (
	proxyHTTPPort  = 3128
	proxySOCKSPort = 1080
)

// linuxBackend is the Linux half of a Sandbox: the session's proxies,
// whether its commands run in the fallback sandbox, and its runs.
type linuxBackend struct {
	host    backend.Host
	proxies backend.Proxies
	// planJSON is a run's plan as srt plan --json prints it, for the
	// debug log.
	planJSON func(*nsexec.RunPlan, backend.Enforcement) []byte
	fallback bool
	// maskedProc: the namespace sandbox runs with the container's /proc
	// bound (enableWeakerNestedSandbox where /proc has masked paths).
	maskedProc bool

	mu     sync.Mutex
	closed bool
	runs   map[*run]struct{}
	// wg counts the runs' watches, which end when their inits do.
	wg sync.WaitGroup
}

// MaybeRunInit runs the sandbox's init when this process was started as
// one, and never returns then; otherwise it returns at once.
func MaybeRunInit() { nsexec.MaybeRun() }

// New is the Linux backend of h's session; planJSON is how srt plan
// --json prints a run's plan, which the debug log prints for every run.
// A nil h makes a backend for Supported, Doctor, ExplainStart and
// LandlockABI only.
func New(h backend.Host, planJSON func(*nsexec.RunPlan, backend.Enforcement) []byte) backend.Backend {
	return &linuxBackend{host: h, planJSON: planJSON, runs: map[*run]struct{}{}}
}

func (s *linuxBackend) Start(settings *config.Settings) error {
	// The weaker fallback runs only when the settings ask for it and the
	// host refuses namespaces.
	if settings.EnableWeakerNestedSandbox {
		err := nsexec.NamespacesAvailable()
		guard := nsexec.GuardServable(false)
		switch {
		case err != nil && !errors.Is(err, nsexec.ErrMaskedProc):
			s.fallback = true
			s.host.Debugf("Namespaces unavailable (%v): the weaker fallback sandbox runs", nsexec.Explain(err))
		case guard != nil:
			s.fallback = true
			s.host.Debugf("The namespace sandbox's guard cannot be served (%v): the weaker fallback sandbox runs", guard)
		case err != nil:
			s.maskedProc = true
			s.host.Debugf("%v: the container's /proc is bound in the namespace sandbox (enableWeakerNestedSandbox)", err)
		}
	}
	return s.proxies.Start(s.host, settings, func(d proxy.Decision) {
		if r, ok := s.runOf(d.Client); ok {
			s.host.Record(r.key, r.text, backend.FromDecision(d))
		}
	})
}

// supported: Linux has a sandbox backend.
func (s *linuxBackend) Supported() error { return nil }

func (s *linuxBackend) SetNetwork(n config.Network, p *netfilter.Policy) error {
	return s.proxies.SetNetwork(n, p)
}

// Stop ends every run (its init goes when its link closes), waits for
// their watches, and stops the proxies.
func (s *linuxBackend) Stop() {
	s.mu.Lock()
	s.closed = true
	runs := make([]*run, 0, len(s.runs))
	for r := range s.runs {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.stop()
	}
	s.wg.Wait()
	s.proxies.Stop()
}

func (s *linuxBackend) Enforcement(settings *config.Settings) backend.Enforcement {
	noLandlock := ""
	if settings.AllowNestedUserNamespaces && !s.fallback {
		noLandlock = nsexec.NestedNoLandlock
	}
	e := backend.LinuxEnforcement(s.fallback, noLandlock, landlock.ABI())
	if settings.Filesystem.SkipPathGuard && !settings.Filesystem.Disabled && !s.fallback {
		e.Lacks = append(e.Lacks, backend.GuardSkippedLacks)
	}
	switch {
	case s.fallback:
		e = withOwnSockets(e)
	case s.maskedProc:
		e = maskedProcEnforcement(e)
	}
	return e
}

func (s *linuxBackend) LandlockABI() int { return landlock.ABI() }

func (s *linuxBackend) ExplainStart(err error) error {
	var se *nsexec.SetupError
	if errors.As(err, &se) {
		return err // the namespaces were made; a later step failed
	}
	if explained := nsexec.Explain(err); explained != err {
		return &backend.UnsupportedError{Missing: "user namespaces", Err: explained}
	}
	return err
}

func (s *linuxBackend) Doctor() *backend.Report {
	f := nsexec.Probe()
	r := &backend.Report{}
	for _, x := range f.Features {
		r.Features = append(r.Features, backend.Feature{Name: x.Name, OK: x.OK, Detail: x.Detail})
	}
	fallback := func() {
		if f.LandlockABI > 0 && f.FallbackGuard == nil {
			e := withOwnSockets(backend.LinuxEnforcement(true, "", f.LandlockABI))
			r.Fallback = &e
		}
	}
	switch {
	case f.Namespaces == nil && f.Guard == nil:
		r.Enforcement = backend.LinuxEnforcement(false, "", f.LandlockABI)
	case f.MaskedProc && f.Guard == nil:
		// Runs with the opt-in only, and then not fully.
		r.Enforcement = backend.Enforcement{Level: backend.None}
		r.Why = f.Namespaces.Error()
		e := maskedProcEnforcement(backend.LinuxEnforcement(false, "", f.LandlockABI))
		r.Fallback = &e
	case f.Namespaces == nil || f.MaskedProc:
		r.Enforcement = backend.Enforcement{Level: backend.None}
		r.Why = f.Guard.Error()
		fallback()
	default:
		r.Enforcement = backend.Enforcement{Level: backend.None}
		r.Why = f.Namespaces.Error()
		fallback()
	}
	return r
}

// maskedProcEnforcement is e, the namespace sandbox's, where a
// container's /proc has masked paths and enableWeakerNestedSandbox binds
// the container's /proc in place of a fresh one.
func maskedProcEnforcement(e backend.Enforcement) backend.Enforcement {
	e.Level = backend.Partial
	e.Lacks = append(e.Lacks, "no fresh /proc (the container masks paths of its own): the container's /proc is bound, so its other processes are visible inside, with their command lines (Landlock still keeps their memory, environment and signals out of reach); Docker's --security-opt systempaths=unconfined gives the full sandbox")
	return e
}

// withOwnSockets is the fallback's e where srt makes the command's
// sockets (pidfd_getfd is refused, as in Docker's default profile).
func withOwnSockets(e backend.Enforcement) backend.Enforcement {
	if nsexec.OwnsSockets() {
		e.Lacks = append(e.Lacks, "a socket the command did not make with socket(2) (inherited, accepted, or from socketpair) cannot be connected, bound or listened on: the container's seccomp profile refuses pidfd_getfd, so srt makes each socket it supervises")
	}
	return e
}

// run is one command of the session.
type run struct {
	key, text string
	client    *proxy.Client
	launch    *nsexec.Launch
	mu        sync.Mutex
	listeners []net.Listener
	// socketTold: a refused socket(AF_UNIX) has been reported.
	socketTold atomic.Bool
}

// stop0 undoes a run prepared as l that will not start.
func (r *run) stop0(l *nsexec.Launch) {
	r.mu.Lock()
	for _, ln := range r.listeners {
		ln.Close()
	}
	r.listeners = nil
	r.mu.Unlock()
	l.Close()
}

// stop ends the run: its init goes when its link closes.
func (r *run) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.listeners {
		l.Close()
	}
	r.listeners = nil
	r.launch.Close()
}

func (s *linuxBackend) runOf(c *proxy.Client) (*run, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := range s.runs {
		if r.client == c {
			return r, true
		}
	}
	return nil, false
}

// Command prepares one run.
func (s *linuxBackend) Command(ctx context.Context, o backend.Run, argv []string) (*exec.Cmd, error) {
	r, err := s.prepare(ctx, o, argv)
	if err != nil {
		return nil, err
	}
	return r.launch.Cmd, nil
}

// StartCommand starts one of the session's Cmds, learning from its
// link how the sandbox's setup went; any other Cmd (one whose Err says
// why it was never prepared) just starts.
func (s *linuxBackend) StartCommand(cmd *exec.Cmd) error {
	var l *nsexec.Launch
	s.mu.Lock()
	for r := range s.runs {
		if r.launch.Cmd == cmd {
			l = r.launch
			break
		}
	}
	s.mu.Unlock()
	if l == nil {
		return cmd.Start()
	}
	return l.Start()
}

// Wrap prepares one run to be started by the caller.
func (s *linuxBackend) Wrap(o backend.Run, argv []string) ([]string, error) {
	r, err := s.prepare(context.Background(), o, argv)
	if err != nil {
		return nil, err
	}
	w, err := r.launch.WrapArgv()
	if err != nil {
		r.stop()
		return nil, err
	}
	return w, nil
}

// prepare makes one run of the session.
func (s *linuxBackend) prepare(ctx context.Context, o backend.Run, argv []string) (*run, error) {
	settings, err := s.host.Settings()
	if err != nil {
		return nil, err
	}
	if s.fallback && landlock.ABI() == 0 {
		return nil, &backend.UnsupportedError{Missing: "user namespaces or Landlock",
			Err: errors.New("refusing to run: neither user namespaces nor Landlock are available here, so no sandbox can be built")}
	}
	in, err := backend.RunInputs(s.host, o, settings, argv)
	if err != nil {
		return nil, err
	}
	r := &run{key: in.Key, text: in.Text, client: in.Client}
	settings, env := in.Settings, in.Env
	var files []nsexec.RunFile
	if bundle := s.proxies.TrustBundle(); bundle != nil {
		files = append(files, nsexec.RunFile{Name: "trust-bundle.crt", Data: bundle, Env: backend.TrustVars})
	}
	// The run's proxies first; the plan and the start then in nsexec,
	// which calls nothing back but the event sinks and the proxies'
	// serving.
	side, err := s.network(r, settings, env)
	var l *nsexec.Launch
	if err == nil {
		l, err = nsexec.Prepare(settings, nsexec.Options{Argv: argv, Env: env, Cwd: in.Cwd, Home: in.Home, Debug: s.host.Debug(),
			Terminal: o.Terminal, OnTerminal: o.OnTerminal, OnStop: o.OnStop, OnFailure: func(err error) { s.host.Failed(r.key, err) }, Net: &side, Intercept: !s.fallback, Fallback: s.fallback, Context: ctx, NullFDs: o.NullFDs, Masks: in.Masks, Files: files, HostProc: s.maskedProc,
			OnEvent: func(e nsexec.Event) {
				// Libraries probe for Unix sockets (nscd) on every lookup:
				// a refused socket(AF_UNIX) is told once a run.
				if e.Call == "socket" && r.socketTold.Swap(true) {
					return
				}
				s.host.Record(r.key, r.text, fromEvent(e))
			}})
	}
	if err != nil {
		r.mu.Lock()
		for _, ln := range r.listeners {
			ln.Close()
		}
		r.mu.Unlock()
		return nil, err
	}
	if err := backend.CredentialConflicts(l.RunPlan.Policy, in.Creds, in.Home, in.Cwd); err != nil {
		r.stop0(l)
		return nil, err
	}
	r.launch = l
	// Like exec.Command: no stdio unless the caller sets it.
	l.Cmd.Stdin, l.Cmd.Stdout, l.Cmd.Stderr = nil, nil, nil
	if s.host.Debug() {
		e := s.Enforcement(settings)
		s.host.Debugf("Mount plan:\n%s", l.Plan)
		s.host.Debugf("Enforcement: %s", e)
		s.host.Debugf("%s", l.RunPlan.GuardLine())
		s.host.Debugf("Seccomp filter for %s", seccomp.Describe(l.Seccomp))
		if l.Landlock != nil {
			s.host.Debugf("Landlock layer: read %v; read files %v; list only %v; write %v", l.Landlock.Read, l.Landlock.ReadFile, l.Landlock.ListOnly, l.Landlock.Write)
		}
		// The plan as srt plan --json prints it: one line, for tools.
		if data := s.planJSON(l.RunPlan, e); data != nil {
			s.host.Debugf("Plan: %s", data)
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		r.stop()
		return nil, backend.ErrClosed
	}
	s.runs[r] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	s.host.Planned(r.key, r.text, in.Cwd, in.Home, l.RunPlan.Policy, settings.Filesystem.AllowWrite)
	go func() {
		defer s.wg.Done()
		<-l.Done()
		r.stop()
		s.mu.Lock()
		delete(s.runs, r)
		s.mu.Unlock()
	}()
	return r, nil
}

// network says how the run reaches the proxies: for the namespace
// sandbox, how srt serves the sockets its init hands over (the proxy
// ports and the transparent path); for the fallback, listeners on
// loopback TCP asking a per-run credential.
func (s *linuxBackend) network(r *run, settings *config.Settings, env []string) (nsexec.NetSide, error) {
	var side nsexec.NetSide
	inherited, _ := environ.Lookup(env, "JAVA_TOOL_OPTIONS")
	javaOpts := backend.JavaToolOptions(settings.JavaAgentJarPath, inherited)
	n := settings.Network
	serveHTTP := func(ln net.Listener) { s.proxies.Server.ServeHTTP(ln, r.client) }
	serveSOCKS := func(ln net.Listener) { s.proxies.Server.ServeSOCKS(ln, r.client) }
	// The user's own proxies, when the settings name them, take the
	// place of srt's (they decide, not the allow lists).
	if n.HTTPProxyPort != nil {
		serveHTTP = backend.ForwardTo(*n.HTTPProxyPort)
	}
	if n.SOCKSProxyPort != nil {
		serveSOCKS = backend.ForwardTo(*n.SOCKSProxyPort)
	}
	listen := func(network, address string, serve func(net.Listener)) (net.Listener, error) {
		ln, err := nsexec.Listen(network, address)
		if err != nil {
			return nil, fmt.Errorf("listening for the proxy: %w", err)
		}
		r.mu.Lock()
		r.listeners = append(r.listeners, ln)
		r.mu.Unlock()
		go serve(ln)
		return ln, nil
	}
	if s.fallback {
		cred, err := proxy.NewCredential()
		if err != nil {
			return side, err
		}
		r.client.Credential = cred
		var ports []int
		for _, serve := range []func(net.Listener){serveHTTP, serveSOCKS} {
			ln, err := listen("tcp4", "127.0.0.1:0", serve)
			if err != nil {
				return side, err
			}
			ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
		}
		side.Ports = []uint16{uint16(ports[0]), uint16(ports[1])}
		side.Env = proxy.EnvWithCredential(ports[0], ports[1], cred, javaOpts)
		return side, nil
	}
	// The sandbox's loopback ports and its transparent path are served
	// here, from the sockets the init hands over. The transparent path
	// is decided as the SOCKS proxy's requests are: by the session's
	// policy for this run's client, or by the user's own SOCKS proxy.
	side.Proxies = []nsexec.ProxyPort{{Port: proxyHTTPPort, Serve: serveHTTP}, {Port: proxySOCKSPort, Serve: serveSOCKS}}
	side.Transparent = func(tcp []net.Listener, dnsUDP []net.PacketConn, dnsTCP []net.Listener) {
		t := proxy.Transparent{TCP: tcp, DNSUDP: dnsUDP, DNSTCP: dnsTCP}
		if n.SOCKSProxyPort != nil {
			proxy.ForwardTransparent(t, "tcp", fmt.Sprintf("127.0.0.1:%d", *n.SOCKSProxyPort))
			return
		}
		s.proxies.Server.ServeTransparent(r.client, t)
	}
	side.Env = proxy.Env(proxyHTTPPort, proxySOCKSPort, javaOpts)
	if self, err := os.Executable(); err == nil {
		// git's ssh goes through the policy by way of srt itself.
		side.Env = append(side.Env, "GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='"+self+" ssh-proxy %h %p'")
	}
	return side, nil
}

// HostWritable reports whether this user could write path on the host:
// a denial there came from the sandbox.
func (s *linuxBackend) HostWritable(path string) bool { return backend.WritableOnHost(path) }

// fromEvent is the violation of a call the seccomp supervisor refused.
func fromEvent(e nsexec.Event) backend.Violation {
	v := backend.Violation{Kind: backend.KindUnixSocket, Operation: e.Call, Target: e.Target, Reason: e.Reason}
	switch {
	case e.Kind == "filesystem":
		v.Kind = backend.KindFilesystem // a metadata change (chmod, chown, utimes, xattrs) in the fallback
	case (e.Call == "connect" || e.Call == "listen") && !strings.HasPrefix(e.Target, "/") && !strings.HasPrefix(e.Target, "@"):
		v.Kind = backend.KindNetwork
	}
	return v
}

// Settle waits briefly for the last events of key's runs that have
// exited, so that Violations after the caller's Wait is complete.
func (s *linuxBackend) Settle(key string) {
	s.mu.Lock()
	var rs []*run
	for r := range s.runs {
		if r.key == key {
			rs = append(rs, r)
		}
	}
	s.mu.Unlock()
	for _, r := range rs {
		r.launch.Settle(time.Second)
	}
}
