package nsexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/srt-go/srt/internal/environ"
	"github.com/srt-go/srt/internal/ownfile"
	"github.com/srt-go/srt/internal/rundir"

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
	// The link to the started process (its fd 4): link_linux.go draws
	// what travels on it.
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
	onStop      func(asked bool)
	onTerminal  func()
	done        chan struct{}
	// ready is closed when the command runs or the setup failed (with
	// failure): see Start.
	ready     chan struct{}
	readyOnce sync.Once
	failure   *SetupError
	// pidfd is the started process (the init, or the fallback's command),
	// known from the credentials of its hello; -1 before.
	pidMu sync.Mutex
	pidfd int
	// failed is why srt's own side of the run failed while it ran (the
	// listener lost, a serving thread that could not start): the run is
	// ended, and Err says so.
	failMu sync.Mutex
	failed error
	onFail func(error)
}

// Err is why srt's own side of the run failed while it ran, if it did:
// the command was then stopped, whatever its status says.
func (l *Launch) Err() error {
	l.failMu.Lock()
	defer l.failMu.Unlock()
	return l.failed
}

// fail records that srt's side of the run failed with err, and ends the
// run: its link closes, and with it the init (and the namespaces) or the
// fallback's reaper, which kills the command's tree.
func (l *Launch) fail(err error) {
	l.failMu.Lock()
	first := l.failed == nil
	if first {
		l.failed = err
	}
	l.failMu.Unlock()
	if !first {
		return
	}
	if l.onFail != nil {
		l.onFail(err)
	}
	l.link.Close()
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
	// OnTerminal, with Terminal, starts the command in the background of
	// its terminal, as a shell starts a job that shares the caller's
	// terminal with others (srt cmd | less): its first read of the
	// terminal, or change of its modes, stops it (SIGTTIN, SIGTTOU); it
	// is then made the terminal's foreground group and goes on, and
	// OnTerminal is told (once, on the link's goroutine; it must not
	// block). Until then the caller has nothing to relay to it.
	OnTerminal func()
	// Net, if set, is how the command reaches the proxies the caller
	// serves (the sandbox's loopback ports, whose sockets the init hands
	// over, or with Fallback the host's). Without it the sandbox has no
	// way out at all.
	Net *NetSide
	// Fallback runs the command under Landlock and seccomp only, for
	// hosts that refuse namespaces (enableWeakerNestedSandbox); the
	// enforcement is "partial".
	Fallback bool
	// Intercept, with Net, also catches connections of programs that
	// ignore the proxy environment, and answers DNS inside.
	Intercept bool
	// Context, if set, kills the run when it is done (exec.CommandContext).
	Context context.Context
	// NullFDs are descriptor numbers (3 and up) the command finds open on
	// /dev/null, read-only: the slot of a descriptor srt keeps for itself.
	NullFDs []int
	// OnStop, if set, is told (on the link's goroutine; it must not
	// block) that the command stopped: Ctrl-Z on its terminal, or a
	// SIGTSTP to Cmd's process (asked). SIGCONT to Cmd's process lets it
	// go on.
	OnStop func(asked bool)
	// OnFailure, if set, is told (once, on a goroutine of srt's) that
	// srt's own side of the run failed while it ran; the run is then
	// ended (see Launch.Err).
	OnFailure func(error)
	// OnEvent, if set, is told of the calls the seccomp supervisor
	// refused: connects to Unix sockets outside allowUnixSockets (and, in
	// the fallback, to anything but the proxies), and socket(AF_UNIX)
	// where no Unix socket is allowed (seccomp.Options.ReportSockets).
	OnEvent func(Event)
	// Masks are masked credential files: PlanOptions.Masks.
	Masks map[string][]byte
	// HostProc lets the init bind the host's /proc where no fresh one
	// can be mounted (enableWeakerNestedSandbox, on a host whose /proc
	// is masked): only a run that reports itself partial for it may.
	HostProc bool
	// Files are written into the run's directory, which the command can
	// read and not write, before it starts; each variable of a file's
	// Env names its path.
	Files []RunFile
}

// RunFile is a file of one run's directory.
type RunFile struct {
	Name string
	Data []byte
	Env  []string
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
// sandbox's init. The caller starts it with Start (or Cmd.Start, which
// leaves setup failures printed on the command's stderr), waits for Cmd
// (forwarding signals), then calls Close.
func Prepare(s *config.Settings, o Options) (*Launch, error) {
	argv, env, cwd, home := o.Argv, o.Env, o.Cwd, o.Home
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	if err := explainServable(o.Fallback); err != nil {
		return nil, err
	}
	dir, lock, err := rundir.New()
	if err != nil {
		return nil, err
	}
	l := &Launch{RuntimeDir: dir, lock: lock, done: make(chan struct{}), ready: make(chan struct{}), pidfd: -1}
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
		env = environ.Set(env, "TMPDIR", tmp)
	}
	var runFiles []string
	for _, f := range o.Files {
		path := filepath.Join(dir, f.Name)
		runFiles = append(runFiles, path)
		if err := ownfile.WriteNew(path, f.Data, 0o444); err != nil {
			return nil, err
		}
		for _, k := range f.Env {
			env = environ.Set(env, k, path)
		}
	}
	rp, err := PlanRun(s, PlanOptions{Home: home, Cwd: cwd, TempDir: tmp, RunDirs: filepath.Dir(dir), RunFiles: runFiles, Fallback: o.Fallback, OwnSockets: o.Fallback && OwnsSockets(), Report: o.OnEvent != nil, Masks: o.Masks})
	if err != nil {
		return nil, err
	}
	l.RunPlan, l.Plan, l.Seccomp, l.Landlock = rp, rp.Mounts, rp.Seccomp, rp.Landlock
	filter, unixPaths := rp.Seccomp, rp.UnixSocketPaths
	var side NetSide
	if o.Net != nil {
		side = *o.Net
		for _, kv := range side.Env {
			k, v, _ := strings.Cut(kv, "=")
			env = environ.Set(env, k, v)
		}
	}
	l.onEvent, l.onStop, l.onTerminal, l.onFail = o.OnEvent, o.OnStop, o.OnTerminal, o.OnFailure
	if err := l.newLink(); err != nil {
		return nil, err
	}
	// The spec both kinds of run start from; each adds its own.
	spec := &Spec{Plan: l.Plan, Argv: argv, Env: env, Cwd: cwd, RuntimeDir: dir, Debug: o.Debug, Terminal: o.Terminal,
		Seccomp: filter, UnixSocketPaths: unixPaths, Landlock: l.Landlock, NullFDs: o.NullFDs}
	spec.TerminalOnDemand = o.Terminal && o.OnTerminal != nil
	if o.Fallback {
		if err := l.prepareFallback(s, o, side, spec); err != nil {
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
	masked := map[string]bool{}
	for p := range o.Masks {
		masked[filepath.Clean(p)] = true
	}
	l.nsPolicy = &ConnectPolicy{Proc: "/proc", Unix: filter.Unix, UnixPaths: unixPaths, OnDeny: o.OnEvent, Guard: l.RunPlan.Guard,
		NestedNamespaces: filter.NestedNamespaces, MaskedFiles: masked}
	l.nsPolicy.sendInit = l.sendInit
	spec.ProxyPorts, spec.Intercept, spec.WeakerProc = ports, intercept, hostProcAllowed(s, o)
	cmd, err := l.child(o.Context, roleInit, spec)
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
		err = rundir.RemoveTree(l.RuntimeDir)
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

// hostProcAllowed reports whether the init may bind the host's /proc
// where no fresh one can be mounted: only with enableWeakerNestedSandbox
// and where the run's level says so (Options.HostProc). A run reported
// full never binds it; the init fails instead.
func hostProcAllowed(s *config.Settings, o Options) bool {
	return s.EnableWeakerNestedSandbox && o.HostProc
}
