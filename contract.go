package srt

import (
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/nsexec"
)

// What the library promises, and says when it cannot keep it: the level a
// run gets with the guarantees that do not hold, and the errors that mean
// no sandbox can be built. The types are the backends' own
// (internal/backend, where each level is decided: contract.go), named
// here.

// Level is how much of the sandbox a run gets: Full, Partial or None.
type Level = backend.Level

const (
	// Full is the namespace sandbox: every promise of the threat model
	// holds (Enforcement.Layers says which kernel layers make it up).
	Full = backend.Full
	// Partial is the fallback for hosts that refuse user namespaces,
	// run only when the settings ask for it (enableWeakerNestedSandbox):
	// Enforcement.Lacks lists what does not hold.
	Partial = backend.Partial
	// None: no sandbox can be built here, and nothing runs.
	None = backend.None
)

// Enforcement is what a run gets: its Level, the Layers that make it up,
// and what the full sandbox guarantees that does not hold here (Lacks).
// Its String is one line for people.
type Enforcement = backend.Enforcement

// ErrUnsupported is what every error that says no sandbox can be built
// here matches (errors.Is).
var ErrUnsupported = backend.ErrUnsupported

// UnsupportedError says what this host lacks for a sandbox (Missing:
// "user namespaces", "a sandbox backend for windows") and how to get it
// (Err, in the host's words). It matches ErrUnsupported.
type UnsupportedError = backend.UnsupportedError

// SetupError is a sandbox that could not be built, from Start: the step
// of the setup that failed, its path, the errno and what may fix it.
type SetupError = nsexec.SetupError

// Feature is one line of what the host offers the sandbox: a Name,
// whether it is OK, and a Detail.
type Feature = backend.Feature

// Report is what the host offers and what a run gets here (srt doctor):
// its Features, the Enforcement of a run with default settings, Why none
// runs when that is None, and the Fallback a run with
// enableWeakerNestedSandbox gets where the namespace sandbox cannot run.
type Report = backend.Report

// Doctor checks what this host offers the sandbox. On Linux it starts one
// process in the sandbox's namespaces, the way a run would.
func Doctor() *Report { return newBackend(nil).Doctor() }

// ExplainStart explains an error of starting a command's Cmd: when the
// host refused the sandbox's namespaces, an *UnsupportedError saying
// which setting refused them and how to change it; otherwise err.
func ExplainStart(err error) error { return newBackend(nil).ExplainStart(err) }
