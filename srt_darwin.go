//go:build darwin

package srt

import (
	"fmt"
	"os"

	"github.com/srt-go/srt/seatbelt"

	"golang.org/x/sys/unix"
)

// What the macOS backend (seatbelt_backend_unix.go) needs of macOS
// itself: the trampoline's start, a process's exit, the system log.

// MaybeRunInit runs the trampoline when this process was started as one,
// and never returns then; otherwise it returns at once.
func MaybeRunInit() {
	if len(os.Args) < 3 || os.Args[1] != trampolineRole {
		return
	}
	err := seatbelt.Trampoline(3, os.Args[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "srt: %v\n", err)
	os.Exit(125)
}

func newBackend(s *Sandbox) backend {
	return &seatbeltBackend{Sandbox: s, streamLog: seatbelt.StreamDenials, waitExit: waitExit}
}

// run is what the Sandbox keeps of a run; the macOS backend keeps its
// own, so none is ever made here.
type run struct{ key, text string }

func (r *run) stop() {}

// waitExit waits for pid's exit without reaping it (the caller's Wait
// does): kqueue's NOTE_EXIT.
func waitExit(pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		return // the session's Close ends the run
	}
	defer unix.Close(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	out := make([]unix.Kevent_t, 1)
	for {
		if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, out, nil); err != unix.EINTR {
			return
		}
	}
}
