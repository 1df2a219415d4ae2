// Package proc reads the process table of /proc: each process's parent,
// command name and state, for srt's reaper, its tests and its benchmarks.
package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Proc is one process, as /proc/<pid>/stat tells it.
type Proc struct {
	Pid, PPid int
	Comm      string // the command name, at most 15 bytes, anything in it
	State     string // R, S, D, T, Z, ...
	// Start is when it started, in clock ticks after boot: a pid seen
	// again with another start is another process.
	Start int64
}

// Parse reads a /proc/<pid>/stat line: "pid (comm) state ppid ...". The
// command name may hold spaces and parentheses, so the fields are read
// after its last ')'.
func Parse(stat []byte) (Proc, bool) {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 1 || end < open {
		return Proc{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(stat[:open])))
	if err != nil {
		return Proc{}, false
	}
	f := strings.Fields(string(stat[end+1:]))
	if len(f) < 2 {
		return Proc{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Proc{}, false
	}
	p := Proc{Pid: pid, PPid: ppid, Comm: string(stat[open+1 : end]), State: f[0]}
	if len(f) > 19 {
		p.Start, _ = strconv.ParseInt(f[19], 10, 64)
	}
	return p, true
}

// Of reads the process pid; ok is false when it is gone.
func Of(pid int) (Proc, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	return Parse(stat)
}

// All reads every process of this /proc; those that go meanwhile are left
// out.
func All() ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Of(pid); ok {
			out = append(out, p)
		}
	}
	return out, nil
}
