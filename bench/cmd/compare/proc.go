//go:build linux

package main

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/srt-go/srt/internal/proc"

	"golang.org/x/sys/unix"
)

// sampleMem samples, every 10 ms until the returned stop is called, the
// summed resident set of the processes descended from roots (the roots
// included), leaving out those whose name exclude matches; stop returns
// the peaks in bytes. In the RSS, pages shared between processes (one
// binary's text in several) count once per process, as in ps; with pss,
// the proportional set size is summed too, where a shared page counts
// once in all.
func sampleMem(roots map[int]bool, exclude func(comm string) bool, pss bool) (stop func() (rss, pss uint64)) {
	var (
		mu               sync.Mutex
		peakRSS, peakPSS uint64
		done             = make(chan struct{})
		over             = make(chan struct{})
	)
	go func() {
		defer close(over)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			r, p := treeMem(roots, exclude, pss)
			mu.Lock()
			peakRSS, peakPSS = max(peakRSS, r), max(peakPSS, p)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		<-over
		mu.Lock()
		defer mu.Unlock()
		return peakRSS, peakPSS
	}
}

// treeMem is one sample of sampleMem.
func treeMem(roots map[int]bool, exclude func(string) bool, withPSS bool) (rss, pss uint64) {
	all, err := proc.All()
	if err != nil {
		return 0, 0
	}
	procs := map[int]proc.Proc{}
	for _, p := range all {
		procs[p.Pid] = p
	}
	member := map[int]bool{}
	var in func(pid, depth int) bool
	in = func(pid, depth int) bool {
		if roots[pid] {
			return true
		}
		if v, ok := member[pid]; ok {
			return v
		}
		p, ok := procs[pid]
		v := ok && depth < 64 && p.PPid > 1 && in(p.PPid, depth+1)
		member[pid] = v
		return v
	}
	page := uint64(os.Getpagesize())
	for pid, p := range procs {
		if !in(pid, 0) || (exclude != nil && exclude(p.Comm)) {
			continue
		}
		statm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
		if err != nil {
			continue
		}
		f := strings.Fields(string(statm))
		if len(f) < 2 {
			continue
		}
		pages, _ := strconv.ParseUint(f[1], 10, 64)
		rss += pages * page
		if withPSS {
			pss += pssOf(pid)
		}
	}
	return rss, pss
}

// pssOf reads a process's proportional set size, in bytes.
func pssOf(pid int) uint64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func cpus() int { return runtime.NumCPU() }

func kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}
