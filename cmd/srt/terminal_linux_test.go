package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/internal/testenv"
)

// The caller's terminal (issue #34, item 4), attacked from outside: the
// test owns a pty pair and is the user at it. srt runs as the leader of
// the session the pty controls, with the pty as some of its stdin,
// stdout and stderr and as inherited descriptors 3 and 5; the rest are
// /dev/null, a file or a pipe.

// userTerminal is the test's pty: the terminal a user runs srt on.
type userTerminal struct {
	t             *testing.T
	master, slave *os.File
	mu            sync.Mutex
	shown         bytes.Buffer // what the terminal displayed
}

func newUserTerminal(t *testing.T) *userTerminal {
	t.Helper()
	master, slave, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}); err != nil {
		t.Fatal(err)
	}
	u := &userTerminal{t: t, master: master, slave: slave}
	done := make(chan struct{})
	t.Cleanup(func() {
		master.Close()
		<-done
		slave.Close()
	})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			u.mu.Lock()
			u.shown.Write(buf[:n])
			u.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return u
}

// id is the terminal's identity as any process's stat(2) gives it.
func (u *userTerminal) id() string {
	var st unix.Stat_t
	if err := unix.Fstat(int(u.slave.Fd()), &st); err != nil {
		u.t.Fatal(err)
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

func (u *userTerminal) modes() unix.Termios {
	m, err := unix.IoctlGetTermios(int(u.slave.Fd()), unix.TCGETS)
	if err != nil {
		u.t.Fatal(err)
	}
	return *m
}

// typeIn is the user typing s.
func (u *userTerminal) typeIn(s string) {
	if _, err := u.master.Write([]byte(s)); err != nil {
		u.t.Fatal(err)
	}
}

// unread is what was typed and is still there to be read from the
// terminal: what nobody took.
func (u *userTerminal) unread() string {
	var got []byte
	buf := make([]byte, 4096)
	for {
		fds := []unix.PollFd{{Fd: int32(u.slave.Fd()), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 200); err != nil || n == 0 {
			return string(got)
		}
		n, err := unix.Read(int(u.slave.Fd()), buf)
		if n <= 0 || err != nil {
			return string(got)
		}
		got = append(got, buf[:n]...)
	}
}

// terminalLayout is what srt's stdin, stdout and stderr are: the user's
// terminal ("tty"), that terminal held by path only ("path", O_PATH),
// /dev/null, a file or a pipe; ttys, which of them are terminals to the
// command.
type terminalLayout struct {
	name            string
	in, out, errOut string
	ttys            string
}

var terminalLayouts = []terminalLayout{
	{"stdin null", "null", "tty", "tty", ""}, // README's advice: srt cmd </dev/null
	{"stderr only", "null", "pipe", "tty", ""},
	{"stdout only", "file", "tty", "file", ""},
	{"stdout by path", "null", "path", "file", ""},
	{"stdin, stdout piped", "tty", "pipe", "tty", "0 2 "}, // srt cmd | less
	{"stdin only", "tty", "file", "file", "0 "},
	{"all", "tty", "tty", "tty", "0 1 2 "},
}

// startOn starts srt (args after the settings) in b's sandbox — or in
// the fallback — as the leader of a session whose terminal is u, with
// stdio as l says and u again as descriptors 3 and 5.
func (b *box) startOn(u *userTerminal, l terminalLayout, fallback bool, args ...string) (*exec.Cmd, func()) {
	b.t.Helper()
	srtBin := os.Getenv(srtEnv)
	cmd := exec.Command(srtBin, append([]string{"--settings", b.settingsFile(fsMap{"allowWrite": []string{"."}})}, args...)...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}
	if fallback {
		cmd = exec.Command(testExe(b.t), append([]string{srtBin, "--settings", b.fallbackConfig("")}, args...)...)
		cmd.Env = append(cmd.Env, noUsernsEnv+"=")
	}
	cmd.Dir = b.W
	var drains sync.WaitGroup
	var closeAfter []*os.File
	open := func(kind string, write bool) *os.File {
		switch kind {
		case "tty":
			return u.slave
		case "path":
			name, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", u.slave.Fd()))
			if err != nil {
				b.t.Fatal(err)
			}
			fd, err := unix.Open(name, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				b.t.Fatal(err)
			}
			f := os.NewFile(uintptr(fd), name)
			closeAfter = append(closeAfter, f)
			return f
		case "null":
			f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				b.t.Fatal(err)
			}
			closeAfter = append(closeAfter, f)
			return f
		case "file":
			f, err := os.OpenFile(filepath.Join(filepath.Dir(b.W), fmt.Sprintf("stdio-%d", time.Now().UnixNano())), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				b.t.Fatal(err)
			}
			closeAfter = append(closeAfter, f)
			return f
		}
		r, w, err := os.Pipe()
		if err != nil {
			b.t.Fatal(err)
		}
		if !write {
			closeAfter = append(closeAfter, r)
			w.Close()
			return r
		}
		closeAfter = append(closeAfter, w)
		drains.Add(1)
		go func() {
			defer drains.Done()
			io.Copy(io.Discard, r)
			r.Close()
		}()
		return w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = open(l.in, false), open(l.out, true), open(l.errOut, true)
	cmd.ExtraFiles = []*os.File{u.slave, nil, u.slave}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	for _, f := range closeAfter {
		f.Close()
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		drains.Wait()
		close(done)
	}()
	b.t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	wait := func() {
		b.t.Helper()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			b.t.Fatalf("srt did not exit")
		}
	}
	return cmd, wait
}

// No descriptor of the user's terminal enters the sandbox, whichever of
// stdin, stdout and stderr it is, and whether it is inherited above them:
// none of the command's descriptors, nor its /dev/tty, is that terminal
// (its device and inode, as the test sees them). Where stdin is not the
// terminal, the command cannot read what the user types either, by any
// descriptor, reopened through /proc or /dev/tty: what the user typed is
// still there to be read after srt has exited.
func TestTerminalNeverEntersSandbox(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		inBothSandboxes(t, func(t *testing.T, fallback bool) {
			for _, l := range terminalLayouts {
				t.Run(l.name, func(t *testing.T) {
					b := newBox(t)
					u := newUserTerminal(t)
					typed := l.in != "tty"
					// (dash makes a simple command's redirections in the
					// shell itself, while the command runs, and a
					// subshell's in the subshell: /proc/$$/fd must be
					// read with no redirection but a subshell's.)
					script := `(for n in 0 1 2 3 4 5 6 7 8 9; do stat -L -c "fd$n %d:%i" /proc/$$/fd/$n; done) > ids 2>/dev/null
(exec 8<>/dev/tty && stat -L -c "tty %d:%i" /proc/self/fd/8 >> ids) 2>/dev/null
exec 9>ttys; for n in 0 1 2; do [ -t $n ] && printf "$n " >&9; done
echo ready > ready`
					if typed {
						script += `
for n in 0 1 2 3 4 5 6 7 8 9; do timeout 1 cat /proc/$$/fd/$n > got$n 2>/dev/null & done
timeout 1 cat /dev/tty > gottty 2>/dev/null &
wait`
					}
					_, wait := b.startOn(u, l, fallback, "-c", script)
					waitFor(t, b.path("ready"))
					secret := fmt.Sprintf("KEYSTROKES-%d", time.Now().UnixNano())
					if typed {
						u.typeIn(secret + "\n")
					}
					wait()
					ids := b.read("ids")
					if !strings.Contains(ids, "fd0 ") {
						t.Fatalf("the command listed no descriptors: %q", ids)
					}
					for _, line := range strings.Split(strings.TrimSpace(ids), "\n") {
						if strings.HasSuffix(line, " "+u.id()) {
							t.Errorf("the command holds the user's terminal: %s", line)
						}
					}
					// Its own terminal stands where the user's was, for
					// a stdin that was it (and the same terminal as
					// stdout or stderr).
					if got := b.read("ttys"); got != l.ttys {
						t.Errorf("terminals to the command: %q, want %q", got, l.ttys)
					}
					if !typed {
						return
					}
					files, _ := filepath.Glob(filepath.Join(b.W, "got*"))
					for _, f := range files {
						if data, _ := os.ReadFile(f); strings.Contains(string(data), secret) {
							t.Errorf("the command read the user's keystrokes (%s): %q", filepath.Base(f), data)
						}
					}
					if got := u.unread(); !strings.Contains(got, secret) {
						t.Errorf("what the user typed was taken from the terminal: %q left", got)
					}
				})
			}
		})
	})
}

// The user's terminal has its modes back when srt exits, whatever the
// command did to every terminal it could reach (stty raw -echo on each
// descriptor, reopened through /proc, and /dev/tty), and whichever of
// stdin, stdout and stderr the terminal is.
func TestTerminalModesRestored(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		if _, err := exec.LookPath("stty"); err != nil {
			t.Skip("requires stty")
		}
		inBothSandboxes(t, func(t *testing.T, fallback bool) {
			for _, l := range terminalLayouts {
				t.Run(l.name, func(t *testing.T) {
					b := newBox(t)
					u := newUserTerminal(t)
					before := u.modes()
					// (No redirection on the stty -F line: dash would
					// make it in the shell, /proc/$$/fd/2 its target.)
					script := `for n in 0 1 2 3 4 5 6 7 8 9; do stty -F /proc/$$/fd/$n raw -echo -isig -opost; stty raw -echo -isig -opost <&$n 2>/dev/null; done
stty -F /dev/tty raw -echo; stty raw -echo; echo changed > changed`
					_, wait := b.startOn(u, l, fallback, "-c", script)
					wait()
					if b.read("changed") != "changed\n" {
						t.Fatalf("the command did not run: %q", b.read("changed"))
					}
					if after := u.modes(); after != before {
						t.Errorf("the terminal's modes changed:\nbefore %+v\nafter  %+v", before, after)
					}
				})
			}
		})
	})
}

// With stdin a terminal and stdout not (srt cmd > file, srt cmd | less),
// run from an interactive shell: the command's prompt works; while srt
// runs in the background (&), what the user types is the shell's, never
// the command's, also when the command waits to read; while srt is
// stopped (Ctrl-Z), the same; after fg the command reads again; beside a
// pager, a command that does not read leaves every key to the pager; and
// what is typed once srt has ended is the shell's. Judged by what the
// shell (or the pager) runs of what was typed.
func TestTerminalInputOnlyInForeground(t *testing.T) {
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
			srtIn := func(script string) string {
				settings := b.settingsFile(fsMap{"allowWrite": []string{"."}})
				if fallback {
					return b.srtLine(true, shellQuote([]string{bash, "-c", script}))
				}
				return shellQuote([]string{os.Getenv(srtEnv), "--settings", settings, bash, "-c", script})
			}
			// raw waits (2 s at most) for srt to have taken the terminal.
			raw := func() {
				for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					if m, err := unix.IoctlGetTermios(int(r.master.Fd()), unix.TCGETS); err == nil && m.Lflag&unix.ICANON == 0 {
						return
					}
				}
			}

			// A prompt, answered.
			r.send(srtIn(`read -r -p "name? " n; echo "hello $n" > greeting`) + " > out1; echo PROMPTED_$((1+1))\n")
			r.wait("name? ")
			raw()
			r.send("bob\n")
			r.wait("PROMPTED_2")
			if got := b.read("greeting"); got != "hello bob\n" {
				t.Errorf("the prompt's answer: %q", got)
			}

			// In the background, waiting to read: what is typed is the
			// shell's (it runs it once its foreground job, sleep, ends).
			r.send(srtIn(`touch started; read -r -t 3 line; printf %s "$line" > stolen; touch finished`) + " > out2 & sleep 4; echo SLEPT_$((2+3))\n")
			waitFor(t, b.path("started"))
			time.Sleep(300 * time.Millisecond)
			r.send("echo KEYS_$((6*7))\n")
			waitFor(t, b.path("finished"))
			if got := b.read("stolen"); got != "" {
				t.Errorf("the command in the background read what was typed: %q", got)
			}
			r.wait("SLEPT_5")
			r.wait("KEYS_42")

			// Stopped: what is typed is the shell's; after fg, the
			// command's.
			r.send(srtIn(`read -r a; echo "A=$a" > got1; read -r -t 8 b; echo "B=$b" > got2`) + " > out3\n")
			raw()
			r.send("one\n")
			waitFor(t, b.path("got1"))
			r.send("\x1a")
			r.wait("Stopped")
			r.send("echo STOPPED_$((7*8))\n")
			r.wait("STOPPED_56")
			r.send("fg\n")
			time.Sleep(300 * time.Millisecond)
			raw()
			r.send("two\n")
			waitFor(t, b.path("got2"))
			// Typed ahead while srt still holds the terminal, the next
			// line would be the command's (a busy machine): wait for
			// srt's end. (fg's status is the job's: srt's.)
			srtEnded(t, cmd.Process.Pid, r)
			r.send("echo RC_$?\n")
			r.wait("RC_0")
			if got1, got2 := b.read("got1"), b.read("got2"); got1 != "A=one\n" || got2 != "B=two\n" {
				t.Errorf("the command read %q and %q, want A=one and B=two", got1, got2)
			}

			// Beside a pager (srt cmd | less) that reads the terminal,
			// while the command, which never reads it, runs: every key is
			// the pager's.
			r.send(srtIn(`sleep 1.5; echo PAGED_$((3*3))`) + ` | { read -r k </dev/tty; echo "KEY=$k"; cat; }` + "\n")
			time.Sleep(500 * time.Millisecond)
			r.send("q\n")
			r.wait("KEY=q")
			r.wait("PAGED_9")
			srtEnded(t, cmd.Process.Pid, r)

			// Ended: the shell's again.
			r.send("echo AFTER_$((4+5))\n")
			r.wait("AFTER_9")
			r.send("exit 0\n")
			if code := r.exit(); code != 0 {
				t.Errorf("the shell exited %d:\n%s", code, r.output())
			}
		})
	})
}

// srtEnded waits until no srt is left among the descendants of the
// shell pid (on terminal r).
func srtEnded(t *testing.T, pid int, r *terminalRun) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); len(descendantStates(pid, filepath.Base(os.Getenv(srtEnv)))) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("srt did not end:\n%s", r.output())
		}
	}
}
