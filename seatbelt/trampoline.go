//go:build unix

package seatbelt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/srt-go/srt/internal/relay"
	"golang.org/x/sys/unix"
)

// The trampoline: srt re-executed as the run's keeper. It applies the
// profile to itself, then starts the command as its child, which inherits
// the profile with everything it starts, and stays: it relays srt's
// signals, tells srt when the command stops, kills the command's process
// group when the command ends or srt is gone (there is no PID namespace
// on macOS), and exits with the command's status. Only applying the
// profile (Apply, apply_darwin.go) is macOS's own: the rest is built and
// tested on Linux.
//
// The descriptors srt hands over: the profile (read, never argv: long
// deny lists would overflow ARG_MAX), the run directory (its lock, held
// while the keeper lives), the keeper's reports to srt, and a pipe that
// ends when srt does.
const (
	FDProfile = 3
	FDLock    = 4
	FDReport  = 5
	FDSrt     = 6
	// FDParent, with Launch.Parent, ends when the wrap trampoline that
	// started the keeper does.
	FDParent = 7
)

// Trampoline runs the keeper for args (options, then the command's argv)
// and never returns but with an error from before the command started;
// apply puts the profile on this process.
func Trampoline(apply func(profile string) error, args []string) error {
	if len(args) < 2 {
		return errors.New("trampoline: no command")
	}
	o, err := ParseLaunch(args[0])
	if err != nil {
		return err
	}
	argv := args[1:]
	pf := os.NewFile(FDProfile, "profile")
	profile, err := io.ReadAll(pf)
	pf.Close()
	if err != nil {
		return fmt.Errorf("reading the profile: %w", err)
	}
	handed := []int{FDLock, FDReport, FDSrt}
	if o.Parent {
		handed = append(handed, FDParent)
	}
	for _, fd := range handed {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return fmt.Errorf("descriptor %d from srt: %w", fd, err)
		}
	}
	// Nothing this process holds reaches the command but its stdio and
	// NullFDs: not srt's descriptors, nor what srt's own caller left open
	// (Seatbelt judges a file when it is opened, not an open descriptor).
	if err := closeOnExecAbove(2); err != nil {
		return err
	}
	report := os.NewFile(FDReport, "report")
	// srt writes nothing on its pipe, nor a wrap trampoline on its: each
	// ends when its writer does, and so does the run.
	gone := make(chan struct{}, 2)
	watch := []int{FDSrt}
	if o.Parent {
		watch = append(watch, FDParent)
	}
	for _, fd := range watch {
		go func() {
			io.Copy(io.Discard, os.NewFile(uintptr(fd), "watched"))
			gone <- struct{}{}
		}()
	}
	signals := relay.Notify()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: %s: %v\n", argv[0], relay.Unwrap(err))
		os.Exit(127)
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		// A group of its own, killed whole: srt made this process a
		// session leader without a terminal.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if len(o.NullFDs) > 0 {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return err
		}
		for _, fd := range o.NullFDs {
			for len(cmd.ExtraFiles) < fd-2 {
				cmd.ExtraFiles = append(cmd.ExtraFiles, nil)
			}
			cmd.ExtraFiles[fd-3] = null
		}
	}
	if o.Terminal {
		// The pty becomes this session's terminal, and the command the
		// foreground group of it, where Ctrl-Z stops it (a session
		// leader's own group would be orphaned, and a terminal's stop
		// signals are dropped for those). Foreground's Ctty is a
		// descriptor of this process.
		// A pty that is already another session's terminal (a wrapped
		// run's, started by a pty library) cannot become this one's: the
		// command then runs without a controlling terminal, and srt's
		// wrap role relays the terminal's signals to it.
		if unix.IoctlSetInt(0, unix.TIOCSCTTY, 0) == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: 0}
			// The profile denies every /dev/ttys*; this one is the run's
			// own, which the command must drive (modes, its foreground
			// group) and reopen as /dev/tty, as on Linux.
			if path := ttyPath(0); path != "" {
				profile = append(profile, OwnTerminal(path).String()...)
			}
		}
	}
	if err := apply(string(profile)); err != nil {
		return err
	}
	// Every signal srt relays from the command's start on is passed on:
	// one that came before Notify took effect would be lost (SIGCONT) or
	// fatal to the keeper alone.
	sigs := signals()
	if err := cmd.Start(); err != nil {
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		fmt.Fprintf(os.Stderr, "srt: %s: %v\n", argv[0], relay.Unwrap(err))
		os.Exit(code)
	}
	k := &keeper{pid: cmd.Process.Pid, report: report}
	fmt.Fprintf(report, "%s %d\n", ReportStarted, k.pid)
	go func() {
		<-gone
		k.end(137)
	}()
	go func() {
		for sig := range sigs {
			k.relay(sig.(syscall.Signal))
		}
	}()
	for {
		ws, _, err := k.wait(syscall.WUNTRACED | syscall.WCONTINUED)
		if err != nil {
			k.end(137)
		}
		switch stopped, continued := decodeWait(runtime.GOOS, ws); {
		case continued:
		case stopped:
			k.stop()
		default:
			k.end(relay.StatusCode(ws))
		}
	}
}

// wait waits for the command's next change of state among those of
// options; changed is false when there is none (WNOHANG).
func (k *keeper) wait(options int) (ws syscall.WaitStatus, changed bool, err error) {
	for {
		pid, err := syscall.Wait4(k.pid, &ws, options, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil:
			return 0, false, err
		case pid == 0:
			return 0, false, nil
		case pid != k.pid:
			return 0, false, syscall.ECHILD
		default:
			return ws, true, nil
		}
	}
}

// decodeWait tells a stop and a continue apart in a wait status of goos.
// Go's WaitStatus does it for Linux; for the BSDs it takes a stop by
// SIGSTOP for a continue and a continue for a stop, so their statuses
// are read here: 0177 in the low bits, then the stop signal, which is
// SIGCONT (19 there) for a continue.
func decodeWait(goos string, ws syscall.WaitStatus) (stopped, continued bool) {
	if goos == "linux" {
		return ws.Stopped(), ws.Continued()
	}
	if ws&0x7f != 0x7f {
		return false, false
	}
	const bsdSIGCONT = 19
	return ws>>8&0xff != bsdSIGCONT, ws>>8&0xff == bsdSIGCONT
}

// keeper is the running command, as its keeper knows it.
type keeper struct {
	pid    int // the command's, and its process group's
	report io.Writer

	mu      sync.Mutex
	ended   bool
	stopped bool // srt was told of a stop it has not continued
}

// relay passes a signal srt relayed on to the command while it runs.
func (k *keeper) relay(s syscall.Signal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.ended {
		relay.Pass(s, k.pid, func() { k.stopLocked(true) }, func() { k.stopped = false })
	}
}

// stop stops the command's group, a job stopping whole, and tells srt
// once, for a stop the wait loop saw — unless a SIGCONT srt relayed has
// ended it meanwhile: acted on late, it would stop the job again after
// srt continued it. The command's end, if the check finds one, ends the
// keeper.
func (k *keeper) stop() {
	k.mu.Lock()
	ws, changed, err := k.wait(syscall.WNOHANG | syscall.WCONTINUED)
	stopped, continued := decodeWait(runtime.GOOS, ws)
	switch {
	case err != nil:
		k.mu.Unlock()
		k.end(137)
	case !changed || stopped:
		k.stopLocked(false)
	case continued:
	default:
		k.mu.Unlock()
		k.end(relay.StatusCode(ws))
	}
	k.mu.Unlock()
}

// stopLocked stops the group and tells srt once; asked: for the SIGTSTP
// srt relayed.
func (k *keeper) stopLocked(asked bool) {
	syscall.Kill(-k.pid, syscall.SIGSTOP)
	if !k.stopped {
		k.stopped = true
		report := ReportStopped
		if asked {
			report = ReportAsked
		}
		fmt.Fprintln(k.report, report)
	}
}

// end kills what is left of the command's group and exits with code.
// Once the command is reaped its group's id lives on while a member does;
// only when none is left could another process take it, in the moment
// between the reap and this kill.
func (k *keeper) end(code int) {
	k.mu.Lock()
	k.ended = true
	syscall.Kill(-k.pid, syscall.SIGKILL)
	fmt.Fprintln(k.report, ReportEnded)
	os.Exit(code)
}

// closeOnExecAbove marks every open descriptor above fd close-on-exec.
func closeOnExecAbove(fd int) error {
	entries, err := os.ReadDir("/dev/fd")
	if err != nil {
		return fmt.Errorf("listing the open descriptors: %w", err)
	}
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > fd {
			unix.CloseOnExec(n)
		}
	}
	return nil
}

// ttyPath is the path of the terminal fd is, found by its device number
// among /dev's terminals (macOS's /dev/ttys*, Linux's /dev/pts/*); "" if
// none is.
func ttyPath(fd int) string {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return ""
	}
	for _, dir := range []string{"/dev", "/dev/pts"} {
		names, _ := os.ReadDir(dir)
		for _, e := range names {
			if dir == "/dev" && !strings.HasPrefix(e.Name(), "ttys") {
				continue
			}
			var dt unix.Stat_t
			path := dir + "/" + e.Name()
			if unix.Lstat(path, &dt) == nil && dt.Mode&unix.S_IFMT == unix.S_IFCHR && dt.Rdev == st.Rdev {
				return path
			}
		}
	}
	return ""
}
