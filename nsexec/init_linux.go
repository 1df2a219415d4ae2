package nsexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"github.com/srt-go/srt/internal/relay"
	"github.com/srt-go/srt/landlock"
	"github.com/srt-go/srt/seccomp"

	"golang.org/x/sys/unix"
)

// MaybeRun runs the sandbox's init (or another role of the binary) when
// this process is one (the first argument names the role) and never
// returns then; otherwise it returns at once. Call it first thing in main.
func MaybeRun() {
	if len(os.Args) < 2 {
		return
	}
	var err error
	switch os.Args[1] {
	case roleInit:
		err = runInit()
	case roleFallback:
		err = runFallback()
	case roleFallbackExec:
		err = runFallbackExec()
	case roleWrap:
		err = runWrap()
		fmt.Fprintf(os.Stderr, "srt: sandbox: %v\n", err)
		os.Exit(1)
	case roleProbe:
		os.Exit(probeProc())
	default:
		return
	}
	failed(StepStart, err)
}

// readSpec reads the spec from fd 3, which only the supervisor (or the
// init) provides.
func readSpec() (*Spec, error) {
	f := os.NewFile(3, "spec")
	if f == nil {
		return nil, errors.New("no spec descriptor")
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the spec: %w", err)
	}
	var s Spec
	if err := json.Unmarshal(data, &s); err != nil || s.Plan == nil || len(s.Argv) == 0 {
		return nil, fmt.Errorf("bad spec (%d bytes): %v", len(data), err)
	}
	return &s, nil
}

// runInit is PID 1 of the sandbox, in new user, mount, PID, network, IPC,
// UTS and cgroup namespaces. It builds the root filesystem from the plan
// and pivots into it, opens the network side and hands its sockets to
// srt, confines itself (Landlock, privileges, seccomp, whose listener goes
// to srt too) and starts the command, then reaps whatever the command
// leaves until the command itself ends: then the init exits with its
// status, and the kernel kills everything else in the namespace.
func runInit() error {
	if os.Getpid() != 1 {
		return errors.New("the init must be PID 1 of a new PID namespace")
	}
	// Namespace work stays on one thread. Mounts and the root belong to
	// the whole process here (the namespaces came with the clone, nothing
	// is unshared in this multithreaded runtime), but capabilities,
	// no_new_privs and the parent-death signal are per thread: the one
	// that forks the command is this one.
	runtime.LockOSThread()
	signals := relay.Notify()
	// The link stays open for the init's life: its end tells srt the run
	// is over, and srt closing it (Sandbox.Close) ends the run.
	link, err := sayHello()
	if err != nil {
		return setupError(StepSpec, err)
	}
	go serveRequests(link)
	spec, err := readSpec()
	if err != nil {
		return setupError(StepSpec, err)
	}
	if err := buildRoot(spec); err != nil {
		return setupError(StepRoot, err)
	}
	if err := loopbackUp(); err != nil {
		return setupError(StepLoopback, err)
	}
	if err := handOverSockets(spec, link); err != nil {
		return setupError(StepSockets, err)
	}
	if err := nullStdio(); err != nil {
		return setupError(StepRoot, err)
	}
	path, err := findCommand(spec)
	if err != nil {
		return setupError(StepWorkingDir, err)
	}
	cmd := &exec.Cmd{Path: path, Args: spec.Argv, Env: spec.Env, Dir: spec.Cwd,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if len(spec.NullFDs) > 0 {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return setupError(StepRoot, err)
		}
		for _, fd := range spec.NullFDs {
			for len(cmd.ExtraFiles) < fd-2 {
				cmd.ExtraFiles = append(cmd.ExtraFiles, nil)
			}
			cmd.ExtraFiles[fd-3] = null
		}
	}
	// On a terminal, the command gets the sandbox's own (terminal_linux.go).
	var tty *terminal
	if spec.Terminal {
		if tty, err = openTerminal(spec.TerminalOnDemand); err != nil {
			return setupError(StepTerminal, err)
		}
		if tty != nil {
			tty.give(cmd)
		}
	}
	// Landlock: the second layer over the mounts, on every thread of
	// this process and so on the command.
	if spec.Landlock != nil {
		if _, err := landlock.Apply(*spec.Landlock, landlock.Options{Scope: true}); err != nil {
			return setupError(StepLandlock, err)
		}
	}
	if err := dropPrivileges(); err != nil {
		return setupError(StepPrivileges, err)
	}
	// The command shares this PID namespace: it may neither trace this
	// process nor read its memory or descriptors through /proc.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return setupError(StepPrivileges, fmt.Errorf("making the init undumpable: %w", err))
	}
	listener, err := seccomp.Install(spec.Seccomp)
	if err != nil {
		return setupError(StepSeccomp, err)
	}
	if listener >= 0 {
		// srt, outside every namespace of the sandbox and unfiltered,
		// answers the command's connects.
		err := sendLink(link, &linkMessage{Seccomp: true}, []int{listener})
		unix.Close(listener)
		if err != nil {
			return setupError(StepSeccomp, fmt.Errorf("handing the seccomp listener to srt: %w", err))
		}
	}
	sigs := signals()
	if err := cmd.Start(); err != nil {
		// The command's own failure, as a shell reports it.
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		fmt.Fprintf(os.Stderr, "srt: %s: %v\n", spec.Argv[0], relay.Unwrap(err))
		os.Exit(code)
	}
	if tty != nil {
		tty.started()
	}
	sendLink(link, &linkMessage{Started: true}, nil)
	pid := cmd.Process.Pid
	// Every child is reaped here, orphans included. The command's stops
	// and its end come to this goroutine's thread: before Landlock ABI 8
	// each thread has a domain of its own, and only this one, which
	// started the command, may signal the sandbox's processes (the
	// command's domain scopes signals).
	ended := make(chan syscall.WaitStatus, 4)
	go func() {
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, syscall.WUNTRACED, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				// ECHILD once the command's end is told: the init is
				// about to exit with its status.
				return
			}
			if got == pid {
				ended <- ws
			}
		}
	}()
	// A stopped job stops whole: nothing of the sandbox runs while srt
	// is told (once) and stops too, or continues it. The sandbox stops
	// when the command does (Ctrl-Z on its terminal, or any stop signal)
	// and when srt relays SIGTSTP — then srt is told even if the command
	// cannot stop yet (a vfork parent waits for its stopped child).
	stopped := false
	stopAll := func(asked bool) {
		syscall.Kill(-1, syscall.SIGSTOP) // every process of the namespace but this one
		if !stopped {
			stopped = true
			sendLink(link, &linkMessage{Stopped: true, Asked: asked}, nil)
		}
	}
	for {
		select {
		case ws := <-ended:
			if ws.Stopped() && tty != nil && tty.wants(pid, ws.StopSignal()) {
				syscall.Kill(-pid, syscall.SIGCONT)
				sendLink(link, &linkMessage{Terminal: true}, nil)
				continue
			}
			if ws.Stopped() {
				// A stop a SIGCONT has undone since (both were waiting
				// here, and select took the SIGCONT first) would stop
				// the job again.
				if !relay.StopUndone(pid) {
					stopAll(false)
				}
				continue
			}
			if tty != nil {
				// The rest goes now rather than with the init, so that
				// the slave's last holder is gone and the command's last
				// output relayed.
				syscall.Kill(-1, syscall.SIGKILL)
				tty.finish()
			}
			os.Exit(relay.StatusCode(ws))
		case sig := <-sigs:
			switch s := sig.(syscall.Signal); {
			case s == syscall.SIGPIPE:
			case s == syscall.SIGTSTP:
				stopAll(true)
			case s == syscall.SIGCONT:
				stopped = false
				if tty != nil {
					tty.raw()
				}
				syscall.Kill(-1, syscall.SIGCONT)
			case s == syscall.SIGWINCH && tty != nil:
				tty.resize() // the kernel tells the command's foreground group
			default:
				syscall.Kill(pid, s)
			}
		}
	}
}

// nullStdio gives the init (and so the command) the sandbox's /dev/null
// where its stdin, stdout or stderr is the host's (srt's own stdin, say):
// the same device, but through the sandbox's read-only mount of it, so a
// command running as root cannot fchmod or fchown the host's /dev/null.
func nullStdio() error {
	for fd := 0; fd <= 2; fd++ {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
			continue
		}
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			return err
		}
		null, err := unix.Open("/dev/null", fl&unix.O_ACCMODE|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening the sandbox's /dev/null: %w", err)
		}
		err = unix.Dup3(null, fd, 0)
		unix.Close(null)
		if err != nil {
			return err
		}
	}
	return nil
}

// findCommand enters the command's working directory and finds its
// executable on the command's PATH; a command that is not there ends the
// run with 127, as a shell would.
func findCommand(spec *Spec) (string, error) {
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", v)
		}
	}
	if err := os.Chdir(spec.Cwd); err != nil {
		return "", fmt.Errorf("entering the working directory %s: %w", spec.Cwd, err)
	}
	path, err := exec.LookPath(spec.Argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: %s: %v\n", spec.Argv[0], relay.Unwrap(err))
		os.Exit(127)
	}
	return path, nil
}
