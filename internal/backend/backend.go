// Package backend is the contract between the srt library's facade (the
// root package, srt) and each system's backend: the one interface a
// backend implements (Backend), what the facade gives it (Host), the
// values that cross between them (Run, Violation, Enforcement, Report and
// the errors), which package srt re-exports under the same names, and
// what every backend sets up the same way: the session's policy proxies
// (Proxies), a run's inputs (Inputs), the decision of the level a run gets
// (contract.go).
//
// It knows no system. A backend is a package of its own beneath this one
// (linux, darwin, windows), imported only by the root's one file for its
// GOOS (srt_<goos>.go), and by no other backend; a system without one
// gets Unsupported, which refuses everything. The layout test of the
// root package holds this for every system.
package backend

import (
	"context"
	"errors"
	"os/exec"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/proxy"
)

// Backend is what a system provides a Sandbox. Supported, Doctor,
// ExplainStart and LandlockABI must work on a Backend made without a Host
// (srt.CheckSettings, srt.Doctor, srt.Plan make one so); the others are
// called only on the session's own, after Start succeeded (Stop and
// Settle also after it failed).
type Backend interface {
	// Supported says whether a sandbox can run on this system at all.
	Supported() error
	// Start starts the session (its proxies) for settings.
	Start(settings *config.Settings) error
	// SetNetwork puts the network section of an Update in force: its
	// compiled policy, and its inspecting proxy. The facade serialises
	// calls (its lock is held).
	SetNetwork(config.Network, *netfilter.Policy) error
	// Stop ends every run of the session, waits for what watches them,
	// and stops the session's proxies. The facade calls it once, after
	// the Host's Settings has begun to return ErrClosed.
	Stop()
	// Enforcement is the level a command with settings gets.
	Enforcement(settings *config.Settings) Enforcement
	// Command prepares one run, and Wrap one its caller starts itself.
	Command(ctx context.Context, r Run, argv []string) (*exec.Cmd, error)
	Wrap(r Run, argv []string) ([]string, error)
	// StartCommand starts a Cmd of Command, returning once the command
	// runs or the sandbox could not be built; any other Cmd (one whose
	// Err says why it was never prepared) just starts.
	StartCommand(cmd *exec.Cmd) error
	// Settle waits briefly for the last events of key's finished runs.
	Settle(key string)
	// HostWritable says whether this user could write path on the host:
	// a denial there came from the sandbox.
	HostWritable(path string) bool
	// Doctor reports what the host offers the sandbox.
	Doctor() *Report
	// ExplainStart explains a failure to start a run's process.
	ExplainStart(err error) error
	// LandlockABI is the kernel's Landlock ABI; 0: none.
	LandlockABI() int
}

// Installer is a backend with a one-time install step, run from an
// elevated prompt rather than by a session (Windows's sandbox account):
// srt windows-install and windows-uninstall.
type Installer interface {
	// Install makes what the backend needs: for account (the default
	// when empty), again with force.
	Install(account string, force bool) error
	// Uninstall removes what Install made.
	Uninstall() error
}

// Host is what the facade gives its backend: the session's settings and
// options, and where a run's violations, failures and plan go. Its
// methods may be called from any goroutine.
type Host interface {
	// Settings are the session's settings now (Update changes them for
	// later runs); ErrClosed once the session is closing.
	Settings() (*config.Settings, error)
	// Record keeps v as a violation of the command with attribution key
	// key (Run.ID, or its text) and text text.
	Record(key, text string, v Violation)
	// Failed keeps err as the failure of srt's own side of a run of key
	// (srt's Sandbox.Err).
	Failed(key string, err error)
	// Planned keeps what the plan of the last run of key does to paths,
	// to read the denials out of its stderr later: pol, and the
	// allowWrite entries of the settings pol was built from, which
	// explain a write refused where an entry the plan skipped points.
	Planned(key, text, cwd, home string, pol *policy.Policy, allowWrite []config.PathEntry)
	// Debug says whether the session logs what it does (WithDebugLog),
	// and Debugf logs it.
	Debug() bool
	Debugf(format string, args ...any)
	// Warn tells the user a warning (WithWarningHandler).
	Warn(string)
	// Filter is the session's request filter (WithRequestFilter), nil
	// without one.
	Filter() proxy.RequestFilter
	// Ask decides on a destination no rule decides (WithAsk); nil
	// without one.
	Ask() func(commandID, host string, port uint16) (allow bool, reason string, err error)
}

// ErrClosed is returned for commands of a closed Sandbox.
var ErrClosed = errors.New("srt: the sandbox is closed")
