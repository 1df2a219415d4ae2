package nsexec

import (
	"errors"
	"os"
	"syscall"
)

// SetupError is a sandbox that could not be built: the step of the setup
// that failed inside the started process (the init, or the fallback's
// child), the path it was working on, the kernel's errno, and what may fix
// it. Nothing of the command ran. It travels to srt over the link as data,
// so a caller gets it as an error value, not as text on the command's
// stderr.
type SetupError struct {
	Step   string        `json:"step"`            // one of the Step constants
	Path   string        `json:"path,omitempty"`  // the path the step worked on, if any
	Errno  syscall.Errno `json:"errno,omitempty"` // 0 when the failure was not the kernel's
	Detail string        `json:"detail"`          // the whole message, for a person
	Fix    string        `json:"fix,omitempty"`   // what may make it work, if srt knows
}

// Steps of the setup, in the order they run.
const (
	StepSpec       = "reading the run's spec"
	StepRoot       = "building the root filesystem"
	StepProc       = "mounting /proc"
	StepLoopback   = "bringing up loopback"
	StepSockets    = "handing the network's sockets to srt"
	StepWorkingDir = "entering the working directory"
	StepTerminal   = "making the sandbox's terminal"
	StepLandlock   = "applying Landlock"
	StepPrivileges = "dropping privileges"
	StepSeccomp    = "installing the seccomp filter"
	StepStart      = "starting the command"
)

func (e *SetupError) Error() string {
	msg := e.Step + " failed: " + e.Detail
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

// Unwrap is the errno, so that errors.Is(err, syscall.EPERM) holds.
func (e *SetupError) Unwrap() error {
	if e.Errno == 0 {
		return nil
	}
	return e.Errno
}

// setupError makes err, which failed step, a *SetupError (one already is
// stays as it was): its path and errno are found in its chain.
func setupError(step string, err error) *SetupError {
	if err == nil {
		return nil
	}
	var se *SetupError
	if errors.As(err, &se) {
		return se
	}
	se = &SetupError{Step: step, Detail: err.Error()}
	var pe *os.PathError
	if errors.As(err, &pe) {
		se.Path = pe.Path
	}
	errors.As(err, &se.Errno)
	se.Fix = fixFor(se)
	return se
}

// fixFor says what may fix a failed step, where the cause is known.
func fixFor(e *SetupError) string {
	switch {
	case e.Step == StepProc && e.Errno == syscall.EPERM:
		return "a container with masked /proc paths refuses a fresh /proc: run it with --security-opt systempaths=unconfined (Docker) for the full sandbox; or enableWeakerNestedSandbox binds the container's /proc instead (its processes become visible inside; srt then reports partial enforcement)"
	case e.Step == StepWorkingDir && (e.Errno == syscall.ENOENT || e.Errno == syscall.EACCES || e.Errno == syscall.ENOTDIR):
		return "the working directory is not there inside the sandbox (it does not exist, or denyRead hides it): run from a directory the settings let the command read"
	case e.Step == StepLandlock && e.Errno == syscall.E2BIG:
		return "the kernel refused the number of Landlock rules: fewer filesystem entries in the settings"
	}
	return ""
}
