//go:build darwin

package srt

import (
	"fmt"
	"os"

	"github.com/srt-go/srt/seatbelt"
	"golang.org/x/sys/unix"
)

// What the macOS backend (seatbelt_backend_unix.go) needs of macOS
// itself: the trampoline's start with sandbox_init, the system log.

// MaybeRunInit runs the trampoline when this process was started as one,
// and never returns then; otherwise it returns at once.
func MaybeRunInit() {
	if len(os.Args) < 3 {
		return
	}
	var err error
	switch os.Args[1] {
	case trampolineRole:
		err = seatbelt.Trampoline(seatbelt.Apply, os.Args[2:])
	case seatbeltWrapRole:
		self, serr := os.Executable()
		if err = serr; err == nil && len(os.Args) == 4 {
			err = seatbelt.RunWrapped(self, os.Args[2], os.Args[3])
		} else if err == nil {
			err = fmt.Errorf("usage: %s SOCKET SECRET", seatbeltWrapRole)
		}
	default:
		return
	}
	fmt.Fprintf(os.Stderr, "srt: %v\n", err)
	os.Exit(125)
}

func newBackend(s *Sandbox) backend {
	return &seatbeltBackend{Sandbox: s, streamLog: seatbelt.StreamDenials, procs: processes, osVersion: func() string {
		v, _ := unix.Sysctl("kern.osproductversion")
		return v
	}}
}

// processes is the process table (kern.proc.all; srt is not confined).
func processes() ([]procEntry, error) {
	ps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	out := make([]procEntry, len(ps))
	for i, p := range ps {
		out[i] = procEntry{pid: int(p.Proc.P_pid), ppid: int(p.Eproc.Ppid),
			start: p.Proc.P_starttime.Sec*1_000_000 + int64(p.Proc.P_starttime.Usec)}
	}
	return out, nil
}

// run is what the Sandbox keeps of a run; the macOS backend keeps its
// own, so none is ever made here.
type run struct{ key, text string }

func (r *run) stop() {}
