//go:build unix

package seatbelt

import (
	"bufio"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/srt-go/srt/internal/relay"
	"golang.org/x/sys/unix"
)

// Wrapped runs: for a caller that starts the process itself (a pty
// library, a process manager), a run is an argv instead of a Cmd. That
// argv starts srt in the wrap role: it takes the run from a Unix socket
// in the run's private directory (0700, so only this user reaches it),
// the keeper's descriptors with it, starts the keeper as srt would, and
// relays signals to it until it ends, exiting with its status.

// Wrapped is a wrapped run as the session hands it over.
type Wrapped struct {
	Args []string `json:"args"` // the keeper's argv: its argv[0], its role, its options, the command
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
}

// maxWrapped bounds what a wrap trampoline reads of a run.
const maxWrapped = 64 << 20

// The exchange on the run's socket, each step under a deadline:
//
//	trampoline → srt   the run's secret, a line (from the argv Wrap gave)
//	srt → trampoline   the keeper's descriptors (FDProfile onwards)
//	srt → trampoline   Wrapped as JSON, then the end of srt's writing
//	trampoline → srt   the keeper's pid, a line
//
// Only the one who was given the argv knows the secret: another process
// of the user's that reaches the socket (a command allowed every Unix
// socket) takes nothing, and cannot name a keeper.
const exchangeTimeout = 10 * time.Second

// SendFiles sends the keeper's descriptors on c.
func SendFiles(c *net.UnixConn, files []*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	_, _, err := c.WriteMsgUnix([]byte{0}, unix.UnixRights(fds...), nil)
	return err
}

// SendRun sends w on c and ends srt's writing.
func SendRun(c *net.UnixConn, w Wrapped) error {
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	if _, err := c.Write(data); err != nil {
		return err
	}
	return c.CloseWrite()
}

// ReadLine reads one short line of the exchange ("" on failure).
func ReadLine(c net.Conn) string {
	line, err := bufio.NewReader(io.LimitReader(c, 128)).ReadString('\n')
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(line, "\n")
}

// NewSecret makes a run's secret.
func NewSecret() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// SameSecret compares secrets in constant time.
func SameSecret(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// RunWrapped is the wrap role: it takes the run from the session's socket
// at path with its secret and runs its keeper (self, the srt binary),
// which also ends when this process does. It returns only on failure,
// before anything of the command ran.
func RunWrapped(self, path, secret string) error {
	c, err := net.Dial("unix", path)
	if err != nil {
		return fmt.Errorf("reaching the sandbox session: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(exchangeTimeout))
	uc := c.(*net.UnixConn)
	if _, err := fmt.Fprintf(c, "%s\n", secret); err != nil {
		return fmt.Errorf("reaching the sandbox session: %w", err)
	}
	const n = FDSrt - FDProfile + 1
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*n))
	_, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return fmt.Errorf("receiving the run: %w", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
		fds, _ = unix.ParseUnixRights(&msgs[0])
	}
	files := make([]*os.File, 0, len(fds)+1)
	for _, fd := range fds {
		unix.CloseOnExec(fd)
		files = append(files, os.NewFile(uintptr(fd), "handed"))
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	data, err := io.ReadAll(io.LimitReader(uc, maxWrapped))
	var w Wrapped
	if err != nil || len(files) != n || json.Unmarshal(data, &w) != nil || len(w.Args) < 3 {
		return errors.New("the session sent no run (a wrapped run is taken once)")
	}
	l, err := ParseLaunch(w.Args[2])
	if err != nil {
		return err
	}
	// The keeper ends with this process too, as a command a pty library
	// started and then killed must.
	parentR, parentW, err := os.Pipe()
	if err != nil {
		return err
	}
	l.Parent = true
	w.Args[2] = l.String()
	cmd := &exec.Cmd{Path: self, Args: w.Args, Env: w.Env, Dir: w.Dir, ExtraFiles: append(files, parentR),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		// The keeper leads a session of its own, as srt starts it.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	sigs := relay.Notify()()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	parentR.Close()
	for _, f := range files {
		f.Close()
	}
	files = nil
	// Which keeper runs it, for the session to end it with the run.
	fmt.Fprintf(c, "%d\n", cmd.Process.Pid)
	c.Close()
	code := relay.Run(cmd, sigs)
	parentW.Close()
	os.Exit(code)
	return nil
}
