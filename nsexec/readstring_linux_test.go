package nsexec

import (
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readString reads a path from another process's memory: whole, across
// pages, up to a string that ends just before an unmapped page, and no
// further than max.
func TestReadString(t *testing.T) {
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 3*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Syscall(unix.SYS_MUNMAP, uintptr(unsafe.Pointer(&mem[0])), uintptr(2*page), 0)
	// The third page unmapped (unix.Munmap takes only whole mappings).
	if _, _, e := unix.Syscall(unix.SYS_MUNMAP, uintptr(unsafe.Pointer(&mem[2*page])), uintptr(page), 0); e != 0 {
		t.Fatal(e)
	}
	mem = mem[:2*page]
	put := func(at int, s string) uintptr {
		copy(mem[at:], s)
		if at+len(s) < len(mem) {
			mem[at+len(s)] = 0
		}
		return uintptr(unsafe.Pointer(&mem[at]))
	}
	pid := os.Getpid()
	long := strings.Repeat("d/", 900) + "f" // 1,801 bytes
	for _, tc := range []struct {
		name string
		at   int
		s    string
		max  int
		want unix.Errno
	}{
		{"short", 0, "/tmp/x", unix.PathMax, 0},
		{"empty", 100, "", unix.PathMax, 0},
		{"across a page", page - 3, "/a/b/c/d", unix.PathMax, 0},
		{"long, across a page", page - 1000, long, unix.PathMax, 0},
		{"ends before an unmapped page", 2*page - 7, "/a/b/c", unix.PathMax, 0},
		{"runs into an unmapped page", 2*page - 6, "abcdef", unix.PathMax, unix.EFAULT},
		{"longer than max", 0, long, 1000, unix.ENAMETOOLONG},
		{"exactly max with its NUL", 0, long[:999], 1000, 0},
	} {
		addr := put(tc.at, tc.s)
		got, e := readString(pid, addr, tc.max)
		if e != tc.want || (e == 0 && got != tc.s) {
			t.Errorf("%s: got %q, %v; want %d bytes, %v", tc.name, got, e, len(tc.s), tc.want)
		}
	}
	if _, e := readString(pid, 0, unix.PathMax); e != unix.EFAULT {
		t.Errorf("NULL: %v, want EFAULT", e)
	}
}

func BenchmarkReadString(b *testing.B) {
	p := append([]byte("/mnt/work/out/./d12/f34"), 0)
	addr := uintptr(unsafe.Pointer(&p[0]))
	pid := os.Getpid()
	for b.Loop() {
		if s, e := readString(pid, addr, unix.PathMax); e != 0 || len(s) != len(p)-1 {
			b.Fatal(s, e)
		}
	}
}
