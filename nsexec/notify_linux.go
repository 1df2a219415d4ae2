package nsexec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/srt-go/srt/policy"

	"github.com/srt-go/srt/seccomp"

	"golang.org/x/sys/unix"
)

// The connect supervisor. When the filter sends connect(2) to us
// (SECCOMP_RET_USER_NOTIF), we never let the kernel continue the call: the
// address lives in the command's memory and the descriptor in its table,
// and another of its threads could change either between our check and
// the kernel's own read. Instead we copy the address once, take a
// duplicate of the socket (pidfd_getfd), judge the copy, perform the
// connect ourselves on the duplicate — the same socket, so the command
// sees it connected — and answer with its result.

// seccompNotif and seccompNotifResp are struct seccomp_notif and
// struct seccomp_notif_resp.
type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// seccompIoctlNotifIDValid is SECCOMP_IOCTL_NOTIF_ID_VALID, _IOW('!', 2, u64).
const seccompIoctlNotifIDValid = 0x40082102

// ConnectPolicy is what the supervisor lets a connect reach.
type ConnectPolicy struct {
	// Proc is the procfs in which the notifying pids are numbered.
	Proc string
	// Unix says which Unix-domain addresses are allowed; with seccomp.UnixByPath
	// only UnixPaths and what lies under them (and, with HostNamespaces
	// false, abstract addresses, which are private to the sandbox's
	// network namespace).
	Unix      seccomp.UnixSockets
	UnixPaths []string
	// Inet, when set, decides every IPv4 and IPv6 destination (the
	// fallback sandbox allows only its proxies); nil allows them all.
	Inet func(netip.AddrPort) bool
	// HostNamespaces: the command shares the host's network namespace, where
	// abstract Unix addresses reach host services.
	HostNamespaces bool
	// LocalBinding is allowLocalBinding in the host's network namespace:
	// without it no socket of the command may listen, except on a Unix
	// socket path; with it only on loopback (an unbound TCP socket is
	// bound there first, where listen would bind it to every address),
	// and a connect may also reach the command's own listening ports.
	LocalBinding bool

	// Writable, if set, says which paths the fallback's plan lets the
	// command write: its metadata calls (chmod, chown, utimes, xattrs),
	// for which Landlock has no right, and the guard's calls are judged
	// against it.
	Writable func(path string) bool

	// MaskedFiles are the masked credential files (the namespace
	// sandbox's): read as their masks while those are mounted.
	MaskedFiles map[string]bool

	// Guard, if set, is the path guard's rules: the filter sends it every
	// call that makes, moves or links a name or opens a file for writing.
	Guard *policy.Guard
	// NestedNamespaces is allowNestedUserNamespaces: the command may make
	// user namespaces, and write their maps.
	NestedNamespaces bool
	blocked          counter // the guard's opens waiting for a FIFO's other end
	deferredWrites   counter // the guard's deferred writes not yet closed
	// calls is held for each guarded call, and for a deferred write's
	// last step, which must see no call half made (see open).
	calls   sync.Mutex
	pending []*deferredWrite // deferred writes not yet settled, under calls
	targets []string         // where landed .git files and commondirs lead, under calls

	// initPid is the sandbox's init, as srt numbers it (0 in the
	// fallback); sendInit sends it a request over the run's link, and
	// maps are the requests waiting for its answer.
	initPid  atomic.Int32
	sendInit func(*initRequest) error
	mapMu    sync.Mutex
	maps     map[uint64]chan mapResult
	mapID    uint64

	// sockets are the sockets srt made for the command, where it cannot
	// take the command's own (seccomp.Options.OwnSockets); nil otherwise.
	sockets *ownSockets

	mu        sync.Mutex
	listening map[netip.AddrPort]uint64 // where the command listens on loopback: its socket's inode
	// OnDeny, if set, is told of every call refused by policy. It must
	// not block.
	OnDeny func(Event)
}

// Event is a call the supervisor refused.
type Event struct {
	Kind   string `json:"kind,omitempty"` // "filesystem" for a file's metadata; else a socket
	Call   string `json:"call"`           // "socket" or "connect"
	Target string `json:"target"`         // "AF_UNIX", a socket path, "@" and an abstract name, an address
	Reason string `json:"reason"`
}

// socketNr and socketpairNr are socket(2) and socketpair(2) on this
// architecture.
var (
	socketNr     = seccomp.Nr("socket")
	socketpairNr = seccomp.Nr("socketpair")
	listenNr     = seccomp.Nr("listen")
	connectNr    = seccomp.Nr("connect")
	umaskNr      = seccomp.Nr("umask")
)

func (pol *ConnectPolicy) deny(errno unix.Errno, e Event) unix.Errno {
	if pol.OnDeny != nil {
		pol.OnDeny(e)
	}
	return errno
}

// ServeConnects answers the connect notifications of listener until the
// last process of the filter is gone (or the listener fails). Each connect
// is performed in its own goroutine: a blocking one must not hold up the
// others.
func ServeConnects(listener int, pol *ConnectPolicy) error {
	defer unix.Close(listener)
	defer pol.sockets.close()
	// The loop runs on one of srt's unprivileged threads, which makes the
	// guard's file calls itself as they come: no hand-off between
	// threads on the path of every file a command makes.
	var err error
	if terr := serveThreads.run(func() { err = pol.serve(listener) }); terr != nil {
		return fmt.Errorf("no thread can serve the sandbox's seccomp listener: %w", terr)
	}
	return err
}

// seccompIoctlNotifSetFlags and userNotifFDSyncWakeUp ask the kernel to
// wake the supervisor on the notifying task's CPU, and run it at once.
const (
	seccompIoctlNotifSetFlags = 0x40082104 // _IOW('!', 4, __u64)
	userNotifFDSyncWakeUp     = 1
)

func (pol *ConnectPolicy) serve(listener int) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), seccompIoctlNotifSetFlags, userNotifFDSyncWakeUp) // best effort (6.6)
	gs := newGuardState()
	gs.syncWake = e == 0
	defer gs.close()
	sendFailures.Delete(listener) // a former run's, of the same number
	defer sendFailures.Delete(listener)
	for {
		if err, failed := sendFailures.Load(listener); failed {
			return err.(error)
		}
		// RECV waits for a notification; it says ENOENT when the caller
		// died first, or when nothing is left under the filter, which a
		// poll then tells by POLLHUP.
		var req seccompNotif
		if err := ioctlPtr(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&req)); err != nil {
			switch err {
			case unix.EINTR:
				continue
			case unix.ENOENT:
				fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
				if n, _ := unix.Poll(fds, 0); n == 1 && fds[0].Revents&unix.POLLHUP != 0 && fds[0].Revents&unix.POLLIN == 0 {
					return nil
				}
				continue
			}
			return fmt.Errorf("receiving a seccomp notification: %w", err)
		}
		if guardFloor && pol.Guard != nil {
			_, meta := seccomp.MetaCallOf(req.Nr)
			_, file := seccomp.FileCallOf(req.Nr)
			if meta || file || req.Nr == umaskNr {
				resp := seccompNotifResp{ID: req.ID, Flags: userNotifFlagContinue}
				sendResp(listener, &resp)
				continue
			}
		}
		if c, ok := seccomp.MetaCallOf(req.Nr); ok {
			pol.guard(gs, listener, &req, func(k *call) answer { return refused(k.metadata(c)) })
			continue
		}
		if pol.Guard != nil {
			if c, ok := seccomp.FileCallOf(req.Nr); ok {
				pol.guard(gs, listener, &req, func(k *call) answer { return k.guardCall(c) })
				continue
			}
			if req.Nr == umaskNr {
				// No pointer to change under us: the kernel makes it.
				gs.noteUmask(int(req.Pid), int(req.Args[0]))
				resp := seccompNotifResp{ID: req.ID, Flags: userNotifFlagContinue}
				sendResp(listener, &resp)
				continue
			}
		}
		go pol.answerSocket(listener, &req)
	}
}

// answerSocket performs and answers a notified socket, connect or listen
// call, on a goroutine of its own: a connect may block.
func (pol *ConnectPolicy) answerSocket(listener int, req *seccompNotif) {
	resp := seccompNotifResp{ID: req.ID}
	var errno unix.Errno
	switch req.Nr {
	case socketNr:
		if pol.sockets != nil && (int(int32(req.Args[0])) != unix.AF_UNIX || pol.Unix != seccomp.UnixNone) {
			pol.makeSocket(listener, req)
			return
		}
		// Only socket(AF_UNIX) comes here, to be refused and told.
		errno = pol.deny(unix.EPERM, Event{Call: "socket", Target: "AF_UNIX", Reason: "Unix-domain sockets are not allowed (allowUnixSockets)"})
	case socketpairNr:
		// Only datagram pairs come here, likewise.
		errno = pol.deny(unix.EPERM, Event{Call: "socketpair", Target: "AF_UNIX SOCK_DGRAM", Reason: "a Unix datagram socket can send to any socket by its path (allowUnixSockets)"})
	case listenNr:
		errno = pol.listen(listener, req)
	case connectNr:
		errno = pol.connect(listener, req)
	default:
		errno = unix.ENOSYS
	}
	if errno != 0 {
		resp.Val, resp.Error = -1, -int32(errno)
	}
	// ENOENT here means the caller is gone; nothing to answer.
	sendResp(listener, &resp)
}

// sendFailures are, by listener, the first answer the kernel would not
// take for a reason other than the caller's death: the serving loop ends
// with it (a call nobody answers waits for good).
var sendFailures sync.Map

// sendResp answers a notification of listener.
func sendResp(listener int, resp *seccompNotifResp) {
	if err := ioctlPtr(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(resp)); err != nil && err != unix.ENOENT {
		sendFailures.LoadOrStore(listener, fmt.Errorf("answering a seccomp notification: %w", err))
	}
}

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// stillWaiting reports whether the notification is still pending: the pid
// it names has not been reused by another process since.
func stillWaiting(listener int, id uint64) bool {
	return ioctlPtr(listener, seccompIoctlNotifIDValid, unsafe.Pointer(&id)) == nil
}

// connect performs one notified connect(fd, addr, len) and returns its
// errno (0 for success).
func (pol *ConnectPolicy) connect(listener int, req *seccompNotif) unix.Errno {
	pid := int(req.Pid)
	fd, ptr, n := int(int32(req.Args[0])), uintptr(req.Args[1]), int(uint32(req.Args[2]))
	if n < 2 || n > unix.SizeofSockaddrAny {
		return unix.EINVAL
	}
	addr, e := readBytes(pid, ptr, n)
	if e != 0 {
		return e
	}
	sock, errno := pol.fdOf(listener, req, fd)
	if errno != 0 {
		return errno
	}
	defer unix.Close(sock)

	switch family := binary.LittleEndian.Uint16(addr); family {
	case unix.AF_UNIX:
		e = pol.connectUnix(pid, sock, addr)
	case unix.AF_INET, unix.AF_INET6:
		if pol.Inet != nil {
			ap, ok := inetAddr(addr)
			if !ok {
				return unix.EINVAL
			}
			if !pol.Inet(ap) {
				return pol.deny(unix.EACCES, Event{Call: "connect", Target: ap.String(), Reason: "only the policy proxies may be reached"})
			}
		}
		e = rawConnect(sock, addr)
	default:
		e = rawConnect(sock, addr)
	}
	if e == 0 || e == unix.EINPROGRESS {
		pol.sockets.release(sock) // connected: srt makes no other call on it
	}
	return e
}

// fdOf duplicates the descriptor fd of the process that made the call
// req (pidfd_getfd), once the notification is known to be still pending.
func (pol *ConnectPolicy) fdOf(listener int, req *seccompNotif, fd int) (int, unix.Errno) {
	if !pidfdGetfd() {
		fd, _, e := pol.procDescriptor(listener, req, fd)
		return fd, e
	}
	pidfd, e := pol.callerPidfd(listener, req)
	if e != 0 {
		return -1, e
	}
	defer unix.Close(pidfd)
	return getfd(pidfd, fd)
}

// callerPidfd opens a pidfd of the thread that made the call req, checked
// to be that thread still (its notification still waits).
func (pol *ConnectPolicy) callerPidfd(listener int, req *seccompNotif) (int, unix.Errno) {
	pidfd, err := pol.pidfd(int(req.Pid))
	if err != nil || !stillWaiting(listener, req.ID) {
		if err == nil {
			unix.Close(pidfd)
		}
		return -1, unix.ESRCH
	}
	return pidfd, 0
}

// getfd copies descriptor fd of the thread pidfd names: EBADF when it
// has none, EPERM when it may not be taken.
func getfd(pidfd, fd int) (int, unix.Errno) {
	copied, err := unix.PidfdGetfd(pidfd, fd, 0)
	switch {
	case err == nil:
		return copied, 0
	case errors.Is(err, unix.EBADF):
		return -1, unix.EBADF
	}
	return -1, unix.EPERM
}

// listen performs one notified listen(fd, backlog) on the host's network
// (the fallback): a listening socket there accepts connections from the
// host and beyond, which allowLocalBinding alone may open, on loopback.
func (pol *ConnectPolicy) listen(listener int, req *seccompNotif) unix.Errno {
	sock, errno := pol.fdOf(listener, req, int(int32(req.Args[0])))
	if errno != 0 {
		return errno
	}
	defer unix.Close(sock)
	backlog := int(int32(req.Args[1]))
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return unix.ENOTSOCK
	}
	sa, err := unix.Getsockname(sock)
	if err != nil {
		return errnoOf(err)
	}
	const why = "a listening socket on the host's network accepts connections from outside the sandbox (allowLocalBinding)"
	var bound netip.AddrPort // where a TCP socket listens
	switch domain {
	case unix.AF_INET, unix.AF_INET6:
		ap := sockaddrAddrPort(sa)
		if !pol.LocalBinding {
			return pol.deny(unix.EPERM, Event{Call: "listen", Target: ap.String(), Reason: why})
		}
		if ap.Port() == 0 {
			// Unbound: listen would bind it to every address.
			var bindTo unix.Sockaddr = &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
			if domain == unix.AF_INET6 {
				bindTo = &unix.SockaddrInet6{Addr: netip.IPv6Loopback().As16()}
			}
			if err := unix.Bind(sock, bindTo); err != nil {
				return errnoOf(err)
			}
			if sa, err = unix.Getsockname(sock); err != nil {
				return errnoOf(err)
			}
			ap = sockaddrAddrPort(sa)
		} else if !ap.Addr().Unmap().IsLoopback() {
			return pol.deny(unix.EPERM, Event{Call: "listen", Target: ap.String(), Reason: "allowLocalBinding lets a socket listen on loopback only"})
		}
		bound = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	case unix.AF_UNIX:
		if u, ok := sa.(*unix.SockaddrUnix); (!ok || u.Name == "" || u.Name[0] == '@') && !pol.LocalBinding {
			// Unbound (listen gives it an abstract name) or abstract:
			// reachable by the host's processes, by no path rule.
			return pol.deny(unix.EPERM, Event{Call: "listen", Target: "@", Reason: why})
		}
	}
	if err := unix.Listen(sock, backlog); err != nil {
		return errnoOf(err)
	}
	var st unix.Stat_t
	if bound.IsValid() && unix.Fstat(sock, &st) == nil {
		pol.mu.Lock()
		if pol.listening == nil {
			pol.listening = map[netip.AddrPort]uint64{}
		}
		pol.listening[bound] = st.Ino
		pol.mu.Unlock()
	}
	pol.sockets.release(sock)
	return 0
}

// ListensOn reports whether a listener of the command's is listening at
// ap now: the address and port it listened on, exactly, and the socket it
// listened with still listening there (not another service that took
// the port once the command's closed).
func (pol *ConnectPolicy) ListensOn(ap netip.AddrPort) bool {
	pol.mu.Lock()
	ino, ok := pol.listening[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())]
	pol.mu.Unlock()
	return ok && stillListening(pol.Proc, ino)
}

// stillListening reports whether the TCP socket of inode ino listens, as
// the kernel's tables in proc's net tell.
func stillListening(proc string, ino uint64) bool {
	want := strconv.FormatUint(ino, 10)
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(proc + "/net/" + table)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			f := strings.Fields(line)
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			if len(f) > 9 && f[9] == want {
				return f[3] == "0A" // TCP_LISTEN
			}
		}
	}
	return false
}

func sockaddrAddrPort(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	}
	return netip.AddrPort{}
}

// errnoOf is err's errno: 0 for nil, EINVAL for an error without one.
func errnoOf(err error) unix.Errno {
	if err == nil {
		return 0
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return unix.EINVAL
}

// pidfd opens a pidfd for the thread that made the call: the
// notification names a thread, which pidfd_open takes with PIDFD_THREAD
// (6.9); before that, the thread group it belongs to.
func (pol *ConnectPolicy) pidfd(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, unix.PIDFD_THREAD)
	if err != unix.EINVAL {
		return fd, err
	}
	if fd, err := unix.PidfdOpen(tid, 0); err == nil {
		return fd, nil // a thread group leader
	}
	status, err := os.ReadFile(pol.Proc + "/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return -1, err
	}
	if v, ok := statusField(string(status), "Tgid"); ok {
		if tgid, err := strconv.Atoi(v); err == nil {
			return unix.PidfdOpen(tgid, 0)
		}
	}
	return -1, unix.ESRCH
}

// statusField is the value of key in the text of a /proc/<pid>/status
// (any line but the first, Name).
func statusField(status, key string) (string, bool) {
	_, rest, ok := strings.Cut(status, "\n"+key+":\t")
	v, _, _ := strings.Cut(rest, "\n")
	return v, ok
}

func rawConnect(sock int, addr []byte) unix.Errno {
	_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(unsafe.Pointer(&addr[0])), uintptr(len(addr)))
	return errno
}

// inetAddr reads a sockaddr_in or sockaddr_in6.
func inetAddr(b []byte) (netip.AddrPort, bool) {
	switch binary.LittleEndian.Uint16(b) {
	case unix.AF_INET:
		if len(b) < unix.SizeofSockaddrInet4 {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4])), true
	case unix.AF_INET6:
		if len(b) < unix.SizeofSockaddrInet6 {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:4])), true
	}
	return netip.AddrPort{}, false
}

// connectUnix connects sock to a Unix-domain address if the policy allows
// it. A path is resolved as the command would resolve it (its root and its
// working directory, symlinks followed but no /proc magic links), the
// socket file found is pinned by an O_PATH descriptor, its real path is
// judged, and the connect goes to that very inode through the descriptor,
// so no rename or symlink swap after the check can change the target.
func (pol *ConnectPolicy) connectUnix(pid, sock int, addr []byte) unix.Errno {
	raw := addr[2:]
	if pol.Unix == seccomp.UnixAll {
		return rawConnect(sock, addr)
	}
	if len(raw) == 0 {
		return unix.EINVAL
	}
	if raw[0] == 0 {
		// Abstract: inside the sandbox's own network namespace these
		// reach only the sandbox; on the host network they reach host
		// services, and no path rule can name them.
		if pol.HostNamespaces {
			return pol.deny(unix.EACCES, Event{Call: "connect", Target: "@" + strings.TrimRight(string(raw[1:]), "\x00"), Reason: "abstract Unix sockets reach host services here"})
		}
		return rawConnect(sock, addr)
	}
	if i := strings.IndexByte(string(raw), 0); i >= 0 {
		raw = raw[:i]
	}
	name := string(raw)
	if pol.Unix != seccomp.UnixByPath {
		return pol.deny(unix.EACCES, Event{Call: "connect", Target: name, Reason: "Unix-domain sockets are not allowed (allowUnixSockets)"})
	}
	target, errno := pol.openSocketFile(pid, name)
	if errno != 0 {
		return errno
	}
	defer unix.Close(target)
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(target))
	if err != nil || !underAny(real, pol.UnixPaths) {
		return pol.deny(unix.EACCES, Event{Call: "connect", Target: name, Reason: "not under any allowUnixSockets entry"})
	}
	via := "/proc/self/fd/" + strconv.Itoa(target)
	sa := make([]byte, 2+len(via)+1)
	binary.LittleEndian.PutUint16(sa, unix.AF_UNIX)
	copy(sa[2:], via)
	return rawConnect(sock, sa)
}

// openSocketFile opens name, as seen by process pid, with O_PATH.
func (pol *ConnectPolicy) openSocketFile(pid int, name string) (int, unix.Errno) {
	proc := pol.Proc + "/" + strconv.Itoa(pid)
	if !strings.HasPrefix(name, "/") {
		cwd, err := os.Readlink(proc + "/cwd")
		if err != nil {
			return -1, unix.ENOENT
		}
		name = cwd + "/" + name
	}
	root, err := unix.Open(proc+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, unix.ESRCH
	}
	defer unix.Close(root)
	fd, err := openat2(root, name, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		if errno, ok := err.(unix.Errno); ok {
			return -1, errno
		}
		return -1, unix.ENOENT
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		unix.Close(fd)
		return -1, unix.ECONNREFUSED // what the kernel says for a path that is no socket
	}
	return fd, 0
}

// underAny reports whether path is one of roots or lies under one.
func underAny(path string, roots []string) bool {
	for _, r := range roots {
		if policy.Under(path, r) {
			return true
		}
	}
	return false
}

// openat2 is openat2(2), tried again while it says EAGAIN: a lookup
// confined by RESOLVE_IN_ROOT or RESOLVE_NO_MAGICLINKS gives up when a
// rename or a mount anywhere raced it, and other sandboxes starting and
// commands renaming make that common.
func openat2(dir int, name string, how *unix.OpenHow) (int, error) {
	for range 64 {
		fd, err := unix.Openat2(dir, name, how)
		if err != unix.EAGAIN {
			return fd, err
		}
	}
	return unix.Openat2(dir, name, how)
}
