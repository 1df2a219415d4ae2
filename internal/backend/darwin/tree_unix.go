//go:build unix

package darwin

import (
	"sync"
	"syscall"
	"time"
)

// A macOS run's whole tree. There is no PID namespace and no subreaper:
// a process that leaves the command's process group (setsid, a daemon)
// is not killed with it, and once its parent is gone it is launchd's
// child, unknown to the run. So srt, outside the sandbox, watches the
// process table while the run lives and keeps every descendant of the
// keeper it sees; at the run's end it stops them all, looks again for
// their children until no new one appears (a stopped process forks no
// more), and kills them. A process that leaves the tree between two looks
// (a double fork whose middle process exits within one interval) still
// escapes; the enforcement report says so.

// procEntry is a process of the table: its parent, and when it started
// (a pid seen again with another start is another process).
type procEntry struct {
	pid, ppid int
	start     int64
}

// treeWatch follows the tree under one keeper.
type treeWatch struct {
	list func() ([]procEntry, error)
	root int

	mu   sync.Mutex
	seen map[int]int64 // pid → start
	// rootStart is the keeper's start, once seen; rootGone: it has been
	// seen gone (its pid may be another process's now).
	rootStart int64
	rootSeen  bool
	rootGone  bool
	done      chan struct{}
	once      sync.Once
}

// newTreeWatch starts following the tree under root, which must be
// alive: its start is taken now, so that its pid, once another
// process's, is not walked from.
func newTreeWatch(list func() ([]procEntry, error), root int) *treeWatch {
	w := &treeWatch{list: list, root: root, seen: map[int]int64{}, done: make(chan struct{})}
	w.scan()
	return w
}

// run looks at the table until the run ends: often at first, when most
// commands start what they start, then once a second.
func (w *treeWatch) run() {
	for i := 0; ; i++ {
		interval := 100 * time.Millisecond
		if i > 50 {
			interval = time.Second
		}
		select {
		case <-w.done:
			return
		case <-time.After(interval):
			w.scan()
		}
	}
}

// scan adds every descendant of the keeper and of what was seen before,
// and returns those that are new.
func (w *treeWatch) scan() []int {
	all, err := w.list()
	if err != nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	children := map[int][]procEntry{}
	alive := map[int]int64{}
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p)
		alive[p.pid] = p.start
	}
	// What was seen and has gone, or is another process now, is dropped.
	for pid, start := range w.seen {
		if s, ok := alive[pid]; !ok || s != start {
			delete(w.seen, pid)
		}
	}
	var queue []int
	if start, ok := alive[w.root]; ok && !w.rootGone && (!w.rootSeen || start == w.rootStart) {
		w.rootStart, w.rootSeen = start, true
		queue = append(queue, w.root)
	} else {
		w.rootGone = true
	}
	for pid := range w.seen {
		queue = append(queue, pid)
	}
	var fresh []int
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if _, ok := w.seen[c.pid]; ok || c.pid == w.root {
				continue
			}
			w.seen[c.pid] = c.start
			fresh = append(fresh, c.pid)
			queue = append(queue, c.pid)
		}
	}
	return fresh
}

// kill ends the watch and every process of the tree it knows: all are
// stopped, their children looked for until none is new, then all killed.
func (w *treeWatch) kill() {
	w.once.Do(func() { close(w.done) })
	w.scan()
	w.signal(syscall.SIGSTOP)
	for i := 0; i < 10 && len(w.scan()) > 0; i++ {
		w.signal(syscall.SIGSTOP)
	}
	w.signal(syscall.SIGKILL)
}

// signal sends s to every process seen (each still itself at the scan
// just before).
func (w *treeWatch) signal(s syscall.Signal) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for pid := range w.seen {
		syscall.Kill(pid, s)
	}
}
