package nsexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/srt-go/srt/landlock"
	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/seccomp"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaybeRun runs the sandbox's init (or another role of the binary) when
// this process is one (the first argument names the role) and never
// returns then; otherwise it returns at once. Call it first thing in main.
func MaybeRun() {
	if len(os.Args) < 2 {
		return
	}
	var err error
	switch os.Args[1] {
	case roleInit:
		err = runInit()
	case roleFallback:
		err = runFallback()
	case roleFallbackExec:
		err = runFallbackExec()
	case roleWrap:
		err = runWrap()
	case roleProbe:
		os.Exit(0)
	default:
		return
	}
	fmt.Fprintf(os.Stderr, "srt: sandbox: %v\n", err)
	os.Exit(1)
}

// readSpec reads the spec from fd 3, which only the supervisor (or the
// init) provides.
func readSpec() (*Spec, error) {
	f := os.NewFile(3, "spec")
	if f == nil {
		return nil, errors.New("no spec descriptor")
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the spec: %w", err)
	}
	var s Spec
	if err := json.Unmarshal(data, &s); err != nil || s.Plan == nil || len(s.Argv) == 0 {
		return nil, fmt.Errorf("bad spec (%d bytes): %v", len(data), err)
	}
	return &s, nil
}

// runInit is PID 1 of the sandbox, in new user, mount, PID, network, IPC,
// UTS and cgroup namespaces. It builds the root filesystem from the plan
// and pivots into it, opens the network side and hands its sockets to
// srt, confines itself (Landlock, privileges, seccomp, whose listener goes
// to srt too) and starts the command, then reaps whatever the command
// leaves until the command itself ends: then the init exits with its
// status, and the kernel kills everything else in the namespace.
func runInit() error {
	if os.Getpid() != 1 {
		return errors.New("the init must be PID 1 of a new PID namespace")
	}
	// Namespace work stays on one thread. Mounts and the root belong to
	// the whole process here (the namespaces came with the clone, nothing
	// is unshared in this multithreaded runtime), but capabilities,
	// no_new_privs and the parent-death signal are per thread: the one
	// that forks the command is this one.
	runtime.LockOSThread()
	signals := notifyRelayed()
	// The link stays open for the init's life: its end tells srt the run
	// is over, and srt closing it (Sandbox.Close) ends the run.
	link, err := sayHello()
	if err != nil {
		return err
	}
	go func() {
		var b [1]byte
		for {
			if _, err := link.Read(b[:]); err != nil {
				os.Exit(137) // PID 1 gone: the kernel kills the namespace
			}
		}
	}()
	spec, err := readSpec()
	if err != nil {
		return err
	}
	if err := buildRoot(spec); err != nil {
		return err
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("bringing up loopback: %w", err)
	}
	if err := handOverSockets(spec, link); err != nil {
		return err
	}
	path, err := findCommand(spec)
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{Path: path, Args: spec.Argv, Env: spec.Env, Dir: spec.Cwd,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if len(spec.NullFDs) > 0 {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return err
		}
		for _, fd := range spec.NullFDs {
			for len(cmd.ExtraFiles) < fd-2 {
				cmd.ExtraFiles = append(cmd.ExtraFiles, nil)
			}
			cmd.ExtraFiles[fd-3] = null
		}
	}
	if spec.Terminal {
		// A session of its own with the pty as controlling terminal:
		// job control and Ctrl-C work, on a terminal that only the
		// sandbox uses.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	// Landlock: the second layer over the mounts, on every thread of
	// this process and so on the command.
	if spec.Landlock != nil {
		if _, err := landlock.Apply(*spec.Landlock, landlock.Options{Scope: true}); err != nil {
			return err
		}
	}
	if err := dropPrivileges(); err != nil {
		return err
	}
	// The command shares this PID namespace: it may neither trace this
	// process nor read its memory or descriptors through /proc.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making the init undumpable: %w", err)
	}
	listener, err := seccomp.Install(spec.Seccomp)
	if err != nil {
		return err
	}
	if listener >= 0 {
		// srt, outside every namespace of the sandbox and unfiltered,
		// answers the command's connects.
		err := sendLink(link, &linkMessage{Seccomp: true}, []int{listener})
		unix.Close(listener)
		if err != nil {
			return fmt.Errorf("handing the seccomp listener to srt: %w", err)
		}
	}
	sigs := signals()
	if err := cmd.Start(); err != nil {
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		fmt.Fprintf(os.Stderr, "srt: %s: %v\n", spec.Argv[0], unwrapExec(err))
		os.Exit(code)
	}
	pid := cmd.Process.Pid
	// Every child is reaped here, orphans included; the command's end is
	// the init's, with its status.
	go func() {
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "srt: sandbox: waiting for the command: %v\n", err)
				os.Exit(1)
			}
			if got == pid {
				os.Exit(statusCode(ws))
			}
		}
	}()
	for sig := range sigs {
		switch s := sig.(syscall.Signal); s {
		case syscall.SIGPIPE:
		case syscall.SIGTSTP:
			syscall.Kill(-1, syscall.SIGSTOP) // every process of the namespace but this one
		case syscall.SIGCONT:
			syscall.Kill(-1, syscall.SIGCONT)
		default:
			syscall.Kill(pid, s)
		}
	}
	return errors.New("signal channel closed")
}

// notifyRelayed asks for the signals a sandbox process passes on, on a
// goroutine of its own, and returns the wait for it: the runtime enables
// signals one at a time, each a handoff to its signal thread (2.5 ms for
// all of them on a 2-core VM), so the caller does its own setup meanwhile.
// A signal that arrives before the wait is over gets the runtime's default
// action.
//
// SIGURG (the runtime preempts goroutines with it, often while a process
// sets up) and SIGCHLD are left out: queued unread, they would fill the
// channel, and a signal arriving at a full channel is dropped. Children
// are reaped by waiting, never on a signal.
func notifyRelayed() func() <-chan os.Signal {
	sigs := make(chan os.Signal, 16)
	done := make(chan struct{})
	go func() {
		signal.Notify(sigs, relayed()...)
		close(done)
	}()
	return func() <-chan os.Signal {
		<-done
		return sigs
	}
}

// relayed is every catchable signal but SIGURG, SIGCHLD and the two the
// threading library reserves (32 and 33).
func relayed() []os.Signal {
	var out []os.Signal
	for s := syscall.Signal(1); s <= 64; s++ {
		switch s {
		case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGURG, syscall.SIGCHLD, 32, 33:
			continue
		}
		out = append(out, s)
	}
	return out
}

// relaySignals passes the signals of sigs on to the started cmd until it
// exits, and returns its status.
func relaySignals(cmd *exec.Cmd, sigs <-chan os.Signal) int {
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	for {
		select {
		case sig := <-sigs:
			if s := sig.(syscall.Signal); s != syscall.SIGPIPE {
				cmd.Process.Signal(s)
			}
		case <-done:
			return exitCode(cmd.ProcessState)
		}
	}
}

// handOverSockets opens the command's ways out and sends their sockets
// to srt over the link, in one message: the proxies' loopback ports
// (IPv4, and IPv6 where the kernel has it), and, when asked, the
// transparent path's listeners and the DNS stub's sockets behind routes
// that make every address local and an nftables redirect. srt serves
// them all, so nothing in the sandbox relays a byte; connections made
// before srt accepts wait in the backlog.
func handOverSockets(spec *Spec, link *os.File) error {
	var msg linkMessage
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	add := func(s linkSocket, c fileConn) error {
		f, err := c.File()
		c.Close() // the duplicate in f keeps the socket
		if err != nil {
			return err
		}
		files = append(files, f)
		msg.Sockets = append(msg.Sockets, s)
		return nil
	}
	for _, port := range spec.ProxyPorts {
		for _, host := range []string{"127.0.0.1", "::1"} {
			ln, err := Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil {
				if host == "::1" {
					continue // no IPv6 loopback in this kernel
				}
				return fmt.Errorf("proxy port %d: %w", port, err)
			}
			if err := add(linkSocket{Kind: socketProxy, Port: port}, ln.(*net.TCPListener)); err != nil {
				return err
			}
		}
	}
	if spec.Intercept {
		socks, err := openInterception()
		if err != nil && spec.Debug {
			// The network stays closed without it: only the programs
			// that ignore the proxy variables are left without a way out.
			fmt.Fprintf(os.Stderr, "[SandboxDebug] transparent network path unavailable: %v\n", err)
		}
		for _, o := range socks {
			if err := add(o.socket, o.conn); err != nil {
				return err
			}
		}
	}
	if len(files) == 0 {
		return nil
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	if err := sendLink(link, &msg, fds); err != nil {
		return fmt.Errorf("handing the network's sockets to srt: %w", err)
	}
	return nil
}

// sendLink sends one message to srt over the link, with descriptors.
func sendLink(link *os.File, msg *linkMessage, fds []int) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return unix.Sendmsg(int(link.Fd()), data, unix.UnixRights(fds...), nil, 0)
}

// exitCode maps a child's end to a shell-style status.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		return statusCode(ws)
	}
	return ps.ExitCode()
}

// statusCode is the shell's status for a wait status: the exit code, or
// 128+N for a death by signal N.
func statusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// sendFd passes fd over the Unix socket c.
func sendFd(c *os.File, fd int) error {
	return unix.Sendmsg(int(c.Fd()), []byte{0}, unix.UnixRights(fd), nil, 0)
}

// receiveFdOn takes one descriptor from the Unix socket sock.
func receiveFdOn(sock int) (int, error) {
	buf := make([]byte, 1)
	// Room for the credentials too, which a socket with SO_PASSCRED gets.
	oob := make([]byte, unix.CmsgSpace(4)+unix.CmsgSpace(unix.SizeofUcred))
	n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, err
	}
	if n == 0 && oobn == 0 {
		return -1, io.EOF
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return -1, errors.New("no descriptor received")
	}
	for i := range msgs {
		if fds, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			for _, fd := range fds[1:] {
				unix.Close(fd)
			}
			if len(fds) > 0 {
				return fds[0], nil
			}
		}
	}
	return -1, errors.New("no descriptor received")
}

// findCommand enters the command's working directory and finds its
// executable on the command's PATH; a command that is not there ends the
// run with 127, as a shell would.
func findCommand(spec *Spec) (string, error) {
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", v)
		}
	}
	if err := os.Chdir(spec.Cwd); err != nil {
		return "", fmt.Errorf("entering the working directory %s: %w", spec.Cwd, err)
	}
	path, err := exec.LookPath(spec.Argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: %s: %v\n", spec.Argv[0], unwrapExec(err))
		os.Exit(127)
	}
	return path, nil
}

func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// dropPrivileges leaves the calling thread, and what it executes, with no
// capability in any set and no way to regain one: the bounding and
// ambient sets are emptied, the inheritable set cleared, and no_new_privs
// set, so not even a setuid or file-capability binary can add any; the
// permitted and effective sets then come out of execve empty. A caller
// without CAP_SETPCAP (the fallback run by a user other than root) cannot
// shrink its bounding set, and needs not: with no_new_privs and nothing
// inheritable, execve grants nothing.
func dropPrivileges() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		last := len(allCaps()) - 1
		for c := 0; c <= last; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	for i := range data {
		data[i].Inheritable = 0
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing inheritable capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	// Descriptors this process inherited stay out of the command.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("marking descriptors close-on-exec: %w", err)
	}
	return nil
}

// loopbackUp sets lo up in the new network namespace; nothing else exists
// there, so nothing leaves it.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// procMasks are /proc entries the command has no business reading; each
// is covered by an empty read-only file or directory.
var procMasks = []string{"kcore", "sysrq-trigger", "keys", "timer_list", "sched_debug", "latency_stats", "acpi", "scsi"}

// hardenProc makes every entry at the top of the sandbox's /proc that is
// not a process's own read-only, then masks procMasks. The top-level
// entries (irq, sys, bus, fs, driver, sysrq-trigger, mtrr, pressure, …)
// reach kernel state shared with the host, and the user namespace does
// not shield them from a caller who is root: its uid is mapped to itself,
// and procfs checks these files' modes against the real uid 0 (root
// changed /proc/irq/default_smp_affinity that way). The process
// directories stay writable (the command's own oom_score_adj, uid_map),
// as do the links into them (self, thread-self, mounts, net).
//
// Each entry a command could change is covered by the same entry of a
// second proc instance, mounted read-only in the staging area: a bind
// keeps its source mount's read-only flag, so one mount per entry
// suffices, and the instance goes with the staging area at pivot_root.
// For root, that is every entry (procfs lets an entry's owner chmod it,
// for the whole host); for another user, the directories and what their
// modes open to group or others (/proc/pressure's 0666 files).
//
// With a bound host /proc (fresh: false), the whole tree is made
// read-only: its process directories are the host's.
func hardenProc(proc, stage string, fresh bool) error {
	if !fresh {
		if err := setAttr(proc, unix.MOUNT_ATTR_RDONLY, true); err != nil {
			return err
		}
		return maskProc(proc, stage)
	}
	ro := filepath.Join(stage, "proc")
	if err := os.Mkdir(ro, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("proc", ro, "proc", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return pathErr("mounting a read-only proc", ro, err)
	}
	// Root, owner of every entry, may write and chmod any of them; any
	// other user only what its mode opens to the group or to others, and
	// what a directory may hold.
	root := os.Getuid() == 0
	var names []string
	err := getdents{}.ReadDir(proc, func(name []byte, kind policy.Kind) {
		// Not the links into the process directories, nor what
		// maskProc covers anyway.
		if kind != policy.KindDir && kind != policy.KindRegular || isPID(name) || slices.Contains(procMasks, string(name)) {
			return
		}
		if !root && kind == policy.KindRegular {
			var st unix.Stat_t
			if unix.Stat(filepath.Join(proc, string(name)), &st) == nil && st.Mode&0o022 == 0 {
				return
			}
		}
		names = append(names, string(name))
	})
	if err != nil {
		return pathErr("listing", "/proc", err)
	}
	for _, n := range names {
		if err := unix.Mount(filepath.Join(ro, n), filepath.Join(proc, n), "", unix.MS_BIND, ""); err != nil {
			return pathErr("covering with a read-only copy", "/proc/"+n, err)
		}
	}
	return maskProc(proc, stage)
}

// isPID reports whether a /proc name is a process's directory.
func isPID(name []byte) bool {
	for _, c := range name {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(name) > 0
}

// maskProc masks procMasks under proc with an empty read-only directory
// or a read-only /dev/null, each made once in stage and bound (a bind
// keeps the read-only flag); the command has no capability to unmount
// them.
func maskProc(proc, stage string) error {
	var nullFile, emptyDir string
	for _, name := range procMasks {
		p := filepath.Join(proc, name)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		src := &nullFile
		if fi.IsDir() {
			src = &emptyDir
		}
		if *src == "" {
			if *src, err = readOnlySource(stage, fi.IsDir()); err != nil {
				return err
			}
		}
		if err := unix.Mount(*src, p, "", unix.MS_BIND, ""); err != nil {
			return pathErr("masking", "/proc/"+name, err)
		}
	}
	return nil
}

// readOnlySource makes, in stage, an empty directory (dir) or a /dev/null,
// on a read-only mount of its own, for masks to be bound from.
func readOnlySource(stage string, dir bool) (string, error) {
	src, from := filepath.Join(stage, "proc-mask-null"), "/dev/null"
	if dir {
		src, from = filepath.Join(stage, "proc-mask-dir"), ""
		if err := os.Mkdir(src, 0o555); err != nil {
			return "", err
		}
		from = src
	} else if err := os.WriteFile(src, nil, 0o444); err != nil {
		return "", err
	}
	if err := unix.Mount(from, src, "", unix.MS_BIND, ""); err != nil {
		return "", pathErr("binding", src, err)
	}
	// Not nodev: a masked file reads as /dev/null does, empty.
	return src, setAttr(src, unix.MOUNT_ATTR_RDONLY, false)
}

func pathErr(op, path string, err error) error {
	return &os.PathError{Op: op, Path: path, Err: err}
}

// setAttr sets mount attributes on the mount at path, and with recursive
// on every mount beneath it too, atomically (mount_setattr): a remount
// loop would leave a window with some submounts still writable.
func setAttr(path string, attr uint64, recursive bool) error {
	flags := uint(unix.AT_SYMLINK_NOFOLLOW)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, path, flags, &unix.MountAttr{Attr_set: attr}); err != nil {
		return pathErr("mount_setattr", path, err)
	}
	return nil
}

// buildRoot builds the sandbox's root under a private tmpfs and pivots
// into it. Nothing is mounted in the host's namespace and nothing is
// created in the host's tree: mount points for masks live in the tmpfs.
func buildRoot(spec *Spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return pathErr("making mounts private", "/", err)
	}
	base := filepath.Join(spec.RuntimeDir, "base")
	if err := os.Mkdir(base, 0o700); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		return pathErr("mounting the staging tmpfs", base, err)
	}
	root, stage := filepath.Join(base, "root"), filepath.Join(base, "stage")
	for _, d := range []string{root, stage} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	// The whole host, read-only; its /proc and /dev are replaced by the
	// sandbox's own, so their host copies are detached first.
	if err := unix.Mount("/", root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return pathErr("binding the host root", root, err)
	}
	for _, sub := range []string{"proc", "dev"} {
		if err := unix.Unmount(filepath.Join(root, sub), unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return pathErr("detaching the host's", "/"+sub, err)
		}
	}
	if err := setAttr(root, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, true); err != nil {
		return err
	}
	for i, m := range spec.Plan.Mounts {
		if err := applyMount(root, stage, i, m); err != nil {
			return fmt.Errorf("%s %s (%s): %w", m.Kind, m.Path, m.Why, err)
		}
	}
	// Every recursive bind of an ancestor of the runtime dir (the host
	// root, and allowWrite: ["/tmp"]) brings along a copy of the staging
	// tmpfs, writable where the bind is: through it the command could fill
	// its own masks. Detach every copy.
	for {
		if err := unix.Unmount(filepath.Join(root, base), unix.MNT_DETACH); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break
			}
			return pathErr("detaching a copy of the staging area", base, err)
		}
	}
	if spec.Intercept {
		if err := pointResolverAtStub(root, stage); err != nil {
			return err
		}
	}
	if err := buildDev(filepath.Join(root, "dev")); err != nil {
		return err
	}
	fresh := true
	if err := unix.Mount("proc", filepath.Join(root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fresh = false
		// A host whose /proc is partly covered (a container's masked
		// paths) lets no namespace mount a fresh one. Only when the
		// settings accept a weaker sandbox, the host's /proc is bound
		// instead, as the reference does: its processes become visible.
		if !errors.Is(err, unix.EPERM) || !spec.WeakerProc {
			return fmt.Errorf("%w (a container with masked /proc paths refuses a fresh /proc; enableWeakerNestedSandbox binds the host's instead)", pathErr("mounting proc", "/proc", err))
		}
		if err := unix.Mount("/proc", filepath.Join(root, "proc"), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return pathErr("binding the host's proc", "/proc", err)
		}
		if spec.Debug {
			fmt.Fprintln(os.Stderr, "[SandboxDebug] no fresh /proc can be mounted here; the host's /proc is bound read-only (enableWeakerNestedSandbox): its processes are visible inside")
		}
	}
	if err := hardenProc(filepath.Join(root, "proc"), stage, fresh); err != nil {
		return err
	}
	// pivot_root(".", "."): the old root ends up stacked on the new one and
	// is detached at once, with no directory needed for it in the tree.
	if err := unix.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return pathErr("pivot_root", root, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return pathErr("detaching the old root", "/", err)
	}
	return unix.Chdir("/")
}

func applyMount(root, stage string, i int, m Mount) error {
	target := filepath.Join(root, m.Path)
	switch m.Kind {
	case BindWritable, BindReadOnly:
		if err := unix.Mount(m.Path, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return pathErr("bind", m.Path, err)
		}
		attr := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
		if m.Kind == BindReadOnly {
			attr |= unix.MOUNT_ATTR_RDONLY
		}
		return setAttr(target, attr, true)
	case MaskDir:
		src := filepath.Join(stage, fmt.Sprintf("mask-%d", i))
		if err := os.Mkdir(src, 0o755); err != nil {
			return err
		}
		for _, k := range m.Keep {
			if err := os.MkdirAll(filepath.Join(src, k), 0o755); err != nil {
				return err
			}
		}
		for _, k := range m.KeepFiles {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(src, k)), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(src, k), nil, 0o000); err != nil {
				return err
			}
		}
		// Read-only, not tmpfs: a writable mask would let the command
		// stage files where the host later looks.
		if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
			return pathErr("mask", m.Path, err)
		}
		return setAttr(target, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, false)
	case MaskFile:
		src := filepath.Join(stage, fmt.Sprintf("mask-%d", i))
		// Mode 000 on a read-only mount: reading it fails with EACCES
		// (the command has no capability to override that), and chmod
		// fails with EROFS.
		if err := os.WriteFile(src, nil, 0o000); err != nil {
			return err
		}
		if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
			return pathErr("mask", m.Path, err)
		}
		return setAttr(target, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, false)
	case PinLink, MaskLink:
		// The symlink itself becomes a mount point (open_tree and
		// move_mount do not follow it, where mount(2) would), so it can
		// be neither removed nor replaced.
		src := target
		if m.Kind == MaskLink {
			src = filepath.Join(stage, fmt.Sprintf("link-%d", i))
			if err := os.Symlink(deadLink, src); err != nil {
				return err
			}
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return pathErr("open_tree", m.Path, err)
		}
		defer unix.Close(fd)
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return pathErr("move_mount", m.Path, err)
		}
		return nil
	}
	return fmt.Errorf("unknown mount kind %q", m.Kind)
}

// pointResolverAtStub covers /etc/resolv.conf (where it really is, for a
// symlinked one) with a read-only file naming the DNS stub.
func pointResolverAtStub(root, stage string) error {
	real, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil {
		return nil // no resolver configuration to replace
	}
	src := filepath.Join(stage, "resolv.conf")
	if err := os.WriteFile(src, []byte("nameserver 127.0.0.1\n"), 0o444); err != nil {
		return err
	}
	target := filepath.Join(root, real)
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return pathErr("binding", real, err)
	}
	return setAttr(target, unix.MOUNT_ATTR_RDONLY, false)
}

// buildDev makes a minimal /dev: the harmless character devices, bound
// from the host (a user namespace cannot mknod), a private devpts, a
// private /dev/shm, and the usual links. Then /dev itself is read-only.
func buildDev(dev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return pathErr("mounting", "/dev", err)
	}
	for _, name := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		p := filepath.Join(dev, name)
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+name, p, "", unix.MS_BIND, ""); err != nil {
			return pathErr("binding", "/dev/"+name, err)
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return pathErr("mounting", "/dev/pts", err)
	}
	if err := unix.Mount("tmpfs", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return pathErr("mounting", "/dev/shm", err)
	}
	for link, target := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, filepath.Join(dev, link)); err != nil {
			return err
		}
	}
	return setAttr(dev, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, false)
}
