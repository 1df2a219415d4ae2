package nsexec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"github.com/srt-go/srt/internal/relay"
	"golang.org/x/sys/unix"
)

// Wrapped runs: for a caller that starts the process itself (a pty
// library, a process manager), the run is an argv instead of a Cmd. The
// process it starts is a trampoline, this binary in roleWrap: it fetches
// the run's spec and link from a Unix socket in the run's private
// directory (one connection, from this user only) and starts the init as
// Cmd would, forwarding signals and returning its status.

const roleWrap = "__srt_nsexec_wrap"

// WrapArgv returns the argv that starts the run, for a caller that does
// not start Cmd. Only one of them may be used.
func (l *Launch) WrapArgv() ([]string, error) {
	if l.Cmd == nil || l.Cmd.Path != "/proc/self/exe" || len(l.Cmd.ExtraFiles) != 2 {
		return nil, errors.New("this run cannot be wrapped (the fallback sandbox has no trampoline)")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	path, dirFD, err := ShortPath(l.RuntimeDir, "wrap.sock")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	dirFD.Close()
	if err != nil {
		return nil, err
	}
	files := l.Cmd.ExtraFiles
	l.Cmd = nil
	go func() {
		defer ln.Close()
		// Until the run is closed: Close removes the directory, and the
		// listener goes with the run's end.
		go func() { <-l.done; ln.Close() }()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			uc := c.(*net.UnixConn)
			if sameUser(uc) && sendFiles(uc, files) == nil {
				c.Close()
				return
			}
			c.Close()
		}
	}()
	return []string{self, roleWrap, filepath.Join(l.RuntimeDir, "wrap.sock")}, nil
}

func sameUser(c *net.UnixConn) bool {
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	rc.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		ok = err == nil && int(cred.Uid) == os.Getuid()
	})
	return ok
}

func sendFiles(c *net.UnixConn, files []*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		rc, err := f.SyscallConn()
		if err != nil {
			return err
		}
		rc.Control(func(fd uintptr) { fds[i] = int(fd) })
	}
	_, _, err := c.WriteMsgUnix([]byte{0}, unix.UnixRights(fds...), nil)
	return err
}

// runWrap is the trampoline.
func runWrap() error {
	// The init's parent-death signal follows the thread that forks it.
	runtime.LockOSThread()
	signals := relay.Notify()
	if len(os.Args) != 3 {
		return errors.New("usage: " + roleWrap + " SOCKET")
	}
	// The socket's own path is longer than sun_path's 108 bytes under a
	// long TMPDIR: reach it by way of its directory, as it was bound.
	path, dir, err := ShortPath(filepath.Dir(os.Args[2]), filepath.Base(os.Args[2]))
	if err != nil {
		return fmt.Errorf("reaching the sandbox session: %w", err)
	}
	c, err := net.Dial("unix", path)
	dir.Close()
	if err != nil {
		return fmt.Errorf("reaching the sandbox session: %w", err)
	}
	uc := c.(*net.UnixConn)
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(8))
	_, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	c.Close()
	if err != nil {
		return fmt.Errorf("receiving the run: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return errors.New("the session sent no run")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 2 {
		return errors.New("the session sent no run")
	}
	// The init, started as Launch.child starts it, from the files the
	// session made for it.
	cmd := command(context.Background(), roleInit)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(fds[0]), "spec"), os.NewFile(uintptr(fds[1]), "link")}
	cmd.Env = []string{}
	startsInit(cmd)
	sigs := signals()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	os.Exit(relay.Run(cmd, sigs))
	return nil
}
