package backend

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/credential"
	"github.com/srt-go/srt/netfilter"
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

// Inputs is what every backend makes of a run's own options before
// planning it: its attribution, its working directory, environment and
// settings with the command's own (Run.Config), git's safe directories
// and the credentials applied (srt's own variables, set later, win), the
// masked files' copies, and the run's proxy client (its own allowed
// domains, its credentials' injector).
type Inputs struct {
	// Key is the attribution key (Run.ID, or Text); Text the command as
	// the user reads it (Run.Text, or the argv joined by spaces).
	Key, Text string
	// Cwd is the working directory (Run.Dir, or the process's own), Home
	// the user's home.
	Cwd, Home string
	// Settings are the session's with the command's own, and the
	// credentials' hidden and masked files joined to denyRead.
	Settings *config.Settings
	// Env is the command's environment (Run.Env, or the process's own)
	// with git's safe directories and the credentials' sentinels.
	Env []string
	// Creds is the run's credential plan, Masks the masked files'
	// copies by path.
	Creds *credential.Plan
	Masks map[string][]byte
	// Client is the run's proxy client: its key, its own allowed
	// domains, its credentials' injector.
	Client *proxy.Client
}

// RunInputs makes a run's Inputs from its options o, its argv and the
// session's settings; h hears the credentials' warnings.
func RunInputs(h Host, o Run, settings *config.Settings, argv []string) (*Inputs, error) {
	cwd, env, home, err := o.defaults(argv)
	if err != nil {
		return nil, err
	}
	in := &Inputs{Key: o.key(), Text: o.Text, Cwd: cwd, Home: home, Client: &proxy.Client{ID: o.key()}}
	if in.Client.Allow, err = commandAllow(o, settings); err != nil {
		return nil, err
	}
	if settings, err = o.Config.apply(settings); err != nil {
		return nil, err
	}
	env = withGitSafeDirectories(env, gitSafeDirectories(settings))
	creds, err := credentials(settings, env, home, cwd)
	if err != nil {
		return nil, err
	}
	for _, w := range creds.Warnings {
		h.Warn(w)
	}
	in.Env, in.Creds = creds.Env(env), creds
	if in.Settings, in.Masks, err = withCredentials(settings, creds); err != nil {
		return nil, err
	}
	if inj := creds.Injector(); inj != nil {
		in.Client.Inject = inj.For
	}
	return in, nil
}

// key is a Run's attribution key.
func (r Run) key() string {
	if r.ID != "" {
		return r.ID
	}
	return r.Text
}

// defaults completes a run's options as every backend does: the text its
// violations are filed under, and its working directory and environment
// (the process's own when unset). It returns those and the user's home.
func (o *Run) defaults(argv []string) (cwd string, env []string, home string, err error) {
	if o.Text == "" {
		o.Text = strings.Join(argv, " ")
	}
	if cwd = o.Dir; cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return "", nil, "", err
		}
	}
	if env = o.Env; env == nil {
		env = os.Environ()
	}
	home, _ = os.UserHomeDir()
	return cwd, env, home, nil
}

// commandAllow is a command's own allowedDomains (Run.AllowedDomains),
// nil for none; under network.strictAllowlist they are refused, as
// dropping them would leave the caller believing the command may reach
// them.
func commandAllow(o Run, settings *config.Settings) (*netfilter.Rules, error) {
	if len(o.AllowedDomains) == 0 {
		return nil, nil
	}
	if settings.Network.StrictAllowlist {
		return nil, fmt.Errorf("srt: network.strictAllowlist is set, so only network.allowedDomains may allow a destination: the command's own allowed domains %q are refused; add them to network.allowedDomains, or drop strictAllowlist", o.AllowedDomains)
	}
	extra, err := netfilter.Compile(o.AllowedDomains, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("the command's allowedDomains: %w", err)
	}
	return extra, nil
}

// gitSafeDirectories is git.safeDirectories, nil without a git section.
func gitSafeDirectories(s *config.Settings) []string {
	if s.Git == nil {
		return nil
	}
	return s.Git.SafeDirectories
}
