package nsexec

import (
	"errors"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/srt-go/srt/pathguard"
	"golang.org/x/sys/unix"
)

// The path guard: deferred writes, whose content is judged when the
// command closes them (a .git file, a commondir, a worktree's gitdir, a
// repository's config or index made whole by a copy).

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
		pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "write", Target: d.target, Reason: pathguard.FileIs(d.name) + ": " + err.Error()})
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
	d := &deferredWrite{name: pl.name, target: full, root: r, max: 1 << 16, gs: k.gs}
	switch {
	case pathguard.IsConfigName(pl.name):
		d.remotes = k.launchRemotes(pl.dir, pl.path)
	case pl.name == ".git":
		d.remotes = k.treeRemotes(pl.dir, pl.path)
	}
	return d, 0
}

// isDirAt reports whether the name at pl is a directory (not followed).
func isDirAt(pl place) bool {
	var st unix.Stat_t
	return unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// deferredWrite is an open the guard made through a pipe (see open):
// what the command writes is judged when the pipe closes.
type deferredWrite struct {
	name   string // pathguard.WorktreeGitdir, ".git", "commondir", a config's or an index's
	target string
	// max is the most content judged (more is refused); hashSize, the
	// repository's object hash size an index is read with; made: the
	// open made the file (O_EXCL), which goes again if refused.
	max      int
	hashSize int
	made     bool
	root     int // the command's root: srt's own copy
	// remotes: where the repository went at launch, for a config (its
	// own) or a .git (its work tree's), kept by gs (see launchRemotes).
	remotes *pathguard.Remotes
	gs      *guardState
	file    int // srt's descriptor of the file
	r       int // the pipe's end srt reads
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
		if len(d.content) <= d.max {
			// One byte past the most tells content too big to judge.
			d.content = append(d.content, buf[:min(n, d.max+1-len(d.content))]...)
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
	case len(content) > d.max:
		return errors.New("bigger than the guard judges")
	case pathguard.IsConfigName(d.name):
		if err := pathguard.GitConfigSafeBeside(content, nil, func(p string) error { return pol.localRepoIn(d.root, p) }); err != nil {
			return err
		}
		if pathguard.HashSizeOf(content) != pathguard.HashSizeOf(nil) && pol.indexBeside(d.root, now) {
			return errors.New("it changes the object format of a repository that has an index (which git would then read another way)")
		}
		if d.remotes != nil {
			return d.remotes.Kept(content)
		}
		return nil
	case pathguard.IsIndexName(d.name):
		if d.hashSize == 0 {
			return errors.New("the repository's object format cannot be told")
		}
		return pathguard.GitFileSafe(d.name, content, d.hashSize)
	}
	switch d.name {
	case pathguard.WorktreeGitdir:
		return worktreeSafe(pol, d.root, content)
	case "commondir":
		// It must lead, as git reads it, to a directory the guard can
		// read too (no /proc/self/root, which git follows to the host's
		// root and the guard does not).
		v, _, _ := strings.Cut(strings.TrimRight(string(content), "\r\n"), "\x00")
		if !strings.HasPrefix(v, "/") {
			v = path.Dir(now) + "/" + v
		}
		if err := pol.rootDecider(d.root).LeadsIn(v); err != nil {
			return err
		}
		pol.keepTarget(d.root, v)
		return nil
	}
	if path.Base(now) != ".git" {
		return nil // moved to another name: judged again if moved back (rename)
	}
	target, ok := pathguard.GitFileTarget(path.Dir(now), content)
	if !ok {
		return errors.New(`not "gitdir: " and a path, as git writes it`)
	}
	if err := pol.rootDecider(d.root).LeadsIn(target); err != nil {
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
	if !treeRepos.OnlyGit(pathguard.Dir(dir)) {
		return errors.New("its directory holds more than it: what lies beside it would become the work tree of the repository it names")
	}
	if d.remotes != nil {
		// The work tree's repository existed at launch: the git
		// directory named now keeps where it went.
		gd, err := openat2(d.root, target, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			return err
		}
		defer unix.Close(gd)
		return d.gs.inheritRemotes(d.remotes, gd, target)
	}
	return nil
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
