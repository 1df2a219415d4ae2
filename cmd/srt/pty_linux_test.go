package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/internal/testenv"
)

// An interactive shell on a terminal gets a terminal inside: its window
// size, job control, and Ctrl-C that interrupts the foreground job.
func TestSandboxInteractiveShell(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("requires bash")
		}
		master, slave, err := openPTY()
		if err != nil {
			t.Fatal(err)
		}
		defer master.Close()
		if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 100}); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Getenv(srtEnv), bash, "--norc", "--noprofile", "-i")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H, "TERM=dumb", "PS1=$ "}
		cmd.Dir = b.W
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		slave.Close()
		var mu sync.Mutex
		var out bytes.Buffer
		go func() {
			buf := make([]byte, 4096)
			for {
				n, err := master.Read(buf)
				mu.Lock()
				out.Write(buf[:n])
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
		wait := func(s string) {
			t.Helper()
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				got := out.String()
				mu.Unlock()
				if strings.Contains(got, s) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("no %q in the terminal output:\n%s", s, got)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		send := func(s string) { master.Write([]byte(s)) }
		send("stty size; tty -s && echo HAS_$((1+1))TTY\n")
		wait("40 100")
		wait("HAS_2TTY")
		send("sleep 30\n")
		time.Sleep(300 * time.Millisecond)
		send("\x03")
		send("echo AFTER_$((2+3))\n")
		wait("AFTER_5")
		send("sleep 100 &\n")
		send("jobs; echo JOBS_$((3+4))\n")
		wait("JOBS_7")
		send("kill %1; exit 3\n")
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatal("srt did not exit")
		}
		mu.Lock()
		got := out.String()
		mu.Unlock()
		if code := cmd.ProcessState.ExitCode(); code != 3 {
			t.Errorf("exit %d, want 3", code)
		}
		if strings.Contains(got, "no job control") || !strings.Contains(got, "Running") {
			t.Errorf("no job control in the shell:\n%s", got)
		}
	})
}
