package nsexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/srt-go/srt/seccomp"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/landlock"
)

// Launch is one prepared run: the init's process, not yet started, and the
// host state it needs (the runtime dir, the spec pipe).
type Launch struct {
	Cmd        *exec.Cmd
	RunPlan    *RunPlan
	Plan       *Plan
	Seccomp    seccomp.Options // the command's filter (DescribeFilter prints it)
	Landlock   *landlock.Rules // nil: no Landlock layer (allowNestedUserNamespaces)
	RuntimeDir string
	specR      *os.File
	lock       *os.File
	// The link to the started process (its fd 4): it says hello first,
	// the fallback child then hands over its seccomp listener, and the
	// link's end tells that the run is over.
	link, linkChild *os.File
	closeChild      sync.Once
	connectPolicy   *ConnectPolicy // the fallback's connect supervisor
	// proxies serve the listening sockets the init hands over, by port;
	// transparent serves the transparent path's (NetSide.Transparent);
	// nsPolicy answers the command's connects once the init hands over
	// its filter's listener.
	proxies     map[int]func(net.Listener)
	transparent func(tcp []net.Listener, dnsUDP []net.PacketConn, dnsTCP []net.Listener)
	nsPolicy    *ConnectPolicy
	onEvent     func(Event)
	done        chan struct{}
	// pidfd is the started process (the init, or the fallback's command),
	// known from the credentials of its hello; -1 before.
	pidMu sync.Mutex
	pidfd int
}

// Options describe one run.
type Options struct {
	Argv      []string
	Env       []string // the command's environment (TMPDIR is set per run)
	Cwd, Home string
	Debug     bool
	// Terminal says the command's stdin is a pty made for it: it becomes
	// the command's controlling terminal.
	Terminal bool
	// Network, if set, starts the proxies (on Unix sockets in the run's
	// private directory, or with Fallback on host loopback TCP) and says
	// how the command reaches them. Without it the sandbox has no way out
	// at all.
	Network func(runtimeDir string) (NetSide, error)
	// Fallback runs the command under Landlock and seccomp only, for
	// hosts that refuse namespaces (enableWeakerNestedSandbox); the
	// enforcement is "partial".
	Fallback bool
	// Intercept, with Network, also catches connections of programs that
	// ignore the proxy environment, and answers DNS inside.
	Intercept bool
	// Context, if set, kills the run when it is done (exec.CommandContext).
	Context context.Context
	// NullFDs are descriptor numbers (3 and up) the command finds open on
	// /dev/null, read-only: the slot of a descriptor srt keeps for itself.
	NullFDs []int
	// OnEvent, if set, is told of the calls the seccomp supervisor
	// refused: connects to Unix sockets outside allowUnixSockets (and, in
	// the fallback, to anything but the proxies), and socket(AF_UNIX)
	// where no Unix socket is allowed (seccomp.Options.ReportSockets).
	OnEvent func(Event)
}

// command is the re-executed binary in role, under ctx when there is one.
func command(ctx context.Context, role string) *exec.Cmd {
	if ctx != nil {
		return exec.CommandContext(ctx, "/proc/self/exe", role)
	}
	return exec.Command("/proc/self/exe", role)
}

// NetSide is how the command reaches the proxies: loopback ports inside
// the namespace sandbox, whose listening sockets the init hands to srt
// to serve (Proxies), or the host's loopback ports of the fallback
// (Ports); and the environment that points its clients there.
type NetSide struct {
	Proxies []ProxyPort
	// Transparent, if set, serves the transparent path's sockets the
	// init hands over (with Options.Intercept): the listeners the
	// nftables redirect sends all other TCP to (IPv4, IPv6), and the DNS
	// stub's. It returns at once; the sockets close with the run.
	Transparent func(tcp []net.Listener, dnsUDP []net.PacketConn, dnsTCP []net.Listener)
	Ports       []uint16
	Env         []string
}

// ProxyPort is a loopback port inside the sandbox and the proxy that
// serves the listening sockets on it (IPv4 and IPv6), from srt.
type ProxyPort struct {
	Port  int
	Serve func(net.Listener)
}

// Prepare computes the plan and builds the command that starts the
// sandbox's init. The caller starts and waits for Cmd (forwarding
// signals), then calls Close.
func Prepare(s *config.Settings, o Options) (*Launch, error) {
	argv, env, cwd, home := o.Argv, o.Env, o.Cwd, o.Home
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	dir, lock, err := newRuntimeDir()
	if err != nil {
		return nil, err
	}
	l := &Launch{RuntimeDir: dir, lock: lock, done: make(chan struct{}), pidfd: -1}
	ok := false
	defer func() {
		if !ok {
			l.Close()
		}
	}()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, err
	}
	if !s.Filesystem.Disabled {
		env = setEnv(env, "TMPDIR", tmp)
	}
	rp, err := PlanRun(s, PlanOptions{Home: home, Cwd: cwd, TempDir: tmp, RunDirs: filepath.Dir(dir), Fallback: o.Fallback, Report: o.OnEvent != nil})
	if err != nil {
		return nil, err
	}
	l.RunPlan, l.Plan, l.Seccomp, l.Landlock = rp, rp.Mounts, rp.Seccomp, rp.Landlock
	filter, unixPaths := rp.Seccomp, rp.UnixSocketPaths
	var side NetSide
	if o.Network != nil {
		side, err = o.Network(dir)
		if err != nil {
			return nil, err
		}
		for _, kv := range side.Env {
			k, v, _ := strings.Cut(kv, "=")
			env = setEnv(env, k, v)
		}
	}
	l.onEvent = o.OnEvent
	if err := l.newLink(); err != nil {
		return nil, err
	}
	if o.Fallback {
		if err := l.prepareFallback(s, o, side, argv, env, cwd, filter, unixPaths); err != nil {
			return nil, err
		}
		ok = true
		return l, nil
	}
	var ports []int
	l.proxies = map[int]func(net.Listener){}
	for _, p := range side.Proxies {
		ports = append(ports, p.Port)
		l.proxies[p.Port] = p.Serve
	}
	intercept := o.Intercept && side.Transparent != nil
	if intercept {
		l.transparent = side.Transparent
	}
	l.nsPolicy = &ConnectPolicy{Proc: "/proc", Unix: filter.Unix, UnixPaths: unixPaths, OnDeny: o.OnEvent}
	cmd, err := l.child(o.Context, roleInit, &Spec{Plan: l.Plan, Argv: argv, Env: env, Cwd: cwd, RuntimeDir: dir, Debug: o.Debug, Terminal: o.Terminal,
		ProxyPorts: ports, Intercept: intercept,
		Seccomp: filter, UnixSocketPaths: unixPaths, Landlock: l.Landlock, WeakerProc: s.EnableWeakerNestedSandbox, NullFDs: o.NullFDs})
	if err != nil {
		return nil, err
	}
	l.Cmd = cmd
	go l.watch()
	ok = true
	return l, nil
}

// child is the process that starts a run — the init (roleInit) or the
// fallback's reaper (roleFallback) — with the run's spec on a pipe at fd 3
// (never argv: plans with thousands of rules must not meet E2BIG or
// argument caps) and its end of the link at fd 4. Nothing else is passed;
// whatever this process holds without close-on-exec the child marks so
// before the command runs.
func (l *Launch) child(ctx context.Context, role string, spec *Spec) (*exec.Cmd, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	l.specR = r
	// The write completes once the child reads, or fails with EPIPE if it
	// dies first; the child refuses to start on a short spec.
	go func() {
		w.Write(data)
		w.Close()
	}()
	cmd := command(ctx, role)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r, l.linkChild}
	cmd.Env = []string{}
	if role == roleInit {
		startsInit(cmd)
	}
	return cmd, nil
}

// startsInit makes cmd start the sandbox's init: in its new namespaces,
// with the capabilities it needs there, in a session of its own.
func startsInit(cmd *exec.Cmd) {
	cmd.SysProcAttr = sandboxNamespaces()
	// The init needs its namespace capabilities after exec, though it runs
	// as the caller's uid: ambient capabilities carry them. They are valid
	// only in the new user namespace, and the init drops every one of
	// them before the command runs.
	cmd.SysProcAttr.AmbientCaps = allCaps()
	// A session of its own: the command has no controlling terminal it
	// could push keystrokes into (TIOCSTI).
	cmd.SysProcAttr.Setsid = true
}

// newLink makes the socket pair of the link.
func (l *Launch) newLink() error {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	// Our end goes to the poller, so that Close interrupts a read.
	if err := unix.SetNonblock(pair[0], true); err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		return err
	}
	l.link, l.linkChild = os.NewFile(uintptr(pair[0]), "link"), os.NewFile(uintptr(pair[1]), "link")
	return nil
}

// watch follows the link: once the started process says hello, our copy
// of its end is closed, so that the link ends with the process; in the
// fallback the listener that comes next is served until nothing is left
// under the filter. Done is closed then, or when Close stops a run that
// never started.
func (l *Launch) watch() {
	defer close(l.done)
	rc, err := l.link.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PASSCRED, 1) })
	var hello [1]byte
	oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred))
	var n, oobn int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), hello[:], oob, 0)
		return rerr != unix.EAGAIN
	}); err != nil || rerr != nil || n != 1 {
		return
	}
	l.closeChild.Do(func() { l.linkChild.Close() })
	l.notePid(oob[:oobn])
	if l.connectPolicy != nil {
		listener, err := receiveFdPolled(l.link)
		if err == nil {
			ServeConnects(listener, l.connectPolicy)
		}
		return
	}
	// The network's sockets come first, then the filter's listener. The
	// sockets live in the sandbox's network namespace, which they keep
	// alive: they are closed when the link ends. Each kind of message is
	// taken once: the init sends each once, before the command starts.
	var served []io.Closer
	defer func() {
		for _, c := range served {
			c.Close()
		}
	}()
	var gotSockets, gotListener bool
	buf := make([]byte, 16<<10)
	msgOOB := make([]byte, unix.CmsgSpace(unix.SizeofUcred)+unix.CmsgSpace(32*4))
	for {
		var n, oobn int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, msgOOB, unix.MSG_CMSG_CLOEXEC)
			return rerr != unix.EAGAIN
		}); err != nil || rerr != nil || n == 0 {
			return
		}
		// Every message carries the sender's credentials (SO_PASSCRED);
		// its descriptors are what it is about.
		fds := rights(msgOOB[:oobn])
		var msg linkMessage
		if json.Unmarshal(buf[:n], &msg) != nil {
			closeAll(fds)
			continue
		}
		switch {
		case msg.Seccomp && len(fds) == 1 && !gotListener:
			gotListener = true
			go ServeConnects(fds[0], l.nsPolicy)
		case len(msg.Sockets) > 0 && len(msg.Sockets) == len(fds) && !gotSockets:
			gotSockets = true
			served = append(served, l.serveSockets(msg.Sockets, fds)...)
		default:
			closeAll(fds)
		}
	}
}

// rights returns the descriptors passed in a message's control data.
func rights(oob []byte) []int {
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob); err == nil {
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// serveSockets serves the sockets the init handed over: each proxy port
// with its proxy, the transparent listeners and the DNS stub with the
// transparent path. It returns them, to be closed with the run. A socket
// srt has nothing to serve with is closed.
func (l *Launch) serveSockets(kinds []linkSocket, fds []int) []io.Closer {
	var out []io.Closer
	var transparent []net.Listener
	var dnsUDP []net.PacketConn
	var dnsTCP []net.Listener
	for i, fd := range fds {
		k := kinds[i]
		f := os.NewFile(uintptr(fd), "sandbox-socket")
		var serve func(net.Listener)
		if k.Kind == socketProxy {
			serve = l.proxies[k.Port]
		}
		intercepting := l.transparent != nil && (k.Kind == socketTransparent || k.Kind == socketDNSTCP || k.Kind == socketDNSUDP)
		if serve == nil && !intercepting {
			f.Close()
			continue
		}
		if k.Kind == socketDNSUDP {
			pc, err := net.FilePacketConn(f) // a duplicate: f is closed below
			f.Close()
			if err == nil {
				out = append(out, pc)
				dnsUDP = append(dnsUDP, pc)
			}
			continue
		}
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			continue
		}
		out = append(out, ln)
		switch k.Kind {
		case socketProxy:
			go serve(ln)
		case socketTransparent:
			transparent = append(transparent, ln)
		case socketDNSTCP:
			dnsTCP = append(dnsTCP, ln)
		}
	}
	if len(transparent)+len(dnsUDP)+len(dnsTCP) > 0 {
		l.transparent(transparent, dnsUDP, dnsTCP)
	}
	return out
}

// notePid opens a pidfd for the sender of the hello, whose credentials
// the kernel attached (its pid as this process sees it).
func (l *Launch) notePid(oob []byte) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	for _, m := range msgs {
		if cred, err := unix.ParseUnixCredentials(&m); err == nil && cred.Pid > 0 {
			if fd, err := unix.PidfdOpen(int(cred.Pid), 0); err == nil {
				l.pidMu.Lock()
				l.pidfd = fd
				l.pidMu.Unlock()
			}
			return
		}
	}
}

// Settle waits, at most timeout, for what the run still has to tell once
// its process has exited: after the caller's Wait, the last events of
// the run are then in. A run still going returns at once.
func (l *Launch) Settle(timeout time.Duration) {
	l.pidMu.Lock()
	fd := l.pidfd
	exited := false
	if fd >= 0 {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		exited = err == nil && n == 1
	}
	l.pidMu.Unlock()
	if !exited {
		return
	}
	select {
	case <-l.done:
	case <-time.After(timeout):
	}
}

// Done is closed when the run is over: its init has exited (every
// process of the namespace sandbox with it), or, in the fallback, the
// last process under its filter has.
func (l *Launch) Done() <-chan struct{} { return l.done }

// sayHello tells the supervisor on the link (fd 4) that this process has
// started, and keeps the link out of its children.
func sayHello() (*os.File, error) {
	link := os.NewFile(4, "link")
	if _, err := unix.FcntlInt(4, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("no link to srt on fd 4: %w", err)
	}
	if _, err := link.Write([]byte{1}); err != nil {
		return nil, fmt.Errorf("saying hello to srt: %w", err)
	}
	return link, nil
}

// sandboxNamespaces is how the init (and the doctor's probe) is cloned:
// new user, mount, PID, network, IPC, UTS and cgroup namespaces, with the
// caller's ids mapped to themselves (files it owns stay its own), killed
// with its parent.
func sandboxNamespaces() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
}

// Close releases the run's host state: the spec pipe, the link and the
// runtime dir (with the per-run TMPDIR). Safe to call twice.
func (l *Launch) Close() error {
	if l.linkChild != nil {
		l.closeChild.Do(func() { l.linkChild.Close() })
	}
	if l.link != nil {
		// A run that never started ends its watch here.
		l.link.Close()
	}
	l.pidMu.Lock()
	if l.pidfd >= 0 {
		unix.Close(l.pidfd)
		l.pidfd = -1
	}
	l.pidMu.Unlock()
	if l.specR != nil {
		l.specR.Close()
		l.specR = nil
	}
	var err error
	if l.RuntimeDir != "" {
		err = removeTree(l.RuntimeDir)
		l.RuntimeDir = ""
	}
	if l.lock != nil {
		l.lock.Close()
		l.lock = nil
	}
	return err
}

// ShortPath names file inside dir by way of an open descriptor of dir,
// "/proc/self/fd/N/file": a Unix socket's path is limited to 108 bytes,
// and a runtime dir under a long TMPDIR is longer. The caller keeps the
// returned *os.File open while it uses the path.
func ShortPath(dir, file string) (string, *os.File, error) {
	f, err := os.OpenFile(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, err
	}
	return fdPath(f, file), f, nil
}

// fdPath names file in the directory open as dir, whatever its path.
func fdPath(dir *os.File, file string) string {
	return fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), file)
}

// allCaps lists every capability the kernel knows.
func allCaps() []uintptr {
	last := 40
	if data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		fmt.Sscan(strings.TrimSpace(string(data)), &last)
	}
	caps := make([]uintptr, 0, last+1)
	for c := 0; c <= last; c++ {
		caps = append(caps, uintptr(c))
	}
	return caps
}

func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// receiveFdPolled takes one descriptor from c, a descriptor of the poller.
func receiveFdPolled(c *os.File) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, rerr := -1, error(nil)
	err = rc.Read(func(raw uintptr) bool {
		fd, rerr = receiveFdOn(int(raw))
		return rerr != unix.EAGAIN
	})
	if err != nil {
		return -1, err
	}
	return fd, rerr
}
