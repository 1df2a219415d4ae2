package backend

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// What the library promises, and says when it cannot keep it: the level a
// run gets with the guarantees that do not hold, and the errors that mean
// no sandbox can be built.

// Level is how much of the sandbox a run gets.
type Level string

const (
	// Full is the namespace sandbox: every promise of the threat model
	// holds (Enforcement.Layers says which kernel layers make it up).
	Full Level = "full"
	// Partial is the fallback for hosts that refuse user namespaces,
	// run only when the settings ask for it (enableWeakerNestedSandbox):
	// Enforcement.Lacks lists what does not hold.
	Partial Level = "partial"
	// None: no sandbox can be built here, and nothing runs.
	None Level = "none"
)

// Enforcement is what a run gets: its level, the layers that make it up,
// and the guarantees of the full sandbox that do not hold.
type Enforcement struct {
	Level  Level    `json:"level"`
	Layers []string `json:"layers"`
	Lacks  []string `json:"lacks,omitempty"`
}

func (e Enforcement) String() string {
	s := string(e.Level)
	if len(e.Layers) > 0 {
		s += " (" + strings.Join(e.Layers, "; ") + ")"
	}
	if len(e.Lacks) > 0 {
		s += "; does not hold: " + strings.Join(e.Lacks, "; ")
	}
	return s
}

// ErrUnsupported is what every error that says no sandbox can be built
// here matches (errors.Is).
var ErrUnsupported = errors.New("no sandbox can be built here")

// UnsupportedError says what this host lacks for a sandbox and how to get
// it. It matches ErrUnsupported.
type UnsupportedError struct {
	// Missing is what the host lacks: "user namespaces", "a sandbox
	// backend for darwin".
	Missing string
	// Err says why and what to do, in the host's words.
	Err error
}

func (e *UnsupportedError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return "no " + e.Missing
}

// Unwrap returns the host's own error.
func (e *UnsupportedError) Unwrap() error { return e.Err }

// Is makes an UnsupportedError match ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Feature is one line of what the host offers the sandbox.
type Feature struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Report is what the host offers and what a run gets here (srt doctor).
type Report struct {
	Features []Feature `json:"features"`
	// Enforcement is what a run with default settings gets here.
	Enforcement Enforcement `json:"enforcement"`
	// Why says why no sandbox runs here, when Enforcement.Level is None.
	Why string `json:"why,omitempty"`
	// Fallback, when the namespace sandbox cannot run but the fallback
	// can, is what a run with enableWeakerNestedSandbox gets.
	Fallback *Enforcement `json:"fallback,omitempty"`
}

// fallbackLacks are what holds in the namespace sandbox and not in the
// fallback, each shown by a test (cmd/srt TestFallbackLacks).
var fallbackLacks = []string{
	"other processes of this user are visible in /proc, with their command lines (not their environment or memory; Landlock blocks signalling and tracing them)",
	"the names in a denyRead directory can be listed (not read)",
	"reads are not judged while the command runs: a file made after launch at a denyRead path or matching a denyRead pattern can be read, and so can a hidden file through a hard link made before the run (the host's procfs there could not be opened for the command)",
	"programs that ignore the proxy variables cannot connect (no transparent path, no DNS)",
	"clients that cannot send the proxies' per-run credential, such as Java's, cannot connect",
	"no new pseudo-terminal can be made (script, expect, ssh -t fail inside), and allowPty is refused",
	"other concurrent runs' temp dirs under srt's run dirs can be read where the rules let the command read there (as /tmp is by default): Landlock cannot hide a directory beneath a readable one",
}

// GuardSkippedLacks is what a run with filesystem.skipPathGuard lacks.
const GuardSkippedLacks = "protected names made during the run (filesystem.skipPathGuard): a new .bashrc, .vscode/tasks.json, git hook or executable git config key is not refused; those that exist at launch stay read-only"

// darwinLacks are the guarantees of the Linux namespace sandbox that a
// Seatbelt profile does not give.
var darwinLacks = []string{
	"processes outside the command's tree are visible (no PID namespace), though it cannot signal or inspect them",
	"programs that ignore the proxy variables cannot connect (no network namespace, so no transparent path and no DNS stub)",
	"protected names are matched by name only: a git directory made under another name (--separate-git-dir) is not known, and a symlink at a directory on the way of a protected path (.ssh of .ssh/config) is not refused",
	"a project's protected names (.vscode, .claude, .mcp.json, .gitmodules, ...) are refused in every directory, also in a tree the command made: a clone of a repository that tracks them fails",
	"git's *.sample hook templates cannot be made in a repository's hooks",
	"masked credential files are hidden, not masked",
	"other concurrent runs' temp dirs under srt's run dirs can be read where the rules let the command read there",
	"with allowLocalBinding the command reaches every loopback service of the host, not only its own listeners (a profile cannot tell them apart)",
	"denials inside the profile are reported from the system log (/usr/bin/log), when it can be read",
	"no PID namespace: srt finds the run's processes by watching the process table (10 times a second at first, then every second) and kills every one it saw; one that leaves the tree between two looks (a double fork whose middle process exits at once) outlives the run",
	"the backend is built and tested on Linux only; it has not run on macOS in this project's CI",
}

// DarwinEnforcement is what a macOS run gets.
func DarwinEnforcement() Enforcement {
	return Enforcement{Level: Partial, Layers: []string{
		"a Seatbelt profile the run's keeper applies to itself before it starts the command (inherited by everything it starts)",
		"network only through the policy proxies on loopback, with a per-run credential",
		"the run's processes killed at its end: the command's group by the keeper, its other descendants found in the process table by srt"},
		Lacks: slices.Clone(darwinLacks)}
}

// windowsLacks are the guarantees of the Linux namespace sandbox that
// the Windows plan does not give (the reference's known gaps among them).
var windowsLacks = []string{
	"the backend is an alpha: its plan is built and tested on Linux, and it has never run on a real Windows; srt on Windows still refuses to run commands",
	"reads are the sandbox account's: the system's files that Users may read, and what the plan grants (the working directory, allowRead, allowWrite); the rest of the user's profile is not readable unless listed",
	"a protected name, denyRead or denyWrite entry is enforced only where it exists at launch (ACEs name existing paths; there is no guard of names made while the command runs), and patterns not at all",
	"programs that ignore the proxy variables cannot connect (no transparent path, no DNS stub); names resolved by the DNS Client service (Dnscache) on the command's behalf are not fenced",
	"traffic of system services the command asks (SMB, WSL, the print spooler) is not fenced by the sandbox account's filters",
	"processes outside the job are visible (no PID namespace)",
	"masked credential files are hidden, not masked",
}

// WindowsEnforcement is what a Windows run's plan would give.
func WindowsEnforcement() Enforcement {
	return Enforcement{Level: Partial, Layers: []string{
		"a dedicated local account with a write-restricted token: a write needs an ACE naming the account, which only srt's plan adds",
		"WFP filters of a dynamic session: the account reaches srt's proxies on loopback and nothing else",
		"a job object: kill on close, no breakaway, a process limit, UI restrictions"},
		Lacks: slices.Clone(windowsLacks)}
}

// LinuxEnforcement is the one place a Linux run's level is decided: the
// namespace sandbox (with the Landlock layer unless noLandlock says why
// not) or the fallback, under Landlock ABI abi (0: none).
func LinuxEnforcement(fallback bool, noLandlock string, abi int) Enforcement {
	if fallback {
		lacks := slices.Clone(fallbackLacks)
		if abi < 3 {
			lacks = append(lacks, fmt.Sprintf("Landlock ABI %d has no truncate right: truncate(2) can empty a file outside allowWrite", abi))
		}
		if abi < 4 {
			lacks = append(lacks, fmt.Sprintf("Landlock ABI %d has no TCP rules (the seccomp supervisor still decides every connect and listen)", abi))
		}
		if abi < 6 {
			lacks = append(lacks, fmt.Sprintf("Landlock ABI %d cannot scope signals: the command can signal this user's other processes, srt's reaper included (what the command leaves running may then outlive it)", abi))
		}
		return Enforcement{Level: Partial, Layers: []string{
			fmt.Sprintf("Landlock ABI %d", abi),
			"seccomp (TCP only; every connect, listen and metadata change checked by srt; no System V IPC or message queues)",
			"no capabilities, no_new_privs",
			"srt reaps and kills the command's whole tree",
			"network only through the policy proxies on loopback, with a per-run credential"},
			Lacks: lacks}
	}
	e := Enforcement{Level: Full, Layers: []string{
		"user, mount, PID, network, IPC, UTS and cgroup namespaces",
		"mount plan",
		"seccomp",
	}}
	switch {
	case noLandlock != "":
		e.Layers = append(e.Layers, "no Landlock: "+noLandlock)
	case abi == 0:
		e.Layers = append(e.Layers, "no Landlock: not in this kernel")
	default:
		e.Layers = append(e.Layers, "Landlock ABI "+strconv.Itoa(abi))
	}
	e.Layers = append(e.Layers, "network only through the policy proxies")
	return e
}
