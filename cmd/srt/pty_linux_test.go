package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/proc"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/internal/testenv"
)

// terminalRun is srt running on a pty of the test's, as a terminal
// emulator starts a shell: in a session of its own, the pty its
// controlling terminal.
type terminalRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	done   chan struct{}
}

// onTerminal starts cmd on a new pty of rows×cols.
func onTerminal(t *testing.T, cmd *exec.Cmd, rows, cols uint16) *terminalRun {
	t.Helper()
	master, slave, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	r := &terminalRun{t: t, cmd: cmd, master: master, done: make(chan struct{})}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.done
	})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			r.mu.Lock()
			r.out.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() {
		cmd.Wait()
		close(r.done)
	}()
	return r
}

func (r *terminalRun) send(s string) { r.master.Write([]byte(s)) }

func (r *terminalRun) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// wait waits up to 10 s for s in the terminal's output.
func (r *terminalRun) wait(s string) {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(r.output(), s); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.t.Fatalf("no %q in the terminal output:\n%s", s, r.output())
		}
	}
}

// exit waits up to 10 s for srt's end and returns its status.
func (r *terminalRun) exit() int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.t.Fatalf("srt did not exit:\n%s", r.output())
	}
	return r.cmd.ProcessState.ExitCode()
}

// stopped waits up to 10 s for srt itself to stop (job control), as
// the shell that started it would see it.
func (r *terminalRun) stopped() bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(r.cmd.Process.Pid, &ws, syscall.WUNTRACED|syscall.WNOHANG, nil)
		if err != nil {
			return false
		}
		if pid == r.cmd.Process.Pid && ws.Stopped() {
			return true
		}
	}
	return false
}

// descendantStates are the states (R, S, T...) of the processes named
// comm under pid, read from the host's /proc.
func descendantStates(pid int, comm string) []string {
	all, _ := proc.All()
	procs := map[int]proc.Proc{}
	for _, p := range all {
		procs[p.Pid] = p
	}
	var states []string
	for _, p := range all {
		if p.Comm != comm {
			continue
		}
		for up := p.PPid; up > 1; up = procs[up].PPid {
			if up == pid {
				states = append(states, p.State)
				break
			}
		}
	}
	return states
}

// An interactive shell on a terminal gets a terminal inside: its window
// size, job control, and Ctrl-C that interrupts the foreground job.
func TestSandboxInteractiveShell(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("requires bash")
		}
		cmd := exec.Command(os.Getenv(srtEnv), bash, "--norc", "--noprofile", "-i")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H, "TERM=dumb", "PS1=$ "}
		cmd.Dir = b.W
		r := onTerminal(t, cmd, 40, 100)
		r.send("stty size; tty -s && echo HAS_$((1+1))TTY\n")
		r.wait("40 100")
		r.wait("HAS_2TTY")
		r.send("sleep 30\n")
		time.Sleep(300 * time.Millisecond)
		r.send("\x03")
		r.send("echo AFTER_$((2+3))\n")
		r.wait("AFTER_5")
		r.send("sleep 100 &\n")
		r.send("jobs; echo JOBS_$((3+4))\n")
		r.wait("JOBS_7")
		r.send("kill %1; exit 3\n")
		if code := r.exit(); code != 3 {
			t.Errorf("exit %d, want 3", code)
		}
		if got := r.output(); strings.Contains(got, "no job control") || !strings.Contains(got, "Running") {
			t.Errorf("no job control in the shell:\n%s", got)
		}
	})
}

// On a terminal the command's terminal has a name inside (tty(1) and
// ttyname(3) work: the sandbox's own /dev/pts/0, or in the fallback the
// pty srt made), and Ctrl-Z stops the command — checked from outside —
// and srt with it, so the shell that started srt gets control back;
// SIGCONT ("fg") lets both go on. In both sandboxes, for both users.
func TestSandboxTerminalJobControl(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		inBothSandboxes(t, func(t *testing.T, fallback bool) {
			b := newBox(t)
			script := `tty; echo STARTED_$((1+1)); exec sleep 30`
			cmd := exec.Command(os.Getenv(srtEnv), "-c", script)
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}
			want := "/dev/pts/0\r\n"
			if fallback {
				exe := testExe(t)
				cmd = exec.Command(exe, os.Getenv(srtEnv), "--settings", b.fallbackConfig(""), "-c", script)
				cmd.Env = append(cmd.Env, noUsernsEnv+"=")
				want = "/dev/pts/"
			}
			cmd.Dir = b.W
			r := onTerminal(t, cmd, 24, 80)
			r.wait("STARTED_2")
			if got := r.output(); !strings.HasPrefix(got, want) || strings.Contains(got, "not a tty") {
				t.Errorf("tty inside printed %q, want %q first", got, want)
			}
			// (The shell prints, then becomes sleep: wait for it.)
			states := descendantStates(cmd.Process.Pid, "sleep")
			for i := 0; i < 250 && len(states) == 0; i++ {
				time.Sleep(20 * time.Millisecond)
				states = descendantStates(cmd.Process.Pid, "sleep")
			}
			if len(states) != 1 || states[0] == "T" {
				t.Fatalf("the command is not running: %v", states)
			}
			r.send("\x1a")
			if !r.stopped() {
				t.Fatalf("srt did not stop on Ctrl-Z; command states %v", descendantStates(cmd.Process.Pid, "sleep"))
			}
			if states := descendantStates(cmd.Process.Pid, "sleep"); len(states) != 1 || states[0] != "T" {
				t.Errorf("srt stopped but not the command: %v", states)
			}
			cmd.Process.Signal(syscall.SIGCONT)
			deadline := time.Now().Add(10 * time.Second)
			for states := descendantStates(cmd.Process.Pid, "sleep"); len(states) != 1 || states[0] == "T"; states = descendantStates(cmd.Process.Pid, "sleep") {
				if time.Now().After(deadline) {
					t.Fatalf("the command did not go on after SIGCONT: %v", states)
				}
				time.Sleep(20 * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			if code := r.exit(); code != 143 {
				t.Errorf("exit %d after SIGTERM, want 143:\n%s", code, r.output())
			}
		})
	})
}

// inBothSandboxes runs f for the namespace sandbox and for the fallback.
func inBothSandboxes(t *testing.T, f func(t *testing.T, fallback bool)) {
	for _, fallback := range []bool{false, true} {
		name := "namespaces"
		if fallback {
			name = "fallback"
		}
		t.Run(name, func(t *testing.T) { f(t, fallback) })
	}
}

// srtLine is the shell words that run srt with args, in the namespace
// sandbox or in the fallback (through the harness that refuses user
// namespaces, with settings that allow the fallback).
func (b *box) srtLine(fallback bool, args string) string {
	b.t.Helper()
	if !fallback {
		return shellQuote([]string{os.Getenv(srtEnv)}) + " " + args
	}
	exe := testExe(b.t)
	return noUsernsEnv + "= " + shellQuote([]string{exe, os.Getenv(srtEnv), "--settings", b.fallbackConfig("")}) + " " + args
}

// srt as a job of an interactive shell on a terminal: Ctrl-Z stops it
// and gives the shell the terminal; "bg" lets it run in the background
// without taking what is typed for the shell; "fg" gives it the terminal
// again, where Ctrl-C ends the command (130). A command that leaves a
// process behind still ends srt, at once. The namespace sandbox and the
// fallback, for both users.
func TestSandboxShellJobs(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("requires bash")
		}
		inBothSandboxes(t, func(t *testing.T, fallback bool) {
			b := newBox(t)
			cmd := exec.Command(bash, "--norc", "--noprofile", "-i")
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H, "TERM=dumb", "PS1=$ "}
			cmd.Dir = b.W
			r := onTerminal(t, cmd, 24, 80)
			r.send(b.srtLine(fallback, `-c 'echo STARTED_$((1+1)); exec sleep 30'`) + "\n")
			r.wait("STARTED_2")
			// The shell prints before it execs sleep: a Ctrl-Z between the
			// two would stop the shell, never to exec (a busy machine).
			for deadline := time.Now().Add(10 * time.Second); len(descendantStates(cmd.Process.Pid, "sleep")) != 1; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the command never ran sleep:\n%s", r.output())
				}
			}
			r.send("\x1a")
			r.wait("Stopped")
			if states := descendantStates(cmd.Process.Pid, "sleep"); len(states) != 1 || states[0] != "T" {
				t.Errorf("after Ctrl-Z the command is %v, want stopped", states)
			}
			r.send("bg\n")
			deadline := time.Now().Add(10 * time.Second)
			for states := descendantStates(cmd.Process.Pid, "sleep"); len(states) != 1 || states[0] == "T"; states = descendantStates(cmd.Process.Pid, "sleep") {
				if time.Now().After(deadline) {
					t.Fatalf("after bg the command is %v, want running:\n%s", states, r.output())
				}
				time.Sleep(20 * time.Millisecond)
			}
			// What is typed now is the shell's, not srt's.
			r.send("echo BG_$((3+4))\n")
			r.wait("BG_7")
			r.send("fg\n")
			time.Sleep(300 * time.Millisecond)
			r.send("\x03")
			// Typed ahead while srt still runs, the next line would
			// be relayed to the sandbox: wait for srt's end.
			deadline = time.Now().Add(10 * time.Second)
			for len(descendantStates(cmd.Process.Pid, filepath.Base(os.Getenv(srtEnv)))) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("srt did not end on Ctrl-C:\n%s", r.output())
				}
				time.Sleep(20 * time.Millisecond)
			}
			r.send("echo RC_$?\n")
			r.wait("RC_130")
			r.send(b.srtLine(fallback, `bash -c 'sleep 100 >/dev/null 2>&1 & exit 0'`) + "; echo LEFT_$?\n")
			r.wait("LEFT_0")
			r.send("exit 5\n")
			if code := r.exit(); code != 5 {
				t.Errorf("the shell exited %d:\n%s", code, r.output())
			}
		})
	})
}

// A command that stops itself, or is stopped from inside, where no shell
// would continue srt (no terminal here), goes on: srt does not stop and
// hang. In the namespace sandbox, SIGTSTP sent to the init stops the
// sandbox the same way.
func TestSandboxCommandStopsItself(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		for _, script := range []string{`kill -STOP $$; echo resumed`, `kill -TSTP 1; sleep 0.2; echo resumed`} {
			r := b.exec(nil, nil, "-c", script)
			if r.code != 0 || !strings.Contains(r.stdout, "resumed") {
				t.Errorf("%q: %+v", script, r)
			}
		}
		r := b.runNoUserns("", nil, "--settings", b.fallbackConfig(""), "-c", `kill -STOP $$; echo resumed`)
		if r.code != 0 || !strings.Contains(r.stdout, "resumed") {
			t.Errorf("fallback: %+v", r)
		}
	})
}

// A command that hides its terminal in flight in a Unix socket (which
// only the kernel's garbage collector frees) cannot keep srt from ending.
func TestSandboxTerminalInFlight(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		python, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("requires python3")
		}
		script := `import socket, os
a, b = socket.socketpair()
socket.send_fds(a, [b"x"], [0])
socket.send_fds(a, [b"x"], [b.fileno()])
socket.send_fds(b, [b"x"], [a.fileno()])
print("SENT")
os._exit(0)`
		cmd := exec.Command(os.Getenv(srtEnv), python, "-c", script)
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}
		cmd.Dir = b.W
		r := onTerminal(t, cmd, 24, 80)
		if code := r.exit(); code != 0 || !strings.Contains(r.output(), "SENT") {
			t.Errorf("exit %d:\n%s", code, r.output())
		}
	})
}

// On a terminal the command holds only the sandbox's own: its
// descriptors are the pty's slave and nothing of srt's or the init's (the
// master, the link, the outer terminal), and the init's descriptors
// cannot be opened through /proc. Run as both users.
func TestSandboxTerminalOuterUnreachable(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		script := `ls -l /proc/self/fd | sed -n 's/.* -> /FD /p'
for n in 0 1 2 3 4 5 6 7 8 9; do (exec 9<>/proc/1/fd/$n) 2>/dev/null && echo "OPENED init fd $n"; done
readlink /proc/1/fd/0 && echo "READ init fd 0"
echo DONE_$((1+1))`
		cmd := exec.Command(os.Getenv(srtEnv), "-c", script)
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}
		cmd.Dir = b.W
		r := onTerminal(t, cmd, 24, 80)
		r.wait("DONE_2")
		out := r.output()
		if strings.Contains(out, "OPENED") || strings.Contains(out, "READ init") {
			t.Errorf("the init's descriptors were reachable:\n%s", out)
		}
		fds := 0
		for _, line := range strings.Split(out, "\n") {
			// ls's own: the terminal, the listing's pipe to sed and
			// the directory it reads.
			target, ok := strings.CutPrefix(strings.TrimSpace(line), "FD ")
			if !ok {
				continue
			}
			fds++
			if target != "/dev/pts/0" && !strings.HasPrefix(target, "pipe:") && !strings.HasPrefix(target, "/proc/") {
				t.Errorf("the command holds %s", target)
			}
		}
		if fds < 3 {
			t.Errorf("no descriptors listed:\n%s", out)
		}
		r.exit()
	})
}
