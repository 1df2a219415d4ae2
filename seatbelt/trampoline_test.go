//go:build linux

package seatbelt

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The keeper, on Linux: everything of it but sandbox_init. The test
// binary is the trampoline; its apply records the profile (or fails when
// told to), so a test sees what was applied, and that it was before the
// command ran.
const testRole = "__seatbelt_trampoline_test"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == testRole {
		err := Trampoline(func(profile string) error {
			if os.Getenv("TEST_APPLY_FAIL") != "" {
				return errors.New("the profile is refused")
			}
			return os.WriteFile(os.Getenv("TEST_APPLIED"), []byte(profile), 0o600)
		}, os.Args[2:])
		fmt.Fprintf(os.Stderr, "srt: %v\n", err)
		os.Exit(125)
	}
	os.Exit(m.Run())
}

const testProfile = "(version 1)\n(deny default)\n"

// keeperRun is a keeper started as srt starts one.
type keeperRun struct {
	cmd     *exec.Cmd
	reports *bufio.Reader
	srt     *os.File // srt's end of the pipe whose end tells srt is gone
	dir     string
	outFile string
}

// out is what the keeper and the command wrote (a file, not a pipe: a
// pipe would hold Wait until everything the command started is gone).
func (k *keeperRun) out() string {
	b, _ := os.ReadFile(k.outFile)
	return string(b)
}

// startKeeper starts a keeper of argv; tty, if not nil, is its stdin and
// stdout.
func startKeeper(t *testing.T, l Launch, env []string, tty *os.File, argv ...string) *keeperRun {
	t.Helper()
	return startKeeperWith(t, l, env, tty, nil, argv...)
}

// startKeeperWith is startKeeper with more descriptors, from FDParent on.
func startKeeperWith(t *testing.T, l Launch, env []string, tty *os.File, more []*os.File, argv ...string) *keeperRun {
	t.Helper()
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile.sb")
	os.WriteFile(profile, []byte(testProfile), 0o600)
	pf, err := os.Open(profile)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rr, rw, _ := os.Pipe()
	gr, gw, _ := os.Pipe()
	k := &keeperRun{dir: dir, srt: gw, reports: bufio.NewReader(rr)}
	k.cmd = exec.Command(os.Args[0], append([]string{testRole, l.String()}, argv...)...)
	k.cmd.Env = append(os.Environ(), append(env, "TEST_APPLIED="+filepath.Join(dir, "applied"))...)
	k.cmd.Dir = dir
	k.cmd.ExtraFiles = append([]*os.File{pf, lock, rw, gr}, more...)
	k.outFile = filepath.Join(dir, "out")
	out, err := os.Create(k.outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	k.cmd.Stdout, k.cmd.Stderr = out, out
	if tty != nil {
		k.cmd.Stdin, k.cmd.Stdout = tty, tty
	}
	k.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := k.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*os.File{pf, lock, rw, gr} {
		f.Close()
	}
	t.Cleanup(func() {
		gw.Close()
		rr.Close()
		if k.cmd.ProcessState == nil {
			k.cmd.Process.Kill()
			k.cmd.Wait()
		}
	})
	return k
}

// started reads the keeper's first report: the command's pid.
func (k *keeperRun) started(t *testing.T) int {
	t.Helper()
	line, err := k.reports.ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), ReportStarted+" "))
	if err != nil || perr != nil || !strings.HasPrefix(line, ReportStarted+" ") {
		t.Fatalf("the keeper's first report: %q, %v (output %q)", line, err, k.out())
	}
	return pid
}

// status waits for the keeper's end and returns its exit code.
func (k *keeperRun) status(t *testing.T) int {
	t.Helper()
	err := k.cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return k.cmd.ProcessState.ExitCode()
}

// state is a process's state letter from outside ('Z' for a zombie), or
// 0 once it is gone.
func state(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	return s[strings.LastIndexByte(s, ')')+2]
}

// gone says whether pid has ended.
func gone(pid int) bool {
	s := state(pid)
	return s == 0 || s == 'Z' || s == 'X'
}

// dead waits a while for pid's end.
func dead(pid int) bool {
	for range 100 {
		if gone(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func waitState(t *testing.T, pid int, want byte) {
	t.Helper()
	for range 250 {
		if state(pid) == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d is in state %q, not %q", pid, state(pid), want)
}

// The command's status is the keeper's; the profile is applied before
// the command runs; the command finds none of srt's descriptors, and
// /dev/null where it was asked for.
func TestTrampolineRuns(t *testing.T) {
	k := startKeeper(t, Launch{NullFDs: []int{3, 5}}, nil, nil, "sh", "-c",
		`test -f "$TEST_APPLIED" || exit 90
		 for fd in 3 4 5 6; do echo "$fd $(readlink /proc/self/fd/$fd)"; done; exit 7`)
	k.started(t)
	if code := k.status(t); code != 7 {
		t.Fatalf("status %d, want 7 (output %q)", code, k.out())
	}
	if b, _ := os.ReadFile(filepath.Join(k.dir, "applied")); string(b) != testProfile {
		t.Errorf("applied %q", b)
	}
	if got, want := k.out(), "3 /dev/null\n4 \n5 /dev/null\n6 \n"; got != want {
		t.Errorf("the command's descriptors:\n%s\nwant\n%s", got, want)
	}
}

// A profile that cannot be applied runs nothing; a missing command is
// 127, as a shell says.
func TestTrampolineRefuses(t *testing.T) {
	k := startKeeper(t, Launch{}, []string{"TEST_APPLY_FAIL=1"}, nil, "sh", "-c", "touch ran")
	if code := k.status(t); code != 125 || !strings.Contains(k.out(), "the profile is refused") {
		t.Errorf("status %d, output %q", code, k.out())
	}
	if _, err := os.Stat(filepath.Join(k.dir, "ran")); err == nil {
		t.Error("the command ran without its profile")
	}
	k = startKeeper(t, Launch{}, nil, nil, "no-such-command-srt")
	if code := k.status(t); code != 127 {
		t.Errorf("status %d, output %q", code, k.out())
	}
	for _, bad := range []string{"", "v2", "v1,null=2", "v1,null=x", "v1,pty"} {
		if _, err := ParseLaunch(bad); err == nil {
			t.Errorf("ParseLaunch(%q) takes it", bad)
		}
	}
	for _, l := range []Launch{{}, {Terminal: true}, {NullFDs: []int{3, 9}}} {
		if got, err := ParseLaunch(l.String()); err != nil || got.String() != l.String() {
			t.Errorf("%v: %v, %v", l, got, err)
		}
	}
}

// What the command leaves running in its group goes when it ends, and the
// whole group goes when srt does (SIGKILLed, say: its end of the pipe
// closes). Checked from outside.
func TestTrampolineKillsTheGroup(t *testing.T) {
	k := startKeeper(t, Launch{}, nil, nil, "sh", "-c", "sleep 100 & echo $! > left; exit 3")
	k.started(t)
	if code := k.status(t); code != 3 {
		t.Fatalf("status %d", code)
	}
	b, _ := os.ReadFile(filepath.Join(k.dir, "left"))
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || !dead(pid) {
		t.Errorf("what the command left running lives on: %q %v", b, err)
	}

	k = startKeeper(t, Launch{}, nil, nil, "sh", "-c", "sleep 100 & echo $! > left; sleep 101")
	cmd := k.started(t)
	var bg int
	for range 250 {
		b, _ := os.ReadFile(filepath.Join(k.dir, "left"))
		if bg, _ = strconv.Atoi(strings.TrimSpace(string(b))); bg > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if bg == 0 || gone(cmd) {
		t.Fatal("the command did not start")
	}
	k.srt.Close()
	if code := k.status(t); code != 137 {
		t.Errorf("status %d after srt's end", code)
	}
	if !dead(cmd) || !dead(bg) {
		t.Error("the command's group outlives srt")
	}
}

// Signals srt relays reach the command; a stop stops its whole group and
// is reported once, as asked for when srt relayed it; SIGCONT continues
// it.
func TestTrampolineSignals(t *testing.T) {
	k := startKeeper(t, Launch{}, nil, nil, "sleep", "100")
	pid := k.started(t)
	k.cmd.Process.Signal(syscall.SIGTSTP)
	if line, err := k.reports.ReadString('\n'); err != nil || line != ReportAsked+"\n" {
		t.Fatalf("report %q, %v", line, err)
	}
	waitState(t, pid, 'T')
	k.cmd.Process.Signal(syscall.SIGCONT)
	waitState(t, pid, 'S')
	k.cmd.Process.Signal(syscall.SIGTERM)
	if code := k.status(t); code != 143 {
		t.Errorf("status %d after SIGTERM", code)
	}

	// A command that stops itself is reported too.
	k = startKeeper(t, Launch{}, nil, nil, "sh", "-c", "kill -STOP $$; exit 4")
	pid = k.started(t)
	if line, err := k.reports.ReadString('\n'); err != nil || line != ReportStopped+"\n" {
		t.Fatalf("report %q, %v", line, err)
	}
	waitState(t, pid, 'T')
	k.cmd.Process.Signal(syscall.SIGCONT)
	if code := k.status(t); code != 4 {
		t.Errorf("status %d after the stop", code)
	}
}

// On a terminal the command gets the pty as its controlling terminal and
// is its foreground group.
func TestTrampolineTerminal(t *testing.T) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("requires a pty: %v", err)
	}
	master := os.NewFile(uintptr(m), "master")
	defer master.Close()
	unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0)
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		t.Skipf("requires TIOCGPTPEER: %v", errno)
	}
	slave := os.NewFile(s, "slave")
	slavePath, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", s))
	if err != nil {
		t.Fatal(err)
	}
	k := startKeeper(t, Launch{Terminal: true}, nil, slave, "cat", "/proc/self/stat")
	pid := k.started(t)
	slave.Close()
	if code := k.status(t); code != 0 {
		t.Fatalf("status %d: %s", code, k.out())
	}
	buf := make([]byte, 4096)
	master.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _ := master.Read(buf)
	line := string(buf[:n])
	f := strings.Fields(line[strings.LastIndexByte(line, ')')+2:])
	// state ppid pgrp session tty_nr tpgid
	if len(f) < 6 || f[2] != strconv.Itoa(pid) || f[5] != f[2] || f[4] == "0" {
		t.Errorf("the command's terminal and group: %q (pid %d)", line, pid)
	}
	// The profile lets the command drive its own terminal, and no other.
	if b, _ := os.ReadFile(filepath.Join(k.dir, "applied")); string(b) != testProfile+OwnTerminal(slavePath).String() {
		t.Errorf("applied %q, want the run's terminal %s granted", b, slavePath)
	}
}

// Stops and continues are told apart in the BSDs' statuses too, where
// Go's WaitStatus takes one for the other.
func TestDecodeWait(t *testing.T) {
	for _, tc := range []struct {
		goos               string
		ws                 syscall.WaitStatus
		stopped, continued bool
	}{
		{"darwin", 0x117f, true, false},  // stopped by SIGSTOP (17)
		{"darwin", 0x127f, true, false},  // by SIGTSTP (18)
		{"darwin", 0x137f, false, true},  // continued (SIGCONT, 19)
		{"darwin", 0x0300, false, false}, // exit 3
		{"darwin", 0x0009, false, false}, // killed by SIGKILL
		{"linux", 0x137f, true, false},   // stopped by SIGSTOP (19)
		{"linux", 0xffff, false, true},
		{"linux", 0x0300, false, false},
	} {
		s, c := decodeWait(tc.goos, tc.ws)
		if s != tc.stopped || c != tc.continued {
			t.Errorf("%s %#x: stopped %v continued %v", tc.goos, uint32(tc.ws), s, c)
		}
	}
}

// Nothing the keeper holds reaches the command: not a descriptor srt's
// caller left open without close-on-exec.
func TestTrampolineKeepsDescriptors(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("TOP-SECRET"), 0o600)
	f, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := startKeeperWith(t, Launch{}, nil, nil, []*os.File{f}, "sh", "-c", `cat <&7; echo "7 $(readlink /proc/self/fd/7)"`)
	k.started(t)
	if code := k.status(t); code != 0 || strings.Contains(k.out(), "TOP-SECRET") || !strings.Contains(k.out(), "7 \n") {
		t.Errorf("status %d, output %q", code, k.out())
	}
}

// A wrapped run's keeper ends with the wrap trampoline that started it
// (a pty library that kills the argv it started), the command's group
// with it.
func TestTrampolineEndsWithItsParent(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	k := startKeeperWith(t, Launch{Parent: true}, nil, nil, []*os.File{pr}, "sleep", "100")
	pr.Close()
	cmd := k.started(t)
	pw.Close()
	if code := k.status(t); code != 137 {
		t.Errorf("status %d once its parent is gone", code)
	}
	if !dead(cmd) {
		t.Error("the command outlives the wrap trampoline")
	}
}
