package nsexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/srt-go/srt/internal/relay"
	"github.com/srt-go/srt/seccomp"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/landlock"
	"golang.org/x/sys/unix"
)

// The fallback sandbox, for hosts that refuse user namespaces (Docker's
// default seccomp profile, Ubuntu's AppArmor restriction) when the
// settings allow a weaker sandbox: the command runs in the host's
// namespaces under Landlock (reads, writes, TCP ports, scoping) and the
// seccomp filter in its host-network mode, whose connect supervisor here
// in srt lets TCP reach only the proxies on loopback.

// Roles of the fallback: the reaper srt starts, and the child it starts,
// which confines itself and becomes the command.
const (
	roleFallback     = "__srt_fallback"
	roleFallbackExec = "__srt_fallback_exec"
)

// prepareFallback fills in l to start the fallback child.
func (l *Launch) prepareFallback(s *config.Settings, o Options, side NetSide, spec *Spec) error {
	abi := landlock.ABI()
	if abi == 0 {
		return errors.New("refusing to run: neither user namespaces nor Landlock are available here, so no sandbox can be built")
	}
	ports := side.Ports
	pol := &ConnectPolicy{Proc: "/proc", Unix: spec.Seccomp.Unix, UnixPaths: spec.UnixSocketPaths, HostNamespaces: true, OnDeny: o.OnEvent,
		LocalBinding: s.Network.AllowLocalBinding, Writable: l.Plan.Writable, Guard: l.RunPlan.Guard}
	pol.Inet = func(ap netip.AddrPort) bool {
		a := ap.Addr().Unmap()
		// Exactly the proxies' address: another loopback address could
		// hold another service on the same port.
		if a == netip.AddrFrom4([4]byte{127, 0, 0, 1}) && slices.Contains(ports, ap.Port()) {
			return true
		}
		// With allowLocalBinding, the command's own listeners.
		return pol.LocalBinding && a.IsLoopback() && pol.ListensOn(ap)
	}
	if spec.Seccomp.OwnSockets {
		// srt may not take the command's sockets: it makes them.
		pol.sockets = newOwnSockets(pol.Proc)
	}
	l.connectPolicy = pol

	spec.Ports, spec.LocalBinding = ports, s.Network.AllowLocalBinding
	cmd, err := l.child(o.Context, roleFallback, spec)
	if err != nil {
		return err
	}
	// The reaper kills the command's tree when srt's end of the link
	// closes: a cancelled context closes it (a SIGKILLed reaper could not
	// kill the tree), as does srt's death; the parent-death signal is
	// caught as a second way to learn of it.
	if o.Context != nil {
		cmd.Cancel = func() error { return l.link.Close() }
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGTERM}
	l.Cmd = cmd
	go l.watch()
	return nil
}

// runFallback is the fallback's reaper, between srt and the command,
// outside the command's confinement: it makes itself the subreaper of the
// command's whole tree, starts the child that confines itself and becomes
// the command (runFallbackExec) in a session of its own, relays signals to
// it, and when the command ends — or srt goes: its end of the link closes
// — kills every process left of the tree and exits with the command's
// status. Confined by Landlock in a domain the reaper is not in, the
// command can neither signal nor trace it (ABI 6 scoping; the enforcement
// report says so when the kernel lacks it).
func runFallback() error {
	parent := os.Getppid()
	link, err := sayHello()
	if err != nil {
		return setupError(StepSpec, err)
	}
	specFile := os.NewFile(3, "spec")
	data, err := io.ReadAll(specFile)
	specFile.Close()
	if err != nil {
		return setupError(StepSpec, fmt.Errorf("reading the spec: %w", err))
	}
	var spec Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return setupError(StepSpec, fmt.Errorf("bad spec: %w", err))
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return setupError(StepPrivileges, fmt.Errorf("becoming the subreaper of the command's tree: %w", err))
	}
	signals := relay.Notify()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	go func() {
		w.Write(data)
		w.Close()
	}()
	child := &exec.Cmd{Path: "/proc/self/exe", Args: []string{os.Args[0], roleFallbackExec},
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, ExtraFiles: []*os.File{r, link},
		// Only what srt gave this process (envSetupOnLink, if set).
		Env:         os.Environ(),
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}}
	if spec.Terminal {
		// This process leads a session (srt made it so) whose terminal
		// becomes the pty srt made for the command; the command is a
		// group of that session in the foreground, where Ctrl-Z stops
		// it (a session leader's own group would be orphaned, and the
		// kernel drops a terminal's stop signals to those).
		if err := unix.IoctlSetInt(0, unix.TIOCSCTTY, 0); err != nil {
			return setupError(StepTerminal, os.NewSyscallError("TIOCSCTTY", err))
		}
		// (Foreground's Ctty is a descriptor of this process.) On
		// demand, the command starts in the background, and is given the
		// foreground when it stops for the terminal (reaper.wantsTerminal).
		child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: !spec.TerminalOnDemand, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	}
	// Every signal is handled before the child starts: one this process
	// was started with ignored (srt ignores SIGTTIN, to read its terminal
	// from the background without stopping) would otherwise stay ignored
	// in the command, which then gets EIO where a job gets stopped.
	sigs := signals()
	if err := child.Start(); err != nil {
		return fmt.Errorf("starting the command: %w", err)
	}
	r.Close()
	k := &reaper{command: child.Process.Pid, status: -1,
		tell:         func(asked bool) { sendLink(link, &linkMessage{Stopped: true, Asked: asked}, nil) },
		onDemand:     spec.Terminal && spec.TerminalOnDemand,
		tellTerminal: func() { sendLink(link, &linkMessage{Terminal: true}, nil) }}
	// srt gone (its end of the link closed, by Close or by its death):
	// the tree goes too.
	go func() {
		var b [1]byte
		for {
			if _, err := link.Read(b[:]); err != nil {
				k.abandon()
				return
			}
		}
	}()
	go func() {
		for sig := range sigs {
			s := sig.(syscall.Signal)
			if os.Getppid() != parent {
				k.abandon() // the parent-death signal
				continue
			}
			k.relay(s)
		}
	}()
	os.Exit(k.run())
	return nil
}

// runFallbackExec is the fallback's child: it confines itself — Landlock,
// every capability dropped and no_new_privs, the seccomp filter whose
// listener it hands to srt — and becomes the command.
func runFallbackExec() error {
	// Capabilities and no_new_privs are per thread: the thread that drops
	// them is the one that executes the command.
	runtime.LockOSThread()
	spec, err := readSpec()
	if err != nil {
		return setupError(StepSpec, err)
	}
	above := 5
	for _, fd := range spec.NullFDs {
		above = max(above, fd+1)
	}
	link, err := moveLink(above)
	if err != nil {
		return setupError(StepSpec, err)
	}
	path, err := findCommand(spec)
	if err != nil {
		return setupError(StepWorkingDir, err)
	}
	if spec.Landlock == nil {
		return setupError(StepSpec, errors.New("no Landlock rules in the spec"))
	}
	// The command's own terminal (the pty srt made for it) stays
	// writable, also reopened by name (/dev/stderr).
	for fd := 0; fd <= 2; fd++ {
		if p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil && strings.HasPrefix(p, "/dev/pts/") {
			spec.Landlock.Write = append(spec.Landlock.Write, p)
		}
	}
	abi, err := landlock.Apply(*spec.Landlock, landlock.Options{Scope: true, TCP: !spec.LocalBinding, ConnectTCP: spec.Ports})
	if err != nil {
		return setupError(StepLandlock, err)
	}
	if abi == 0 {
		return setupError(StepLandlock, errors.New("refusing to run: Landlock is not available"))
	}
	if err := dropPrivileges(); err != nil {
		return setupError(StepPrivileges, err)
	}
	// The slots on /dev/null before the filter: its listener must not
	// land in one, and nothing after the filter may fail before srt
	// serves it.
	for _, fd := range spec.NullFDs {
		null, err := unix.Open(os.DevNull, unix.O_RDONLY, 0)
		if err != nil {
			return setupError(StepStart, err)
		}
		if null != fd {
			if err := unix.Dup3(null, fd, 0); err != nil {
				return setupError(StepStart, err)
			}
			unix.Close(null)
		}
	}
	listener, err := seccomp.Install(spec.Seccomp)
	if err != nil {
		return setupError(StepSeccomp, err)
	}
	err = sendLink(link, &linkMessage{Seccomp: true, Started: true}, []int{listener})
	link.Close()
	unix.Close(listener)
	if err != nil {
		return setupError(StepSeccomp, fmt.Errorf("handing the seccomp listener to srt: %w", err))
	}
	err = syscall.Exec(path, spec.Argv, spec.Env)
	fmt.Fprintf(os.Stderr, "srt: %s: %v\n", spec.Argv[0], err)
	os.Exit(126)
	return nil
}

// NamespacesAvailable reports whether this host lets srt create the
// sandbox's namespaces (one process is started to find out).
func NamespacesAvailable() error { return probeNamespaces() }
