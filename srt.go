// Package srt runs commands in the sandbox from Go: the library behind
// the srt command.
//
// A Sandbox is a session: New validates nothing more than config did,
// starts the policy proxies once, and every Command of the session goes
// through them. Many commands may run at once; each gets a sandbox of its
// own (namespaces, mount plan, seccomp, Landlock) and its own proxy
// listeners, so what the proxies deny is attributed to the command that
// asked, which cannot pass for another.
//
// Per session (New, and Update for the network lists): network.* (the
// allow and deny lists, their reasons, deniedResolvedAddresses and
// strictAllowlist take effect on the next connection after Update;
// parentProxy and the external proxy ports only at New), ignoreViolations,
// and enableWeakerNestedSandbox (whether the fallback sandbox is used is
// decided once, at New). Per command: the filesystem section,
// allowUnixSockets, allowNestedUserNamespaces, javaAgentJarPath and
// git.safeDirectories are read from the session's settings when the
// command is made (after Update, later commands see the new ones), plus
// Run's own fields: an id and a text for attribution, extra allowed
// domains for that command alone, its working directory and environment.
//
// Settings that ask for something srt does not do on this platform are
// refused, by New and by Update alike, before anything runs: see
// CheckSettings, and config.Rules for the rule of every key.
//
// The process that uses this package is also the sandbox's init: call
// MaybeRunInit first thing in main (and in TestMain).
package srt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/credential"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/nsexec"
	"github.com/srt-go/srt/proxy"
)

// Run is one command's own options.
type Run struct {
	// ID is the attribution key of the command's violations; empty means
	// Text (as in the reference).
	ID string
	// Text is the command as the user reads it; empty means the argv
	// joined by spaces. It is what ignoreViolations patterns match.
	Text string
	// AllowedDomains are allowedDomains entries for this command alone
	// (they never override deniedDomains). Under network.strictAllowlist
	// they are refused: Start fails and nothing runs.
	AllowedDomains []string
	// Dir is the working directory; empty means the current one. It is
	// part of the plan ("." in allowWrite), so set it here, not on the
	// returned Cmd.
	Dir string
	// Env is the command's environment; nil means os.Environ(). The
	// proxy variables and TMPDIR are set on top of it.
	Env []string
	// Terminal says the Cmd's stdin is a pty made for the command. In the
	// namespace sandbox the command gets a pseudo-terminal of the
	// sandbox's own (ttyname works inside), relayed to that one; in the
	// fallback, that one. Either is its controlling terminal, with the
	// command in the foreground: Ctrl-Z stops it.
	Terminal bool
	// OnTerminal, if set with Terminal, starts the command in the
	// background of its terminal, as a shell starts a job that shares the
	// terminal with others (srt cmd | less): the caller need not relay
	// the user's input, nor change the modes of the user's terminal,
	// until the command reads its terminal or changes its modes. Then it
	// is given the terminal's foreground and OnTerminal is called (once;
	// it must not block). The macOS backend starts the command in the
	// foreground all the same, and calls OnTerminal as it starts.
	OnTerminal func()
	// OnStop, if set, is called when the command stops (Ctrl-Z on its
	// terminal, or SIGTSTP sent to the Cmd's process); it must not block.
	// SIGCONT sent to the Cmd's process lets the command go on. A caller
	// that is itself a job of a shell stops itself here, as srt does.
	// asked says the stop answers a SIGTSTP sent to the Cmd's process:
	// a caller that has sent SIGCONT since ignores it, for that SIGCONT
	// lets the command go on (the answer may come after it).
	OnStop func(asked bool)
	// NullFDs are descriptor numbers (3 and up) the command finds open on
	// /dev/null.
	NullFDs []int
	// Config, if set, overrides the session's settings for this command
	// alone (the reference's customConfig, spec h).
	Config *RunConfig
}

// RunConfig is what one command may have of its own: each field set
// replaces the session's, but SafeDirectories, which are joined to
// git.safeDirectories. The settings that result are validated as a
// settings file is: a command whose own credentials the session's
// network does not allow (injectHosts, tlsTerminate) does not start.
type RunConfig struct {
	// AllowWrite, DenyWrite, DenyRead and AllowRead replace the
	// session's lists when not nil; Disabled its filesystem.disabled.
	AllowWrite, DenyWrite, DenyRead, AllowRead []config.PathEntry
	Disabled                                   *bool
	// Credentials replaces the session's credentials section.
	Credentials *config.Credentials
	// AllowPty and AllowNestedUserNamespaces replace the session's.
	AllowPty, AllowNestedUserNamespaces *bool
	// SafeDirectories are more git.safeDirectories.
	SafeDirectories []string
}

// apply returns s with c's overrides, validated.
func (c *RunConfig) apply(s *config.Settings) (*config.Settings, error) {
	if c == nil {
		return s, nil
	}
	out := *s
	fs := &out.Filesystem
	for _, o := range []struct {
		dst *[]config.PathEntry
		src []config.PathEntry
	}{{&fs.AllowWrite, c.AllowWrite}, {&fs.DenyWrite, c.DenyWrite}, {&fs.DenyRead, c.DenyRead}, {&fs.AllowRead, c.AllowRead}} {
		if o.src != nil {
			*o.dst = o.src
		}
	}
	if c.Disabled != nil {
		fs.Disabled = *c.Disabled
	}
	if c.Credentials != nil {
		out.Credentials = c.Credentials
	}
	if c.AllowPty != nil {
		out.AllowPty = *c.AllowPty
	}
	if c.AllowNestedUserNamespaces != nil {
		out.AllowNestedUserNamespaces = *c.AllowNestedUserNamespaces
	}
	if len(c.SafeDirectories) > 0 {
		g := config.Git{}
		if out.Git != nil {
			g = *out.Git
		}
		g.SafeDirectories = append(append([]string(nil), g.SafeDirectories...), c.SafeDirectories...)
		out.Git = &g
	}
	// As a settings file would be: the schema and every cross-check.
	data, err := json.Marshal(&out)
	if err != nil {
		return nil, err
	}
	if _, _, err := config.Parse(data); err != nil {
		return nil, fmt.Errorf("the command's own settings (Run.Config): %w", err)
	}
	if err := config.Check(&out, runtime.GOOS); err != nil {
		return nil, err
	}
	return &out, nil
}

// Option configures a Sandbox.
type Option func(*Sandbox)

// WithDebugLog sends what the sandbox does to logf.
func WithDebugLog(logf func(format string, args ...any)) Option {
	return func(s *Sandbox) { s.debugf, s.debug = logf, true }
}

// WithViolationHandler calls h for every violation as it is recorded
// (after ignoreViolations). h must not block.
func WithViolationHandler(h func(Violation)) Option {
	return func(s *Sandbox) { s.onViolation = h }
}

// RequestFilter, RequestInfo and FilterDecision are the request filter's
// (spec d.6 filterRequest; see proxy.RequestFilter).
type (
	RequestFilter  = proxy.RequestFilter
	RequestInfo    = proxy.RequestInfo
	FilterDecision = proxy.FilterDecision
)

// WithRequestFilter has f decide on every request the session's proxies
// read: those inside tunnels they terminate (network.tlsTerminate) and
// plain HTTP ones, after the policy allowed their destination. With it,
// network.allowPlaintextHeaderSet and network.ambiguousRequestTarget
// apply. It holds for the session (Update does not change it).
func WithRequestFilter(f RequestFilter) Option {
	return func(s *Sandbox) { s.filter = f }
}

// AskRequest is a destination no rule decides, and the command asking.
type AskRequest struct {
	CommandID string
	Host      string
	Port      uint16
}

// WithAsk has ask decide on destinations no rule decides (spec d.2 step
// 7): not on the deny list, not on the allow list nor the command's own,
// and not under network.strictAllowlist. It is asked for every
// connection and plain request, from the connection's goroutine: no
// answer is remembered (ask may remember answers itself), and calls are
// not serialised. allow lets the connection go; otherwise reason is told
// in the refusal ("user denied" when empty); an error or a panic refuses
// with "permission prompt failed". The DNS stub answers every name the
// deny list leaves, so that the ask comes at the connection.
func WithAsk(ask func(AskRequest) (allow bool, reason string, err error)) Option {
	return func(s *Sandbox) { s.ask = ask }
}

// WithWarningHandler sends warnings to h instead of srt's stderr: a
// credential rule that protects nothing (its pattern found nothing to
// mask, and its onExtractNoMatch is "warn").
func WithWarningHandler(h func(string)) Option {
	return func(s *Sandbox) { s.warn = h }
}

// Sandbox is a session of sandboxed commands sharing one set of proxies.
type Sandbox struct {
	debugf      func(format string, args ...any)
	warn        func(string)
	filter      RequestFilter
	ask         func(AskRequest) (bool, string, error)
	debug       bool
	onViolation func(Violation)
	store       *store

	mu       sync.Mutex
	settings *config.Settings
	closed   bool
	runs     map[*run]struct{}
	wg       sync.WaitGroup
	// plans remembers, per attribution key, the last command's text and
	// how its filesystem was built, to read denials out of its stderr
	// later.
	plans map[string]*planInfo
	// failures are, per attribution key, the last failure of srt's own
	// side of a run (see Err).
	failures map[string]error

	be backend
}

// backend is what each system provides a Sandbox: srt_linux.go's, or
// srt_other.go's, which refuses everything.
type backend interface {
	// supported says whether a sandbox can run on this system at all.
	supported() error
	// start starts the session (its proxies) for settings.
	start(settings *config.Settings) error
	// setNetwork puts the network section of an Update in force: its
	// compiled policy, and its inspecting proxy.
	setNetwork(config.Network, *netfilter.Policy) error
	// stop stops the session's proxies.
	stop()
	// enforcement is the level a command with settings gets.
	enforcement(settings *config.Settings) Enforcement
	// command and wrap prepare one run.
	command(ctx context.Context, r Run, argv []string) (*exec.Cmd, error)
	// startCommand starts a Cmd of command, returning once the command
	// runs or the sandbox could not be built.
	startCommand(cmd *exec.Cmd) error
	wrap(r Run, argv []string) ([]string, error)
	// settle waits briefly for the last events of key's finished runs.
	settle(key string)
	// hostWritable says whether this user could write path on the host:
	// a denial there came from the sandbox.
	hostWritable(path string) bool
	// doctor reports what the host offers the sandbox.
	doctor() *Report
	// explainStart explains a failure to start a run's process.
	explainStart(err error) error
	// landlockABI is the kernel's Landlock ABI; 0: none.
	landlockABI() int
}

// ErrClosed is returned for commands of a closed Sandbox.
var ErrClosed = errors.New("srt: the sandbox is closed")

// New starts a session under settings (validated by config). ctx bounds
// the start only. Settings that CheckSettings refuses start nothing.
func New(ctx context.Context, settings *config.Settings, opts ...Option) (*Sandbox, error) {
	if err := CheckSettings(settings); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Sandbox{debugf: func(string, ...any) {}, runs: map[*run]struct{}{}, plans: map[string]*planInfo{},
		warn: func(w string) { fmt.Fprintf(credential.Redacting(os.Stderr), "srt: warning: %s\n", w) }}
	s.be = newBackend(s)
	for _, o := range opts {
		o(s)
	}
	s.settings = settings
	s.store = newStore(settings.IgnoreViolations, s.onViolation)
	if err := s.be.start(settings); err != nil {
		return nil, err
	}
	return s, nil
}

// Command returns the Cmd that runs name with args in the sandbox, with
// no options of its own. Set its Stdin, Stdout and Stderr as usual; its
// Path, Args, Env and Dir belong to the sandbox. If the sandbox cannot be
// built, Start returns why and nothing runs.
func (s *Sandbox) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return s.CommandRun(ctx, Run{}, name, args...)
}

// Start starts cmd, a Cmd of this sandbox, and returns once the command
// runs in a sandbox that was built. Where the sandbox could not be built
// it returns a *SetupError (the step that failed, its path, the errno and
// what may fix it), or an *UnsupportedError when the host refused the
// sandbox altogether, and nothing of the command ran: there is nothing
// to Wait for then. Use it rather than cmd.Start, which cannot return
// such errors: with cmd.Start a setup failure is printed on the
// command's stderr and Wait returns exit status 1.
func (s *Sandbox) Start(cmd *exec.Cmd) error {
	return s.be.explainStart(s.be.startCommand(cmd))
}

// SetupError is a sandbox that could not be built, from Start.
type SetupError = nsexec.SetupError

// CommandRun is Command with the command's own options.
func (s *Sandbox) CommandRun(ctx context.Context, r Run, name string, args ...string) *exec.Cmd {
	argv := append([]string{name}, args...)
	cmd, err := s.be.command(ctx, r, argv)
	if err != nil {
		// Start reports Err and runs nothing.
		cmd = &exec.Cmd{Path: name, Args: argv, Err: err}
	}
	return cmd
}

// Wrap prepares name with args like CommandRun, for a caller that starts
// the process itself: start argv with env (no variables: the command's
// environment travels with the run) and the stdio the command should
// have. argv runs a trampoline of this binary (so its main must call
// MaybeRunInit), which builds the sandbox as Command's Cmd would. A
// wrapped run that is never started is removed by Close. The fallback
// sandbox (enableWeakerNestedSandbox on a host without namespaces)
// cannot be wrapped.
func (s *Sandbox) Wrap(r Run, name string, args ...string) (argv, env []string, err error) {
	argv, err = s.be.wrap(r, append([]string{name}, args...))
	if err != nil {
		return nil, nil, err
	}
	return argv, []string{}, nil
}

// Update replaces the session's settings: the network lists for the next
// connection of every command, the rest for later commands. Settings that
// CheckSettings refuses, and invalid network lists, are refused and the
// previous settings stay.
func (s *Sandbox) Update(settings *config.Settings) error {
	if err := CheckSettings(settings); err != nil {
		return err
	}
	p, err := compilePolicy(settings.Network)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if err := s.be.setNetwork(settings.Network, p); err != nil {
		return err
	}
	s.settings = settings
	s.store.mu.Lock()
	s.store.ignore = settings.IgnoreViolations
	s.store.mu.Unlock()
	return nil
}

// CheckSettings reports whether New and Update take settings on this
// platform, without starting anything: nil, or why not — this platform
// has no sandbox backend yet, or a *config.RefusedError naming every key
// the settings set that srt refuses here (config.Check with runtime.GOOS).
// Keys that have no meaning here are accepted; config.Meaningless lists
// them.
func CheckSettings(settings *config.Settings) error {
	if settings == nil {
		return errors.New("srt: no settings")
	}
	if err := newBackend(nil).supported(); err != nil {
		// Nothing runs here whatever the keys say.
		return err
	}
	return config.Check(settings, runtime.GOOS)
}

// compilePolicy is the network section as the proxies decide by it.
func compilePolicy(n config.Network) (*netfilter.Policy, error) {
	p, err := netfilter.NewPolicy(n.AllowedDomains, n.DeniedDomains, n.DeniedDomainReasons, n.DeniedResolvedAddresses)
	if err != nil {
		return nil, err
	}
	p.Strict = n.StrictAllowlist
	return p, nil
}

// gitSafeDirectories is git.safeDirectories, nil without a git section.
func gitSafeDirectories(s *config.Settings) []string {
	if s.Git == nil {
		return nil
	}
	return s.Git.SafeDirectories
}

// Settings returns the session's current settings.
func (s *Sandbox) Settings() *config.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// Violations returns the violations kept for the attribution key id
// (Run.ID, or Run.Text when the command had no id), oldest first.
func (s *Sandbox) Violations(id string) []Violation {
	s.be.settle(id)
	return s.store.of(id)
}

// Err returns the failure of srt's own side of a run of id (Run.ID, or
// Run.Text), if one failed while it ran: its guard could not be served,
// say. Such a run was stopped by srt, whatever exit status the command
// shows, and the caller must treat it as failed.
func (s *Sandbox) Err(id string) error {
	s.be.settle(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failures[id]
}

// recordFailure keeps the failure of a run of key (see Err).
func (s *Sandbox) recordFailure(key string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == nil {
		s.failures = map[string]error{}
	}
	if len(s.failures) >= ViolationBuffer {
		clear(s.failures)
	}
	s.failures[key] = err
	if s.debugf != nil {
		s.debugf("srt's side of the run failed: %v", err)
	}
}

// AnnotateStderr reads denied file accesses out of a command's stderr,
// records them, and returns stderr with a <sandbox_violations> block of
// the command's violations appended; with none, stderr unchanged. A
// refused socket(AF_UNIX) is left out of the block (see Probe).
func (s *Sandbox) AnnotateStderr(id, stderr string) string {
	s.InferFromStderr(id, stderr)
	var vs []Violation
	for _, v := range s.Violations(id) {
		if !v.Probe() {
			vs = append(vs, v)
		}
	}
	return annotate(stderr, vs)
}

// InferFromStderr records the file accesses that the plan of the last
// command with attribution key id denied, as found in its stderr.
func (s *Sandbox) InferFromStderr(id, stderr string) []Violation {
	s.mu.Lock()
	info := s.plans[id]
	s.mu.Unlock()
	if info == nil {
		return nil
	}
	vs := inferFilesystem(stderr, info.cwd, info.rules, s.be.hostWritable)
	known := map[string]bool{}
	for _, v := range s.Violations(id) {
		if v.Kind == KindFilesystem {
			known[v.Target] = true
		}
	}
	var added []Violation
	for _, v := range vs {
		if known[v.Target] {
			continue
		}
		v.CommandID, v.Command = id, info.text
		s.store.add(v)
		added = append(added, v)
	}
	return added
}

// Enforcement is the level every command of this session gets.
func (s *Sandbox) Enforcement() Enforcement { return s.be.enforcement(s.Settings()) }

// Close stops every running command of the session and the proxies, and
// removes what the session made. It is safe to call twice.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
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
	s.be.stop()
	return nil
}

// key is a Run's attribution key.
func (r Run) key() string {
	if r.ID != "" {
		return r.ID
	}
	return r.Text
}

// record adds a violation of run r.
func (s *Sandbox) record(r *run, v Violation) { s.recordFor(r.key, r.text, v) }

// recordFor adds a violation of the command with attribution key key and
// text text.
func (s *Sandbox) recordFor(key, text string, v Violation) {
	v.CommandID, v.Command = key, text
	s.store.add(v)
}

// fromDecision is the violation of a proxy's denial.
func fromDecision(d proxy.Decision) Violation {
	v := Violation{Kind: KindNetwork, Operation: "connect", Target: hostPort(d.Host, d.Port), Rule: d.Rule, Reason: d.Reason}
	switch d.Protocol {
	case "dns":
		v.Operation, v.Target = "resolve", d.Host
	case proxy.ProtocolHTTPRequest, proxy.ProtocolSOCKSTunnel:
		// A request or tunnel the inspecting proxy refused: the target
		// is "METHOD url", or host:port, as the proxy spelled it.
		v.Operation, v.Target = d.Protocol, d.Host
	}
	if d.Rule != "" {
		v.Rule = "deniedDomains " + `"` + d.Rule + `"`
	}
	if d.Resolved != nil {
		v.Rule = "resolved address"
	}
	return v
}

func hostPort(host string, port uint16) string {
	if port == 0 {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(int(port)))
}
