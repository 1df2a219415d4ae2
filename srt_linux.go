package srt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/srt-go/srt/internal/environ"

	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/seccomp"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/landlock"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/nsexec"
	"github.com/srt-go/srt/proxy"
)

// The loopback ports inside the sandbox where the command finds the
// proxies (the reference's).
const (
	proxyHTTPPort  = 3128
	proxySOCKSPort = 1080
)

// linuxBackend is the Linux half of a Sandbox: the session's proxies and
// whether its commands run in the fallback sandbox.
type linuxBackend struct {
	*Sandbox
	proxySession
	fallback bool
	// maskedProc: the namespace sandbox runs with the container's /proc
	// bound (enableWeakerNestedSandbox where /proc has masked paths).
	maskedProc bool
}

// MaybeRunInit runs the sandbox's init when this process was started as
// one, and never returns then; otherwise it returns at once.
func MaybeRunInit() { nsexec.MaybeRun() }

func newBackend(s *Sandbox) backend { return &linuxBackend{Sandbox: s} }

func (s *linuxBackend) start(settings *config.Settings) error {
	// The weaker fallback runs only when the settings ask for it and the
	// host refuses namespaces.
	if settings.EnableWeakerNestedSandbox {
		err := nsexec.NamespacesAvailable()
		guard := nsexec.GuardServable(false)
		switch {
		case err != nil && !errors.Is(err, nsexec.ErrMaskedProc):
			s.fallback = true
			s.debugf("Namespaces unavailable (%v): the weaker fallback sandbox runs", nsexec.Explain(err))
		case guard != nil:
			s.fallback = true
			s.debugf("The namespace sandbox's guard cannot be served (%v): the weaker fallback sandbox runs", guard)
		case err != nil:
			s.maskedProc = true
			s.debugf("%v: the container's /proc is bound in the namespace sandbox (enableWeakerNestedSandbox)", err)
		}
	}
	return s.startProxies(s.Sandbox, settings, func(d proxy.Decision) {
		if r, ok := s.runOf(d.Client); ok {
			s.record(r, fromDecision(d))
		}
	})
}

// supported: Linux has a sandbox backend.
func (s *linuxBackend) supported() error { return nil }

func (s *linuxBackend) setNetwork(n config.Network, p *netfilter.Policy) error {
	return s.proxySession.setNetwork(s.Sandbox, n, p)
}

func (s *linuxBackend) stop() { s.stopProxies() }

func (s *linuxBackend) enforcement(settings *config.Settings) Enforcement {
	noLandlock := ""
	if settings.AllowNestedUserNamespaces && !s.fallback {
		noLandlock = nsexec.NestedNoLandlock
	}
	e := linuxEnforcement(s.fallback, noLandlock, landlock.ABI())
	if settings.Filesystem.SkipPathGuard && !settings.Filesystem.Disabled && !s.fallback {
		e.Lacks = append(e.Lacks, guardSkippedLacks)
	}
	switch {
	case s.fallback:
		e = withOwnSockets(e)
	case s.maskedProc:
		e = maskedProcEnforcement(e)
	}
	return e
}

func (s *linuxBackend) landlockABI() int { return landlock.ABI() }

func (s *linuxBackend) explainStart(err error) error {
	var se *SetupError
	if errors.As(err, &se) {
		return err // the namespaces were made; a later step failed
	}
	if explained := nsexec.Explain(err); explained != err {
		return &UnsupportedError{Missing: "user namespaces", Err: explained}
	}
	return err
}

func (s *linuxBackend) doctor() *Report {
	f := nsexec.Probe()
	r := &Report{}
	for _, x := range f.Features {
		r.Features = append(r.Features, Feature{Name: x.Name, OK: x.OK, Detail: x.Detail})
	}
	fallback := func() {
		if f.LandlockABI > 0 && f.FallbackGuard == nil {
			e := withOwnSockets(linuxEnforcement(true, "", f.LandlockABI))
			r.Fallback = &e
		}
	}
	switch {
	case f.Namespaces == nil && f.Guard == nil:
		r.Enforcement = linuxEnforcement(false, "", f.LandlockABI)
	case f.MaskedProc && f.Guard == nil:
		// Runs with the opt-in only, and then not fully.
		r.Enforcement = Enforcement{Level: None}
		r.Why = f.Namespaces.Error()
		e := maskedProcEnforcement(linuxEnforcement(false, "", f.LandlockABI))
		r.Fallback = &e
	case f.Namespaces == nil || f.MaskedProc:
		r.Enforcement = Enforcement{Level: None}
		r.Why = f.Guard.Error()
		fallback()
	default:
		r.Enforcement = Enforcement{Level: None}
		r.Why = f.Namespaces.Error()
		fallback()
	}
	return r
}

// maskedProcEnforcement is e, the namespace sandbox's, where a
// container's /proc has masked paths and enableWeakerNestedSandbox binds
// the container's /proc in place of a fresh one.
func maskedProcEnforcement(e Enforcement) Enforcement {
	e.Level = Partial
	e.Lacks = append(e.Lacks, "no fresh /proc (the container masks paths of its own): the container's /proc is bound, so its other processes are visible inside, with their command lines (Landlock still keeps their memory, environment and signals out of reach); Docker's --security-opt systempaths=unconfined gives the full sandbox")
	return e
}

// withOwnSockets is the fallback's e where srt makes the command's
// sockets (pidfd_getfd is refused, as in Docker's default profile).
func withOwnSockets(e Enforcement) Enforcement {
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

// command prepares one run.
func (s *linuxBackend) command(ctx context.Context, o Run, argv []string) (*exec.Cmd, error) {
	r, err := s.prepare(ctx, o, argv)
	if err != nil {
		return nil, err
	}
	return r.launch.Cmd, nil
}

// startCommand starts one of the session's Cmds, learning from its
// link how the sandbox's setup went; any other Cmd (one whose Err says
// why it was never prepared) just starts.
func (s *linuxBackend) startCommand(cmd *exec.Cmd) error {
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

// wrap prepares one run to be started by the caller.
func (s *linuxBackend) wrap(o Run, argv []string) ([]string, error) {
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
func (s *linuxBackend) prepare(ctx context.Context, o Run, argv []string) (*run, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	settings := s.settings
	s.mu.Unlock()
	if s.fallback && landlock.ABI() == 0 {
		return nil, &UnsupportedError{Missing: "user namespaces or Landlock",
			Err: errors.New("refusing to run: neither user namespaces nor Landlock are available here, so no sandbox can be built")}
	}
	cwd, env, home, err := o.defaults(argv)
	if err != nil {
		return nil, err
	}
	r := &run{key: o.key(), text: o.Text, client: &proxy.Client{ID: o.key()}}
	allow, err := commandAllow(o, settings)
	if err != nil {
		return nil, err
	}
	r.client.Allow = allow
	in, err := s.runInputs(o, settings, env, home, cwd)
	if err != nil {
		return nil, err
	}
	settings, env, creds, masks := in.settings, in.env, in.creds, in.masks
	r.client.Inject = in.inject
	var files []nsexec.RunFile
	if bundle := s.trustBundle(s.Sandbox); bundle != nil {
		files = append(files, nsexec.RunFile{Name: "trust-bundle.crt", Data: bundle, Env: trustVars})
	}
	// The run's proxies first; the plan and the start then in nsexec,
	// which calls nothing back but the event sinks and the proxies'
	// serving.
	side, err := s.network(r, settings, env)
	var l *nsexec.Launch
	if err == nil {
		l, err = nsexec.Prepare(settings, nsexec.Options{Argv: argv, Env: env, Cwd: cwd, Home: home, Debug: s.debug,
			Terminal: o.Terminal, OnTerminal: o.OnTerminal, OnStop: o.OnStop, OnFailure: func(err error) { s.recordFailure(r.key, err) }, Net: &side, Intercept: !s.fallback, Fallback: s.fallback, Context: ctx, NullFDs: o.NullFDs, Masks: masks, Files: files, HostProc: s.maskedProc,
			OnEvent: func(e nsexec.Event) {
				// Libraries probe for Unix sockets (nscd) on every lookup:
				// a refused socket(AF_UNIX) is told once a run.
				if e.Call == "socket" && r.socketTold.Swap(true) {
					return
				}
				s.record(r, fromEvent(e))
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
	if err := credentialConflicts(l.RunPlan.Policy, creds, home, cwd); err != nil {
		r.stop0(l)
		return nil, err
	}
	r.launch = l
	// Like exec.Command: no stdio unless the caller sets it.
	l.Cmd.Stdin, l.Cmd.Stdout, l.Cmd.Stderr = nil, nil, nil
	if s.debug {
		p := linuxRunPlan(l.RunPlan, landlock.ABI())
		p.Enforcement = s.enforcement(settings)
		s.debugf("Mount plan:\n%s", l.Plan)
		s.debugf("Enforcement: %s", p.Enforcement)
		s.debugf("%s", l.RunPlan.GuardLine())
		s.debugf("Seccomp filter for %s", seccomp.Describe(l.Seccomp))
		if l.Landlock != nil {
			s.debugf("Landlock layer: read %v; read files %v; list only %v; write %v", l.Landlock.Read, l.Landlock.ReadFile, l.Landlock.ListOnly, l.Landlock.Write)
		}
		// The plan as srt plan --json prints it: one line, for tools.
		if data, err := json.Marshal(p); err == nil {
			s.debugf("Plan: %s", data)
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		r.stop()
		return nil, ErrClosed
	}
	s.runs[r] = struct{}{}
	s.plans[r.key] = planRules(l.RunPlan.Policy, settings.Filesystem.AllowWrite, r.text, cwd, home)
	if len(s.plans) > ViolationBuffer {
		for k := range s.plans {
			if k != r.key {
				delete(s.plans, k)
				break
			}
		}
	}
	s.wg.Add(1)
	s.mu.Unlock()
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
	javaOpts := javaToolOptions(settings.JavaAgentJarPath, inherited)
	n := settings.Network
	serveHTTP := func(ln net.Listener) { s.proxies.ServeHTTP(ln, r.client) }
	serveSOCKS := func(ln net.Listener) { s.proxies.ServeSOCKS(ln, r.client) }
	// The user's own proxies, when the settings name them, take the
	// place of srt's (they decide, not the allow lists).
	if n.HTTPProxyPort != nil {
		serveHTTP = forwardTo(*n.HTTPProxyPort)
	}
	if n.SOCKSProxyPort != nil {
		serveSOCKS = forwardTo(*n.SOCKSProxyPort)
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
		s.proxies.ServeTransparent(r.client, t)
	}
	side.Env = proxy.Env(proxyHTTPPort, proxySOCKSPort, javaOpts)
	if self, err := os.Executable(); err == nil {
		// git's ssh goes through the policy by way of srt itself.
		side.Env = append(side.Env, "GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='"+self+" ssh-proxy %h %p'")
	}
	return side, nil
}

// planRules is what p does to paths, for reading denials: its mounts,
// and the allowWrite entries (of allowWrite, the settings p was built
// from) that it skipped, which explain a write refused where they point.
func planRules(pol *policy.Policy, allowWrite []config.PathEntry, text, cwd, home string) *planInfo {
	info := &planInfo{text: text, cwd: cwd}
	if pol.Disabled {
		info.rules = []fsRule{{path: "/", why: "filesystem.disabled"}} // everything writable
		return info
	}
	// The view changes only at the paths rules name: there, what the
	// policy says, and the rule that says it.
	paths := map[string]bool{}
	for _, r := range pol.Reads {
		paths[r.Path] = true
	}
	for _, r := range pol.Writes {
		paths[r.Path] = true
	}
	for p := range paths {
		v := pol.View(p)
		reads, writes := pol.Decider(p)
		r := fsRule{path: p}
		switch {
		case !v.Readable:
			r.hidden, r.why = true, firstWhy(reads, false)
		case v.Writable:
			r.why = firstWhy(writes, true)
		case firstWhy(writes, true) != "":
			r.readOnly, r.why = true, firstWhy(writes, false)
		default:
			continue // read-only as the whole host is: no rule of its own
		}
		info.rules = append(info.rules, r)
	}
	done := map[int]bool{}
	for _, s := range pol.Skipped {
		// The plan names an entry "filesystem.allowWrite.<index> <path>".
		rest, ok := strings.CutPrefix(s.Rule, "filesystem.allowWrite.")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, " ")
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(allowWrite) || done[i] {
			continue
		}
		done[i] = true
		e := allowWrite[i]
		path, ok, err := config.Expand(e, home, cwd)
		if err != nil || !ok {
			continue
		}
		why := fmt.Sprintf("allowWrite entry %q was not applied: %s", e.Path, s.Why)
		switch {
		case strings.HasPrefix(s.Why, "does not exist"):
			why = fmt.Sprintf("allowWrite entry %q did not exist when the command started", e.Path)
		case strings.HasPrefix(s.Why, "the pattern matches nothing"):
			why = fmt.Sprintf("allowWrite entry %q matched nothing when the command started", e.Path)
		}
		r := fsRule{path: path.Path, why: why, skipped: true}
		if path.Glob != nil {
			r.path, r.glob = path.Glob.Root(), path.Glob
			info.rules = append(info.rules, r)
			continue
		}
		info.rules = append(info.rules, r)
		// The mounts are at real paths, and so are the paths a command
		// names through cwd: the entry's, resolved as far as it exists.
		if real := resolveExisting(path.Path); real != path.Path {
			r.path = real
			info.rules = append(info.rules, r)
		}
	}
	return info
}

// firstWhy is the Why of the first rule of rs that allows (allow) or
// denies: the deepest, as Policy.Decider lists them.
func firstWhy(rs []policy.Rule, allow bool) string {
	for _, r := range rs {
		if r.Allow == allow {
			return r.Why
		}
	}
	return ""
}

// hostWritable reports whether this user could write path on the host:
// a denial there came from the sandbox.
func (s *linuxBackend) hostWritable(path string) bool { return writableOnHost(path) }

// fromEvent is the violation of a call the seccomp supervisor refused.
func fromEvent(e nsexec.Event) Violation {
	v := Violation{Kind: KindUnixSocket, Operation: e.Call, Target: e.Target, Reason: e.Reason}
	switch {
	case e.Kind == "filesystem":
		v.Kind = KindFilesystem // a metadata change (chmod, chown, utimes, xattrs) in the fallback
	case (e.Call == "connect" || e.Call == "listen") && !strings.HasPrefix(e.Target, "/") && !strings.HasPrefix(e.Target, "@"):
		v.Kind = KindNetwork
	}
	return v
}

// settle waits briefly for the last events of key's runs that have
// exited, so that Violations after the caller's Wait is complete.
func (s *linuxBackend) settle(key string) {
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
