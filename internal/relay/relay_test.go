//go:build unix

package relay

import (
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
)

// The sandbox's processes relay the signals a user sends, and leave out
// the two that arrive unbidden and often (the runtime's preemption
// signal, children's ends): queued unread during setup they filled the
// relay channel, so the command's SIGCHLD was dropped and its end never
// seen (a launch with 1,000 rules hung).
func TestRelayedSignals(t *testing.T) {
	got := Signals()
	for _, s := range []syscall.Signal{syscall.SIGURG, syscall.SIGCHLD, syscall.SIGKILL, syscall.SIGSTOP} {
		if slices.Contains(got, os.Signal(s)) {
			t.Errorf("%v is relayed", s)
		}
	}
	for _, s := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGWINCH, syscall.SIGTSTP, syscall.SIGCONT} {
		if !slices.Contains(got, os.Signal(s)) {
			t.Errorf("%v is not relayed", s)
		}
	}
	if runtime.GOOS == "linux" {
		for _, s := range []syscall.Signal{34, 64} {
			if !slices.Contains(got, os.Signal(s)) {
				t.Errorf("%v is not relayed", s)
			}
		}
	}
}
