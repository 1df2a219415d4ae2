package main

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sysProbes are the refused calls, numbered by x/sys for this
// architecture (not by the filter's own table).
var sysProbes = []struct {
	name string
	nr   uintptr
}{{"keyctl", unix.SYS_KEYCTL}, {"add_key", unix.SYS_ADD_KEY}, {"request_key", unix.SYS_REQUEST_KEY},
	{"bpf", unix.SYS_BPF}, {"perf_event_open", unix.SYS_PERF_EVENT_OPEN}, {"userfaultfd", unix.SYS_USERFAULTFD},
	{"kexec_load", unix.SYS_KEXEC_LOAD}, {"init_module", unix.SYS_INIT_MODULE}, {"finit_module", unix.SYS_FINIT_MODULE},
	{"delete_module", unix.SYS_DELETE_MODULE}, {"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT},
	{"mount", unix.SYS_MOUNT}, {"umount2", unix.SYS_UMOUNT2}, {"pivot_root", unix.SYS_PIVOT_ROOT},
	{"fsopen", unix.SYS_FSOPEN}, {"open_tree", unix.SYS_OPEN_TREE}, {"setns", unix.SYS_SETNS}}

// probe tries, from inside the sandbox, what the filter refuses, and
// prints what each attempt returned.
func probe(what string) {
	switch what {
	case "unix-socket":
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		fmt.Printf("unix-socket: fd=%d err=%v\n", fd, err)
		fd, err = syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
		fmt.Printf("unix-dgram: fd=%d err=%v\n", fd, err)
		fd, err = syscall.Socket(40, syscall.SOCK_STREAM, 0) // AF_VSOCK
		fmt.Printf("vsock: fd=%d err=%v\n", fd, err)
		fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		fmt.Printf("inet-socket: fd=%d err=%v\n", fd, err)
		var pair [2]int
		pair, err = syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		fmt.Printf("socketpair: fd=%d err=%v\n", pair[0], err)
		var params [120]byte
		r, _, errno := syscall.Syscall(425, 1, uintptr(unsafe.Pointer(&params)), 0)
		fmt.Printf("io_uring_setup: r=%d err=%v\n", int(r), errno)
	case "syscalls":
		// Each refused call, with arguments that would otherwise be
		// harmless or fail with another errno.
		c := byte('x')
		report := func(name string, r uintptr, errno syscall.Errno) {
			fmt.Printf("%s: r=%d err=%v\n", name, int(r), errno)
		}
		r, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		report("TIOCSTI", r, e)
		r, _, e = syscall.Syscall(syscall.SYS_IOCTL, 0, 0x541c, uintptr(unsafe.Pointer(&c))) // TIOCLINUX
		report("TIOCLINUX", r, e)
		r, _, e = syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TCGETS, uintptr(unsafe.Pointer(&[64]byte{})))
		report("TCGETS", r, e)
		for _, s := range sysProbes {
			r, _, e = syscall.Syscall6(s.nr, 0, 0, 0, 0, 0, 0)
			report(s.name, r, e)
		}
		r, _, e = syscall.Syscall(1000, 0, 0, 0)
		report("syscall-1000", r, e)
	case "unix-connect":
		// Connect to each path and print the first line the server sends.
		for _, p := range os.Args[1:] {
			c, err := net.DialTimeout("unix", p, 5*time.Second)
			if err != nil {
				fmt.Printf("%s: %v\n", p, err)
				continue
			}
			buf := make([]byte, 100)
			n, _ := c.Read(buf)
			c.Close()
			fmt.Printf("%s: read %q\n", p, buf[:n])
		}
	}
	os.Exit(0)
}
