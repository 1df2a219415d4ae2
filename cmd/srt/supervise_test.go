//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/proc"
)

// supervised starts the helper with a shell script; the script's first
// line of output must be its own pid.
type supervised struct {
	cmd      *exec.Cmd
	lines    chan string
	childPID int
}

func startSupervised(t *testing.T, script string) *supervised {
	t.Helper()
	return startSupervisedAs(t, "1", script)
}

// startSupervisedAs starts the helper as mode (superviseEnv's value).
func startSupervisedAs(t *testing.T, mode, script string) *supervised {
	t.Helper()
	exe := testExe(t)
	cmd := exec.Command(exe, "/bin/sh", "-c", "echo $$; "+script)
	cmd.Env = append(os.Environ(), superviseEnv+"="+mode)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &supervised{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if s.childPID > 0 {
			// The parent-death signal must have taken the command along.
			deadline := time.Now().Add(5 * time.Second)
			for st := processState(t, s.childPID); st != "gone" && st != "Z"; st = processState(t, s.childPID) {
				if time.Now().After(deadline) {
					syscall.Kill(s.childPID, syscall.SIGKILL)
					t.Errorf("the command (pid %d) outlived its killed supervisor", s.childPID)
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	})
	first := s.expectLine(t)
	if _, err := fmt.Sscan(first, &s.childPID); err != nil {
		t.Fatalf("first line %q is not a pid", first)
	}
	if s.expectLine(t) != "ready" {
		t.Fatal("script did not say ready")
	}
	return s
}

func (s *supervised) expectLine(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			t.Fatal("output ended")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no output within 10s")
	}
	return ""
}

func (s *supervised) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("supervisor did not exit within 10s")
	}
	return s.cmd.ProcessState.ExitCode()
}

// processState is the state letter of /proc/<pid>/stat ("S", "T", ...).
func processState(t *testing.T, pid int) string {
	p, ok := proc.Of(pid)
	if !ok {
		return "gone"
	}
	return p.State
}

func waitState(t *testing.T, pid int, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for processState(t, pid) != want {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d is in state %s, want %s", pid, processState(t, pid), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const loop = `echo ready; while :; do sleep 0.05; done`

// Each signal sent to the supervisor reaches the command, which is in
// another session and would get nothing from the terminal or our group.
func TestSuperviseForwardsSignals(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
	}{
		{syscall.SIGINT, "INT"}, {syscall.SIGTERM, "TERM"}, {syscall.SIGHUP, "HUP"}, {syscall.SIGQUIT, "QUIT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSupervised(t, `trap 'exit 42' `+tc.name+`; `+loop)
			s.cmd.Process.Signal(tc.sig)
			if code := s.wait(t); code != 42 {
				t.Errorf("exit %d, want 42 (the command's trap ran)", code)
			}
		})
	}
	t.Run("WINCH", func(t *testing.T) {
		s := startSupervised(t, `trap 'echo winch' WINCH; `+loop)
		s.cmd.Process.Signal(syscall.SIGWINCH)
		if l := s.expectLine(t); l != "winch" {
			t.Errorf("got %q", l)
		}
	})
}

// SIGKILL to srt takes the command with it.
func TestSuperviseKilledTakesCommandAlong(t *testing.T) {
	s := startSupervised(t, loop)
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.wait(t)
	deadline := time.Now().Add(5 * time.Second)
	for st := processState(t, s.childPID); st != "gone" && st != "Z"; st = processState(t, s.childPID) {
		if time.Now().After(deadline) {
			t.Fatalf("the command (pid %d, state %s) outlived srt", s.childPID, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A command killed by a signal — by itself or forwarded from srt — makes
// srt exit 128+N, never 0.
func TestSuperviseExitStatus(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   int
	}{
		{"echo ready; exit 7", 7},
		{"echo ready; exit 0", 0},
		{"echo ready; kill -TERM $$", 143},
		{"echo ready; kill -KILL $$", 137},
		{"echo ready; kill -INT $$", 130},
	} {
		s := startSupervised(t, tc.script)
		if code := s.wait(t); code != tc.want {
			t.Errorf("%q: exit %d, want %d", tc.script, code, tc.want)
		}
	}
	s := startSupervised(t, loop)
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(t); code != 143 {
		t.Errorf("SIGTERM to srt: exit %d, want 143", code)
	}
	if st := processState(t, s.childPID); st != "gone" && st != "Z" {
		t.Errorf("the command is still there (state %s)", st)
	}
}

// SIGTSTP stops the command, and its stop (which the sandbox reports)
// stops srt; SIGCONT resumes both.
func TestSuperviseJobControl(t *testing.T) {
	// Like the sandbox's init, the command stops itself on SIGTSTP.
	s := startSupervised(t, `trap 'exit 42' TERM; trap 'kill -STOP $$' TSTP; `+loop)
	s.cmd.Process.Signal(syscall.SIGTSTP)
	waitState(t, s.childPID, "T")
	waitState(t, s.cmd.Process.Pid, "T")
	s.cmd.Process.Signal(syscall.SIGCONT)
	waitState(t, s.cmd.Process.Pid, "S")
	deadline := time.Now().Add(10 * time.Second)
	for st := processState(t, s.childPID); st == "T"; st = processState(t, s.childPID) {
		if time.Now().After(deadline) {
			t.Fatal("the command was not resumed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(t); code != 42 {
		t.Errorf("exit %d after resume, want 42", code)
	}
}

// The sandbox's answer to a SIGTSTP that reaches srt only after srt has
// passed a SIGCONT on (the SIGCONT came while the answer was on its way)
// does not stop srt, though srt is its terminal's foreground job: the
// SIGCONT lets the job go on, and it goes on. Judged by the states of
// the stand-in and the command in /proc.
func TestSuperviseStopAnsweredLate(t *testing.T) {
	s := startSupervisedAs(t, superviseLate, `trap 'exit 42' TERM; trap 'kill -STOP $$' TSTP; `+loop)
	for round := 0; round < 3; round++ {
		s.cmd.Process.Signal(syscall.SIGTSTP)
		waitState(t, s.childPID, "T")
		s.cmd.Process.Signal(syscall.SIGCONT)
		// The answer comes once the command goes on; it must stop
		// neither the supervisor nor the command.
		for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if st := processState(t, s.cmd.Process.Pid); st == "T" {
				s.cmd.Process.Signal(syscall.SIGCONT)
				t.Fatalf("round %d: the late answer stopped srt after its SIGCONT", round)
			}
		}
		if st := processState(t, s.childPID); st == "T" {
			t.Fatalf("round %d: the command stays stopped after SIGCONT", round)
		}
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(t); code != 42 {
		t.Errorf("exit %d, want 42", code)
	}
}
