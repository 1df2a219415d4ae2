package nsexec

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
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
