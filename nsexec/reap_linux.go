package nsexec

import (
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"

	"github.com/srt-go/srt/internal/proc"

	"golang.org/x/sys/unix"
)

// Signals and statuses: what a sandbox process relays to the command, and
// how a child's end becomes a shell's status.

// notifyRelayed asks for the signals a sandbox process passes on, on a
// goroutine of its own, and returns the wait for it: the runtime enables
// signals one at a time, each a handoff to its signal thread (2.5 ms for
// all of them on a 2-core VM), so the caller does its own setup meanwhile.
// A signal that arrives before the wait is over gets the runtime's default
// action.
//
// SIGURG (the runtime preempts goroutines with it, often while a process
// sets up) and SIGCHLD are left out: queued unread, they would fill the
// channel, and a signal arriving at a full channel is dropped. Children
// are reaped by waiting, never on a signal.
func notifyRelayed() func() <-chan os.Signal {
	sigs := make(chan os.Signal, 16)
	done := make(chan struct{})
	go func() {
		signal.Notify(sigs, relayed()...)
		close(done)
	}()
	return func() <-chan os.Signal {
		<-done
		return sigs
	}
}

// relayed is every catchable signal but SIGURG, SIGCHLD and the two the
// threading library reserves (32 and 33).
func relayed() []os.Signal {
	var out []os.Signal
	for s := syscall.Signal(1); s <= 64; s++ {
		switch s {
		case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGURG, syscall.SIGCHLD, 32, 33:
			continue
		}
		out = append(out, s)
	}
	return out
}

// relaySignals passes the signals of sigs on to the started cmd until it
// exits, and returns its status.
func relaySignals(cmd *exec.Cmd, sigs <-chan os.Signal) int {
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	for {
		select {
		case sig := <-sigs:
			if s := sig.(syscall.Signal); s != syscall.SIGPIPE {
				cmd.Process.Signal(s)
			}
		case <-done:
			return exitCode(cmd.ProcessState)
		}
	}
}

// exitCode maps a child's end to a shell-style status.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		return statusCode(ws)
	}
	return ps.ExitCode()
}

// statusCode is the shell's status for a wait status: the exit code, or
// 128+N for a death by signal N.
func statusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// reaper reaps the command's tree and kills what is left of it. Children
// are killed only under mu, between reaps, so a pid is never signalled
// after it was reaped and could be another process's.
type reaper struct {
	mu      sync.Mutex
	command int
	status  int  // the command's status, -1 while it runs
	killing bool // the command has ended, or srt is gone
	// tell tells srt that the command's group stopped, once for each
	// stop: when the command stops, and when srt relays SIGTSTP.
	tell    func()
	stopped bool
}

// run reaps until no child is left, killing every child once the command
// has ended, and returns the command's status. The command's stops are
// told.
func (k *reaper) run() int {
	for {
		// Wait without reaping, then reap under the lock.
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			break // ECHILD: the tree is gone
		}
		k.mu.Lock()
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|syscall.WUNTRACED, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			if ws.Stopped() {
				if pid == k.command {
					k.stopGroup()
				}
				continue
			}
			if pid == k.command {
				k.status = statusCode(ws)
				k.killing = true
			}
		}
		if k.killing {
			k.killChildren()
		}
		k.mu.Unlock()
	}
	if k.status < 0 {
		return 137
	}
	return k.status
}

// relay passes a signal srt relayed on to the command while it runs
// (under mu: a reaped pid could be another process's).
func (k *reaper) relay(s syscall.Signal) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.status >= 0 {
		return
	}
	switch s {
	case syscall.SIGPIPE:
	case syscall.SIGTSTP:
		k.stopGroup()
	case syscall.SIGCONT:
		k.stopped = false
		syscall.Kill(-k.command, syscall.SIGCONT)
	default:
		syscall.Kill(k.command, s)
	}
}

// stopGroup stops the command's process group, a job stopping whole,
// and tells srt once (mu held).
func (k *reaper) stopGroup() {
	syscall.Kill(-k.command, syscall.SIGSTOP)
	if !k.stopped && k.tell != nil {
		k.stopped = true
		k.tell()
	}
}

// abandon kills the tree: srt is gone.
func (k *reaper) abandon() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.killing = true
	k.killChildren()
}

// killChildren sends SIGKILL to every child of this process (mu held). A
// grandchild whose parent dies is reparented here, and killed on the next
// round, which its parent's exit starts.
func (k *reaper) killChildren() {
	procs, err := proc.All()
	if err != nil {
		syscall.Kill(k.command, syscall.SIGKILL)
		return
	}
	self := os.Getpid()
	for _, p := range procs {
		if p.PPid == self {
			syscall.Kill(p.Pid, syscall.SIGKILL)
		}
	}
}
