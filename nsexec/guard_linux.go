package nsexec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/srt-go/srt/policy"
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
// O_PATH descriptor, judges the name there (policy.Guard), and makes the
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
	maxGitFile             = 512 << 20 // an index (see policy.GitIndexSafe)
	userNotifFlagContinue  = 1         // SECCOMP_USER_NOTIF_FLAG_CONTINUE
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
	// made are the directories the command made in this run, and
	// launchGone the paths where a directory of the launch was removed
	// or moved away (madeinrun_linux.go).
	made       map[dirIdentity]bool
	launchGone []string
	// trees are, by directory, the work trees that hold it; hooks, by
	// work tree (and a .git file's content), its repository's hooks
	// (see hooksLater).
	trees    map[string][]string
	gitFiles map[string]bool // by work tree: its .git is a file
	hooks    map[string]*repoHooks
	// kept is, by work tree, every hook the guard has kept there in this
	// run, never forgotten (see keptHooks).
	kept map[string]*repoHooks
	// outside are the kept hooks that lie outside their work trees;
	// walkRead: the launch's repositories were read (readWalkRepos).
	outside  []outsideHook
	walkRead bool
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
	return &guardState{root: -1, made: map[dirIdentity]bool{}, umasks: map[int]umaskEntry{}, pending: map[int]int{}, pidfds: map[int]int{}, ownLinks: map[fileID]bool{}, thread: -1, selfFDs: -1,
		trees: map[string][]string{}, gitFiles: map[string]bool{}, hooks: map[string]*repoHooks{}, kept: map[string]*repoHooks{}}
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

// gitFileIs names what a GitConfig file is, for a refusal.
func gitFileIs(name string) string {
	switch {
	case name == policy.RebaseTodo:
		return "a rebase's todo list"
	case name == policy.RebaseStrategy || name == policy.RebaseStrategyOpts || name == policy.SequencerOpts:
		return "a rebase's or cherry-pick's merge strategy"
	case name == policy.ApplyOpts:
		return "a stopped am's options for git apply"
	case policy.IsIndexName(name):
		return "a repository's index"
	case name == policy.MergeRR:
		return "a merge's conflicts as rerere records them"
	case name == policy.WorktreeGitdir:
		return "a worktree's link back to its work tree"
	case name == ".git":
		return "a .git file naming a git directory"
	case name == "commondir":
		return "a worktree's common directory"
	}
	return "a repository's config"
}

// truncateOnly marks an open made for truncate(2): only a regular file
// may be truncated, and nothing is created.
const truncateOnly = 1 << 62

// deny reports a refused call and returns errno.
func (k *call) deny(errno unix.Errno, op, target, rule string, n policy.Name) unix.Errno {
	return k.pol.deny(errno, Event{Kind: "filesystem", Call: op, Target: target, Reason: denyReason(k.pol.Guard, rule, n)})
}

// denyReason says why a protected name was refused, and whether and how
// the user may allow it.
func denyReason(g *policy.Guard, rule string, n policy.Name) string {
	switch n {
	case policy.GitConfig:
		return gitFileIs(path.Base(rule)) + ", which takes only content that runs nothing: " + rule + " (filesystem.allowGitConfig lets a repository's config take any)"
	case policy.HooksDir:
		return "a repository's hooks directory: " + rule + "; not allowed: the host's git would run what it holds"
	}
	if _, _, anchor := g.JudgeWhere(rule); anchor != "" {
		return "protected name " + rule + ": the host runs it from " + anchor + ", which existed when the command started; not allowed there (a tree the command makes may hold it)"
	}
	return "protected name " + rule + "; not allowed: the host's git would run it"
}

// deniedLater refuses (EACCES) making or writing full when a denyRead
// or denyWrite entry covers it: one that names a path made after the
// launch, or a pattern it matches now.
func (k *call) deniedLater(op, full string) unix.Errno {
	r, ok := k.later(full)
	if !ok {
		return 0
	}
	return k.reportLater(op, full, r)
}

// later returns the rule that keeps full from being made or written
// while the command runs: a deny entry's, or a repository's hooks'
// (hooksLater).
func (k *call) later(full string) (policy.LaterRule, bool) {
	if r, ok := k.pol.Guard.Later(full); ok {
		return r, true
	}
	return k.hooksLater(full)
}

// aboveLater refuses (EACCES) a symlink at full (physical) holding
// target when it may send what a deny entry covers elsewhere: what the
// host later writes at the entry's path, or at a match of its pattern,
// would land where the link leads, and the command read or write it there.
// A symlink called .claude is refused too.
func (k *call) aboveLater(op, full, target string) unix.Errno {
	if strings.EqualFold(path.Base(full), ".claude") {
		// Its commands and agents are known by that name alone: through
		// a symlink they would be judged where it leads.
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: "a .claude directory's commands and agents are judged by its name: a symlink there would lead them elsewhere"})
	}
	if r, ok := k.redirects(full, target); ok {
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: r.Why + " lies beneath: a symlink here would lead it elsewhere"})
	}
	if k.hooksBeneath(full) {
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: "a repository's hooks (core.hooksPath, a hook's script, an included config) lie at or beneath: a symlink here would lead them where the guard does not keep them"})
	}
	if k.targetAbove(full) {
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: "a .git file or a commondir leads here: a symlink would lead it to another repository"})
	}
	return 0
}

// redirects returns the deny entry a symlink at full holding target would
// send elsewhere: any symlink above a literal entry; one where a
// pattern's match may lie beneath, unless it leads where the same paths
// match too, or to a file that can never hold anything beneath it — and,
// either way, only through places whose later change the guard would
// judge against that entry (a directory or symlink on the way that the
// command could replace or re-aim unjudged would let it lead elsewhere
// later).
func (k *call) redirects(full, target string) (policy.LaterRule, bool) {
	p := k.pol.Guard.Policy
	if p == nil {
		return policy.LaterRule{}, false
	}
	var above []policy.LaterRule
	for _, r := range p.Later {
		if r.Above(full) {
			if r.Glob == nil {
				return r, true
			}
			above = append(above, r)
		}
	}
	if len(above) == 0 {
		return policy.LaterRule{}, false
	}
	w := k.leadsTo(path.Dir(full), target)
	for _, r := range above {
		for _, c := range w.changeable {
			if !r.Above(c) {
				return r, true
			}
		}
		if !w.leaf && r.Redirects(full, w.to) {
			return r, true
		}
	}
	return policy.LaterRule{}, false
}

// walk is where a symlink leads.
type walk struct {
	// to is where it leads now, physical ("" when that cannot be told for
	// good: a ".." after a name, a name in /proc or /dev/fd, which each
	// process that follows it reads for itself).
	to string
	// leaf: a file (not a directory) on a read-only mount, beneath which
	// nothing can ever be (a virtualenv's python, linked to /usr/bin's).
	leaf bool
	// changeable are the places on the way the command may replace or
	// re-aim: a writable directory or symlink it went through.
	changeable []string
}

// leadsTo walks, component by component in the command's root, the way a
// symlink in the directory dir (physical) holding target leads now.
func (k *call) leadsTo(dir, target string) walk {
	var w walk
	root, e := k.rootFD()
	if e != 0 {
		return w
	}
	cur := dir
	var comps []string
	push := func(t string) bool {
		if t == "" || !settledDots(t) {
			return false
		}
		if strings.HasPrefix(t, "/") {
			cur = "/"
		}
		comps = append(strings.Split(t, "/"), comps...)
		return true
	}
	if !push(target) {
		return w
	}
	for hops := 0; len(comps) > 0; {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		if policy.Under(next, "/proc") || policy.Under(next, "/dev/fd") || strings.HasPrefix(next, "/dev/std") {
			return walk{}
		}
		fd, err := openat2(root, next, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			// Leads nowhere yet: judged as it reads; what is made there
			// later is judged where it is made.
			w.to = path.Join(append([]string{next}, comps...)...)
			return w
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		ro := readOnlyFD(fd)
		if !ro && k.writable(next) {
			w.changeable = append(w.changeable, next)
		}
		kind := st.Mode & unix.S_IFMT
		if err != nil || kind != unix.S_IFLNK {
			unix.Close(fd)
			cur = next
			if kind != unix.S_IFDIR && len(comps) > 0 {
				w.to = path.Join(append([]string{next}, comps...)...)
				return w // not a directory: nothing beneath
			}
			w.leaf = err == nil && kind != unix.S_IFDIR && ro
			continue
		}
		t, err := readlinkat(fd, "")
		unix.Close(fd)
		if hops++; err != nil || hops > maxSymlinks || !push(t) {
			return walk{changeable: w.changeable}
		}
	}
	w.to = cur
	return w
}

// settledDots reports whether a symlink's target holds ".." only at its
// start, where it climbs from the link's own (physical) directory.
func settledDots(target string) bool {
	named := false
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if named {
				return false
			}
		default:
			named = true
		}
	}
	return true
}

// makeDeniedLater is deniedLater for a name about to be made at pl,
// answering first what the kernel would: EEXIST for a name that exists
// (mkdir -p goes on), EROFS in a read-only mount (a hidden directory of
// the launch).
func (k *call) makeDeniedLater(op string, pl place) unix.Errno {
	r, ok := k.later(pl.full())
	if !ok {
		return 0
	}
	var st unix.Stat_t
	if unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return unix.EEXIST
	}
	if pl.isReadOnly() {
		return unix.EROFS
	}
	return k.reportLater(op, pl.full(), r)
}

func (k *call) reportLater(op, full string, r policy.LaterRule) unix.Errno {
	why := r.Why
	if r.Read {
		why += " (a hidden path is never writable)"
	}
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: why})
}

// onReadOnlyMount reports whether the file at pl is on a read-only mount
// (it may be a mount of its own).
func (k *call) onReadOnlyMount(pl place) bool {
	fd, err := unix.Openat(pl.dir, pl.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return readOnlyFD(fd)
}

// readOnlyFD reports whether the file fd names is on a read-only mount.
func readOnlyFD(fd int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Flags&unix.ST_RDONLY != 0
}

// notWritable refuses (EACCES, reported) op on a path the fallback's
// plan does not make writable.
func (k *call) notWritable(op, path string) unix.Errno {
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: path, Reason: "not writable here (allowWrite)"})
}

// writable says whether the fallback's plan lets path be written; in the
// namespace sandbox the mounts decide, for the command and for srt alike.
func (k *call) writable(p string) bool {
	return k.pol.Writable == nil || k.pol.Writable(p) || slices.Contains(fallbackDevices, p)
}

// rootFD is the process's root.
func (k *call) rootFD() (int, unix.Errno) {
	if k.root >= 0 {
		return k.root, 0
	}
	if k.gs.root >= 0 && !k.pol.NestedNamespaces {
		k.root = k.gs.root
		return k.root, 0
	}
	fd, err := unix.Open(k.pol.Proc+"/"+strconv.Itoa(k.pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil || !stillWaiting(k.listener, k.req.ID) {
		if err == nil {
			unix.Close(fd)
		}
		return -1, unix.ESRCH
	}
	k.root = fd
	if !k.pol.NestedNamespaces {
		// No process there may chroot (no capability, and no user
		// namespace of its own to get one): this root is every one's.
		k.gs.root = fd
	}
	return fd, 0
}

// procLink reads a link of the process's /proc directory (cwd, fd/N):
// the path of a directory or file, as the sandbox names it.
func (k *call) procLink(which string) (string, unix.Errno) {
	target, err := os.Readlink(k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/" + which)
	if err != nil {
		if errors.Is(err, unix.ENAMETOOLONG) {
			// A directory deeper than the kernel can name: the guard
			// judges by path, so it cannot make a name there.
			return "", unix.ENAMETOOLONG
		}
		if strings.HasPrefix(which, "fd/") {
			return "", unix.EBADF
		}
		return "", unix.ESRCH
	}
	if !strings.HasPrefix(target, "/") {
		return "", unix.ENOTDIR // a pipe, a socket, an anonymous inode
	}
	if strings.HasSuffix(target, " (deleted)") {
		return "", unix.ENOENT
	}
	// No check that the caller still waits (its pid not yet another's):
	// whatever the guard makes, it makes where it judged, and a caller
	// gone gets no answer.
	return target, 0
}

// selfAlias rewrites the names by which a process means itself: /dev/fd,
// /dev/std{in,out,err}, /proc/self, /proc/thread-self and /proc/<n> where
// own(n) (its thread or process number, as its procfs numbers it). It
// returns the descriptor number and what follows it for a descriptor's
// name, or (fd -1) the rest of a /proc/self name; ok false when name is
// no such alias.
func selfAlias(name string, own func(n int) bool) (fd int, rest string, procPath string, ok bool) {
	name = path.Clean(name)
	for alias, fdNum := range map[string]string{"/dev/stdin": "0", "/dev/stdout": "1", "/dev/stderr": "2"} {
		if name == alias {
			name = "/proc/self/fd/" + fdNum
		}
	}
	if r, found := strings.CutPrefix(name, "/dev/fd/"); found {
		name = "/proc/self/fd/" + r
	}
	var r string
	found := false
	for _, prefix := range []string{"/proc/self/", "/proc/thread-self/"} {
		if r, found = strings.CutPrefix(name, prefix); found {
			break
		}
	}
	if p, ok := strings.CutPrefix(name, "/proc/"); ok && !found {
		num, tail, _ := strings.Cut(p, "/")
		if n, err := strconv.Atoi(num); err == nil && n > 0 && strconv.Itoa(n) == num && tail != "" && own(n) {
			r, found = tail, true
		}
	}
	if !found {
		return 0, "", "", false
	}
	if f, ok := strings.CutPrefix(r, "fd/"); ok {
		num, tail, _ := strings.Cut(f, "/")
		if n, err := strconv.Atoi(num); err == nil && n >= 0 && strconv.Itoa(n) == num {
			return n, tail, "", true
		}
		return 0, "", "", false
	}
	return -1, "", r, true
}

// ownNumber reports whether n is the calling thread's number, or its
// process's, in the procfs it sees (its own pid namespace's: the last of
// NSpid and NStgid in its status as srt reads it).
func (k *call) ownNumber(n int) bool {
	status, err := os.ReadFile(k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/status")
	if err != nil {
		return false
	}
	for _, key := range []string{"NSpid", "NStgid"} {
		v, _ := statusField(string(status), key)
		if f := strings.Fields(v); len(f) > 0 && f[len(f)-1] == strconv.Itoa(n) {
			return true
		}
	}
	return false
}

// at resolves where name, relative to dirfd dir, is: its directory,
// pinned, and the last name. Symlinks on the way are followed in the
// process's root; the last name is not followed.
func (k *call) at(dir int, name string) (place, unix.Errno) {
	if name == "" {
		return place{dir: -1}, unix.ENOENT
	}
	if fd, rest, procPath, ok := selfAlias(name, k.ownNumber); ok {
		switch {
		case procPath != "":
			parts := strings.Split(procPath, "/")
			for i, c := range parts[:len(parts)-1] {
				switch c {
				case "cwd", "root":
					if i != 0 {
						return place{dir: -1}, unix.EACCES
					}
				case "exe", "fd", "map_files", "ns":
					return place{dir: -1}, unix.EACCES // through a magic link
				}
			}
			switch parts[0] {
			case "cwd":
				cwd, e := k.procLink("cwd")
				if e != 0 {
					return place{dir: -1}, e
				}
				return k.at(unix.AT_FDCWD, cwd+"/"+strings.Join(parts[1:], "/"))
			case "root":
				if len(parts) > 1 {
					return k.at(unix.AT_FDCWD, "/"+strings.Join(parts[1:], "/"))
				}
			}
			return k.atHost(procPath)
		case rest == "":
			return k.ofDescriptor(fd)
		default:
			base, e := k.procLink("fd/" + strconv.Itoa(fd))
			if e != 0 {
				return place{dir: -1}, e
			}
			name = base + "/" + rest
		}
	}
	full := name
	if !strings.HasPrefix(name, "/") {
		which := "cwd"
		if dir != unix.AT_FDCWD {
			which = "fd/" + strconv.Itoa(dir)
		}
		base, e := k.procLink(which)
		if e != 0 {
			return place{dir: -1}, e
		}
		full = base + "/" + name
	}
	slash := strings.HasSuffix(full, "/")
	full = strings.TrimRight(full, "/")
	parent, last := "/", "."
	if full != "" {
		i := strings.LastIndexByte(full, '/')
		parent, last = full[:i], full[i+1:]
		if parent == "" {
			parent = "/"
		}
	}
	if last == ".." {
		parent, last = full, "."
	}
	root, e := k.rootFD()
	if e != 0 {
		return place{dir: -1}, e
	}
	if last == "." {
		parent = full
		if parent == "" {
			parent = "/"
		}
	}
	// Without a symlink on the way, where the walk ends is what the
	// path says, read lexically; else the kernel says where it ended.
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS}
	fd, err := openat2(root, parent, &how)
	real := path.Clean(parent)
	if err == unix.ELOOP {
		how.Resolve &^= unix.RESOLVE_NO_SYMLINKS
		if fd, err = openat2(root, parent, &how); err == nil {
			if real, err = k.gs.pathOf(fd); err != nil {
				unix.Close(fd)
				return place{dir: -1}, unix.ENOENT
			}
		}
	}
	if err != nil {
		return place{dir: -1}, errnoOf(err)
	}
	pl := place{dir: fd, path: real, name: last, slash: slash, fsKnown: k.pol.NestedNamespaces}
	if pl.fsKnown {
		// A nested mount namespace may hold a procfs anywhere.
		var fs unix.Statfs_t
		if err := unix.Fstatfs(fd, &fs); err != nil {
			unix.Close(fd)
			return place{dir: -1}, unix.ENOENT
		}
		pl.proc, pl.readOnly = fs.Type == unix.PROC_SUPER_MAGIC, fs.Flags&unix.ST_RDONLY != 0
		if !pl.proc {
			src, mnt, ok := k.sourcePath(pl.dir, pl.name)
			if !ok {
				unix.Close(fd)
				return place{dir: -1}, unix.EACCES // where it is cannot be told
			}
			if src != "" && src != pl.full() {
				pl.as = src
			}
			pl.mnt = mnt
		}
	} else {
		// Else the only procfs is the one at /proc: nothing inside may
		// mount.
		pl.proc = policy.Under(real, "/proc")
	}
	return pl, 0
}

// atHost is the process's own /proc entry rest (/proc/self/rest), in
// srt's procfs.
func (k *call) atHost(rest string) (place, unix.Errno) {
	p := k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/" + rest
	parent, last := path.Split(p)
	fd, err := unix.Open(parent, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil || !stillWaiting(k.listener, k.req.ID) {
		if err == nil {
			unix.Close(fd)
		}
		return place{dir: -1}, unix.ENOENT
	}
	return place{dir: fd, path: path.Clean(parent), name: last, proc: true, self: rest}, 0
}

// ofDescriptor is the command's descriptor n, taken as the object itself.
func (k *call) ofDescriptor(n int) (place, unix.Errno) {
	fd, fl, e := k.descriptor(n)
	if e != 0 {
		return place{dir: -1}, e
	}
	p, err := k.gs.pathOf(fd)
	if err != nil {
		// A file deeper than the kernel can name (moved there after it
		// was opened): the guard judges by path, so it does nothing
		// with it.
		unix.Close(fd)
		if errors.Is(err, unix.ENAMETOOLONG) {
			return place{dir: -1}, unix.ENAMETOOLONG
		}
		return place{dir: -1}, unix.EBADF
	}
	trimmed := strings.TrimSuffix(p, " (deleted)")
	pl := place{dir: fd, path: trimmed, unlinked: trimmed != p, fileFlags: fl}
	if k.pol.NestedNamespaces && !pl.unlinked && strings.HasPrefix(p, "/") {
		// Reached through another view (a nested bind, a chroot): judged
		// where the sandbox has it.
		src, _, ok := k.sourcePath(fd, "")
		if !ok {
			unix.Close(fd)
			return place{dir: -1}, unix.EACCES
		}
		if src != "" {
			pl.as = src
		}
	}
	return pl, 0
}

// fdOf is a copy of the command's descriptor n, taken through a pidfd of
// the calling thread that is kept for its next call: while that thread
// lives, the pidfd names it and no other; once it is gone, the copy fails
// and a new pidfd is opened (and checked against the notification, as
// pol.fdOf does).
func (k *call) fdOf(n int) (int, unix.Errno) {
	fd, _, e := k.descriptor(n)
	return fd, e
}

// descriptor is fdOf with the file status flags of the command's
// descriptor (F_GETFL's).
func (k *call) descriptor(n int) (fd, flags int, e unix.Errno) {
	if !pidfdGetfd() {
		return k.pol.procDescriptor(k.listener, k.req, n)
	}
	fd, e = k.takeFD(n)
	if e != 0 {
		return -1, 0, e
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		unix.Close(fd)
		return -1, 0, unix.EBADF
	}
	return fd, flags, 0
}

// takeFD is fdOf by pidfd_getfd.
func (k *call) takeFD(n int) (int, unix.Errno) {
	if pidfd, ok := k.gs.pidfds[k.pid]; ok {
		if fd, err := unix.PidfdGetfd(pidfd, n, 0); err == nil {
			return fd, 0
		}
		unix.Close(pidfd)
		delete(k.gs.pidfds, k.pid)
	}
	pidfd, e := k.pol.callerPidfd(k.listener, k.req)
	if e != 0 {
		return -1, e
	}
	if len(k.gs.pidfds) >= maxUmasks {
		k.gs.forgetPidfds()
	}
	k.gs.pidfds[k.pid] = pidfd
	return getfd(pidfd, n)
}

// pathOf reads the path of srt's descriptor fd, from a /proc/self/fd kept
// open: one name looked up, not four.
func (gs *guardState) pathOf(fd int) (string, error) {
	if gs.selfFDs < 0 {
		dir, err := unix.Open("/proc/self/fd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		}
		gs.selfFDs = dir
	}
	return readlinkat(gs.selfFDs, strconv.Itoa(fd))
}

// followLink moves from the symlink at pl (closed) to where it leads.
func (k *call) followLink(pl place) (place, unix.Errno) {
	target, err := readlinkat(pl.dir, pl.name)
	pl.close()
	if err != nil {
		return place{dir: -1}, errnoOf(err)
	}
	return k.follow(place{path: pl.path, slash: pl.slash}, target)
}

// follow moves pl to where the symlink target leads, as the kernel would
// from the symlink's directory.
func (k *call) follow(pl place, target string) (place, unix.Errno) {
	if target == "" {
		return place{dir: -1}, unix.ENOENT
	}
	if !strings.HasPrefix(target, "/") {
		if _, _, _, ok := selfAlias(target, k.ownNumber); !ok {
			target = pl.path + "/" + target
		}
	}
	if pl.slash {
		target += "/"
	}
	return k.at(unix.AT_FDCWD, target)
}

// umaskOf is the umask of the thread that made the call.
func (k *call) umaskOf() (int, unix.Errno) {
	if k.umask >= 0 {
		return k.umask, 0
	}
	gs, tid := k.gs, k.pid
	for t, want := range gs.pending {
		if u, err := readUmask(k.pol.Proc, t); err != nil || u == want {
			delete(gs.pending, t) // gone, or its umask is in place
		}
	}
	if e, ok := gs.umasks[tid]; ok && len(gs.pending) == 0 {
		now := time.Now()
		if now.Sub(e.checked) < umaskFresh || unix.PidfdSendSignal(e.pidfd, 0, nil, 0) == nil {
			if now.Sub(e.checked) >= umaskFresh {
				e.checked = now
				gs.umasks[tid] = e
			}
			k.umask = e.umask
			return e.umask, 0
		}
		unix.Close(e.pidfd)
		delete(gs.umasks, tid)
	}
	u, err := readUmask(k.pol.Proc, tid)
	if err != nil {
		return 0, unix.ESRCH
	}
	k.umask = u
	if len(gs.pending) == 0 {
		if len(gs.umasks) >= maxUmasks {
			gs.forget()
		}
		if pidfd, err := k.pol.pidfd(tid); err == nil {
			gs.umasks[tid] = umaskEntry{umask: u, pidfd: pidfd, checked: time.Now()}
		}
	}
	return u, 0
}

// noteUmask is a umask(2) call on its way: the cache is emptied, and
// kept empty until the caller is seen with its new umask.
func (gs *guardState) noteUmask(tid, umask int) {
	gs.forget()
	gs.pending[tid] = umask & 0o777
}

// readUmask reads a thread's umask from its status in procfs.
func readUmask(proc string, tid int) (int, error) {
	fd, err := unix.Open(proc+"/"+strconv.Itoa(tid)+"/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var buf [512]byte // Name (at most 64 bytes, escaped) and Umask come first
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		return 0, err
	}
	v, ok := statusField(string(buf[:n]), "Umask")
	if !ok || len(v) < 4 {
		return 0, unix.EINVAL
	}
	u, err := strconv.ParseUint(v[:4], 8, 32)
	return int(u), err
}

// creating runs f under the command's umask (the serving thread has a
// filesystem context of its own, whose umask only this sets; where it
// shares srt's, see sharedUmask).
func (k *call) creating(f func() error) unix.Errno {
	u, e := k.umaskOf()
	if e != 0 {
		return e
	}
	if sharedFS.Load() {
		return sharedUmask(u, f)
	}
	if k.gs.thread != u {
		unix.Umask(u)
		k.gs.thread = u
	}
	return errnoOf(f())
}

// judgeAt is judge for any place: a descriptor's (no name) is judged
// at its path, resolved again in the command's root, so that what names
// cannot tell (a git directory known by what it holds) is seen too.
func (k *call) judgeAt(pl place) (policy.Name, string) {
	if pl.name != "" || !strings.HasPrefix(pl.path, "/") {
		return k.judge(pl)
	}
	if p := pl.full(); !gitNamed(path.Base(path.Dir(p)), path.Base(p)) {
		// No name judge looks into.
		n, rule, anchor := k.pol.Guard.JudgeWhere(p)
		if n == policy.Protected && anchor != "" && k.madeInRun(pl, anchor) {
			return policy.Free, ""
		}
		return n, rule
	}
	// Found again at its path, it is judged there — if it is the same
	// file: one that cannot be (a directory on the way the guard may not
	// search, the file moved meanwhile, a path the command's root does
	// not hold) could be a git directory's hook or config, and is
	// refused as one.
	var here unix.Stat_t
	if unix.Fstat(pl.dir, &here) != nil {
		return policy.Protected, pl.path
	}
	named, ok := k.foundAgain(pl.path, &here)
	if !ok {
		return policy.Protected, "(the directory of " + pl.path + " cannot be looked into)"
	}
	defer named.close()
	return k.judge(named)
}

// foundAgain resolves path in the command's root and returns where it
// is, if the file there is st (closed, ok false, if not).
func (k *call) foundAgain(path string, st *unix.Stat_t) (place, bool) {
	named, e := k.at(unix.AT_FDCWD, path)
	if e != 0 {
		return place{dir: -1}, false
	}
	var there unix.Stat_t
	if unix.Fstatat(named.dir, named.name, &there, unix.AT_SYMLINK_NOFOLLOW) != nil || there.Dev != st.Dev || there.Ino != st.Ino {
		named.close()
		return place{dir: -1}, false
	}
	return named, true
}

// gitNamed reports whether name, in a directory called dir, is one judge
// looks into a git directory for: a hook, a hooks directory, a config, a
// mark. Any other name is judged by the name rules alone.
func gitNamed(dir, name string) bool {
	return dir == "hooks" || name == "hooks" || policy.IsLegacyRemotes(dir) || gitConfigNames[name] || gitMarks[name] ||
		policy.IsGitStateDir(name) || policy.IsGitStateFile(dir, name) || policy.IsIndexName(name) || name == policy.MergeRR ||
		name == policy.WorktreeGitdir ||
		strings.EqualFold(name, ".git")
}

// judge is what the name at pl is: the name rules (policy.Guard), and
// what they cannot see from names alone — a git directory that is not
// called .git (a bare repository, a --separate-git-dir, a worktree's
// common directory), known by what it holds (HEAD, objects, refs or
// commondir). Its hooks and its config are a .git's; and a directory
// whose hooks hold more than git's samples, or whose config would run a
// program, may not become one (no HEAD, objects, refs or commondir is
// made in it). Every guarded call of a sandbox is judged and made on one
// thread, in turn, so no two of them can each see the other's half
// missing.
func (k *call) judge(pl place) (policy.Name, string) {
	full := pl.full()
	n, rule, anchor := k.pol.Guard.JudgeWhere(full)
	if n == policy.Protected && anchor != "" && k.madeInRun(pl, anchor) {
		n, rule = policy.Free, "" // a project's content, in a tree the command made
	}

	if n != policy.Free && n != policy.Context || pl.name == "" || pl.name == "." || pl.dir < 0 || !gitNamed(path.Base(pl.path), pl.name) {
		return n, rule
	}
	switch {
	case path.Base(pl.path) == "hooks" && !isSample(pl.name), policy.IsLegacyRemotes(path.Base(pl.path)):
		if gitDirLike(pl.dir, "..") {
			return policy.Protected, pl.path
		}
	case pl.name == "hooks":
		if gitDirLike(pl.dir, ".") {
			return policy.HooksDir, full
		}
	case gitConfigNames[pl.name] && !k.pol.Guard.GitConfig:
		if gitDirLike(pl.dir, ".") {
			return policy.GitConfig, full
		}
	case policy.IsGitStateDir(pl.name):
		if gitDirLike(pl.dir, ".") {
			return policy.Context, full // a directory moved there brings its state files unseen
		}
	case policy.IsGitStateFile(path.Base(pl.path), pl.name):
		if gitDirLike(pl.dir, "..") {
			return policy.GitConfig, full
		}
	case policy.IsIndexName(pl.name) || pl.name == policy.MergeRR:
		if gitDirLike(pl.dir, ".") {
			return policy.GitConfig, full
		}
	case pl.name == policy.WorktreeGitdir:
		if path.Base(path.Dir(pl.path)) == "worktrees" && gitDirLike(pl.dir, "../..") {
			return policy.GitConfig, full
		}
	case pl.name == "commondir" && (path.Base(path.Dir(pl.path)) != "worktrees" || path.Base(pl.path) == ".git"):
		// git writes a commondir only in a worktree's git directory
		// (worktrees/<id>, which a .git file names, and whose commondir
		// the guard reads at each call): anywhere else it would lead
		// git to another repository's config and hooks after the guard
		// read the repository.
		return policy.Protected, full + " (a commondir other than in a worktree's git directory, worktrees/<id>, would lead git to another repository's config and hooks)"
	case strings.EqualFold(pl.name, ".git"):
		if gitDirBeneath(pl.dir) {
			return policy.Protected, full + " (a git directory lies in what would become its work tree, where the host's checkout would write into it)"
		}
	case gitMarks[pl.name]:
		if !gitDirLike(pl.dir, ".") && k.unsafeToMark(pl.dir) {
			return policy.Protected, full + " (its directory holds hooks, or a config that runs programs, and would become a git directory)"
		}
		// The mark that makes it one git takes: nothing beneath may be
		// a symlink (see inGitDir), which no mark made before saw.
		if !gitDir(pl.dir, ".") && gitDirWith(pl.dir, ".", pl.name) {
			if holdsSymlink(pl.dir) {
				return policy.Protected, full + " (its directory holds a symlink, or more than the guard looks through, and would become a git directory)"
			}
			if workTreeAbove(pl.dir, pl.path) {
				return policy.Protected, full + " (its directory lies in a work tree, where the host's checkout would write into it, and would become a git directory)"
			}
		}
		// The mark that makes it what a worktree's commondir may name:
		// no symlink at git's own names (see inGitDir).
		if !commonDirLike(pl.dir, ".") && commonDirLikeWith(pl.dir, ".", pl.name) && symlinkAtGitNames(pl.dir) {
			return policy.Protected, full + " (its directory holds a symlink at one of git's own names, and would become a common git directory)"
		}
	}
	return n, rule
}

// gitMarks are the names that make a directory a git directory to git;
// gitConfigNames the config files git reads in one.
var (
	gitMarks       = map[string]bool{"HEAD": true, "objects": true, "refs": true, "commondir": true}
	gitConfigNames = map[string]bool{"config": true, "config.worktree": true}
)

// sealForMark runs before a call makes the name at pl: when that name is
// a mark that makes its directory a git directory, the directory's config
// files are first replaced by copies the guard makes of what they hold
// now (judged safe by judge, through unsafeToMark), so that no descriptor
// or second name the command kept from before can change them after.
func (k *call) sealForMark(pl place) unix.Errno {
	if !gitMarks[pl.name] || pl.dir < 0 || gitDirLike(pl.dir, ".") {
		return 0
	}
	for _, name := range k.judgedGitFiles(pl.dir) {
		if e := k.sealConfig(pl.dir, name, path.Join(pl.path, name)); e != 0 {
			return k.pol.deny(e, Event{Kind: "filesystem", Call: "write", Target: path.Join(pl.path, pl.name),
				Reason: "its directory's " + name + " could not be sealed before it became a git directory"})
		}
	}
	return 0
}

// judgedGitFiles lists the files in the git directory (to be) at dir
// whose content the guard judges (GitConfig): its config files (unless
// allowGitConfig), its index and shared indexes, and a rebase's todo
// list and the other state files git goes on with; relative to dir.
func (k *call) judgedGitFiles(dir int) []string {
	var names []string
	if !k.pol.Guard.GitConfig {
		for name := range gitConfigNames {
			names = append(names, name)
		}
	}
	names = append(names, policy.GitIndexName, policy.MergeRR)
	names = append(names, policy.GitStateFiles()...)
	all, _ := namesAt(dir, ".")
	for _, n := range all {
		if strings.HasPrefix(n, policy.SharedIndexPrefix) {
			names = append(names, n)
		}
	}
	ids, _ := namesAt(dir, "worktrees")
	for _, id := range ids {
		names = append(names, path.Join("worktrees", id, policy.WorktreeGitdir))
	}
	return names
}

// worktreeSafe judges a worktree's link back about to land (gitdirSafe),
// reached through no symlink, and keeps the worktree's directory
// (keepTarget): no symlink may be put at it or above it after, nor
// anything moved there. The host's git worktree repair writes a .git
// file where the link back leads, and git worktree remove --force
// deletes the directory there, through any symlink on the way.
func worktreeSafe(pol *ConnectPolicy, root int, content []byte) error {
	if err := gitdirSafe(pol, content); err != nil {
		return err
	}
	p, _ := policy.WorktreeGitdirPath(content)
	if err := noSymlinkOnWay(root, path.Dir(p)); err != nil {
		return err
	}
	pol.keepTarget(root, path.Dir(p))
	return nil
}

// gitdirSafe judges a worktree's link back (worktrees/<id>/gitdir): it
// must name a .git in a tree the command may write, as git writes it.
func gitdirSafe(pol *ConnectPolicy, content []byte) error {
	p, ok := policy.WorktreeGitdirPath(content)
	if !ok {
		return fmt.Errorf("not the absolute path of a worktree's .git, as git writes it")
	}
	if !pol.writableTree(path.Dir(p)) {
		return fmt.Errorf("%s lies outside the trees the command may write, where the host's git worktree repair would write a .git file and git worktree remove delete the directory", p)
	}
	return nil
}

// readAt reads dir/name, not through a symlink nor waiting on a FIFO:
// at most limit bytes and one more, so that a longer file is seen so.
func readAt(dir int, name string, limit int) ([]byte, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}

// namesAt lists the directory dir/name, not through a symlink.
func namesAt(dir int, name string) ([]string, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	names, _ := f.Readdirnames(-1) // what could be read
	return names, nil
}

// repoHashSize is the object id size of the repository whose git
// directory is dir: its config's, or its common directory's (a
// worktree's); 20 where neither holds one; 0 where the guard cannot
// tell (a common directory it cannot reach).
func (k *call) repoHashSize(dir int) int {
	read := func(d int, name string) ([]byte, error) { return readAt(d, name, maxGitConfig) }
	// git takes the format from the common directory where there is
	// one (a worktree's config is not read for it), else from dir's.
	common, err := read(dir, "commondir")
	if err == unix.ENOENT {
		switch c, err := read(dir, "config"); {
		case err == nil:
			return policy.HashSizeOf(c)
		case err == unix.ENOENT:
			return 20
		}
		return 0
	}
	at := strings.TrimSpace(string(common))
	if err != nil || at == "" || path.IsAbs(at) {
		return 0
	}
	d, err := unix.Openat(dir, at, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(d)
	c, err := read(d, "config")
	switch {
	case err == nil:
		return policy.HashSizeOf(c)
	case err == unix.ENOENT:
		return 20
	}
	return 0
}

// gitFileSafe judges the content of dir/name, a GitConfig file.
func (k *call) gitFileSafe(dir int, name string, content []byte) error {
	if path.Base(name) == policy.WorktreeGitdir {
		root, e := k.rootFD()
		if e != 0 {
			return e
		}
		return worktreeSafe(k.pol, root, content)
	}
	if !policy.IsIndexName(path.Base(name)) {
		return policy.GitFileSafe(path.Base(name), content, 20)
	}
	size := k.repoHashSize(dir)
	if size == 0 {
		return fmt.Errorf("the repository's object format cannot be told")
	}
	return policy.GitFileSafe(path.Base(name), content, size)
}

// indexesStaySafe reports, for a config about to replace dir/config,
// whether every index git would then read in dir (its own, its shared
// ones, its worktrees') is still safe read with the hash size the new
// content sets: extensions.objectFormat changes how git reads them.
func (k *call) indexesStaySafe(dir int, content []byte) error {
	size := policy.HashSizeOf(content)
	if size == k.repoHashSize(dir) {
		return nil
	}
	indexes := []string{}
	for _, n := range k.judgedGitFiles(dir) {
		if policy.IsIndexName(n) {
			indexes = append(indexes, n)
		}
	}
	ids, _ := namesAt(dir, "worktrees")
	for _, id := range ids {
		indexes = append(indexes, path.Join("worktrees", id, policy.GitIndexName))
	}
	for _, n := range indexes {
		idx, err := readAt(dir, n, maxGitFile)
		if err == unix.ENOENT {
			continue
		}
		if err != nil {
			return err
		}
		if err := policy.GitIndexSafe(idx, size); err != nil {
			return fmt.Errorf("its %s, read with the object format it sets: %v", n, err)
		}
	}
	return nil
}

// sealConfig replaces dir/name, if it is there, by a copy of its content.
func (k *call) sealConfig(dir int, name, full string) unix.Errno {
	in, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return 0
	}
	if err != nil {
		return unix.EACCES
	}
	f := os.NewFile(uintptr(in), name)
	defer f.Close()
	if _, denied := k.pol.Guard.Later(full); denied || readOnlyFD(in) || mountPoint(place{dir: dir, name: name}) || !k.writable(full) {
		// A file the command may not write (a mount of the launch keeps
		// it read-only, a deny entry or the fallback's plan covers it):
		// it holds nothing of the command's, and srt, outside the
		// sandbox's mount namespace, would replace it underneath that
		// mount.
		return 0
	}
	var st unix.Stat_t
	if err := unix.Fstat(in, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return unix.EACCES
	}
	content, err := io.ReadAll(io.LimitReader(f, maxGitFile+1))
	if err != nil || k.gitFileSafe(dir, name, content) != nil {
		return unix.EACCES
	}
	if d := path.Dir(name); d != "." {
		// A state file (rebase-merge/git-rebase-todo): the copy is made in its own
		// directory.
		sub, err := unix.Openat(dir, d, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return unix.EACCES
		}
		defer unix.Close(sub)
		return k.putCopy(sub, path.Base(name), content, st.Mode)
	}
	return k.putCopy(dir, name, content, st.Mode)
}

// putCopy gives dir/name a new inode holding content (mode), made by the
// guard: whatever reached the old one no longer reaches the name.
func (k *call) putCopy(dir int, name string, content []byte, mode uint32) unix.Errno {
	var tmp int
	if e := k.creating(func() (err error) {
		tmp, err = unix.Openat(dir, ".", unix.O_WRONLY|oTmpfile|unix.O_DIRECTORY|unix.O_CLOEXEC, mode&0o777)
		return err
	}); e != 0 {
		return e
	}
	out := os.NewFile(uintptr(tmp), name)
	defer out.Close()
	if _, err := out.Write(content); err != nil {
		return errnoOf(err)
	}
	if err := unix.Fchmod(tmp, mode&0o7777); err != nil {
		return errnoOf(err)
	}
	if err := unix.Unlinkat(dir, name, 0); err != nil && err != unix.ENOENT {
		return errnoOf(err)
	}
	return errnoOf(unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(tmp), dir, name, unix.AT_SYMLINK_FOLLOW))
}

func isSample(name string) bool { return policy.IsInertHookName(name) }

// gitDirLike reports whether the directory rel from dir holds a mark of
// a git directory.
func gitDirLike(dir int, rel string) bool {
	// A directory the guard cannot look into (the command took away its
	// search right) may be one: only a name that is not there says no.
	absent := func(err error) bool { return err == unix.ENOENT || err == unix.ENOTDIR }
	d, err := unix.Openat(dir, rel, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return !absent(err)
	}
	defer unix.Close(d)
	var st unix.Stat_t
	for m := range gitMarks {
		if err := unix.Fstatat(d, m, &st, unix.AT_SYMLINK_NOFOLLOW); !absent(err) {
			return true
		}
	}
	return false
}

// lastMark reports whether name is the only mark left in dir that makes
// it look like a git directory (gitDirLike), where the guard keeps
// hooks and config that, without a mark, would be any directory's names.
func lastMark(dir int, name string) bool {
	if !gitMarks[name] {
		return false
	}
	var st unix.Stat_t
	for m := range gitMarks {
		if err := unix.Fstatat(dir, m, &st, unix.AT_SYMLINK_NOFOLLOW); m != name && err != unix.ENOENT && err != unix.ENOTDIR {
			return false
		}
	}
	return true
}

// unmarks refuses (EACCES) taking away, at pl, the last mark of a git
// directory not called .git (a bare repository) whose hooks hold more
// than samples or whose config runs a program: the hooks and config
// would become names the command may write, and the host's git takes
// the directory for a repository again once a mark is back (git init
// --bare there).
func (k *call) unmarks(op string, pl place) unix.Errno {
	if path.Base(pl.path) == ".git" || !lastMark(pl.dir, pl.name) || !k.unsafeToMark(pl.dir) {
		return 0
	}
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: pl.full(),
		Reason: "the last mark of a git directory whose hooks or config the guard keeps: without it they would be any directory's names"})
}

// gitDir reports whether the directory at dir/rel is one git takes for
// a git directory: a HEAD, and objects and refs or a commondir (git's
// is_git_directory). One the guard cannot look into may be.
func gitDir(dir int, rel string) bool {
	return gitDirWith(dir, rel, "")
}

// gitDirWith is gitDir as it would be once the mark named made is made.
func gitDirWith(dir int, rel, made string) bool {
	d, err := unix.Openat(dir, rel, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err != unix.ENOENT && err != unix.ENOTDIR
	}
	defer unix.Close(d)
	has := func(name string) bool {
		if name == made {
			return true
		}
		var st unix.Stat_t
		err := unix.Fstatat(d, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		return err == nil || err != unix.ENOENT && err != unix.ENOTDIR
	}
	return has("HEAD") && (has("commondir") || has("objects") && has("refs"))
}

// commonDirLike reports whether dir/rel holds objects and refs: what a
// worktree's commondir may name, which needs no HEAD of its own.
func commonDirLike(dir int, rel string) bool {
	return commonDirLikeWith(dir, rel, "")
}

// commonDirLikeWith is commonDirLike once the name made is made.
func commonDirLikeWith(dir int, rel, made string) bool {
	has := func(name string) bool {
		var st unix.Stat_t
		return name == made || unix.Fstatat(dir, path.Join(rel, name), &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	}
	return has("objects") && has("refs")
}

// symlinkAtGitNames reports whether dir holds a symlink at one of git's
// own names, or beneath one (see holdsSymlink).
func symlinkAtGitNames(dir int) bool {
	d, err := unix.Openat(dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	f := os.NewFile(uintptr(d), "")
	entries, err := f.ReadDir(-1)
	defer f.Close()
	if err != nil {
		return true
	}
	for _, e := range entries {
		lower := strings.ToLower(e.Name())
		if !gitInternalNames[lower] && !strings.HasPrefix(lower, "bisect_") {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			return true
		}
		if e.IsDir() {
			sub, err := unix.Openat(d, e.Name(), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return true
			}
			held := holdsSymlink(sub)
			unix.Close(sub)
			if held {
				return true
			}
		}
	}
	return false
}

// gitInternalNames are the names git reads or writes at the top of a
// (common) git directory.
var gitInternalNames = map[string]bool{
	"head": true, "fetch_head": true, "orig_head": true, "merge_head": true, "cherry_pick_head": true, "revert_head": true,
	"auto_merge": true, "commit_editmsg": true, "merge_msg": true, "merge_mode": true, "squash_msg": true, "tag_editmsg": true,
	"config": true, "config.worktree": true, "index": true, "packed-refs": true, "shallow": true, "description": true,
	"hooks": true, "info": true, "logs": true, "objects": true, "refs": true, "worktrees": true, "modules": true,
	"rebase-merge": true, "rebase-apply": true, "sequencer": true, "rr-cache": true, "lfs": true, "commondir": true,
	"gitdir": true, "gc.pid": true, "gc.log": true, "branches": true, "remotes": true,
}

// inGitDir reports whether the name at pl lies inside a git directory: a
// .git on its path, or a directory at or above its own that git takes
// for one (gitDir). The host's git reads and writes what lies there by
// fixed names (logs/HEAD, FETCH_HEAD, COMMIT_EDITMSG, worktrees/<id>,
// rebase-merge): a symlink there would lead its writes, and gc's
// deletions, out of the repository.
func (k *call) inGitDir(pl place) bool {
	if underDotGit(pl.path) {
		return true
	}
	parts := strings.Split(strings.Trim(pl.path, "/"), "/")
	// The names beneath each directory above, first first: under a
	// common directory (objects and refs, no HEAD), only git's own.
	names := append(parts, pl.name)
	rel := "."
	for i := 0; i <= len(parts); i++ {
		// What is made counts as there: a symlink named objects beside
		// refs is a mark of its own.
		made := ""
		if i == 0 {
			made = pl.name
		}
		if gitDirWith(pl.dir, rel, made) {
			return true
		}
		if first := names[len(names)-1-i]; gitInternalNames[strings.ToLower(first)] || strings.HasPrefix(strings.ToLower(first), "bisect_") {
			if commonDirLikeWith(pl.dir, rel, made) {
				return true
			}
		}
		rel = path.Join(rel, "..")
	}
	return false
}

// workTreeAbove reports whether the directory at dir (path at) lies in a
// work tree: it or a directory above holds a .git. A git directory in a
// .git (a submodule's, a worktree's) does not: git never checks a path
// through .git out.
func workTreeAbove(dir int, at string) bool {
	if underDotGit(at) {
		return false
	}
	return gitUp(dir, ".", len(strings.Split(strings.Trim(at, "/"), "/"))+1)
}

// gitUp reports whether dir/rel, or one of the levels-1 directories
// above it, holds a .git (of any kind, or one that cannot be told).
func gitUp(dir int, rel string, levels int) bool {
	for range levels {
		var st unix.Stat_t
		if err := unix.Fstatat(dir, path.Join(rel, ".git"), &st, unix.AT_SYMLINK_NOFOLLOW); err == nil || err != unix.ENOENT && err != unix.ENOTDIR {
			return true
		}
		rel = path.Join(rel, "..")
	}
	return false
}

// gitDirMovedIn reports whether the directory at from, moved to to,
// would bring a git directory into a work tree (see gitDirBeneath).
func gitDirMovedIn(from, to place) bool {
	if !workTreeAbove(to.dir, to.path) || underDotGit(to.full()) {
		return false
	}
	d, err := unix.Openat(from.dir, from.name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(d)
	return gitDirBeneath(d)
}

// underDotGit reports whether a path goes through a .git.
func underDotGit(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

// gitDirBeneath reports whether the tree at dir holds a git directory
// (gitDir) other than in a .git, or a directory the guard cannot read:
// a .git made at dir would make the tree a work tree, and git checks
// out a path into such a directory (a --separate-git-dir put in the
// work tree, a bare repository) as into any other.
func gitDirBeneath(dir int) bool {
	return treeHas(dir, 0, func(d int) bool { return gitDir(d, ".") }, nil,
		func(e fs.DirEntry) bool { return strings.EqualFold(e.Name(), ".git") })
}

// treeHas walks the tree at dir, symlinks not followed, and reports
// whether at says yes of one of its directories (open at d) or entry of
// one of their entries; and, failing closed, whether a directory cannot
// be read or the tree holds more than limit entries (0: no bound).
// Every directory is entered but those skip names.
func treeHas(dir, limit int, at func(d int) bool, entry, skip func(fs.DirEntry) bool) bool {
	seen := 0
	var walk func(d int) bool
	walk = func(d int) bool {
		f := os.NewFile(uintptr(d), "")
		defer f.Close()
		if at != nil && at(d) {
			return true
		}
		entries, err := f.ReadDir(-1)
		if err != nil {
			return true
		}
		for _, e := range entries {
			if seen++; limit > 0 && seen > limit {
				return true
			}
			if entry != nil && entry(e) {
				return true
			}
			if !e.IsDir() || skip != nil && skip(e) {
				continue
			}
			sub, err := unix.Openat(d, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err == unix.EACCES && !ownDir(d, e.Name()) && unix.Faccessat(d, e.Name(), unix.W_OK, unix.AT_EACCESS) != nil {
				// Another user's directory the guard, as the command,
				// can neither read nor write: the command could not have
				// put anything there either (a database's volume).
				continue
			}
			if err != nil || walk(sub) {
				return true
			}
		}
		return false
	}
	d, err := unix.Openat(dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return err != nil || walk(d)
}

// ownDir reports whether dir/name is owned by the user the guard acts as
// (or cannot be told not to be).
func ownDir(dir int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Uid == uint32(unix.Geteuid())
}

// mergeProgramDir refuses a directory or symlink at pl named as a merge
// strategy's program's directory (policy.MergeProgramPrefix).
func (k *call) mergeProgramDir(op string, pl place) unix.Errno {
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: pl.full(),
		Reason: "a directory named " + policy.MergeProgramPrefix + "*, from which the host's git rebase --continue could run a merge strategy's program"})
}

// linkInGitDir refuses a symlink at pl, in a git directory (inGitDir).
// gitProbeName is the name git init and clone give the symlink they make
// at the top of a new git directory, to learn whether the filesystem
// has symlinks (and remove at once): refused, git would set
// core.symlinks = false and check a repository's symlinks out as files.
var gitProbeName = regexp.MustCompile(`^t[A-Za-z0-9]{6}$`)

// symlinkProbe reports whether a symlink to target at pl is git's probe:
// "testing", at the top of a git directory, by such a name. It leads to
// a name git never uses, and the name is none of git's.
func symlinkProbe(target string, pl place) bool {
	if target != "testing" || !gitProbeName.MatchString(pl.name) {
		return false
	}
	if path.Base(pl.path) == ".git" {
		return true
	}
	// Elsewhere (a bare repository), only the top of a whole git
	// directory: its objects and refs are there, not only a mark.
	if !gitDirLike(pl.dir, ".") {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		var st unix.Stat_t
		if unix.Fstatat(pl.dir, d, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return false
		}
	}
	return true
}

func (k *call) linkInGitDir(op string, pl place) unix.Errno {
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: pl.full(),
		Reason: "a symlink in a git directory, which the host's git would write through"})
}

// holdsSymlink reports whether the tree at dir holds a symlink, or more
// than maxMovedTree entries, or anything the guard cannot read.
func holdsSymlink(dir int) bool {
	return treeHas(dir, maxMovedTree, nil, func(e fs.DirEntry) bool { return e.Type()&fs.ModeSymlink != 0 }, nil)
}

// unsafeToMark reports whether dir holds hooks other than samples, or a
// config that would run a program, or an index or a rebase's todo list
// the guard would not take (see judgedGitFiles).
func (k *call) unsafeToMark(dir int) bool {
	hooks, err := namesAt(dir, "hooks")
	if err != nil && err != unix.ENOENT {
		return true // a hooks that is no directory, or cannot be read
	}
	for _, n := range hooks {
		if !isSample(n) {
			return true
		}
	}
	for _, d := range []string{"remotes", "branches"} {
		if names, err := namesAt(dir, d); len(names) > 0 || err != nil && err != unix.ENOENT {
			return true // a legacy remote (see policy.IsLegacyRemotes)
		}
	}
	for _, name := range k.judgedGitFiles(dir) {
		content, err := readAt(dir, name, maxGitFile)
		if err == unix.ENOENT || err == unix.ENOTDIR {
			continue
		}
		if err != nil || k.gitFileSafe(dir, name, content) != nil {
			return true
		}
	}
	return false
}

// blocked says whether a name of kind n may not be made or written.
func blocked(n policy.Name) bool {
	return n == policy.Protected || n == policy.HooksDir || n == policy.GitConfig
}

// open performs open(name, flags, mode) relative to dir. Two files git
// writes in place, whose content the guard must judge, are opened for
// the command as a pipe: srt reads what the command writes there and
// puts it in the file, made (or emptied) at the open, once the command
// closes the pipe (every copy of it) and if it is safe then:
//   - a worktree's link back (worktrees/<id>/gitdir), if it names a .git
//     in a writable tree, through no symlink (gitdirSafe); git reads it
//     only in later commands (worktree list, prune, repair, remove);
//   - a .git file, if its directory still holds nothing else
//     (gitFileAlone): a descriptor opened while it did must not write
//     the name of a repository after hooks were put beside it.
func (k *call) open(dir int, name string, flags int, mode uint32) answer {
	k.deferred = nil
	a := k.openFile(dir, name, flags, mode)
	d := k.deferred
	if d == nil {
		return a
	}
	if a.errno != 0 || a.fd < 0 {
		unix.Close(d.root)
		return a
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		unix.Close(a.fd)
		unix.Close(d.root)
		return refused(errnoOf(err))
	}
	if !k.pol.deferredWrites.take(maxDeferredWrites) {
		// Each holds three of srt's descriptors until the command
		// closes its pipe: a command that keeps many open is refused.
		for _, fd := range []int{a.fd, p[0], p[1], d.root} {
			unix.Close(fd)
		}
		return refused(unix.EMFILE)
	}
	if k.pol.Guard != nil && k.pol.Guard.Policy != nil {
		k.pol.Guard.Policy.View("/") // its index built here, not in the goroutine
	}
	d.file, d.r, d.readDone = a.fd, p[0], make(chan struct{})
	pol := k.pol
	pol.pending = append(pol.pending, d) // under pol.calls, as every call
	go func() {
		defer pol.deferredWrites.give()
		d.read()
		pol.calls.Lock()
		defer pol.calls.Unlock()
		pol.settle(d)
	}()
	a.fd = p[1]
	return a
}

// settleClosed settles, before a guarded call is judged, every deferred
// write whose pipe the command has closed (no writer left): a process
// that closes a .git file and goes on (git, a shell) finds it written
// by its next call, not at some moment after. Called under pol.calls.
func (pol *ConnectPolicy) settleClosed() {
	for _, d := range slices.Clone(pol.pending) {
		fds := []unix.PollFd{{Fd: int32(d.r), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 0); err != nil || n == 0 || fds[0].Revents&unix.POLLHUP == 0 {
			continue // a writer is left (or the data is not all there)
		}
		<-d.readDone // the reader has all of it at once: no writer is left
		pol.settle(d)
	}
}

// settle judges and makes a deferred write once, and lets go of its
// descriptors. Called under pol.calls.
func (pol *ConnectPolicy) settle(d *deferredWrite) {
	if d.done {
		return
	}
	d.done = true
	pol.pending = slices.DeleteFunc(pol.pending, func(x *deferredWrite) bool { return x == d })
	defer unix.Close(d.file)
	defer unix.Close(d.root)
	defer unix.Close(d.r)
	err := d.err
	if err == nil {
		// Judged and written between two guarded calls of the
		// sandbox, none of which can move the file meanwhile; judged
		// where the file is now, whatever name it had at the open.
		err = d.stillSafe(d.file, d.content, pol)
	}
	if err != nil {
		pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "write", Target: d.target, Reason: gitFileIs(d.name) + ": " + err.Error()})
		if d.made {
			d.unmake()
		}
		return
	}
	unix.Ftruncate(d.file, 0)
	unix.Pwrite(d.file, d.content, 0)
}

// unmake removes the file a refused deferred write made, if it is still
// where it was made and has no other name.
func (d *deferredWrite) unmake() {
	now, ok := openedAt(d.file)
	if !ok {
		return
	}
	dir, err := openat2(d.root, path.Dir(now), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return
	}
	defer unix.Close(dir)
	var at, mine unix.Stat_t
	if unix.Fstatat(dir, path.Base(now), &at, unix.AT_SYMLINK_NOFOLLOW) != nil || unix.Fstat(d.file, &mine) != nil ||
		at.Dev != mine.Dev || at.Ino != mine.Ino || mine.Nlink != 1 || mine.Size != 0 {
		return
	}
	unix.Unlinkat(dir, path.Base(now), 0)
}

// deferTo is the deferred write of the file at pl (see open), with
// srt's own copy of the command's root.
func (k *call) deferTo(pl place, full string) (*deferredWrite, unix.Errno) {
	root, e := k.rootFD()
	if e != 0 {
		return nil, e
	}
	r, err := unix.Dup(root)
	if err != nil {
		return nil, errnoOf(err)
	}
	return &deferredWrite{name: pl.name, target: full, root: r}, 0
}

// isDirAt reports whether the name at pl is a directory (not followed).
func isDirAt(pl place) bool {
	var st unix.Stat_t
	return unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// deferredWrite is an open the guard made through a pipe (see open):
// what the command writes is judged when the pipe closes.
type deferredWrite struct {
	name   string // policy.WorktreeGitdir, ".git", "commondir", a config's or an index's
	target string
	// max is the most content kept (64 KiB when 0); hashSize, the
	// repository's object hash size an index is read with; made: the
	// open made the file (O_EXCL), which goes again if refused.
	max      int
	hashSize int
	made     bool
	root     int // the command's root: srt's own copy
	file     int // srt's descriptor of the file
	r        int // the pipe's end srt reads
	// content is what arrived (err, why not all did), whole once
	// readDone is closed; done: settled (under pol.calls).
	content  []byte
	err      error
	readDone chan struct{}
	done     bool
}

// read reads what the command writes through the pipe until no writer
// is left (64 KiB kept, the rest drained so no writer waits), without
// closing it (settle does).
func (d *deferredWrite) read() {
	defer close(d.readDone)
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(d.r, buf)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			d.err = err
			return
		}
		if n == 0 {
			return
		}
		most := d.max
		if most == 0 {
			most = 1 << 16
		}
		if len(d.content) <= most {
			// One byte past the most tells content too big to judge.
			d.content = append(d.content, buf[:min(n, most+1-len(d.content))]...)
		}
	}
}

// stillSafe judges what the command wrote through a deferred write's
// pipe, for the file as it is now: one name only (no second made
// meanwhile), and, where that name is a .git, nothing else beside it.
func (d *deferredWrite) stillSafe(file int, content []byte, pol *ConnectPolicy) (err error) {
	var st unix.Stat_t
	if err := unix.Fstat(file, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		return errors.New("it was given another name, or removed, before it was written")
	}
	now, ok := openedAt(file)
	if !ok {
		return errors.New("where it is now cannot be told")
	}
	switch {
	case d.max > 0 && len(content) > d.max:
		return errors.New("bigger than the guard judges")
	case gitConfigNames[d.name]:
		if err := policy.GitConfigSafeBeside(content, nil, func(p string) error { return pol.localRepoIn(d.root, p) }); err != nil {
			return err
		}
		if policy.HashSizeOf(content) != policy.HashSizeOf(nil) && pol.indexBeside(d.root, now) {
			return errors.New("it changes the object format of a repository that has an index (which git would then read another way)")
		}
		return nil
	case policy.IsIndexName(d.name):
		if d.hashSize == 0 {
			return errors.New("the repository's object format cannot be told")
		}
		return policy.GitFileSafe(d.name, content, d.hashSize)
	}
	switch d.name {
	case policy.WorktreeGitdir:
		return worktreeSafe(pol, d.root, content)
	case "commondir":
		// It must lead, as git reads it, to a directory the guard can
		// read too (no /proc/self/root, which git follows to the host's
		// root and the guard does not).
		v, _, _ := strings.Cut(strings.TrimRight(string(content), "\r\n"), "\x00")
		if !strings.HasPrefix(v, "/") {
			v = path.Dir(now) + "/" + v
		}
		if err := pol.leadsInRoot(d.root, v); err != nil {
			return err
		}
		pol.keepTarget(d.root, v)
		return nil
	}
	if path.Base(now) != ".git" {
		return nil // moved to another name: judged again if moved back (rename)
	}
	target, ok := gitFileTarget(path.Dir(now), content)
	if !ok {
		return errors.New(`not "gitdir: " and a path, as git writes it`)
	}
	if err := pol.leadsInRoot(d.root, target); err != nil {
		return err
	}
	defer func() {
		if err == nil {
			pol.keepTarget(d.root, target)
		}
	}()
	dir, err := openat2(d.root, path.Dir(now), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if !onlyGit(dir) {
		return errors.New("its directory holds more than it: what lies beside it would become the work tree of the repository it names")
	}
	return nil
}

// keepTarget records where a .git file or a commondir the guard let
// land leads: p as spelled, read lexically, and where it leads now. No
// symlink, nor anything moved, may be put there or on its way after
// (targetAbove): what the file names would change without a write the
// guard judges. Called under pol.calls.
func (pol *ConnectPolicy) keepTarget(root int, p string) {
	if len(pol.targets) >= maxKeptTargets {
		return
	}
	pol.targets = append(pol.targets, path.Clean(p))
	if fd, err := openat2(root, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}); err == nil {
		if real, ok := openedAt(fd); ok {
			pol.targets = append(pol.targets, real)
		}
		unix.Close(fd)
	}
}

// openedAt is the path srt's descriptor fd was opened at, as
// /proc/self/fd tells it; false for none (a pipe's, a socket's).
func openedAt(fd int) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	return p, err == nil && strings.HasPrefix(p, "/")
}

// maxKeptTargets bounds the targets kept (past it, .git files and
// commondirs are still judged, their targets no longer kept).
const maxKeptTargets = 1 << 14

// targetAbove reports whether full lies at or above where a .git file or
// a commondir the guard let land leads (keepTarget).
func (k *call) targetAbove(full string) bool {
	for _, t := range k.pol.targets {
		if policy.Under(t, full) {
			return true
		}
	}
	return false
}

// leadsInRoot reports an error unless p leads to a directory in the
// command's root through no magic link (a /proc/self/… path git would
// follow to the host's root, where the guard would not see the
// repository it names), in a tree the command may write: the host's
// git in the work tree a .git names (or a worktree's commondir) writes
// that repository's objects, refs and index, and would write them
// outside the writable trees for the command.
func (pol *ConnectPolicy) leadsInRoot(root int, p string) error {
	fd, err := openat2(root, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return fmt.Errorf("%s does not lead to a directory the guard can read: %v", p, err)
	}
	defer unix.Close(fd)
	real, ok := openedAt(fd)
	if !ok {
		return fmt.Errorf("where %s leads cannot be told", p)
	}
	if !pol.writableTree(real) {
		return fmt.Errorf("%s leads to %s, outside the trees the command may write, where the host's git there would write that repository's objects, refs and index", p, real)
	}
	if workTreeAbove(fd, real) {
		// git never checks a path in a .git out, but anywhere else in a
		// work tree the host's checkout of a commit of the command's
		// writes what it holds: a config, hooks.
		return fmt.Errorf("%s leads to %s, in a work tree, where the host's git checking out a commit of the command's would write that repository's config and hooks", p, real)
	}
	return nil
}

// gitOverTarget reports whether a .git made in dir would put where a
// .git file or a commondir leads (pol.targets) in a work tree (see
// leadsInRoot).
func (k *call) gitOverTarget(dir string) bool {
	for _, t := range k.pol.targets {
		if policy.Under(t, dir) && !policy.Under(t, path.Join(dir, ".git")) {
			return true
		}
	}
	return false
}

// writableTree reports whether p lies in a tree the command may write.
func (pol *ConnectPolicy) writableTree(p string) bool {
	return !(pol.Guard != nil && pol.Guard.Policy != nil && !pol.Guard.Policy.View(p).Writable || pol.Writable != nil && !pol.Writable(p))
}

// gitLinkAt judges a .git or a commondir other than a directory landing
// at pl by a call other than a write (op: symlink, link, rename): a
// commondir, or a .git that is a regular file, is refused — git writes
// both in place, where the guard judges what they name as they land,
// while a file the command moves or links there it could still change
// through another name or a descriptor; a .git symlink only if target
// (as stored in the link) leads to a directory leadsInRoot takes, which
// is kept from then on (keepTarget). regular: what lands is a file.
func (k *call) gitLinkAt(op string, pl place, regular bool, target string) unix.Errno {
	if pl.name != ".git" && pl.name != "commondir" {
		return 0
	}
	why := ""
	switch {
	case pl.name == "commondir" || regular:
		why = "a .git file or a commondir is made only by writing it, as git does, which the guard judges as it lands"
	default:
		root, e := k.rootFD()
		if e != 0 {
			return e
		}
		if !strings.HasPrefix(target, "/") {
			target = pl.path + "/" + target
		}
		if err := k.pol.leadsInRoot(root, target); err != nil {
			why = "a .git symlink: " + err.Error()
		} else {
			k.pol.keepTarget(root, target)
			return 0
		}
	}
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: pl.full(), Reason: why})
}

// noSymlinkOnWay reports an error if the directory p (absolute), or the
// part of it that exists, is reached in the root through a symlink: the
// host's git would follow it.
func noSymlinkOnWay(root int, p string) error {
	for q := path.Clean(p); ; q = path.Dir(q) {
		fd, err := openat2(root, q, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err == nil {
			unix.Close(fd)
			return nil
		}
		if err == unix.ELOOP {
			return fmt.Errorf("%s is reached through a symlink", q)
		}
		if err != unix.ENOENT || q == "/" {
			return err
		}
	}
}

func (k *call) openFile(dir int, name string, flags int, mode uint32) answer {
	truncate := flags&truncateOnly != 0
	flags &^= truncateOnly
	pl, e := k.at(dir, name)
	for hops := 0; ; hops++ {
		if a, done := k.hop(pl, e, hops, flags); done {
			return a
		}
		if pl.proc {
			defer pl.close()
			return k.procOpen(pl, flags, truncate)
		}
		full := pl.full()
		n, rule := k.judge(pl)
		if k.deferred != nil {
			unix.Close(k.deferred.root)
			k.deferred = nil
		}
		if pl.name == ".git" && !isDirAt(pl) && flags&unix.O_ACCMODE == unix.O_RDWR {
			// Written only through a pipe the guard reads (below), which
			// cannot be read back.
			defer pl.close()
			return refused(k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "write", Target: full, Reason: "a .git file is written only for writing (O_WRONLY), through the guard"}))
		}
		if !truncate && flags&unix.O_ACCMODE == unix.O_WRONLY && (n == policy.GitConfig && pl.name == policy.WorktreeGitdir || pl.name == ".git" && !isDirAt(pl) || pl.name == "commondir" && !blocked(n)) {
			// Its content judged when written (see open).
			if d, e := k.deferTo(pl, full); e == 0 {
				k.deferred = d
				if n == policy.GitConfig {
					n = policy.Free
				}
			}
		}
		if !truncate && flags&(unix.O_ACCMODE|unix.O_APPEND|unix.O_CREAT|unix.O_EXCL) == unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL &&
			n == policy.GitConfig && (gitConfigNames[pl.name] || policy.IsIndexName(pl.name)) {
			// A repository's config or index made whole (cp -a, tar x of
			// a repository): judged when written, as git's own lock file
			// is when renamed (replaceConfig); refused, the file made
			// goes again.
			if d, e := k.deferTo(pl, full); e == 0 {
				d.made, d.max, d.hashSize = true, maxGitConfig, 20
				if policy.IsIndexName(pl.name) {
					d.max, d.hashSize = maxGitFile, k.repoHashSize(pl.dir)
				}
				k.deferred = d
				n = policy.Free
			}
		}
		if n == policy.GitConfig && policy.WrittenEmpty(pl.name) && !truncate && flags&(unix.O_ACCMODE|unix.O_TRUNC) == unix.O_WRONLY|unix.O_TRUNC {
			// git writes an am's options in place, empty when there are
			// none: the open goes through as the emptying it is, on a
			// descriptor that reads, so nothing is written there (a
			// write fails EBADF).
			n, flags = policy.Free, flags&^unix.O_ACCMODE|unix.O_RDONLY
		}
		if flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL && !truncate && !pl.slash && !blocked(n) && k.writable(full) {
			// A file that must be new (tar, git checkout): nothing is
			// followed and nothing that exists is opened, so the kernel's
			// answer is the whole answer.
			defer pl.close()
			a, _ := k.createAt(pl, flags, mode)
			return a
		}
		var st unix.Stat_t
		err := unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case err == unix.ENOENT && flags&unix.O_CREAT != 0 && !truncate:
			if pl.slash {
				pl.close()
				return refused(unix.EISDIR)
			}
			if blocked(n) {
				defer pl.close()
				if pl.isReadOnly() {
					return refused(unix.EROFS) // as the kernel says first
				}
				return refused(k.deny(unix.EACCES, "write", full, rule, n))
			}
			if !k.writable(full) {
				pl.close()
				return refused(k.notWritable("write", full))
			}
			a, opened := k.createAt(pl, flags, mode)
			if opened && (a.errno == unix.EEXIST && flags&unix.O_EXCL == 0 || a.errno == unix.ELOOP && flags&unix.O_NOFOLLOW == 0) {
				continue // made meanwhile: look again
			}
			pl.close()
			return a
		case err != nil:
			pl.close()
			return refused(errnoOf(err))
		case st.Mode&unix.S_IFMT == unix.S_IFLNK && flags&unix.O_NOFOLLOW == 0 && flags&(unix.O_CREAT|unix.O_EXCL) != unix.O_CREAT|unix.O_EXCL:
			if blocked(n) {
				// A protected name that is a symlink (a hook linked to a
				// script): what the host runs is where it leads, which is
				// not written through it (the launch's mounts keep it
				// read-only where they reach).
				defer pl.close()
				return refused(k.deny(unix.EROFS, "write", full, rule, n))
			}
			pl, e = k.followLink(pl)
			continue
		}
		// It exists: a write to it is judged by its name.
		a, again := k.openExisting(pl, &st, full, n, rule, flags, mode, truncate)
		if again {
			continue
		}
		pl.close()
		return a
	}
}

// hop is the start of each step of an open's walk through symlinks:
// done says a is the answer — the error of the step before, too many
// links, or a descriptor's own name (reopened as it is).
func (k *call) hop(pl place, e unix.Errno, hops, flags int) (a answer, done bool) {
	switch {
	case e != 0:
		return refused(e), true
	case hops > maxSymlinks:
		pl.close()
		return refused(unix.ELOOP), true
	case pl.name == "":
		return k.reopen(pl, flags), true
	}
	return answer{}, false
}

// createAt makes the file at pl, judged free, for open(flags, mode): the
// deny entries that apply later, the seal of a directory about to become
// a git directory, then the open itself under the command's umask;
// opened says the answer is the open's own.
func (k *call) createAt(pl place, flags int, mode uint32) (a answer, opened bool) {
	if e := k.makeDeniedLater("write", pl); e != 0 {
		return refused(e), false
	}
	if pl.name == ".git" {
		if e := k.gitFileAlone("write", pl); e != 0 {
			return refused(e), false
		}
	}
	if e := k.sealForMark(pl); e != 0 {
		return refused(e), false
	}
	var fd int
	if e := k.creating(func() (err error) {
		fd, err = k.openAt(pl, flags|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, mode)
		return err
	}); e != 0 {
		return refused(e), true
	}
	return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}, true
}

// openExisting opens the existing file at pl (st) for writing; again:
// it was swapped for a symlink meanwhile, look again.
func (k *call) openExisting(pl place, st *unix.Stat_t, full string, n policy.Name, rule string, flags int, mode uint32, truncate bool) (answer, bool) {
	{
		if blocked(n) {
			return refused(k.deny(unix.EROFS, "write", full, rule, n)), false
		}
		if !k.writable(full) {
			return refused(k.notWritable("write", full)), false
		}
		if flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
			return refused(unix.EEXIST), false
		}
		if _, denied := k.pol.Guard.Later(full); denied && k.onReadOnlyMount(pl) {
			return refused(unix.EROFS), false // a denyWrite file of the launch: its mount says so first
		}
		if e := k.deniedLater("write", full); e != 0 {
			return refused(e), false
		}
		if e := k.linkedElsewhere("write", st, full, false); e != 0 {
			return refused(e), false
		}
		if pl.name == ".git" && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			if e := k.gitFileAlone("write", pl); e != 0 {
				return refused(e), false
			}
		}
		if flags&unix.O_ACCMODE == unix.O_RDWR && k.pol.Guard.Policy != nil && k.pol.Guard.Policy.ReadGuard != "" {
			if e := k.readDenied(pl, full, st); e != 0 {
				return refused(e), false // an open for writing reads too
			}
		}
		kind := st.Mode & unix.S_IFMT
		if truncate && kind != unix.S_IFREG {
			if kind == unix.S_IFDIR {
				return refused(unix.EISDIR), false
			}
			return refused(unix.EINVAL), false
		}
		switch kind {
		case unix.S_IFCHR:
			if unix.Major(st.Rdev) == ttyMajor && unix.Minor(st.Rdev) == 0 {
				return k.controllingTTY(flags), false
			}
			return k.reopenAt(pl, flags, false), false
		case unix.S_IFIFO, unix.S_IFBLK:
			return k.reopenAt(pl, flags, true), false
		}
		var fd int
		e := k.creating(func() (err error) {
			fd, err = k.openAt(pl, flags|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, mode)
			return err
		})
		if e == unix.ELOOP && flags&unix.O_NOFOLLOW == 0 {
			return answer{}, true
		}
		if e != 0 {
			return refused(e), false
		}
		return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}, false
	}
}

// openRead performs an open for reading (the filter sends those only
// when a denyRead entry reaches past what the launch's mounts hide): a
// path a denyRead entry covers now, or a hidden file by another name, is
// refused; anything else is opened for the command as it asked.
func (k *call) openRead(dir int, name string, flags int) answer {
	pl, e := k.at(dir, name)
	for hops := 0; ; hops++ {
		if a, done := k.hop(pl, e, hops, flags); done {
			return a
		}
		if pl.proc {
			defer pl.close()
			return k.procRead(pl, flags)
		}
		full := pl.full()
		var st unix.Stat_t
		if err := unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			pl.close()
			return refused(errnoOf(err))
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK && flags&(unix.O_NOFOLLOW|unix.O_PATH) == 0 {
			pl, e = k.followLink(pl)
			continue
		}
		if e := k.readDenied(pl, full, &st); e != 0 {
			pl.close()
			return refused(e)
		}
		a, again := k.openReadAt(pl, &st, flags)
		if again {
			continue // swapped for a symlink between the stat and the open: look again
		}
		pl.close()
		return a
	}
}

// openReadAt opens the file st at pl for reading; again: it was swapped
// for a symlink meanwhile.
func (k *call) openReadAt(pl place, st *unix.Stat_t, flags int) (answer, bool) {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		if unix.Major(st.Rdev) == ttyMajor && unix.Minor(st.Rdev) == 0 && flags&unix.O_PATH == 0 {
			return k.controllingTTY(flags), false
		}
		return k.reopenAt(pl, flags, false), false
	case unix.S_IFIFO, unix.S_IFBLK:
		if flags&unix.O_PATH == 0 {
			return k.reopenAt(pl, flags, true), false
		}
	}
	fd, err := k.openAt(pl, flags|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP && flags&(unix.O_NOFOLLOW|unix.O_PATH) == 0 {
		return answer{}, true
	}
	if err != nil {
		return refused(errnoOf(err)), false
	}
	return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}, false
}

// readDenied refuses (EACCES) reading full, a file st found at pl (no
// name: a descriptor's): a denyRead entry covers it now, or it is a
// hidden file by another name. A masked credential file is read as its
// mask while the mask's mount is still on it; the host's own file, once
// the host replaced it and the kernel dropped that mount, is refused.
func (k *call) readDenied(pl place, full string, st *unix.Stat_t) unix.Errno {
	if k.pol.MaskedFiles[full] && pl.name != "" && pl.name != "." && mountPoint(pl) && k.isMask(full, st) {
		return 0
	}
	if r, ok := k.pol.Guard.ReadLater(full); ok {
		if r.Glob == nil && r.Path == full && st.Mode&unix.S_IFMT == unix.S_IFDIR && pl.name != "" && pl.name != "." && mountPoint(pl) && k.isMask(full, st) {
			// A hidden directory still under the launch's empty mount,
			// listed by a walk of its parent (go build ./..., tar, grep
			// -r): empty, as without judged reads.
			return 0
		}
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "read", Target: full, Reason: r.Why})
	}
	if k.pol.Guard.Policy != nil {
		// An entry spelled through a symlink denies where the link leads
		// now: the host may have re-aimed it.
		for _, r := range k.pol.Guard.Policy.SpelledReads() {
			if now, ok := k.resolved(r.Path); ok && now != r.Path && policy.Under(full, now) {
				return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "read", Target: full, Reason: r.Why + " (where " + r.Path + " leads now)"})
			}
		}
	}
	// A hidden file with other names found at launch stays one when the
	// other names go: the count of names proves nothing.
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		if why, ok := k.pol.Guard.HiddenInode(policy.FileID{Dev: st.Dev, Ino: st.Ino}); ok {
			return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "read", Target: full, Reason: why + " (a hard link to a hidden file)"})
		}
	}
	return 0
}

// resolved is where p leads now in the command's root, all its symlinks
// followed; ok is false if it leads nowhere.
func (k *call) resolved(p string) (string, bool) {
	root, e := k.rootFD()
	if e != 0 {
		return "", false
	}
	fd, err := openat2(root, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	real, err := k.gs.pathOf(fd)
	return real, err == nil
}

// isMask reports whether the file st is the mask at full: in the
// sandbox's own mount namespace (its init's root), the mask's mount is
// still on full and holds st. Without nested namespaces every process
// sees that namespace; with them, a process's own bind mount of the
// host's file (one the host replaced, which took the mask's mount with
// it) would pass for the mask in its namespace.
func (k *call) isMask(full string, st *unix.Stat_t) bool {
	if !k.pol.NestedNamespaces {
		return true
	}
	init := int(k.pol.initPid.Load())
	if init <= 0 {
		return false
	}
	root, err := unix.Open(k.pol.Proc+"/"+strconv.Itoa(init)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(root)
	dir, err := openat2(root, path.Dir(full), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return false
	}
	there := place{dir: dir, name: path.Base(full)}
	defer there.close()
	var mask unix.Stat_t
	return mountPoint(there) && unix.Fstatat(dir, there.name, &mask, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		mask.Dev == st.Dev && mask.Ino == st.Ino
}

// procRead opens a procfs entry for reading. srt's rights over the
// sandbox's processes exceed the command's only for the init, which is
// undumpable to the command: nothing of the init's (any of its threads)
// is opened; the rest is, as the command asked, no magic link followed.
func (k *call) procRead(pl place, flags int) answer {
	if pl.self == "" {
		parts := strings.Split(strings.TrimPrefix(pl.full(), "/proc/"), "/")
		for i, p := range parts {
			if i > 2 || i == 1 && p != "task" {
				break
			}
			if i == 1 {
				continue
			}
			if n, err := strconv.Atoi(p); err == nil && n > 0 && k.ofInit(n) {
				return refused(unix.EACCES)
			}
		}
	}
	// The command's own magic links (/proc/self/exe) lead where they
	// would for it; nobody else's are followed.
	nofollow := unix.O_NOFOLLOW
	if pl.self != "" {
		nofollow = 0
	}
	fd, err := unix.Openat(pl.dir, pl.name, flags|nofollow|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return refused(errnoOf(err))
	}
	return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}
}

// ofInit reports whether the sandbox's pid n (its procfs numbering) is a
// thread of its init: PID 1, whose thread group id is 1 there.
func (k *call) ofInit(n int) bool {
	if n == 1 {
		return true
	}
	root, e := k.rootFD()
	if e != 0 {
		return true
	}
	fd, err := unix.Openat(root, "proc/"+strconv.Itoa(n)+"/status", unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false // no such process: the open will say so
	}
	defer unix.Close(fd)
	var buf [1024]byte
	m, _ := unix.Read(fd, buf[:])
	tgid, ok := statusField(string(buf[:m]), "Tgid")
	return !ok || tgid == "1"
}

// reopenAt opens the special file at pl through an O_PATH descriptor of
// it (the node itself, whatever replaces the name meanwhile); mayBlock:
// on a thread of its own.
func (k *call) reopenAt(pl place, flags int, mayBlock bool) answer {
	fd, err := k.openAt(pl, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return refused(errnoOf(err))
	}
	return reopenFD(fd, flags, mayBlock)
}

// writableHere refuses (EACCES, or EROFS) a write to the file st that
// the descriptor place pl holds, when it is not a file the sandbox may
// write at its path: srt reopens or changes it through its own copy of
// the descriptor, on whatever mount that holds — a file the caller handed
// the command for reading (its stdin) is on the caller's mount, which the
// sandbox's read-only mounts and Landlock layer never see. In the
// fallback the plan's allowWrite decides (k.writable).
func (k *call) writableHere(pl place, st *unix.Stat_t) unix.Errno {
	if k.pol.Writable != nil || !strings.HasPrefix(pl.path, "/") || !treeKind(st) {
		return 0
	}
	named, ok := k.foundAgain(pl.path, st)
	if !ok {
		return unix.EACCES // not there: a file outside the sandbox's tree
	}
	defer named.close()
	if k.onReadOnlyMount(named) {
		return unix.EROFS
	}
	return 0
}

// treeKind reports whether st is a file of a directory tree (a regular
// file, a directory, a symlink), which has a path to judge, unlike a
// pipe, a socket or an anonymous inode.
func treeKind(st *unix.Stat_t) bool {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFDIR, unix.S_IFLNK:
		return true
	}
	return false
}

// reopen opens the command's own descriptor (by /proc/self/fd/N) anew,
// as the kernel would: what it names, judged by its path.
func (k *call) reopen(pl place, flags int) answer {
	if n, rule := k.pol.Guard.Judge(pl.path); strings.HasPrefix(pl.path, "/") && blocked(n) {
		unix.Close(pl.dir)
		return refused(k.deny(unix.EROFS, "write", pl.path, rule, n))
	}
	var st unix.Stat_t
	if err := unix.Fstat(pl.dir, &st); err != nil {
		unix.Close(pl.dir)
		return refused(errnoOf(err))
	}
	if !strings.HasPrefix(pl.path, "/") && treeKind(&st) {
		unix.Close(pl.dir)
		return refused(unix.EACCES) // a file of a tree, with no path to judge
	}
	if strings.HasPrefix(pl.path, "/") && k.pol.Guard.Policy != nil && k.pol.Guard.Policy.ReadGuard != "" {
		if e := k.readDenied(pl, pl.path, &st); e != 0 {
			unix.Close(pl.dir)
			return refused(e)
		}
	}
	if flags&(unix.O_WRONLY|unix.O_RDWR|unix.O_TRUNC) != 0 {
		e := k.linkedElsewhere("write", &st, pl.path, pl.unlinked)
		if e == 0 && !pl.writesAlready() {
			e = k.writableHere(pl, &st)
		}
		if e == 0 && path.Base(pl.path) == ".git" && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			// A .git file is written only through the pipe of an open
			// by its name (see open).
			e = k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "write", Target: pl.path, Reason: "a .git file is written only when opened by its name, through the guard"})
		}
		if e == 0 && strings.HasPrefix(pl.path, "/") {
			switch n, rule := k.judgeAt(pl); {
			case blocked(n):
				// What names alone cannot tell: a git directory's config
				// or hooks, known by what the directory holds.
				e = k.deny(unix.EROFS, "write", pl.path, rule, n)
			case !k.writable(pl.path):
				// The fallback, which has no read-only mounts.
				e = k.notWritable("write", pl.path)
			default:
				e = k.deniedLater("write", pl.path)
			}
		}
		if e != 0 {
			unix.Close(pl.dir)
			return refused(e)
		}
	}
	kind := st.Mode & unix.S_IFMT
	return reopenFD(pl.dir, flags&^(unix.O_CREAT|unix.O_EXCL), kind == unix.S_IFIFO || kind == unix.S_IFBLK)
}

// reopenFD opens the file of srt's descriptor fd anew with flags, and
// closes fd.
func reopenFD(fd int, flags int, mayBlock bool) answer {
	b := &blockingOpen{fd: fd, flags: flags}
	if mayBlock {
		return answer{fd: -1, cloexec: flags&unix.O_CLOEXEC != 0, open: b}
	}
	nfd, e := b.open()
	return answer{errno: e, fd: nfd, cloexec: flags&unix.O_CLOEXEC != 0}
}

// blockingOpen is an open of srt's O_PATH descriptor fd of a FIFO (or
// block device) that may wait for the other end; release ends the wait
// by opening that other end, without waiting, for a moment.
type blockingOpen struct {
	fd, flags int
	mu        sync.Mutex
	done      bool
}

func (b *blockingOpen) open() (int, unix.Errno) {
	nfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(b.fd), b.flags|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	b.mu.Lock()
	b.done = true
	unix.Close(b.fd)
	b.mu.Unlock()
	return nfd, errnoOf(err)
}

func (b *blockingOpen) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	other := unix.O_WRONLY
	if b.flags&unix.O_ACCMODE != unix.O_RDONLY {
		other = unix.O_RDONLY
	}
	if fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(b.fd), other|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
		unix.Close(fd)
	}
}

// controllingTTY opens what /dev/tty is for the process: its controlling
// terminal, a pty of the sandbox's devpts.
func (k *call) controllingTTY(flags int) answer {
	stat, err := os.ReadFile(k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/stat")
	if err != nil {
		return refused(unix.ESRCH)
	}
	// Fields after the command name, which may hold spaces: state, ppid,
	// pgrp, session, tty_nr.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 5 {
		return refused(unix.ENXIO)
	}
	nr, _ := strconv.ParseUint(fields[4], 10, 32)
	major, minor := (nr>>8)&0xfff, (nr&0xff)|((nr>>12)&0xfff00)
	if nr == 0 || major < ptsMajor || major > ptsMajor+7 {
		return refused(unix.ENXIO)
	}
	root, e := k.rootFD()
	if e != 0 {
		return refused(e)
	}
	pts := "/dev/pts/" + strconv.FormatUint((major-ptsMajor)*256+minor, 10)
	fd, err := openat2(root, pts, &unix.OpenHow{Flags: uint64(flags&^(unix.O_CREAT|unix.O_EXCL|unix.O_TRUNC)) | unix.O_NOCTTY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return refused(errnoOf(err))
	}
	return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}
}

// make performs mkdir or mknod.
func (k *call) make(op seccomp.FileOp, dir int, name string, mode uint32, dev int) unix.Errno {
	pl, e := k.at(dir, name)
	if e != 0 {
		return e
	}
	defer pl.close()
	if e := k.mayMake(op.String(), pl, op == seccomp.FileMkdir); e != 0 {
		return e
	}
	if op == seccomp.FileMkdir && policy.IsMergeProgramDir(pl.name) {
		return k.mergeProgramDir("mkdir", pl)
	}
	if op == seccomp.FileMkdir {
		if n, _ := k.judge(pl); n == policy.HooksDir {
			// A repository's hooks directory is no one else's to write:
			// not by a umask of 0, nor by a default ACL it would inherit
			// (the mode given bounds what one grants), nor through one
			// it would pass on to the hooks the host adds later.
			e := k.creating(func() error { return unix.Mkdirat(pl.dir, pl.name, mode&0o7777&^0o022) })
			if e == 0 {
				k.gs.noteMade(pl)
				if d, err := unix.Openat(pl.dir, pl.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
					unix.Fremovexattr(d, "system.posix_acl_default")
					unix.Close(d)
				}
			}
			return e
		}
		e := k.creating(func() error { return unix.Mkdirat(pl.dir, pl.name, mode&0o7777) })
		if e == 0 {
			k.gs.noteMade(pl)
		}
		return e
	}
	return k.creating(func() error { return unix.Mknodat(pl.dir, pl.name, mode, dev) })
}

// mayMake judges making a name at pl (op names the call in a violation;
// hooksDir: a repository's hooks directory may be made, as mkdir does).
// A name refused gets first what the kernel would say first: EEXIST when
// it exists (mkdir -p goes on), EROFS on a read-only mount.
func (k *call) mayMake(op string, pl place, hooksDir bool) unix.Errno {
	if pl.name == "." || pl.name == "" {
		return unix.EEXIST
	}
	if pl.proc {
		return unix.EACCES
	}
	full := pl.full()
	if n, rule := k.judge(pl); blocked(n) && !(n == policy.HooksDir && hooksDir) {
		var st unix.Stat_t
		if unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			return unix.EEXIST
		}
		if pl.isReadOnly() {
			return unix.EROFS
		}
		return k.deny(unix.EACCES, op, full, rule, n)
	}
	if !k.writable(full) {
		return k.notWritable(op, full)
	}
	if e := k.makeDeniedLater(op, pl); e != 0 {
		return e
	}
	if pl.name == ".git" && k.gitOverTarget(pl.path) {
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: "a .git file or a commondir leads beneath: it would lie in a work tree, where the host's checkout writes"})
	}
	if pl.name == ".git" && op != "mkdir" {
		if e := k.gitFileAlone(op, pl); e != 0 {
			return e
		}
	}
	return k.sealForMark(pl)
}

// onlyGit reports whether dir holds nothing but a .git (and the names
// also), as read now.
func onlyGit(dir int, also ...string) bool {
	names, err := namesAt(dir, ".")
	return err == nil && !slices.ContainsFunc(names, func(n string) bool { return n != ".git" && !slices.Contains(also, n) })
}

// gitFileAlone refuses (EACCES) a .git other than a directory (a file
// naming a git directory, a symlink to one, anything at that name) made
// or written at pl where its directory holds anything else. What lies
// beside it would become the work tree of whatever repository it names,
// whose hooks may lie there (a relative core.hooksPath): written before
// the .git, or while it named another, they were judged without that
// repository. git makes such a file in a directory of its own (a
// worktree, a submodule, a clone); anything written there after is
// judged with the repository it names (hooksLater). The names also
// (a file about to be renamed to .git there) may lie beside it.
func (k *call) gitFileAlone(op string, pl place, also ...string) unix.Errno {
	if onlyGit(pl.dir, also...) {
		return 0
	}
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: pl.full(),
		Reason: "a .git file is made or written only in a directory that holds nothing else: what lies beside it would become the work tree of the repository it names, whose hooks it may hold"})
}

// bind performs a notified bind(fd, addr, len): a Unix socket's path
// makes a name, judged as every other name made (a socket at .bashrc, or
// a marker that makes a directory a git one, is refused); any other
// address (abstract, an autobind, IPv4, IPv6) is bound as srt read it,
// once. Neither may be left to the kernel once checked: another thread
// may change the address, or put another socket at the descriptor, in
// between.
func (k *call) bind() unix.Errno {
	req := k.req
	fd, ptr, n := int(int32(req.Args[0])), uintptr(req.Args[1]), int(uint32(req.Args[2]))
	if n < 2 || n > sockaddrStorage {
		return unix.EINVAL
	}
	addr, e := readBytes(k.pid, ptr, n)
	if e != 0 {
		return e
	}
	sock, e := k.fdOf(fd)
	if e != 0 {
		return e
	}
	defer unix.Close(sock)
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return errnoOf(err) // ENOTSOCK
	}
	if domain == unix.AF_INET || domain == unix.AF_INET6 {
		// A port bound by a socket the command has closed, but srt still
		// holds, is let go first.
		k.pol.sockets.collect()
		if k.pol.HostNamespaces && !k.pol.LocalBinding {
			// On the host's network, Landlock refuses the command every
			// TCP bind without allowLocalBinding; made by srt, the bind
			// must be refused here.
			return k.pol.deny(unix.EACCES, Event{Call: "bind", Target: "AF_INET", Reason: "a socket bound on the host's network may accept connections (allowLocalBinding)"})
		}
	}
	if domain != unix.AF_UNIX || binary.LittleEndian.Uint16(addr) != unix.AF_UNIX || n == 2 || addr[2] == 0 {
		return rawBind(sock, addr)
	}
	// A path: sun_path up to its NUL, or to the address's end.
	if n > unix.SizeofSockaddrUnix {
		return unix.EINVAL
	}
	name := addr[2:]
	if i := slices.Index(name, 0); i >= 0 {
		name = name[:i]
	}
	pl, e := k.at(unix.AT_FDCWD, string(name))
	if e != 0 {
		return e
	}
	defer pl.close()
	if pl.slash {
		return unix.ENOENT // a socket is no directory
	}
	if e := k.mayMake("bind", pl, false); e != 0 {
		if e == unix.EEXIST {
			return unix.EADDRINUSE
		}
		return e
	}
	// The name is bound from inside its directory: this thread's working
	// directory is its own (see guardthreads_linux.go) — unless it shares
	// srt's, when it is srt's for that moment.
	if sharedFS.Load() {
		return k.creating(func() error { return bindShared(sock, pl.dir, pl.name) })
	}
	return k.creating(func() error {
		if err := unix.Fchdir(pl.dir); err != nil {
			return err
		}
		defer unix.Chdir("/")
		return unix.Bind(sock, &unix.SockaddrUnix{Name: pl.name})
	})
}

// sockaddrStorage is the most a socket address may hold.
const sockaddrStorage = 128

func rawBind(sock int, addr []byte) unix.Errno {
	_, _, errno := unix.Syscall(unix.SYS_BIND, uintptr(sock), uintptr(unsafe.Pointer(&addr[0])), uintptr(len(addr)))
	return errno
}

// symlink performs symlink(target, name).
func (k *call) symlink(target string, dir int, name string) unix.Errno {
	if target == "" {
		return unix.ENOENT
	}
	pl, e := k.at(dir, name)
	if e != 0 {
		return e
	}
	defer pl.close()
	if e := k.mayMake("symlink", pl, false); e != 0 {
		return e
	}
	if k.inGitDir(pl) && !symlinkProbe(target, pl) {
		return k.linkInGitDir("symlink", pl)
	}
	if policy.IsMergeProgramDir(pl.name) {
		return k.mergeProgramDir("symlink", pl)
	}
	if e := k.aboveLater("symlink", pl.full(), target); e != 0 {
		return e
	}
	if e := k.gitLinkAt("symlink", pl, false, target); e != 0 {
		return e
	}
	return errnoOf(unix.Symlinkat(target, pl.dir, pl.name))
}

// link performs linkat(dir, old, dir2, name, flags): a new name for a
// protected file is refused as a protected name is.
func (k *call) link(dir int, old string, dir2 int, name string, flags int) unix.Errno {
	if flags&^(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return unix.EINVAL
	}
	var src place
	var e unix.Errno
	switch {
	case old == "" && flags&unix.AT_EMPTY_PATH != 0:
		if dir == unix.AT_FDCWD {
			return unix.ENOENT
		}
		src, e = k.ofDescriptor(dir)
	default:
		src, e = k.at(dir, old)
		for hops := 0; e == 0 && flags&unix.AT_SYMLINK_FOLLOW != 0 && src.name != "" && src.name != "."; hops++ {
			var st unix.Stat_t
			if err := unix.Fstatat(src.dir, src.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
				break
			}
			if hops >= maxSymlinks {
				src.close()
				return unix.ELOOP
			}
			src, e = k.followLink(src)
		}
	}
	if e != 0 {
		return e
	}
	defer src.close()
	if src.name == "." {
		return unix.EPERM // a directory
	}
	if src.proc && src.name != "" {
		return unix.EACCES
	}
	if strings.HasPrefix(src.full(), "/") && !k.writable(src.full()) {
		// The fallback: a new name in a writable tree for a file outside
		// would write it (the namespace sandbox's mounts say EXDEV),
		// whether it is named or a descriptor's.
		return k.notWritable("link", src.full())
	}
	if n, rule := k.judgeAt(src); blocked(n) && strings.HasPrefix(src.full(), "/") {
		return k.deny(unix.EACCES, "link", src.full(), rule, n)
	}
	dst, e := k.at(dir2, name)
	if e != 0 {
		return e
	}
	defer dst.close()
	if e := k.mayMake("link", dst, false); e != 0 {
		return e
	}
	// A second name for a symlink is a symlink made there, whether the
	// symlink is named or a descriptor's (an O_PATH|O_NOFOLLOW one).
	var lst unix.Stat_t
	isLink := unix.Fstatat(src.dir, src.name, &lst, unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) == nil && lst.Mode&unix.S_IFMT == unix.S_IFLNK
	if !isLink {
		if e := k.gitLinkAt("link", dst, true, ""); e != 0 {
			return e
		}
	}
	if isLink {
		defer k.reposChanged() // a symlink made, under another name
		target, err := readlinkat(src.dir, src.name)
		if err != nil {
			return errnoOf(err)
		}
		if k.inGitDir(dst) {
			return k.linkInGitDir("link", dst)
		}
		if policy.IsMergeProgramDir(dst.name) {
			return k.mergeProgramDir("link", dst)
		}
		if e := k.aboveLater("link", dst.full(), target); e != 0 {
			return e
		}
		if e := k.gitLinkAt("link", dst, false, target); e != 0 {
			return e
		}
	}
	if strings.HasPrefix(src.full(), "/") {
		if e := k.deniedLater("link", src.full()); e != 0 {
			return e // a second name would write it
		}
	}
	// A file with one name, given a second here, has both inside the
	// sandbox's reach: writes to it stay allowed (linkedElsewhere). A
	// descriptor's file whose name is gone has one only if none is left
	// (O_TMPFILE): one left is elsewhere.
	var st unix.Stat_t
	var err error
	if src.name == "" { // a descriptor
		if err = unix.Fstat(src.dir, &st); err == nil {
			err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(src.dir), dst.dir, dst.name, unix.AT_SYMLINK_FOLLOW)
		}
	} else if err = unix.Fstatat(src.dir, src.name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		err = unix.Linkat(src.dir, src.name, dst.dir, dst.name, 0)
	}
	if err == nil && (st.Nlink == 0 || st.Nlink == 1 && !src.unlinked) {
		k.gs.linked(st)
	}
	return errnoOf(err)
}

// linkedElsewhere refuses a write to an existing regular file (or a
// change of the metadata of any file but a directory) that has a name
// other than the one it was reached by, unless the guard gave it its
// other names in this run: a hard link made before the run, in a
// writable tree, to a file outside it (~/.bashrc, a denyWrite file,
// another project's) would otherwise write that file, and no name tells
// where the others are. A file reached by a descriptor whose name is gone
// (unlinked) has other names if it has any.
func (k *call) linkedElsewhere(op string, st *unix.Stat_t, full string, unlinked bool) unix.Errno {
	kind := st.Mode & unix.S_IFMT
	others := uint64(st.Nlink)
	if !unlinked && others > 0 {
		others--
	}
	if kind == unix.S_IFDIR || kind != unix.S_IFREG && op == "write" || others == 0 || k.gs.ownLinks[fileID{st.Dev, st.Ino}] {
		return 0
	}
	why := fmt.Sprintf("a file with %d hard links, made before this run: one may lie outside the writable trees", st.Nlink)
	if unlinked {
		why = "a file whose name here is gone, with another made before this run: it may lie outside the writable trees"
	}
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: why})
}

// rename performs renameat2(dir, old, dir2, name, flags). A directory
// moved to where its names would change meaning (into a .git or .claude,
// or as one) is refused with EXDEV, so mv copies it, file by guarded
// file; a repository's config is replaced only by a copy the guard made
// of content that runs nothing.
func (k *call) rename(dir int, old string, dir2 int, name string, flags int) unix.Errno {
	src, e := k.at(dir, old)
	if e != 0 {
		return e
	}
	defer src.close()
	dst, e := k.at(dir2, name)
	if e != 0 {
		return e
	}
	defer dst.close()
	if src.name == "." || dst.name == "." || src.name == "" || dst.name == "" {
		return unix.EBUSY
	}
	if src.proc || dst.proc {
		return unix.EACCES
	}
	if src.isReadOnly() || dst.isReadOnly() {
		return unix.EROFS
	}
	// The kernel refuses to move a mount point of the caller's own mount
	// namespace (a pinned ancestor or symlink): srt is outside it, so
	// the guard asks the same of the sandbox's mounts.
	if mountPoint(src) || mountPoint(dst) {
		return unix.EBUSY
	}
	kindOf := func(p place) (uint32, unix.Errno) {
		var st unix.Stat_t
		if err := unix.Fstatat(p.dir, p.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return 0, errnoOf(err)
		}
		return st.Mode & unix.S_IFMT, 0
	}
	srcKind, e := kindOf(src)
	if e != 0 {
		return e
	}
	if srcKind == unix.S_IFDIR || srcKind == unix.S_IFLNK || flags&unix.RENAME_EXCHANGE != 0 {
		// A directory moved (or exchanged) may bring or take a
		// repository: the repositories around directories are read
		// again after.
		defer k.reposChanged()
	}
	// check judges moving something of kind to p.
	check := func(kind uint32, p place) (policy.Name, unix.Errno) {
		full := p.full()
		n, rule := k.judge(p)
		switch {
		case n == policy.Protected:
			return n, k.deny(unix.EACCES, "rename", full, rule, n)
		case kind == unix.S_IFDIR && n != policy.Free:
			return n, unix.EXDEV
		case kind == unix.S_IFDIR && k.inGitDir(p):
			// Into a git directory known by its marks: copied, each
			// symlink in it is judged (see inGitDir).
			return policy.Context, unix.EXDEV
		case kind == unix.S_IFLNK && k.inGitDir(p):
			return n, k.linkInGitDir("rename", p)
		case (kind == unix.S_IFDIR || kind == unix.S_IFLNK) && policy.IsMergeProgramDir(p.name):
			return n, k.mergeProgramDir("rename", p)
		case n == policy.HooksDir:
			return n, k.deny(unix.EACCES, "rename", full, rule, n)
		case n == policy.GitConfig && (kind != unix.S_IFREG || flags != 0):
			return n, k.deny(unix.EACCES, "rename", full, rule, n)
		case k.targetAbove(full):
			return n, k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "rename", Target: full, Reason: "a .git file or a commondir leads here: what is moved here would lead it to another repository"})
		case p.name == ".git" && k.gitOverTarget(p.path):
			return n, k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "rename", Target: full, Reason: "a .git file or a commondir leads beneath: it would lie in a work tree, where the host's checkout writes"})
		case p.name == ".git" && kind != unix.S_IFDIR:
			var also []string
			for _, q := range []place{src, dst} {
				if q.path == p.path {
					also = append(also, q.name)
				}
			}
			if e := k.gitFileAlone("rename", p, also...); e != 0 {
				return n, e
			}
		}
		if !k.writable(full) {
			return n, k.notWritable("rename", full)
		}
		return n, 0
	}
	n, e := check(srcKind, dst)
	if e != 0 {
		return e
	}
	// A protected name is not moved away either: what the host made
	// there during the run (a hook, a .bashrc) would become the
	// command's to write under another name.
	// Nor is a .claude directory (or one exchanged with it): what the host
	// made in its commands or agents would no longer be judged by name.
	movedAway := []place{src}
	if flags&unix.RENAME_EXCHANGE != 0 {
		movedAway = append(movedAway, dst)
	}
	for _, p := range movedAway {
		if sn, rule := k.judge(p); sn == policy.Protected || sn == policy.HooksDir || sn == policy.GitConfig {
			return k.deny(unix.EACCES, "rename", p.full(), rule, sn)
		}
		if strings.EqualFold(p.name, ".claude") {
			return k.deny(unix.EACCES, "rename", p.full(), p.full(), policy.Protected)
		}
		if e := k.unmarks("rename", p); e != 0 {
			return e
		}
		if p.name == ".git" && k.keepsHooks(p.path) {
			return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "rename", Target: p.full(),
				Reason: "the repository's hooks (core.hooksPath, a hook's script, an included config) are kept by where its .git is"})
		}
	}
	for _, p := range []string{src.full(), dst.full()} {
		if e := k.deniedLater("rename", p); e != 0 {
			return e
		}
	}
	if !k.writable(src.full()) {
		return k.notWritable("rename", src.full())
	}
	var dstKind uint32
	if flags&unix.RENAME_EXCHANGE != 0 {
		if dstKind, e = kindOf(dst); e != 0 {
			return e
		}
		if _, e := check(dstKind, src); e != 0 {
			return e
		}
	}
	if n == policy.GitConfig {
		return k.replaceConfig(src, dst)
	}
	// A deny entry that reaches beneath a directory moved, where it is
	// or where it goes (either way, for an exchange), gets EXDEV: moved
	// whole, a denied path would appear (or a hidden one leave) without a
	// call the guard judges. Copied, every file is judged. So does a
	// directory holding a git directory moved into a work tree: copied,
	// its marks are made one by one, and judged (see judge).
	//
	// So does a directory that holds a repository's kept hooks moved away
	// (a core.hooksPath directory, a hook's script): at their new path
	// nothing keeps them, while the host's git config core.hooksPath
	// would name them again. Copied, each one kept stays where it was.
	if srcKind == unix.S_IFDIR && (k.laterBeneath(src, dst) || gitDirMovedIn(src, dst) || k.hooksBeneath(dst.full()) || k.hooksBeneath(src.full()) || k.namesMovedIn(src, dst.full())) ||
		dstKind == unix.S_IFDIR && (k.laterBeneath(dst, src) || gitDirMovedIn(dst, src) || k.hooksBeneath(src.full()) || k.hooksBeneath(dst.full()) || k.namesMovedIn(dst, src.full())) {
		return unix.EXDEV
	}
	// A symlink put where a literal deny entry's path goes through it
	// would send what the host later writes there (a secret at a
	// denyRead path that did not exist yet) where the command reads it.
	// A .git or commondir moved there that is not a directory: see
	// gitLinkAt.
	for _, m := range []struct {
		kind     uint32
		from, at place
	}{{srcKind, src, dst}, {dstKind, dst, src}} {
		if m.kind == unix.S_IFLNK {
			target, err := readlinkat(m.from.dir, m.from.name)
			if err != nil {
				return errnoOf(err)
			}
			if e := k.aboveLater("rename", m.at.full(), target); e != 0 {
				return e
			}
			if e := k.gitLinkAt("rename", m.at, false, target); e != 0 {
				return e
			}
		} else if m.kind != 0 && m.kind != unix.S_IFDIR {
			if e := k.gitLinkAt("rename", m.at, true, ""); e != 0 {
				return e
			}
		}
	}
	if e := k.sealForMark(dst); e != 0 {
		return e
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		if e := k.sealForMark(src); e != 0 {
			return e
		}
	}
	if e := k.madeOntoLaunch(src, dst, flags); e != 0 {
		return e
	}
	k.gs.noteMovedAway(src)
	if flags&unix.RENAME_EXCHANGE != 0 {
		k.gs.noteMovedAway(dst)
	} else {
		k.gs.noteGone(dst) // replaced, if a directory is there
	}
	return errnoOf(unix.Renameat2(src.dir, src.name, dst.dir, dst.name, uint(flags)))
}

// remove performs a notified unlink, unlinkat or rmdir (flags
// AT_REMOVEDIR). Removing a name is writing it: a name the command may not
// make or write, it may not remove either — a protected name the host has
// (a deeper .claude/settings.json whose deny rules the host's agent
// reads, a hook, a .bashrc), a deny entry's path or a pattern's match,
// and the hooks a repository keeps (hooksLater). What the command may
// write by content — a repository's config, index or todo list — and
// what runs nothing — a hook's sample, an empty hooks directory, a .git
// or .claude that holds nothing — may go: replacing a config with an
// empty one is allowed already. Nor does a .git file's or a commondir's
// target hold a removal back (git worktree remove deletes both ends):
// what is made there next is judged as it is made, and a symlink or a
// rename there is refused (targetAbove). The kernel would refuse a mount point of
// the caller's own namespace; srt is outside the sandbox's, so the guard
// refuses one itself (EBUSY), or it would remove what lies beneath a
// launch's mount.
func (k *call) remove(dir int, name string, flags int) unix.Errno {
	if flags&^unix.AT_REMOVEDIR != 0 {
		return unix.EINVAL
	}
	rmdir := flags&unix.AT_REMOVEDIR != 0
	op := "unlink"
	if rmdir {
		op = "rmdir"
	}
	pl, e := k.at(dir, name)
	if e != 0 {
		return e
	}
	defer pl.close()
	switch {
	case pl.name == "" || pl.proc:
		return unix.EACCES
	case pl.name == "." && rmdir:
		if path.Base(strings.TrimRight(name, "/")) == ".." {
			return unix.ENOTEMPTY
		}
		return unix.EINVAL
	case pl.name == ".":
		return unix.EISDIR
	}
	var at, here unix.Statx_t
	if err := unix.Statx(pl.dir, pl.name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_TYPE|unix.STATX_MNT_ID, &at); err != nil {
		return errnoOf(err)
	}
	kind := uint32(at.Mode) & unix.S_IFMT
	switch {
	case rmdir && kind != unix.S_IFDIR, !rmdir && pl.slash && kind != unix.S_IFDIR:
		return unix.ENOTDIR
	case !rmdir && kind == unix.S_IFDIR:
		return unix.EISDIR
	}
	if unix.Statx(pl.dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &here) != nil || here.Mnt_id != at.Mnt_id {
		return unix.EBUSY // a mount point (see mountPoint)
	}
	full := pl.full()
	// refuse says what the kernel would say first on a read-only mount.
	refuse := func(deny func() unix.Errno) unix.Errno {
		if pl.isReadOnly() {
			return unix.EROFS
		}
		return deny()
	}
	// A shell's startup file or a project's configuration may go: the
	// host runs nothing from a name that is not there, and none can be
	// made again where it would (the directory it was in, or one made
	// again at its path, is the launch's). A repository's are refused.
	if n, rule := k.judge(pl); n == policy.Protected {
		if _, _, anchor := k.pol.Guard.JudgeWhere(full); anchor == "" {
			return refuse(func() unix.Errno { return k.deny(unix.EACCES, op, full, rule, n) })
		}
	}
	if r, ok := k.later(full); ok {
		return refuse(func() unix.Errno { return k.reportLater(op, full, r) })
	}
	if !k.writable(full) {
		return refuse(func() unix.Errno { return k.notWritable(op, full) })
	}
	if e := k.unmarks(op, pl); e != 0 {
		return e
	}
	if rmdir {
		k.gs.noteGone(pl)
	}
	return errnoOf(unix.Unlinkat(pl.dir, pl.name, flags))
}

// laterBeneath reports whether a denyRead or denyWrite entry covers a
// path beneath the directory src, where it is or as it would be at dst.
// Every guarded call of the sandbox waits while this looks (they are made
// on this thread, in turn); a tree too big to look through counts as
// covered.
func (k *call) laterBeneath(src, dst place) bool {
	p := k.pol.Guard.Policy
	if p == nil || len(p.Later) == 0 {
		return false
	}
	from, to := src.full(), dst.full()
	var patterns []policy.LaterRule
	for _, r := range p.Later {
		if r.Glob == nil {
			if r.Path != from && policy.Under(r.Path, from) || r.Path != to && policy.Under(r.Path, to) {
				return true
			}
			continue
		}
		root := r.Root
		if root == "" {
			root = r.Glob.Root()
		}
		if policy.Under(from, root) || policy.Under(root, from) || policy.Under(to, root) || policy.Under(root, to) {
			patterns = append(patterns, r)
		}
	}
	if len(patterns) == 0 {
		return false
	}
	dir, err := unix.Openat(src.dir, src.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	seen := 0
	var walk func(dir int, rel string) bool
	walk = func(dir int, rel string) bool {
		f := os.NewFile(uintptr(dir), rel)
		defer f.Close()
		entries, err := f.ReadDir(-1)
		if err != nil {
			return true
		}
		for _, e := range entries {
			if seen++; seen > maxMovedTree {
				return true
			}
			r := path.Join(rel, e.Name())
			for _, pat := range patterns {
				if pat.CoversPath(from+"/"+r) || pat.CoversPath(to+"/"+r) {
					return true
				}
			}
			// A symlink moved with the directory is one made where it
			// lands.
			if e.Type()&fs.ModeSymlink != 0 {
				target, err := readlinkat(dir, e.Name())
				if _, bad := k.redirects(to+"/"+r, target); err != nil || bad {
					return true
				}
			}
			if e.IsDir() {
				sub, err := unix.Openat(dir, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil || walk(sub, r) {
					return true
				}
			}
		}
		return false
	}
	return walk(dir, ".")
}

// maxMovedTree bounds the entries laterBeneath looks through.
const maxMovedTree = 10_000

// localRepo judges a repository on this machine that a config's new URL
// names (policy.LocalRepo), by its absolute path as the URL spells it,
// resolved in the caller's root: a push there runs its hooks. The way
// there may pass no symlink the command may re-aim (one in a tree it may
// write). Outside every such tree the repository is the host's own.
// Inside one it must be a repository now (a work tree whose .git is a
// directory, or a bare one), whose hooks the guard keeps from the
// command, and one no other work tree holds: there the host's git,
// checking out a commit of the command's, writes what it holds — a
// repository with hooks, in place of one the command removed, or one
// the launch found, which a checkout before the run may have written.
func (k *call) localRepo(p string) error {
	root, e := k.rootFD()
	if e != 0 {
		return e
	}
	return k.pol.localRepoIn(root, p)
}

// localRepoIn is localRepo in the command's root root.
func (pol *ConnectPolicy) localRepoIn(root int, p string) error {
	real, err := pol.resolveFixed(root, p, 0)
	if err != nil {
		return err
	}
	if !pol.writableTree(real) {
		return nil
	}
	fd, err := openat2(root, real, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return fmt.Errorf("no repository there (%v)", err)
	}
	defer unix.Close(fd)
	is := func(name string, kind uint32) bool {
		var st unix.Stat_t
		return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == kind
	}
	if !(is(".git", unix.S_IFDIR) && is(".git/HEAD", unix.S_IFREG) || is("HEAD", unix.S_IFREG) && is("objects", unix.S_IFDIR) && is("refs", unix.S_IFDIR)) {
		return errors.New("not a repository (a work tree with a .git directory, or a bare one) in a tree the command may write: a push there would run whatever hooks it came to hold")
	}
	if gitUp(fd, "..", strings.Count(real, "/")) {
		return errors.New("a repository inside another's work tree: the host's git, checking out a commit of the command's, could write a repository with hooks in its place")
	}
	return nil
}

// resolveFixed resolves the absolute path p in root as the kernel
// would, one name at a time, refusing a symlink on the way that lies in
// a tree the command may write (it could re-aim it later); past the
// first name that does not exist, the rest is read lexically.
func (pol *ConnectPolicy) resolveFixed(root int, p string, hops int) (string, error) {
	real := "/"
	names := strings.Split(p, "/")
	for i, c := range names {
		switch c {
		case "", ".":
			continue
		case "..":
			real = path.Dir(real) // real holds no symlink: ".." is its parent
			continue
		}
		next := path.Join(real, c)
		var st unix.Stat_t
		if err := unix.Fstatat(root, "."+next, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			// Nothing there yet: where it would be, read lexically (the
			// caller refuses it in a tree the command may write).
			return path.Join(append([]string{next}, names[i+1:]...)...), nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			real = next
			continue
		}
		if pol.writableTree(next) {
			return "", fmt.Errorf("%s, on the way, is a symlink the command may re-aim", next)
		}
		if hops >= maxSymlinks {
			return "", unix.ELOOP
		}
		target, err := readlinkat(root, "."+next)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(target, "/") {
			target = real + "/" + target
		}
		if real, err = pol.resolveFixed(root, target, hops+1); err != nil {
			return "", err
		}
	}
	return real, nil
}

// replaceConfig puts a repository's config in place from the file at
// src (git's config.lock): the content is read once, judged, and written
// by the guard to a file of its own, which replaces src's name and then
// the config; the command's own file is unlinked, so no descriptor it
// still holds can change what was judged.
func (k *call) replaceConfig(src, dst place) unix.Errno {
	full := dst.full()
	in, err := unix.Openat(src.dir, src.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return errnoOf(err)
	}
	f := os.NewFile(uintptr(in), "config")
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(in, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return unix.EACCES
	}
	content, err := io.ReadAll(io.LimitReader(f, maxGitFile+1))
	if err != nil {
		return errnoOf(err)
	}
	if gitConfigNames[dst.name] {
		// A config: what the one it replaces holds off the list (the
		// host's core.hooksPath, a credential helper) may stay as it is.
		old, _ := readAt(dst.dir, dst.name, maxGitConfig)
		err = policy.GitConfigSafeBeside(content, old, k.localRepo)
	} else {
		err = k.gitFileSafe(dst.dir, dst.name, content)
	}
	if err == nil && dst.name == "config" {
		err = k.indexesStaySafe(dst.dir, content)
	}
	if err != nil {
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "rename", Target: full, Reason: gitFileIs(dst.name) + " may hold nothing that runs a program: " + err.Error()})
	}
	// The command's file under src's name becomes the guard's copy, which
	// then takes the config's name; never writable by its group or
	// others (see mayChange).
	if e := k.putCopy(src.dir, src.name, content, st.Mode&^0o022); e != 0 {
		return e
	}
	return errnoOf(unix.Renameat(src.dir, src.name, dst.dir, dst.name))
}

// mountPoint reports whether p's name is a mount point: the mount found
// there is not its directory's.
func mountPoint(p place) bool {
	var dir, at unix.Statx_t
	if unix.Statx(p.dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &dir) != nil {
		return false
	}
	if unix.Statx(p.dir, p.name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID, &at) != nil {
		return false
	}
	return dir.Mnt_id != at.Mnt_id
}

// procOpen is an open for writing in a procfs. srt owns the sandbox's
// user namespace, so its rights over every process there exceed the
// command's (the init is undumpable to the command, not to srt): the
// guard opens only what a process may open of its own, named as its own
// (/proc/self/…), through srt's procfs; anything else there is refused.
// A user namespace map, which the kernel reads as its opener's (who must
// be in the namespace or its parent), is opened by the sandbox's init,
// asked over the run's link (allowNestedUserNamespaces only): no call is
// let through to the kernel after the guard read its path.
func (k *call) procOpen(pl place, flags int, truncate bool) answer {
	if k.pol.NestedNamespaces && k.ofInitThread() {
		// The init opening a map for the command (askInitMap): its own
		// call, from memory the command cannot reach (it is undumpable).
		return answer{fd: -1, cont: true}
	}
	if pl.self == "" || truncate {
		return refused(unix.EACCES)
	}
	if k.pol.Writable != nil {
		return refused(unix.EACCES) // the fallback: Landlock leaves /proc read-only
	}
	switch {
	case procSelfMaps[pl.self]:
		// A shell's ">" adds O_CREAT and O_TRUNC, which mean nothing
		// there; the init opens it for writing.
		if !k.pol.NestedNamespaces {
			return refused(unix.EPERM)
		}
		pid, ok := k.sandboxTgid()
		if !ok {
			return refused(unix.ESRCH)
		}
		return answer{fd: -1, cloexec: flags&unix.O_CLOEXEC != 0, askInit: &mapRequest{Pid: pid, File: pl.self}}
	case procSelfFiles[pl.self]:
		fd, err := unix.Openat(pl.dir, pl.name, flags&^(unix.O_CREAT|unix.O_EXCL|unix.O_TRUNC)|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			return refused(errnoOf(err))
		}
		return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}
	}
	return refused(unix.EACCES)
}

// ofInitThread reports whether the call comes from a thread of the
// sandbox's init.
func (k *call) ofInitThread() bool {
	init := int(k.pol.initPid.Load())
	if init <= 0 {
		return false
	}
	var st unix.Stat_t
	return k.pid == init || unix.Stat(k.pol.Proc+"/"+strconv.Itoa(init)+"/task/"+strconv.Itoa(k.pid), &st) == nil
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

// indexBeside reports whether the directory of file (a config, at now in
// the command's root) holds an index, or cannot be looked into.
func (pol *ConnectPolicy) indexBeside(root int, now string) bool {
	dir, err := openat2(root, path.Dir(now), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return true
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	return unix.Fstatat(dir, "index", &st, unix.AT_SYMLINK_NOFOLLOW) != unix.ENOENT
}
