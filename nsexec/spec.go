package nsexec

import (
	"github.com/srt-go/srt/landlock"
	"github.com/srt-go/srt/seccomp"
)

// Spec is what the supervisor sends the init over a pipe (never argv:
// plans with thousands of rules must not meet E2BIG or argument caps).
type Spec struct {
	Plan       *Plan    `json:"plan"`
	Argv       []string `json:"argv"`
	Env        []string `json:"env"`
	Cwd        string   `json:"cwd"`
	RuntimeDir string   `json:"runtimeDir"` // private 0700 directory of this run, on the host
	Debug      bool     `json:"debug"`
	Terminal   bool     `json:"terminal"` // stdin is a pty of the sandbox's own: make it the controlling terminal
	// TerminalOnDemand, with Terminal: the command starts in the
	// background of its terminal and gets its foreground when it first
	// reads it or changes its modes (Options.OnTerminal).
	TerminalOnDemand bool `json:"terminalOnDemand,omitempty"`
	// ProxyPorts are the loopback ports inside the sandbox where the
	// command finds the proxies: the init listens on them and hands the
	// listening sockets to srt over the link, which serves them itself
	// (as it serves the transparent path's, with Intercept).
	ProxyPorts []int `json:"proxyPorts,omitempty"`
	// Seccomp selects the rules of the command's filter.
	Seccomp seccomp.Options `json:"seccomp"`
	// UnixSocketPaths are allowUnixSockets, absolute, with symlinks
	// resolved: with Seccomp.Unix == seccomp.UnixByPath a connect reaches a Unix
	// socket only at or under one of them.
	UnixSocketPaths []string `json:"unixSocketPaths,omitempty"`
	// Landlock is the second layer over the mount plan, applied by the
	// init to itself and the command where the kernel has Landlock;
	// nil with allowNestedUserNamespaces, whose mounts Landlock forbids.
	Landlock *landlock.Rules `json:"landlock,omitempty"`
	// Ports are the fallback's proxy ports on loopback: the only TCP
	// destinations Landlock lets the command connect to.
	Ports []uint16 `json:"ports,omitempty"`
	// LocalBinding is allowLocalBinding, in the fallback: Landlock leaves
	// TCP alone, and the seccomp supervisor lets a socket listen only on
	// loopback, and a connect reach the command's own listeners.
	LocalBinding bool `json:"localBinding,omitempty"`
	// WeakerProc is enableWeakerNestedSandbox: where no fresh /proc can be
	// mounted, the host's is bound.
	WeakerProc bool `json:"weakerProc,omitempty"`
	// Intercept turns on the transparent path and the DNS stub, which ask
	// the host's proxy, and so follow the live policy.
	Intercept bool `json:"intercept,omitempty"`
	// NullFDs are descriptor slots the command finds on /dev/null.
	NullFDs []int `json:"nullFDs,omitempty"`
}

// Roles of the re-executed binary, given as its first argument. A user
// cannot reach them by accident: each refuses to run unless fd 3 carries a
// spec and its namespaces are new.
const (
	roleInit = "__srt_nsexec_init"
)
