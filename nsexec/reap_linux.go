package nsexec

import (
	"os"
	"sync"
	"syscall"

	"github.com/srt-go/srt/internal/proc"
	"github.com/srt-go/srt/internal/relay"

	"golang.org/x/sys/unix"
)

// The fallback's reaper (signals and statuses: internal/relay).

// reaper reaps the command's tree and kills what is left of it. Children
// are killed only under mu, between reaps, so a pid is never signalled
// after it was reaped and could be another process's.
type reaper struct {
	mu      sync.Mutex
	command int
	status  int  // the command's status, -1 while it runs
	killing bool // the command has ended, or srt is gone
	// tell tells srt that the command's group stopped, once for each
	// stop: when the command stops, and when srt relays SIGTSTP (asked).
	tell    func(asked bool)
	stopped bool
	// onDemand: the command started in the background of its terminal
	// (stdin, this session's); its first stop for the terminal gives it
	// the foreground (given), and tellTerminal tells srt.
	onDemand, given bool
	tellTerminal    func()
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
				// Not a stop a SIGCONT has undone since (see the
				// init's loop), nor one for the terminal.
				if pid == k.command && !relay.StopUndone(pid) && !k.wantsTerminal(ws.StopSignal()) {
					k.stopGroup(false)
				}
				continue
			}
			if pid == k.command {
				k.status = relay.StatusCode(ws)
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
	relay.Pass(s, k.command, func() { k.stopGroup(true) }, func() { k.stopped = false })
}

// stopGroup stops the command's process group, a job stopping whole,
// and tells srt once (mu held); asked: for the SIGTSTP srt relayed.
func (k *reaper) stopGroup(asked bool) {
	syscall.Kill(-k.command, syscall.SIGSTOP)
	if !k.stopped && k.tell != nil {
		k.stopped = true
		k.tell(asked)
	}
}

// wantsTerminal says whether a stop of the command, by sig, is its
// asking for the terminal it was started in the background of (mu held);
// if so, it is given the terminal's foreground and goes on, once, and
// srt is told.
func (k *reaper) wantsTerminal(sig syscall.Signal) bool {
	if !k.onDemand || k.given || (sig != syscall.SIGTTIN && sig != syscall.SIGTTOU) {
		return false
	}
	k.given = true
	unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, k.command)
	syscall.Kill(-k.command, syscall.SIGCONT)
	if k.tellTerminal != nil {
		k.tellTerminal()
	}
	return true
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
