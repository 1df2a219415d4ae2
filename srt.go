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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/credential"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/proxy"
)

// Run is one command's own options: an ID and a Text for attribution,
// AllowedDomains for that command alone, its Dir and Env, Terminal with
// OnTerminal and OnStop, NullFDs, and Config, the settings of its own
// (the fields' documentation: go doc ./internal/backend.Run). It is
// backend.Run, which each system's backend reads.
type Run = backend.Run

// RunConfig is what one command may have of its own (Run.Config): each
// field set replaces the session's, but SafeDirectories, which are joined
// to git.safeDirectories, and the settings that result are validated as a
// settings file is (go doc ./internal/backend.RunConfig).
type RunConfig = backend.RunConfig

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
	// plans remembers, per attribution key, the last command's text and
	// how its filesystem was built, to read denials out of its stderr
	// later.
	plans map[string]*planInfo
	// failures are, per attribution key, the last failure of srt's own
	// side of a run (see Err).
	failures map[string]error

	// be is this system's backend (srt_<goos>.go), stopped once by Close.
	be       backend.Backend
	stopOnce sync.Once
}

// ErrClosed is returned for commands of a closed Sandbox.
var ErrClosed = backend.ErrClosed

// New starts a session under settings (validated by config). ctx bounds
// the start only. Settings that CheckSettings refuses start nothing.
func New(ctx context.Context, settings *config.Settings, opts ...Option) (*Sandbox, error) {
	if err := CheckSettings(settings); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Sandbox{debugf: func(string, ...any) {}, plans: map[string]*planInfo{},
		warn: func(w string) { fmt.Fprintf(credential.Redacting(os.Stderr), "srt: warning: %s\n", w) }}
	s.be = newBackend(host{s})
	for _, o := range opts {
		o(s)
	}
	s.settings = settings
	s.store = newStore(settings.IgnoreViolations, s.onViolation)
	if err := s.be.Start(settings); err != nil {
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
	return s.be.ExplainStart(s.be.StartCommand(cmd))
}

// CommandRun is Command with the command's own options.
func (s *Sandbox) CommandRun(ctx context.Context, r Run, name string, args ...string) *exec.Cmd {
	argv := append([]string{name}, args...)
	cmd, err := s.be.Command(ctx, r, argv)
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
	argv, err = s.be.Wrap(r, append([]string{name}, args...))
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
	p, err := backend.CompilePolicy(settings.Network)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if err := s.be.SetNetwork(settings.Network, p); err != nil {
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
	if err := newBackend(nil).Supported(); err != nil {
		// Nothing runs here whatever the keys say.
		return err
	}
	return config.Check(settings, runtime.GOOS)
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
	s.be.Settle(id)
	return s.store.of(id)
}

// Err returns the failure of srt's own side of a run of id (Run.ID, or
// Run.Text), if one failed while it ran: its guard could not be served,
// say. Such a run was stopped by srt, whatever exit status the command
// shows, and the caller must treat it as failed.
func (s *Sandbox) Err(id string) error {
	s.be.Settle(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failures[id]
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
	vs := inferFilesystem(stderr, info.cwd, info.rules, s.be.HostWritable)
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
func (s *Sandbox) Enforcement() Enforcement { return s.be.Enforcement(s.Settings()) }

// Close stops every running command of the session and the proxies, and
// removes what the session made. It is safe to call twice.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stopOnce.Do(s.be.Stop)
	return nil
}
