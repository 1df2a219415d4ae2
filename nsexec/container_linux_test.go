package nsexec

import (
	"os"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestParseFdinfo(t *testing.T) {
	for _, c := range []struct {
		in       string
		flags    int
		ino, mnt uint64
		ok       bool
	}{
		{"pos:\t0\nflags:\t0100002\nmnt_id:\t31\nino:\t1234\n", 0o100002, 1234, 31, true},
		{"pos:\t0\nflags:\t02000000\nmnt_id:\t7\nino:\t9\ntfd: 1\n", 0o2000000, 9, 7, true},
		{"pos:\t0\nflags:\t0100002\nmnt_id:\t31\n", 0, 0, 0, false}, // no ino (an old kernel)
		{"flags:\t9\nmnt_id:\t31\nino:\t1\n", 0, 0, 0, false},       // not octal
		{"flags:\t0\nmnt_id:\tx\nino:\t1\n", 0, 0, 0, false},        // not a number
		{"", 0, 0, 0, false},
	} {
		flags, ino, mnt, ok := parseFdinfo(c.in)
		if ok != c.ok || (ok && (flags != c.flags || ino != c.ino || mnt != c.mnt)) {
			t.Errorf("parseFdinfo(%q) = %o %d %d %v", c.in, flags, ino, mnt, ok)
		}
	}
}

func TestSocketInode(t *testing.T) {
	for in, want := range map[string]uint64{"socket:[42]": 42, "socket:[18446744073709551615]": 1<<64 - 1} {
		if got, ok := socketInode(in); !ok || got != want {
			t.Errorf("socketInode(%q) = %d %v", in, got, ok)
		}
	}
	for _, in := range []string{"pipe:[42]", "socket:[x]", "socket:[42", "/tmp/socket:[1]", "socket:[]", "anon_inode:[eventfd]"} {
		if _, ok := socketInode(in); ok {
			t.Errorf("socketInode(%q) took it", in)
		}
	}
}

// The ways the guard serves where a container refuses its usual calls,
// tried on this process: they give what the usual ones give.
func TestContainerWays(t *testing.T) {
	// The command's memory through /proc/PID/mem.
	src := []byte("a string in memory\x00")
	buf := make([]byte, len(src))
	fd, err := unix.Open("/proc/"+strconv.Itoa(os.Getpid())+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no /proc/self/mem here: %v", err)
	}
	unix.Close(fd)
	if n, err := readMemory(os.Getpid(), uintptr(unsafe.Pointer(&src[0])), buf); err != nil || n != len(src) || string(buf) != string(src) {
		t.Errorf("readMemory: %d %v %q", n, err, buf)
	}
	// A descriptor through /proc, with its flags.
	f, err := os.OpenFile(t.TempDir()+"/f", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, flags, e := procDescriptor("/proc", os.Getpid(), int(f.Fd()), nil)
	if e != 0 {
		t.Fatalf("procDescriptor: %v", e)
	}
	defer unix.Close(got)
	if flags&unix.O_ACCMODE != unix.O_WRONLY || flags&unix.O_APPEND == 0 {
		t.Errorf("flags %o, want O_WRONLY|O_APPEND", flags)
	}
	var a, b unix.Stat_t
	unix.Fstat(got, &a)
	unix.Fstat(int(f.Fd()), &b)
	if a.Ino != b.Ino || a.Dev != b.Dev {
		t.Error("procDescriptor took another file")
	}
	if _, _, e := procDescriptor("/proc", os.Getpid(), 999999, nil); e != unix.EBADF {
		t.Errorf("a descriptor not open: %v, want EBADF", e)
	}
	// A socket srt did not make is not taken; one it made is.
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	own := newOwnSockets("/proc")
	defer own.close()
	if _, _, e := procDescriptor("/proc", os.Getpid(), pair[0], own); e != unix.EPERM {
		t.Errorf("a socket srt did not make: %v, want EPERM", e)
	}
	s, e := own.make(unix.AF_INET, unix.SOCK_STREAM, 0)
	if e != 0 {
		t.Fatal(e)
	}
	defer unix.Close(s)
	dup, _, e := procDescriptor("/proc", os.Getpid(), s, own)
	if e != 0 {
		t.Fatalf("a socket srt made: %v", e)
	}
	unix.Fstat(dup, &a)
	unix.Fstat(s, &b)
	if a.Ino != b.Ino {
		t.Error("the socket taken is another")
	}
	own.release(dup)
	unix.Close(dup)
	if _, _, e := procDescriptor("/proc", os.Getpid(), s, own); e != unix.EPERM {
		t.Errorf("a released socket was still taken: %v", e)
	}
}

// A kept socket that no other process holds is let go when srt looks,
// unless it is on its way to the command.
func TestOwnSocketsCollect(t *testing.T) {
	own := newOwnSockets("/proc")
	defer own.close()
	s, e := own.make(unix.AF_INET, unix.SOCK_STREAM, 0)
	if e != 0 {
		t.Fatal(e)
	}
	var st unix.Stat_t
	unix.Fstat(s, &st)
	unix.Close(s)
	own.collect()
	fd, ok := own.dup(st.Ino)
	if !ok {
		t.Fatal("a fresh socket was let go")
	}
	unix.Close(fd)
	defer func(d time.Duration) { freshSocket = d }(freshSocket)
	freshSocket = 0
	own.collect()
	if fd, ok := own.dup(st.Ino); ok {
		unix.Close(fd)
		t.Error("a socket no process holds was kept")
	}
}
