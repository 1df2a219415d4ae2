package nsexec

import (
	"fmt"
	"os"
	"path"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/srt-go/srt/pathguard"
	"github.com/srt-go/srt/seccomp"

	"golang.org/x/sys/unix"
)

// The path guard. The filter sends here every call that would make a
// name, move or link one, or open or truncate a file for writing
// (seccomp/guard.go). Like a connect, such a call is never let through to
// the kernel once judged: its path lives in the command's memory, where a
// second thread could change it after our check, and the tree it walks
// could change under it. Instead the guard resolves the path once, as the
// command would (its root, its cwd or dirfd; symlinks followed in its
// root, never through srt's), pins the directory the name goes in by an
// O_PATH descriptor, judges the name there (pathguard.Decider), and makes the
// call itself on that descriptor, on a thread that holds no capability
// and has the command's umask, so the kernel checks permissions, mounts
// and quotas as it would for the command. An opened file reaches the
// command as a descriptor installed in its table with the answer
// (SECCOMP_IOCTL_NOTIF_ADDFD with SEND). What a call cannot be made to
// mean by any later change is decided before the call is made.

// seccompNotifAddfd is struct seccomp_notif_addfd.
type seccompNotifAddfd struct {
	ID         uint64
	Flags      uint32
	Srcfd      uint32
	Newfd      uint32
	NewfdFlags uint32
}

const (
	seccompIoctlNotifAddfd = 0x40182103 // _IOW('!', 3, struct seccomp_notif_addfd)
	addfdFlagSend          = 1 << 1     // SECCOMP_ADDFD_FLAG_SEND: install and answer at once
	oTmpfile               = 0o20000000 // __O_TMPFILE, without O_DIRECTORY
	maxSymlinks            = 40         // as the kernel
	ttyMajor, ptsMajor     = 5, 136     // /dev/tty (5,0); the first of the pty slaves' majors
	maxGitConfig           = 1 << 20
	userNotifFlagContinue  = 1 // SECCOMP_USER_NOTIF_FLAG_CONTINUE
)

// answer is how a guarded call ends: an errno, or a descriptor to install.
type answer struct {
	errno   unix.Errno
	fd      int  // -1: none
	cloexec bool // the command asked for O_CLOEXEC
	// open, if set, is an open that may block (a FIFO without a reader):
	// made on a thread of its own rather than one of the guard's.
	open *blockingOpen
	// cont lets the kernel make the call itself: only for the init's own
	// calls.
	cont bool
	// askInit, if set, is a user namespace map the init opens for the
	// command (procOpen).
	askInit *mapRequest
}

func refused(e unix.Errno) answer { return answer{errno: e, fd: -1} }

// guard performs the guarded call req (by do: a file or metadata call)
// and answers it. It runs on the serving thread, which holds no
// capability and has a filesystem context of its own; an open that may
// block goes to a thread of its own.
func (pol *ConnectPolicy) guard(gs *guardState, listener int, req *seccompNotif, do func(*call) answer) {
	a := refused(unix.EPERM)
	func() {
		k := &call{pol: pol, gs: gs, listener: listener, req: req, pid: int(req.Pid), root: -1, umask: -1}
		defer func() {
			if k.root >= 0 && k.root != gs.root {
				unix.Close(k.root)
			}
		}()
		defer func() {
			// A bug in a call made for one command must not end srt and
			// every sandbox it serves: the call fails, loudly.
			if r := recover(); r != nil {
				fmt.Fprintf(os.Stderr, "srt: internal error in a file call made for the command (refused): %v\n%s", r, debug.Stack())
			}
		}()
		pol.calls.Lock() // a deferred write's last step waits for it (see open)
		defer pol.calls.Unlock()
		pol.settleClosed()
		a = do(k)
	}()
	if ask := a.askInit; ask != nil {
		r := *req
		go func() {
			fd, errno := pol.askInitMap(ask)
			b := answer{fd: fd, errno: errno, cloexec: a.cloexec}
			if errno != 0 {
				b.fd = -1
			}
			runtime.LockOSThread() // answerGuard masks this thread's signals for a moment
			defer runtime.UnlockOSThread()
			answerGuard(listener, &r, b, false)
		}()
		return
	}
	if open := a.open; open != nil {
		// A thread waits in it for the other end, as the command would.
		// Each sandbox may have maxBlockedOpens waiting, srt
		// maxBlockingThreads in all; past that the open fails EMFILE.
		// When the caller is gone (killed, or the sandbox over), the
		// other end is opened for a moment, which ends the wait.
		if !pol.blocked.take(maxBlockedOpens) {
			open.release()
			answerGuard(listener, req, refused(unix.EMFILE), false)
			return
		}
		r := *req
		go func() {
			defer pol.blocked.give()
			done := make(chan struct{})
			go func() {
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-done:
						return
					case <-tick.C:
						if !stillWaiting(listener, r.ID) {
							open.release()
							return
						}
					}
				}
			}()
			b := refused(unix.EMFILE)
			if blockingThreads.tryRun(maxBlockingThreads, func() { b.fd, b.errno = open.open() }) {
				close(done)
			} else {
				close(done)
				open.release()
			}
			runtime.LockOSThread() // answerGuard masks this thread's signals for a moment
			defer runtime.UnlockOSThread()
			answerGuard(listener, &r, b, false)
		}()
		return
	}
	answerGuard(listener, req, a, gs.syncWake)
}

// Bounds on opens that wait for a FIFO's other end.
const (
	maxBlockedOpens    = 64  // per sandbox
	maxDeferredWrites  = 64  // per sandbox: pipes of deferred writes not yet closed (see open)
	maxBlockingThreads = 256 // in srt
)

// counter is a bounded count.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) take(max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= max {
		return false
	}
	c.n++
	return true
}

func (c *counter) give() {
	c.mu.Lock()
	c.n--
	c.mu.Unlock()
}

// answerGuard answers req with a. sameCPU says it runs on the sandbox's
// serving thread, whose listener wakes it on the caller's CPU
// (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP): the caller is then held on that
// CPU while its descriptor goes in (cpuPin).
func answerGuard(listener int, req *seccompNotif, a answer, sameCPU bool) {
	resp := seccompNotifResp{ID: req.ID}
	if a.errno == 0 && a.fd >= 0 {
		add := seccompNotifAddfd{ID: req.ID, Srcfd: uint32(a.fd)}
		if a.cloexec {
			add.NewfdFlags = unix.O_CLOEXEC
		}
		// A signal that interrupted ADDFD with SEND after the kernel
		// marked the call answered, before the descriptor was
		// installed, would leave the command's call returning 0 (seen
		// here): so no signal may, for its length.
		var all, old [1]uint64
		all[0] = ^uint64(0)
		unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_BLOCK, uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
		var pin cpuPin
		if sameCPU {
			pin = pinCPU(int(req.Pid))
		}
		if !pin.held {
			// ADDFD with SEND installs and answers in one step,
			// sparing the command a wake-up.
			add.Flags = addfdFlagSend
		}
		fd, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), seccompIoctlNotifAddfd, uintptr(unsafe.Pointer(&add)))
		// Held, the caller installed the descriptor and waits again,
		// its mask put back before it runs a line of its own (a child
		// it forked would keep the one-CPU mask); the answer below
		// wakes it here. Its wait is killable only (the sync wake-ups
		// came in 6.6, WAIT_KILLABLE_RECV in 5.19), so no signal ends
		// the call between the two steps with the descriptor in.
		pin.release()
		unix.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
		unix.Close(a.fd)
		switch {
		case e == unix.ENOENT:
			return // the caller is gone
		case e != 0:
			a.errno = e // EMFILE, say: the call still waits
		case !pin.held:
			return // answered
		default:
			resp.Val = int64(fd)
		}
	}
	switch {
	case a.cont:
		resp.Flags = userNotifFlagContinue
	case a.errno != 0:
		resp.Val, resp.Error = -1, -int32(a.errno)
	}
	sendResp(listener, &resp)
}

// call is one guarded call being made: the process it is made for and
// the descriptors its paths resolve from.
type call struct {
	// deferred: the open being made is of a file whose content the
	// guard judges as it arrives (see open).
	deferred *deferredWrite
	pol      *ConnectPolicy
	gs       *guardState
	listener int
	req      *seccompNotif
	pid      int
	root     int    // O_PATH of the process's root, opened on first use (when not the sandbox's, cached)
	umask    int    // -1 until read
	view     viewID // the caller's mount namespace and root, once read (sourcePath)
}

// guardState is what the guard keeps between calls, on the one thread
// that serves a sandbox: the sandbox's root, and the umask of each
// thread that made a file.
type guardState struct {
	root int // O_PATH of the sandbox's root: every process's, when none may chroot
	// umasks caches each thread's umask, with a pidfd that tells when
	// the thread is gone (and its number free for another). Every
	// umask(2) is sent here too: it empties the cache, and until each
	// thread that called it is seen with its new umask, nothing is
	// cached.
	umasks  map[int]umaskEntry
	pending map[int]int // thread -> the umask it asked for
	// pidfds caches a pidfd of each thread whose descriptors the guard
	// took (maxUmasks at most): one that fails is opened again.
	pidfds map[int]int
	// selfFDs is srt's /proc/self/fd, where a descriptor's path is read.
	selfFDs int
	// ids are the sandbox's user namespace's id maps, once read.
	ids *idMaps
	// ownLinks are the files that had one name when the guard gave them
	// another in this run.
	ownLinks map[fileID]bool
	// thread is the serving thread's own umask, as last set (-1: not yet).
	thread int
	// made are the directories the command made in this run
	// (madeinrun_linux.go).
	made *pathguard.MadeTrees
	// trees are, by directory, the work trees that hold it; hooks, by
	// work tree (and a .git file's content), its repository's hooks
	// (see hooksLater).
	trees    map[string][]string
	gitFiles map[string]bool // by work tree: its .git is a file
	hooks    map[string]*pathguard.Hooks
	// kept is, by work tree, every hook the guard has kept there in this
	// run, never forgotten (see keptHooks).
	kept map[string]*pathguard.Hooks
	// outside are the kept hooks that lie outside their work trees;
	// walkRead: the launch's repositories were read (readWalkRepos).
	outside  []outsideHook
	walkRead bool
	// remotes are, by the identity of a work tree that existed at
	// launch (a git directory's, for a bare repository, a submodule's
	// or a worktree's), where its config sent it then (nil: made in
	// the run); see launchRemotes.
	remotes map[pathguard.ID]*pathguard.Remotes
	// remotesAt are, by path, the launch's remotes of the repositories
	// the launch's walk found, read before the first change: a
	// repository made again at such a path keeps them.
	remotesAt map[string]*pathguard.Remotes
	remotesMu sync.Mutex // deferred writes settle off the call's thread
	// baseView is the sandbox's own view (its init's), baseMounts its
	// mount table, each read once (see sourcePath).
	baseView   viewID
	baseMounts map[uint64]mountEntry
	// syncWake: the listener wakes the serving thread on the caller's
	// CPU (see answerGuard).
	syncWake bool
}

// fileID names an inode.
type fileID struct{ dev, ino uint64 }

// linked records a file the guard gave its second name (maxOwnLinks at
// most; past that, writes to such files are refused like any other
// file with several names).
func (gs *guardState) linked(st unix.Stat_t) {
	if len(gs.ownLinks) < maxOwnLinks {
		gs.ownLinks[fileID{st.Dev, st.Ino}] = true
	}
}

const maxOwnLinks = 1 << 16

type umaskEntry struct {
	umask, pidfd int
	checked      time.Time // when the thread was last seen alive
}

// umaskFresh is how long a cached umask is used without asking whether
// its thread still lives: a thread number is given again only after the
// kernel has gone through every other (pid_max of them).
const umaskFresh = 50 * time.Millisecond

func newGuardState() *guardState {
	return &guardState{root: -1, made: pathguard.NewMadeTrees(), umasks: map[int]umaskEntry{}, pending: map[int]int{}, pidfds: map[int]int{}, ownLinks: map[fileID]bool{}, thread: -1, selfFDs: -1,
		trees: map[string][]string{}, gitFiles: map[string]bool{}, hooks: map[string]*pathguard.Hooks{}, kept: map[string]*pathguard.Hooks{},
		remotes: map[pathguard.ID]*pathguard.Remotes{}, remotesAt: map[string]*pathguard.Remotes{}}
}

func (gs *guardState) close() {
	for _, fd := range []int{gs.root, gs.selfFDs} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	gs.forget()
	gs.forgetPidfds()
}

// forgetPidfds empties the pidfd cache.
func (gs *guardState) forgetPidfds() {
	for _, fd := range gs.pidfds {
		unix.Close(fd)
	}
	clear(gs.pidfds)
}

// forget empties the umask cache.
func (gs *guardState) forget() {
	for _, e := range gs.umasks {
		unix.Close(e.pidfd)
	}
	clear(gs.umasks)
}

// maxUmasks bounds the umask cache, and the pidfd cache: each entry holds
// a descriptor, of a thread that may be long gone (srt's own table must
// not fill with them).
const maxUmasks = 64

// place is where a name is made: the directory, pinned, its real path,
// and the name. A name of "." is the directory itself (the path ended in
// "." or ".."); fd >= 0 with name "" is a descriptor of the command's
// (/proc/self/fd/N), taken as it is.
type place struct {
	dir   int
	path  string
	name  string
	slash bool // the path ended with "/": it must be a directory
	// proc: dir is in a procfs, where srt's rights over the sandbox's
	// processes exceed the command's (it owns their user namespace):
	// nothing there is opened on the strength of srt's rights.
	proc bool
	// readOnly: dir's mount is read-only (see isReadOnly).
	readOnly bool
	fsKnown  bool // proc and readOnly were read from the filesystem
	// self is the rest of a /proc/self/… name the command gave for
	// itself, opened through srt's procfs ("" otherwise).
	self string
	// unlinked: a descriptor's name is gone; path is the name it had.
	unlinked bool
	// fileFlags are a descriptor's file status flags (F_GETFL).
	fileFlags int
	// as is, for a caller in a mount namespace of its own, the path the
	// sandbox gives what it reaches there (sourcePath): the one judged.
	// mnt, for such a caller, is the unique id of the mount the guard
	// judged (the directory's, or the one at the name): what it opens
	// there must lie on it (openAt).
	as  string
	mnt uint64
}

// writesAlready reports whether a descriptor's place is open for writing:
// writing it anew, or changing it, grants nothing its holder lacks.
func (p place) writesAlready() bool {
	return p.fileFlags&unix.O_PATH == 0 && p.fileFlags&unix.O_ACCMODE != unix.O_RDONLY
}

func (p place) full() string {
	if p.as != "" {
		return p.as
	}
	if p.name == "." || p.name == "" {
		return p.path
	}
	return path.Join(p.path, p.name)
}

// isReadOnly reports whether p's directory is on a read-only mount.
func (p place) isReadOnly() bool {
	if p.fsKnown {
		return p.readOnly
	}
	var fs unix.Statfs_t
	return unix.Fstatfs(p.dir, &fs) == nil && fs.Flags&unix.ST_RDONLY != 0
}

func (p place) close() {
	if p.dir >= 0 {
		unix.Close(p.dir)
	}
}

// guardCall performs the file call c.
func (k *call) guardCall(c seccomp.FileCall) answer {
	arg := func(i int) uint64 { return k.req.Args[i] }
	dirArg := func(i int) int {
		if i < 0 {
			return unix.AT_FDCWD
		}
		return int(int32(arg(i)))
	}
	if c.Op == seccomp.FileBind {
		return refused(k.bind())
	}
	// Every other call names one path, two for symlink (its target, then
	// its name), link and rename; each is read from the command's memory
	// once.
	name, e := readString(k.pid, uintptr(arg(c.Path)), unix.PathMax)
	if e != 0 {
		return refused(e)
	}
	var name2 string
	if c.Path2 >= 0 {
		if name2, e = readString(k.pid, uintptr(arg(c.Path2)), unix.PathMax); e != 0 {
			return refused(e)
		}
	}
	if path.Base(name) == ".git" || path.Base(name2) == ".git" || path.Base(name) == "commondir" || path.Base(name2) == "commondir" || c.Op == seccomp.FileSymlink {
		// A .git or commondir made or moved, or a symlink made (it may
		// change where a .git, a .git file's path or a commondir
		// leads): the repositories around directories are read again,
		// once the call is made (so are they when a directory or a
		// symlink moves, and when a symlink gets another name: rename,
		// link).
		defer k.reposChanged()
	}
	flags := 0
	if c.Flags >= 0 {
		flags = int(uint32(arg(c.Flags)))
	}
	switch c.Op {
	case seccomp.FileOpen:
		if c.Creat {
			flags = unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC
		}
		if flags&seccomp.OpenWrites == 0 {
			return k.openRead(dirArg(c.Dir), name, flags) // GuardReads
		}
		return k.open(dirArg(c.Dir), name, flags, uint32(arg(c.Mode))&0o7777)
	case seccomp.FileTruncate:
		length := int64(arg(1))
		if length < 0 {
			return refused(unix.EINVAL)
		}
		a := k.open(unix.AT_FDCWD, name, unix.O_WRONLY|truncateOnly, 0)
		if a.errno != 0 {
			return a
		}
		defer unix.Close(a.fd)
		return refused(errnoOf(unix.Ftruncate(a.fd, length)))
	case seccomp.FileMkdir, seccomp.FileMknod:
		return refused(k.make(c.Op, dirArg(c.Dir), name, uint32(arg(c.Mode)), int(arg(c.Mode+1))))
	case seccomp.FileSymlink:
		return refused(k.symlink(name, dirArg(c.Dir2), name2))
	case seccomp.FileLink:
		return refused(k.link(dirArg(c.Dir), name, dirArg(c.Dir2), name2, flags))
	case seccomp.FileRename:
		return refused(k.rename(dirArg(c.Dir), name, dirArg(c.Dir2), name2, flags))
	case seccomp.FileRemove:
		if c.RemoveDir {
			flags = unix.AT_REMOVEDIR
		}
		return refused(k.remove(dirArg(c.Dir), name, flags))
	}
	return refused(unix.ENOSYS)
}

// deny reports a refused call and returns errno.
func (k *call) deny(errno unix.Errno, op, target, rule string, n pathguard.Name) unix.Errno {
	return k.pol.deny(errno, Event{Kind: "filesystem", Call: op, Target: target, Reason: k.pol.Guard.Rules().Reason(rule, n)})
}

// sandboxTgid is the calling process's pid in the sandbox's PID
// namespace (NStgid's second field: the first is srt's own namespace).
func (k *call) sandboxTgid() (int, bool) {
	status, err := os.ReadFile(k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/status")
	if err != nil {
		return 0, false
	}
	_, rest, ok := strings.Cut(string(status), "\nNStgid:")
	if !ok {
		return 0, false
	}
	line, _, _ := strings.Cut(rest, "\n")
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(f[1])
	return n, err == nil && n > 0
}

// mapResult is the init's answer to a map request.
type mapResult struct {
	fd    int
	errno unix.Errno
}

// askInitMap has the init open the user namespace map of r and returns
// the descriptor, waiting at most 5 seconds.
func (pol *ConnectPolicy) askInitMap(r *mapRequest) (int, unix.Errno) {
	if pol.sendInit == nil {
		return -1, unix.EPERM
	}
	ch := make(chan mapResult, 1)
	pol.mapMu.Lock()
	pol.mapID++
	r.ID = pol.mapID
	if pol.maps == nil {
		pol.maps = map[uint64]chan mapResult{}
	}
	pol.maps[r.ID] = ch
	pol.mapMu.Unlock()
	defer func() {
		pol.mapMu.Lock()
		delete(pol.maps, r.ID)
		pol.mapMu.Unlock()
	}()
	if err := pol.sendInit(&initRequest{OpenMap: r}); err != nil {
		return -1, unix.EPERM
	}
	select {
	case res := <-ch:
		return res.fd, res.errno
	case <-time.After(5 * time.Second):
		return -1, unix.EAGAIN
	}
}

// mapReplied takes the init's answer to a map request.
func (pol *ConnectPolicy) mapReplied(m *mapReply, fds []int) {
	pol.mapMu.Lock()
	ch := pol.maps[m.ID]
	pol.mapMu.Unlock()
	res := mapResult{fd: -1, errno: unix.Errno(m.Errno)}
	if m.Errno == 0 {
		if len(fds) != 1 {
			closeAll(fds)
			res.errno = unix.EIO
		} else {
			res.fd = fds[0]
			fds = nil
		}
	}
	closeAll(fds)
	if ch == nil {
		if res.fd >= 0 {
			unix.Close(res.fd)
		}
		return
	}
	ch <- res
}

// procSelfFiles are the entries of its own /proc directory a process may
// write through the guard: what shells and runtimes write there. A
// shell's ">" adds O_CREAT and O_TRUNC, which mean nothing there.
var procSelfFiles = map[string]bool{"oom_score_adj": true, "oom_adj": true, "comm": true,
	"timerslack_ns": true, "coredump_filter": true, "clear_refs": true, "autogroup": true}

// procSelfMaps are a user namespace's maps, written by the process that
// made it (unshare -r, bwrap, podman).
var procSelfMaps = map[string]bool{"uid_map": true, "gid_map": true, "setgroups": true, "projid_map": true}

// readlinkat reads a symlink: into a short buffer first (most targets
// fit), then one of PATH_MAX.
func readlinkat(dir int, name string) (string, error) {
	var short [256]byte
	n, err := unix.Readlinkat(dir, name, short[:])
	if err != nil {
		return "", err
	}
	if n < len(short) {
		return string(short[:n]), nil
	}
	buf := make([]byte, unix.PathMax)
	if n, err = unix.Readlinkat(dir, name, buf); err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
