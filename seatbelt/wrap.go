//go:build unix

package seatbelt

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

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

// HandOver sends w and the keeper's descriptors (in the order of FDProfile
// onwards) on c.
func HandOver(c *net.UnixConn, w Wrapped, files []*os.File) error {
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	if _, _, err := c.WriteMsgUnix([]byte{0}, unix.UnixRights(fds...), nil); err != nil {
		return err
	}
	if _, err = c.Write(data); err != nil {
		return err
	}
	// The end of the run's data; the keeper's pid comes back (ReadKeeper).
	return c.CloseWrite()
}

// ReadKeeper reads the keeper's pid that a wrap trampoline sends back
// once it started it (0 if none comes).
func ReadKeeper(c net.Conn) int {
	line, err := bufio.NewReader(io.LimitReader(c, 32)).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || pid <= 1 {
		return 0
	}
	return pid
}

// RunWrapped is the wrap role: it takes the run from the session's socket
// at path and runs its keeper (self, the srt binary). It returns only on
// failure, before anything of the command ran.
func RunWrapped(self, path string) error {
	c, err := net.Dial("unix", path)
	if err != nil {
		return fmt.Errorf("reaching the sandbox session: %w", err)
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
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
	files := make([]*os.File, 0, len(fds))
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
		return errors.New("the session sent no run")
	}
	cmd := &exec.Cmd{Path: self, Args: w.Args, Env: w.Env, Dir: w.Dir, ExtraFiles: files,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		// The keeper leads a session of its own, as srt starts it.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	sigs := relay.Notify()()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	for _, f := range files {
		f.Close()
	}
	files = nil
	// Which keeper runs it, for the session to end it with the run.
	fmt.Fprintf(c, "%d\n", cmd.Process.Pid)
	c.Close()
	os.Exit(relay.Run(cmd, sigs))
	return nil
}
