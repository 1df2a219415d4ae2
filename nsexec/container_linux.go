package nsexec

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/srt-go/srt/seccomp"

	"golang.org/x/sys/unix"
)

// What the path guard and the connect supervisor use where a container's
// seccomp profile refuses their usual calls. Docker's default profile
// (and containerd's, which Kubernetes' RuntimeDefault is) refuses a
// container without CAP_SYS_ADMIN and CAP_SYS_PTRACE four of them, each
// of which has a way those profiles allow:
//
//	unshare(CLONE_FS)  a serving thread's own umask and working directory:
//	                   the process's shared ones are set for the length of
//	                   one call, under a lock (sharedUmask, bindIn)
//	process_vm_readv   the command's memory: /proc/PID/mem (readMemory)
//	pidfd_getfd        the command's descriptors: /proc/PID/fd/N opened
//	                   O_PATH, with the file's flags from fdinfo; a socket
//	                   cannot be opened so, so in the fallback srt makes
//	                   every socket the command connects, listens or binds
//	                   (ownSockets)
//	kcmp               not used
//
// srt checks at launch (GuardServable) that one way or the other each can
// be served, and refuses to run when one cannot.

// sharedFS is set when a serving thread could not unshare its filesystem
// context: the umask and working directory the guard sets are then srt's
// whole process's.
var sharedFS atomic.Bool

// fsMu is held while the process's shared umask or working directory is
// the command's.
var fsMu sync.Mutex

// sharedUmask runs f with the process's umask set to u, and puts it back.
// Another of srt's threads making a file in that very moment makes it
// with u, which may be narrower or wider than srt's own: srt makes its
// own files with modes that give no one else write (0600, 0700, 0444),
// which no umask widens.
func sharedUmask(u int, f func() error) unix.Errno {
	fsMu.Lock()
	defer fsMu.Unlock()
	old := unix.Umask(u)
	defer unix.Umask(old)
	return errnoOf(f())
}

// bindIn binds sock to name from inside dir, the calling thread's working
// directory for that moment, then puts the one it had back: the socket
// keeps the short name it was bound by, as the kernel gives it to
// getsockname and to peers. A serving thread's working directory is its
// own (see guardthreads_linux.go), or, where it shares srt's, held for
// the call under fsMu (creating, sharedUmask).
func bindIn(sock, dir int, name string) error {
	here, err := unix.Open(".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(here)
	if err := unix.Fchdir(dir); err != nil {
		return err
	}
	defer unix.Fchdir(here)
	return unix.Bind(sock, &unix.SockaddrUnix{Name: name})
}

// vmReadv says whether process_vm_readv may be called here.
var vmReadv = sync.OnceValue(func() bool {
	var src, dst [8]byte
	src[0] = 1
	_, err := unix.ProcessVMReadv(os.Getpid(), []unix.Iovec{{Base: &dst[0], Len: 8}},
		[]unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&src[0])), Len: 8}}, 0)
	return err == nil && dst[0] == 1
})

// readMemory copies len(buf) bytes at addr from process pid, or as many
// as are mapped from there.
func readMemory(pid int, addr uintptr, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	if vmReadv() {
		return unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}},
			[]unix.RemoteIovec{{Base: addr, Len: len(buf)}}, 0)
	}
	if addr > 1<<63-1 {
		return 0, unix.EFAULT
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	n, err := unix.Pread(fd, buf, int64(addr))
	if err == unix.EIO {
		err = unix.EFAULT // nothing mapped there
	}
	return n, err
}

// pidfdGetfd says whether pidfd_getfd may be called here.
var pidfdGetfd = sync.OnceValue(func() bool {
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, pidfd, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
})

// procDescriptor is descriptor n of thread pid (numbered in proc), taken
// without pidfd_getfd: a file opened O_PATH through its /proc link, with
// the flags the command's descriptor has; a socket, the one srt made for
// the command (sockets), if it did. The caller checks that pid's call
// still waits.
func procDescriptor(proc string, pid, n int, sockets *ownSockets) (fd, flags int, e unix.Errno) {
	base := proc + "/" + strconv.Itoa(pid)
	link, err := os.Readlink(base + "/fd/" + strconv.Itoa(n))
	if err != nil {
		return -1, 0, unix.EBADF
	}
	if ino, ok := socketInode(link); ok {
		fd, ok := sockets.dup(ino)
		if !ok {
			return -1, 0, unix.EPERM // not made by srt: inherited, accepted, a pair's
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil {
			unix.Close(fd)
			return -1, 0, unix.EBADF
		}
		return fd, flags, 0
	}
	fd, err = unix.Open(base+"/fd/"+strconv.Itoa(n), unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0, unix.EBADF
	}
	info, err := os.ReadFile(base + "/fdinfo/" + strconv.Itoa(n))
	flags, ino, mnt, ok := parseFdinfo(string(info))
	var stx unix.Statx_t
	if err != nil || !ok ||
		unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_MNT_ID, &stx) != nil ||
		stx.Ino != ino || stx.Mnt_id != mnt {
		// Another file came to n meanwhile.
		unix.Close(fd)
		return -1, 0, unix.EBADF
	}
	return fd, flags, 0
}

// socketInode is the inode of a socket's /proc link ("socket:[123]").
func socketInode(link string) (uint64, bool) {
	rest, ok := strings.CutPrefix(link, "socket:[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return 0, false
	}
	ino, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
	return ino, err == nil
}

// parseFdinfo reads the flags (octal), mnt_id and ino lines of a
// descriptor's fdinfo.
func parseFdinfo(info string) (flags int, ino, mnt uint64, ok bool) {
	field := func(key string, base int) (uint64, bool) {
		v, found := statusField("\n"+info, key)
		n, err := strconv.ParseUint(strings.TrimSpace(v), base, 64)
		return n, found && err == nil
	}
	f, okF := field("flags", 8)
	ino, okI := field("ino", 10)
	mnt, okM := field("mnt_id", 10)
	return int(f), ino, mnt, okF && okI && okM
}

// ownSockets are the sockets srt made for a fallback's command (where
// pidfd_getfd is refused: seccomp.Options.OwnSockets), each kept by
// inode until it is connected or listens, which are the calls srt makes
// on it. One the command closes before either is let go when srt next
// looks (collect): a bind, or the set grown past collectAt.
type ownSockets struct {
	proc string
	mu   sync.Mutex
	fds  map[uint64]ownSocket // by inode
	// most is how many may be kept (maxOwnSockets, or a quarter of
	// srt's descriptor limit where that is lower: a command's sockets
	// must not fill srt's table); nextLook, how many before the next
	// look for closed ones (collect walks every process's descriptors).
	most, nextLook int
}

type ownSocket struct {
	fd   int       // srt's descriptor of it
	made time.Time // a socket on its way to the command is in no table yet
}

// freshSocket is how long a socket made for the command is kept even
// though no table holds it yet (it is on its way there).
var freshSocket = time.Second

const (
	collectAt     = 64   // kept sockets before a look for closed ones
	maxOwnSockets = 4096 // kept sockets a sandbox may hold: EMFILE past it
)

func newOwnSockets(proc string) *ownSockets {
	o := &ownSockets{proc: proc, fds: map[uint64]ownSocket{}, most: maxOwnSockets, nextLook: collectAt}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur/4 < uint64(o.most) {
		o.most = max(int(lim.Cur/4), 1)
	}
	return o
}

// make makes a socket for the command, keeps a descriptor of it, and
// returns another to hand over.
func (o *ownSockets) make(domain, typ, proto int) (int, unix.Errno) {
	o.mu.Lock()
	look := len(o.fds) >= o.nextLook || len(o.fds) >= o.most
	o.mu.Unlock()
	if look {
		o.collect()
		o.mu.Lock()
		// Each look costs a walk of every process's descriptors: the
		// next comes when as many again are kept.
		o.nextLook = max(collectAt, 2*len(o.fds))
		o.mu.Unlock()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.fds) >= o.most {
		return -1, unix.EMFILE
	}
	fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, errnoOf(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, errnoOf(err)
	}
	kept, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return -1, errnoOf(err)
	}
	o.fds[st.Ino] = ownSocket{fd: kept, made: time.Now()}
	return fd, 0
}

// dup is a descriptor of the kept socket ino.
func (o *ownSockets) dup(ino uint64) (int, bool) {
	if o == nil {
		return -1, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	kept, ok := o.fds[ino]
	if !ok {
		return -1, false
	}
	fd, err := unix.FcntlInt(uintptr(kept.fd), unix.F_DUPFD_CLOEXEC, 0)
	return fd, err == nil
}

// release lets the socket of descriptor fd go: the command's are then
// the only descriptors of it, and it closes when they do.
func (o *ownSockets) release(fd int) {
	if o == nil {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if kept, ok := o.fds[st.Ino]; ok {
		unix.Close(kept.fd)
		delete(o.fds, st.Ino)
	}
}

// collect lets go every kept socket that no process but srt holds.
func (o *ownSockets) collect() {
	if o == nil {
		return
	}
	held := map[uint64]bool{}
	self := strconv.Itoa(os.Getpid())
	procs, _ := os.ReadDir(o.proc)
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil || p.Name() == self {
			continue
		}
		dir := o.proc + "/" + p.Name() + "/fd"
		fds, _ := os.ReadDir(dir)
		for _, f := range fds {
			if link, err := os.Readlink(dir + "/" + f.Name()); err == nil {
				if ino, ok := socketInode(link); ok {
					held[ino] = true
				}
			}
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for ino, kept := range o.fds {
		if !held[ino] && time.Since(kept.made) > freshSocket {
			unix.Close(kept.fd)
			delete(o.fds, ino)
		}
	}
}

// close lets every kept socket go.
func (o *ownSockets) close() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for ino, kept := range o.fds {
		unix.Close(kept.fd)
		delete(o.fds, ino)
	}
}

// procDescriptor is procDescriptor for the caller of req, checked to be
// that thread still once the descriptor is taken.
func (pol *ConnectPolicy) procDescriptor(listener int, req *seccompNotif, n int) (int, int, unix.Errno) {
	fd, flags, e := procDescriptor(pol.Proc, int(req.Pid), n, pol.sockets)
	if e == unix.EPERM {
		e = pol.deny(unix.EPERM, Event{Call: "socket", Target: "fd " + strconv.Itoa(n),
			Reason: "a socket srt did not make (inherited, accepted or from a pair) cannot be connected, bound or listened on where pidfd_getfd is refused"})
	}
	if e == 0 && !stillWaiting(listener, req.ID) {
		unix.Close(fd)
		return -1, 0, unix.ESRCH
	}
	return fd, flags, e
}

// makeSocket answers a socket(2) of the command with a socket srt made
// (and keeps: see ownSockets). The filter sends only the sockets it
// allows; they are checked again here.
func (pol *ConnectPolicy) makeSocket(listener int, req *seccompNotif) {
	domain, typ, proto := int(int32(req.Args[0])), int(int32(req.Args[1])), int(int32(req.Args[2]))
	kind := typ &^ (unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC)
	ok := false
	switch domain {
	case unix.AF_INET, unix.AF_INET6:
		ok = kind == unix.SOCK_STREAM && (proto == 0 || proto == unix.IPPROTO_TCP)
	case unix.AF_UNIX:
		ok = pol.Unix == seccomp.UnixAll || (pol.Unix == seccomp.UnixByPath && kind == unix.SOCK_STREAM)
	}
	if !ok {
		answerGuard(listener, req, refused(unix.EPERM), false)
		return
	}
	fd, e := pol.sockets.make(domain, typ&^unix.SOCK_CLOEXEC, proto)
	if e != 0 {
		answerGuard(listener, req, refused(e), false)
		return
	}
	runtime.LockOSThread() // answerGuard masks this thread's signals for a moment
	defer runtime.UnlockOSThread()
	answerGuard(listener, req, answer{fd: fd, cloexec: typ&unix.SOCK_CLOEXEC != 0}, false)
}

// ServableError says which of the calls the guard is served with this
// host refuses, and how to allow them.
type ServableError struct {
	Missing []string // the refused calls
	Detail  string
}

func (e *ServableError) Error() string {
	fix := "allow them in the seccomp profile (Docker: " + dockerFull + ")"
	return fmt.Sprintf("srt cannot serve the sandbox's path and connect guard here: %s refused (%s); %s", strings.Join(e.Missing, ", "), e.Detail, fix)
}

// GuardServable checks that srt can serve the command's seccomp listener
// on this host, as the namespace sandbox or (fallback) the fallback
// would: a command never runs with a guard nothing serves, where every
// guarded call would fail. The answer is the host's, and kept.
func GuardServable(fallback bool) error {
	if fallback {
		return fallbackServable()
	}
	return namespaceServable()
}

// explainServable is GuardServable's error for a run about to start: a
// host that refuses the namespace sandbox itself is told first.
func explainServable(fallback bool) error {
	err := GuardServable(fallback)
	if err == nil || fallback {
		return err
	}
	if nsErr := probeNamespaces(); nsErr != nil && !errors.Is(nsErr, ErrMaskedProc) {
		return Explain(nsErr)
	}
	return err
}

var fallbackServable = sync.OnceValue(func() error { return servable(true) })
var namespaceServable = sync.OnceValue(func() error { return servable(false) })

func servable(fallback bool) error {
	var missing, why []string
	if err := serveThreads.run(func() {}); err != nil {
		missing, why = append(missing, "capset"), append(why, err.Error())
	}
	if pidfd, err := unix.PidfdOpen(os.Getpid(), 0); err != nil {
		missing, why = append(missing, "pidfd_open"), append(why, "the guard names the command's threads by pidfd: "+err.Error())
	} else {
		unix.Close(pidfd)
	}
	if !vmReadv() {
		var b [1]byte
		if _, err := readMemory(os.Getpid(), uintptr(unsafe.Pointer(&b[0])), b[:]); err != nil {
			missing, why = append(missing, "process_vm_readv"), append(why, "the command's memory can be read neither by process_vm_readv nor through /proc/PID/mem: "+err.Error())
		}
	}
	if !pidfdGetfd() {
		if !fallback {
			missing, why = append(missing, "pidfd_getfd"), append(why, "the namespace sandbox's guard takes the command's sockets by it")
		} else if fd, err := unix.Open("/proc/self/fd/0", unix.O_PATH|unix.O_CLOEXEC, 0); err != nil && err != unix.ENOENT {
			missing, why = append(missing, "pidfd_getfd"), append(why, "the command's descriptors can be taken neither by pidfd_getfd nor through /proc/PID/fd: "+err.Error())
		} else if err == nil {
			unix.Close(fd)
		}
	}
	if fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT}); err != nil {
		missing, why = append(missing, "openat2"), append(why, "the guard resolves the command's paths in its root by it: "+err.Error())
	} else {
		unix.Close(fd)
	}
	if len(missing) > 0 {
		return &ServableError{Missing: missing, Detail: strings.Join(why, "; ")}
	}
	return nil
}

// OwnsSockets says whether the fallback makes the command's sockets
// here (seccomp.Options.OwnSockets): pidfd_getfd is refused.
func OwnsSockets() bool { return !pidfdGetfd() }
