package winsec

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// Keep is the run's keeper on Windows: it starts c in a new job of j's
// limits and waits. When the command ends, Keep returns its exit code
// (what it left in the job is ended with the job); when srt — the
// process parent — ends first, Keep ends the job and returns 1. So
// nothing of the command outlives srt, SIGKILLed srt included: the
// keeper is the one process that holds the job, and it holds srt's
// process handle too.
func Keep(j Job, c Command, parent int) (int, error) {
	srt, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(parent))
	if err != nil {
		return 1, fmt.Errorf("watching srt (pid %d): %w", parent, err)
	}
	defer windows.CloseHandle(srt)
	job, err := NewJob(j)
	if err != nil {
		return 1, err
	}
	p, err := Start(c, job)
	if err != nil {
		windows.CloseHandle(job)
		return 1, err
	}
	defer p.Close()
	ev, err := windows.WaitForMultipleObjects([]windows.Handle{p.process, srt}, false, windows.INFINITE)
	if err != nil {
		return 1, err
	}
	if ev != windows.WAIT_OBJECT_0 {
		return 1, fmt.Errorf("srt (pid %d) ended before the command: the command's job is ended", parent)
	}
	var code uint32
	if err := windows.GetExitCodeProcess(p.process, &code); err != nil {
		return 1, err
	}
	return int(code), nil
}
