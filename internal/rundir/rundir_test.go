//go:build linux

package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/testenv"
	"golang.org/x/sys/unix"
)

// What a command can leave in its TMPDIR to make it undeletable — a
// directory of mode 000, one without write permission, a tree deeper than
// descriptors allow — goes with the run dir; a symlink in it is removed,
// never followed.
func TestRemoveTreeTakesEverything(t *testing.T) {
	bothOpeners(t, func(t *testing.T) { testRemoveTree(t) })
}

// bothOpeners runs f with each way of opening a directory: Linux's,
// through an O_PATH descriptor, and the one macOS uses, by name.
func bothOpeners(t *testing.T, f func(*testing.T)) {
	for _, o := range []struct {
		name string
		open func(int, string, func(*unix.Stat_t) error, bool) (int, error)
	}{{"pinned", openDirPinned}, {"byName", openDirByName}} {
		t.Run(o.name, func(t *testing.T) {
			saved := openDir
			openDir = o.open
			defer func() { openDir = saved }()
			f(t)
		})
	}
}

func testRemoveTree(t *testing.T) {
	testenv.BothUsers(t, nil, func(t *testing.T) {
		root := t.TempDir()
		outside := filepath.Join(root, "outside")
		os.MkdirAll(filepath.Join(outside, "locked"), 0o755)
		os.WriteFile(filepath.Join(outside, "locked", "keep"), []byte("KEEP"), 0o644)
		os.Chmod(filepath.Join(outside, "locked"), 0o500)
		t.Cleanup(func() { os.Chmod(filepath.Join(outside, "locked"), 0o755) })
		run := filepath.Join(root, "run-x")
		for _, d := range []string{"tmp/a/b", "tmp/noperm/x", "tmp/ro/y"} {
			os.MkdirAll(filepath.Join(run, d), 0o755)
		}
		os.WriteFile(filepath.Join(run, "tmp/a/b/f"), nil, 0o000)
		os.WriteFile(filepath.Join(run, "tmp/ro/y/g"), nil, 0o644)
		os.Symlink(filepath.Join(outside, "locked"), filepath.Join(run, "tmp/link"))
		os.Symlink(filepath.Join(outside, "locked", "keep"), filepath.Join(run, "tmp/ro/filelink"))
		deep := filepath.Join(run, "tmp")
		// 300 levels: past maxDepth, and past PATH_MAX for the whole path.
		fd, err := unix.Open(deep, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 300; i++ {
			name := strings.Repeat("d", 20)
			if err := unix.Mkdirat(fd, name, 0o755); err != nil {
				t.Fatal(err)
			}
			next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			unix.Close(fd)
			fd = next
		}
		unix.Close(fd)
		os.Chmod(filepath.Join(run, "tmp/ro"), 0o500)
		os.Chmod(filepath.Join(run, "tmp/noperm"), 0o000)
		os.Chmod(filepath.Join(run, "tmp/a"), 0o000)
		// The walk itself: os.RemoveAll, which RemoveTree tries first,
		// takes all of this as root.
		if err := removeWalk(run); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(run); err == nil {
			t.Fatalf("%s is still there", run)
		}
		if data, err := os.ReadFile(filepath.Join(outside, "locked", "keep")); err != nil || string(data) != "KEEP" {
			t.Errorf("a file behind a symlink was touched: %q, %v", data, err)
		}
		if fi, _ := os.Stat(filepath.Join(outside, "locked")); fi == nil || fi.Mode().Perm() != 0o500 {
			t.Errorf("the mode of a directory behind a symlink changed: %v", fi)
		}
	})
}

// A later run removes every stale run dir — one whose srt is gone, with
// its lock file or without, whatever is inside — and no live one.
func TestRuntimeDirSweepsStale(t *testing.T) {
	bothOpeners(t, testSweep)
}

func testSweep(t *testing.T) {
	testenv.BothUsers(t, nil, func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		live, liveLock, err := New()
		if err != nil {
			t.Fatal(err)
		}
		defer liveLock.Close()
		base := filepath.Dir(live)
		mk := func(name string) string {
			d := filepath.Join(base, name)
			os.MkdirAll(filepath.Join(d, "tmp", "x"), 0o755)
			os.Chmod(filepath.Join(d, "tmp", "x"), 0o000)
			return d
		}
		noLock := mk("run-nolock")
		oldStale := mk("run-oldstale")
		os.WriteFile(filepath.Join(oldStale, "lock"), nil, 0o600)
		oldLive := mk("run-oldlive")
		f, err := os.OpenFile(filepath.Join(oldLive, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		unreadable := mk("run-unreadable")
		os.Chmod(unreadable, 0o000)
		other := mk("not-a-run")
		// Made by an srt that died before renaming it, and one being made.
		oldNew := mk("new-old")
		past := time.Now().Add(-2 * NewDirAge)
		os.Chtimes(oldNew, past, past)
		freshNew := mk("new-fresh")
		// A lock on the base, as a command of the same user could take
		// one, holds up nothing.
		baseLock, err := os.Open(base)
		if err != nil {
			t.Fatal(err)
		}
		defer baseLock.Close()
		if err := unix.Flock(int(baseLock.Fd()), unix.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		dir, lock, err := New()
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Close()
		if !strings.HasPrefix(filepath.Base(dir), "run-") {
			t.Errorf("the new run dir is %s", dir)
		}
		for _, d := range []string{noLock, oldStale, unreadable, oldNew} {
			if _, err := os.Lstat(d); err == nil {
				t.Errorf("stale %s is still there", d)
			}
		}
		for _, d := range []string{live, oldLive, dir, other, freshNew} {
			if _, err := os.Lstat(d); err != nil {
				t.Errorf("%s was removed: %v", d, err)
			}
		}
		os.Chmod(filepath.Join(other, "tmp", "x"), 0o755)
		os.Chmod(filepath.Join(oldLive, "tmp", "x"), 0o755)
		os.Chmod(filepath.Join(freshNew, "tmp", "x"), 0o755)
	})
}

// The per-user base is this user's private directory: a symlink or a
// directory of another user in its place is refused, a mode widened or
// emptied by a command is set back to 0700.
func TestPrivateBase(t *testing.T) {
	bothOpeners(t, func(t *testing.T) {
		testenv.BothUsers(t, nil, func(t *testing.T) {
			root := t.TempDir()
			base := filepath.Join(root, "base")
			for _, mode := range []os.FileMode{0o755, 0o000, 0o1777} {
				os.Mkdir(base, 0o700)
				os.Chmod(base, mode)
				f, err := openPrivateDir(base)
				if err != nil {
					t.Fatalf("mode %o: %v", mode, err)
				}
				f.Close()
				if fi, _ := os.Lstat(base); fi == nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("mode %o: now %v", mode, fi)
				}
			}
			os.Remove(base)
			elsewhere := filepath.Join(root, "elsewhere")
			os.Mkdir(elsewhere, 0o755)
			os.Symlink(elsewhere, base)
			if f, err := openPrivateDir(base); err == nil {
				f.Close()
				t.Error("a symlink is taken for the base")
			}
			if fi, _ := os.Stat(elsewhere); fi == nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("the symlink's target was changed: %v", fi)
			}
			if os.Getuid() == 0 {
				other := filepath.Join(root, "other")
				os.Mkdir(other, 0o755)
				os.Chown(other, 65534, 65534)
				if f, err := openPrivateDir(other); err == nil {
					f.Close()
					t.Error("another user's directory is taken for the base")
				}
			}
		})
	})
}

// A TMPDIR behind a symlink gives run dirs named by their real path.
func TestRealPath(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", link)
	dir, lock, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if want := filepath.Join(real, fmt.Sprintf("srt-%d", os.Getuid())); filepath.Dir(dir) != want {
		t.Errorf("run dir %s, want one in %s", dir, want)
	}
}

// A process that may rename entries where the base lies (another run
// allowed to write there) swaps a stale run dir for a symlink to a file
// outside, and the base itself for a symlink to a directory outside,
// while later runs sweep: nothing outside is changed or removed.
func TestSweepThroughSwaps(t *testing.T) {
	testenv.BothUsers(t, nil, func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		dir, lock, err := New()
		if err != nil {
			t.Fatal(err)
		}
		lock.Close()
		base := filepath.Dir(dir)
		outside := t.TempDir()
		victim := filepath.Join(outside, "victim")
		os.WriteFile(victim, []byte("V"), 0o644)
		precious := filepath.Join(outside, "elsewhere", "run-zz", "precious")
		os.MkdirAll(filepath.Dir(precious), 0o755)
		os.WriteFile(precious, []byte("P"), 0o644)
		done := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stale := filepath.Join(base, fmt.Sprintf("run-a%d", i))
				link := filepath.Join(tmp, fmt.Sprintf("link%d", i))
				for {
					select {
					case <-done:
						return
					default:
					}
					os.Mkdir(stale, 0o000)
					os.Remove(link)
					os.Symlink(victim, link)
					unix.Renameat2(unix.AT_FDCWD, link, unix.AT_FDCWD, stale, unix.RENAME_EXCHANGE)
					if i == 0 {
						// The base itself, for a moment.
						other := filepath.Join(tmp, "base-link")
						os.Remove(other)
						os.Symlink(filepath.Join(outside, "elsewhere"), other)
						unix.Renameat2(unix.AT_FDCWD, other, unix.AT_FDCWD, base, unix.RENAME_EXCHANGE)
						unix.Renameat2(unix.AT_FDCWD, other, unix.AT_FDCWD, base, unix.RENAME_EXCHANGE)
					}
				}
			}()
		}
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if d, l, err := New(); err == nil {
				l.Close()
				os.RemoveAll(d)
			}
		}
		close(done)
		wg.Wait()
		if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("a file outside was changed: %v %v", fi.Mode(), err)
		}
		if _, err := os.Stat(precious); err != nil {
			t.Errorf("a directory outside was removed: %v", err)
		}
		for i := 0; i < 4; i++ {
			os.Chmod(filepath.Join(base, fmt.Sprintf("run-a%d", i)), 0o700)
		}
	})
}
