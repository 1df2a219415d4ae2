//go:build darwin

package darwin

import (
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/seatbelt"
	"golang.org/x/sys/unix"
)

// What the macOS backend (backend_unix.go) needs of macOS itself:
// sandbox_init for its keeper, the process table, the system log.

// MaybeRunInit runs the keeper or a wrap trampoline when this process was
// started as one, and never returns then; otherwise it returns at once.
func MaybeRunInit() { seatbeltRole(seatbelt.Apply) }

// New is the macOS backend of h's session. A nil h makes a backend for
// Supported, Doctor, ExplainStart and LandlockABI only.
func New(h backend.Host) backend.Backend {
	return &seatbeltBackend{host: h, streamLog: seatbelt.StreamDenials, procs: processes, osVersion: func() string {
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
