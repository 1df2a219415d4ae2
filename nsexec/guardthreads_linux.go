package nsexec

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	"golang.org/x/sys/unix"
)

// The threads the supervisor makes file calls on, for the command (each
// sandbox's serving thread, and threads for opens that may block): each
// holds no capability (srt may be root; the command holds none) and has
// a filesystem context of its own, whose umask the guard sets to the
// command's for each file it makes. They are locked to their goroutines
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
	jobs    chan func(ok bool)
	mu      sync.Mutex
	idle    int
	threads int // made so far (they never end)
}

func newThreadPool() *threadPool {
	return &threadPool{jobs: make(chan func(ok bool))}
}

// run runs f on one of the pool's threads and waits for it; f is not
// run (the call fails) if the thread could not shed its privileges.
func (p *threadPool) run(f func()) {
	p.mu.Lock()
	if p.idle == 0 {
		p.idle++
		p.threads++
		go p.thread()
	}
	p.idle--
	p.mu.Unlock()
	done := make(chan struct{})
	p.jobs <- func(ok bool) {
		defer close(done)
		defer func() {
			// A bug in a call made for one command must not end srt and
			// every sandbox it serves: the call fails, loudly.
			if r := recover(); r != nil {
				fmt.Fprintf(os.Stderr, "srt: internal error in a file call made for the command (refused): %v\n%s", r, debug.Stack())
			}
		}()
		if ok {
			f()
		}
	}
	<-done
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
	p.run(f)
	return true
}

func (p *threadPool) thread() {
	runtime.LockOSThread() // for good: see above
	ok := unprivilegedThread() == nil
	for f := range p.jobs {
		f(ok)
		p.mu.Lock()
		p.idle++
		p.mu.Unlock()
	}
}

// unprivilegedThread gives the calling (locked) thread a filesystem
// context of its own and drops its capabilities.
func unprivilegedThread() error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData // every set empty
	return unix.Capset(&hdr, &data[0])
}
