package nsexec

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The threads the supervisor makes file calls on, for the command (each
// sandbox's serving thread, and threads for opens that may block): each
// holds no capability (srt may be root; the command holds none) and,
// where the host lets it unshare one (a container's seccomp profile may
// not: see sharedFS), a filesystem context of its own, whose umask the
// guard sets to the command's for each file it makes. They are locked to their goroutines
// and never end: a thread that ended would take with it the sandboxes
// started from it before it was locked (Pdeathsig follows the thread
// that forked), so the pools are srt's, shared by every sandbox.
var (
	// blockingThreads make opens that may wait (a FIFO without its other
	// end), one each, so none holds up the rest; they grow as needed.
	blockingThreads = newThreadPool()
	// serveThreads each serve one sandbox's seccomp listener, making
	// its guarded calls inline.
	serveThreads = newThreadPool()
)

// threadPool is a pool that grows as needed: a thread is made when none
// is idle.
type threadPool struct {
	jobs    chan func(err error)
	mu      sync.Mutex
	idle    int
	threads int // made so far (they never end)
}

func newThreadPool() *threadPool {
	return &threadPool{jobs: make(chan func(err error))}
}

// run runs f on one of the pool's threads and waits for it; f is not
// run, and run returns why, if the thread could not shed its
// privileges.
func (p *threadPool) run(f func()) error {
	p.mu.Lock()
	if p.idle == 0 {
		p.idle++
		p.threads++
		go p.thread()
	}
	p.idle--
	p.mu.Unlock()
	done := make(chan struct{})
	var failed error
	p.jobs <- func(err error) {
		defer close(done)
		defer func() {
			// A bug in a call made for one command must not end srt and
			// every sandbox it serves: the call fails, loudly.
			if r := recover(); r != nil {
				fmt.Fprintf(os.Stderr, "srt: internal error in a file call made for the command (refused): %v\n%s", r, debug.Stack())
			}
		}()
		if err != nil {
			failed = err
			return
		}
		f()
	}
	<-done
	return failed
}

// tryRun is run for a growing pool, which first makes sure it holds at
// most max threads: false (f not run) when it would need more.
func (p *threadPool) tryRun(max int, f func()) bool {
	p.mu.Lock()
	if p.idle == 0 && p.threads >= max {
		p.mu.Unlock()
		return false
	}
	p.mu.Unlock()
	return p.run(f) == nil
}

func (p *threadPool) thread() {
	runtime.LockOSThread() // for good: see above
	err := unprivilegedThread()
	for f := range p.jobs {
		f(err)
		p.mu.Lock()
		p.idle++
		p.mu.Unlock()
	}
}

// unprivilegedThread gives the calling (locked) thread a filesystem
// context of its own where the host allows it (otherwise the guard makes
// files with the process's shared one: see sharedFS), and drops its
// capabilities, which must succeed.
func unprivilegedThread() error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		if err != unix.EPERM && err != unix.ENOSYS {
			return fmt.Errorf("unshare(CLONE_FS) for a thread of the path guard: %w", err)
		}
		sharedFS.Store(true)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData // every set empty
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: dropping the capabilities of a thread of the path guard: %w", err)
	}
	return nil
}

// cpuPin holds a guarded call's caller and the serving thread on the
// CPU the serving thread runs on while a descriptor is handed over
// (answerGuard). SECCOMP_IOCTL_NOTIF_ADDFD wakes the caller with an
// ordinary wake-up while the serving thread still runs, so the
// scheduler sends the caller to another CPU, and then the serving
// thread, woken when the caller has installed the descriptor, back to
// its own: two cross-CPU wake-ups for every file opened, each costing
// tens of microseconds where that CPU is an idle vCPU of a VM (the
// common host of agent farms), where a plain answer with
// SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP costs none. Held on one CPU, the
// caller runs where the serving thread sleeps. The caller's own mask
// is put back as soon as the descriptor is in, unless the command
// changed it meanwhile; a caller whose mask leaves out this CPU is not
// moved (its mask is never widened), nor is one srt may not move.
type cpuPin struct {
	tid          int
	cpu          int
	caller, self unix.CPUSet
	held         bool
}

// pinCPU holds tid, a thread waiting for its guarded call's answer,
// and the calling thread on the calling thread's CPU (best effort).
func pinCPU(tid int) (p cpuPin) {
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return p
	}
	if unix.SchedGetaffinity(tid, &p.caller) != nil || !p.caller.IsSet(int(cpu)) {
		return p // not ours to move, or not here
	}
	if unix.SchedGetaffinity(0, &p.self) != nil {
		return p
	}
	var one unix.CPUSet
	one.Set(int(cpu))
	if unix.SchedSetaffinity(0, &one) != nil {
		return p
	}
	if unix.SchedSetaffinity(tid, &one) != nil {
		unix.SchedSetaffinity(0, &p.self)
		return p
	}
	p.tid, p.cpu, p.held = tid, int(cpu), true
	return p
}

// release puts both threads' masks back: the caller's only if it is
// still the one pinCPU set (the command may have set another since).
func (p *cpuPin) release() {
	if !p.held {
		return
	}
	var now unix.CPUSet
	if unix.SchedGetaffinity(p.tid, &now) == nil && now.Count() == 1 && now.IsSet(p.cpu) {
		unix.SchedSetaffinity(p.tid, &p.caller)
	}
	unix.SchedSetaffinity(0, &p.self)
}

// spawnJobs are run on srt's spawn thread, which starts every sandbox's
// first process (the init, the fallback's reaper) with a parent-death
// signal. That signal follows the thread that forked, not the process:
// started from the caller's thread, a sandbox would die with it (a
// library user's goroutine that locks its thread and returns ends the
// thread). The spawn thread is locked for good and never ends, so the
// signal comes only when srt itself does.
var spawnJobs = make(chan func())

var spawnOnce sync.Once

// onSpawnThread runs f on the spawn thread and waits for it.
func onSpawnThread(f func()) {
	spawnOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // for good: see above
			for job := range spawnJobs {
				job()
			}
		}()
	})
	done := make(chan struct{})
	spawnJobs <- func() { defer close(done); f() }
	<-done
}
