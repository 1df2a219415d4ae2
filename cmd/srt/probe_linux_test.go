package main

import (
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	case "race":
		raceProbe(os.Args[1], 1500*time.Millisecond)
	case "race-read":
		raceReadProbe(os.Args[1], 1500*time.Millisecond)
	case "opath":
		// An O_PATH descriptor: taken (it reads nothing), and read only
		// by reopening it, which the guard judges.
		if _, err := unix.Open("/etc", unix.O_PATH|unix.O_DIRECTORY, 0); err == nil {
			fmt.Println("OPATH-OK")
		} else {
			fmt.Println("opath /etc:", err)
		}
		fd, err := unix.Open(os.Args[1], unix.O_PATH, 0)
		if err != nil {
			fmt.Println("opath:", err)
			return
		}
		data, err := os.ReadFile("/proc/self/fd/" + strconv.Itoa(fd))
		fmt.Printf("reopened: %q %v\n", data, err)
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
	case "unix-dgram":
		// Every way to aim a Unix socket that socket() did not make at
		// each target path ("@name": abstract), then the pairs that must
		// keep working.
		msg := []byte("LEAKED-DATAGRAM")
		for _, target := range os.Args[1:] {
			sa := &unix.SockaddrUnix{Name: target}
			try := func(name string, typ int, send func(fd int) error) {
				pair, err := unix.Socketpair(unix.AF_UNIX, typ, 0)
				if err != nil {
					fmt.Printf("%s %s: socketpair: %v\n", target, name, err)
					return
				}
				defer unix.Close(pair[0])
				defer unix.Close(pair[1])
				fmt.Printf("%s %s: %v\n", target, name, send(pair[0]))
			}
			sendto := func(fd int) error { return unix.Sendto(fd, msg, 0, sa) }
			sendmsg := func(fd int) error { _, err := unix.SendmsgN(fd, msg, nil, sa, 0); return err }
			connect := func(fd int) error {
				if err := unix.Connect(fd, sa); err != nil {
					return err
				}
				_, err := unix.Write(fd, msg)
				return err
			}
			disconnect := func(fd int) error {
				// AF_UNSPEC dissolves a datagram socket's association.
				unix.Connect(fd, &unix.SockaddrUnix{})
				return sendto(fd)
			}
			try("dgram-sendto", unix.SOCK_DGRAM, sendto)
			try("dgram-sendmsg", unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, sendmsg)
			try("dgram-connect", unix.SOCK_DGRAM|unix.SOCK_NONBLOCK, connect)
			try("dgram-disconnect", unix.SOCK_DGRAM, disconnect)
			try("raw-sendto", unix.SOCK_RAW, sendto)
			try("seqpacket-sendto", unix.SOCK_SEQPACKET, sendto)
			try("seqpacket-connect", unix.SOCK_SEQPACKET, connect)
			try("stream-sendmsg", unix.SOCK_STREAM, sendmsg)
			try("stream-connect", unix.SOCK_STREAM, connect)
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
			if err == nil {
				err = unix.Sendto(fd, msg, 0, sa)
				unix.Close(fd)
			}
			fmt.Printf("%s socket-dgram-sendto: %v\n", target, err)
		}
		for _, typ := range []int{unix.SOCK_STREAM, unix.SOCK_SEQPACKET} {
			pair, err := unix.Socketpair(unix.AF_UNIX, typ, 0)
			if err == nil {
				_, err = unix.Write(pair[0], []byte("ping"))
				buf := make([]byte, 8)
				n, rerr := unix.Read(pair[1], buf)
				if err == nil && (rerr != nil || string(buf[:n]) != "ping") {
					err = fmt.Errorf("read %q, %v", buf[:n], rerr)
				}
			}
			fmt.Printf("pair type %d: %v\n", typ, err)
		}
	case "proc-write":
		// Open for writing (writing nothing) every file under each
		// top-level /proc entry that is not a process's; then, with an
		// argument, write it into /proc/irq/default_smp_affinity.
		tried := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if e.Type()&os.ModeSymlink != 0 || strings.Trim(e.Name(), "0123456789") == "" {
				continue
			}
			filepath.WalkDir("/proc/"+e.Name(), func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return nil
				}
				tried++
				if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
					unix.Close(fd)
					fmt.Printf("writable: %s\n", p)
				}
				return nil
			})
		}
		fmt.Printf("tried %d\n", tried)
		if len(os.Args) > 1 {
			err := os.WriteFile("/proc/irq/default_smp_affinity", []byte(os.Args[1]+"\n"), 0)
			fmt.Printf("default_smp_affinity: %v\n", err)
		}
	case "ipc":
		// Attach to another process's SysV segment (its id in argv) and
		// read and overwrite it; make a segment and a message queue.
		id, _ := strconv.Atoi(os.Args[1])
		mem, err := unix.SysvShmAttach(id, 0, 0)
		if err == nil {
			fmt.Printf("shmat: read %q\n", strings.TrimRight(string(mem[:64]), "\x00"))
			copy(mem, "OVERWRITTEN")
			unix.SysvShmDetach(mem)
		}
		fmt.Printf("shmat: %v\n", err)
		_, err = unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
		fmt.Printf("shmget: %v\n", err)
		name := append([]byte(os.Args[2]), 0)
		fd, _, errno := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(&name[0])), unix.O_CREAT|unix.O_RDWR, 0o600, 0, 0, 0)
		if errno == 0 {
			unix.Close(int(fd))
		}
		fmt.Printf("mq_open: %v\n", errno)
	case "listen":
		// Listening sockets of every kind; their ports go to the file in
		// argv[1], and they stay open until argv[2] exists.
		var out strings.Builder
		try := func(what string, family int, bind unix.Sockaddr) {
			fd, err := unix.Socket(family, unix.SOCK_STREAM, 0)
			if err == nil && bind != nil {
				err = unix.Bind(fd, bind)
			}
			if err == nil {
				err = unix.Listen(fd, 8)
			}
			port := 0
			if err == nil {
				sa, _ := unix.Getsockname(fd)
				switch a := sa.(type) {
				case *unix.SockaddrInet4:
					port = a.Port
				case *unix.SockaddrInet6:
					port = a.Port
				}
			}
			fmt.Fprintf(&out, "%s %d %v\n", what, port, err)
		}
		try("unbound4", unix.AF_INET, nil)
		try("unbound6", unix.AF_INET6, nil)
		try("any4", unix.AF_INET, &unix.SockaddrInet4{})
		try("any6", unix.AF_INET6, &unix.SockaddrInet6{})
		try("loopback4", unix.AF_INET, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			if err = unix.Bind(fd, &unix.SockaddrUnix{Name: "@" + os.Args[3]}); err == nil {
				err = unix.Listen(fd, 8)
			}
		}
		fmt.Fprintf(&out, "abstract 0 %v\n", err)
		// The command's own listener, from inside.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			go func() {
				if c, err := ln.Accept(); err == nil {
					c.Write([]byte("own"))
					c.Close()
				}
			}()
			var c net.Conn
			if c, err = net.Dial("tcp", ln.Addr().String()); err == nil {
				buf := make([]byte, 3)
				_, err = io.ReadFull(c, buf)
				c.Close()
			}
		}
		fmt.Fprintf(&out, "own 0 %v\n", err)
		// Written whole, then put in place: the test reads it as soon as
		// the name appears.
		os.WriteFile(os.Args[1]+".tmp", []byte(out.String()), 0o644)
		os.Rename(os.Args[1]+".tmp", os.Args[1])
		for i := 0; i < 500; i++ {
			if _, err := os.Stat(os.Args[2]); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	case "ptmx":
		// A new pseudo-terminal, its slave taken from the master.
		m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
		if err == nil {
			if err = unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err == nil {
				_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY)
				if errno != 0 {
					err = errno
				}
			}
		}
		fmt.Printf("ptmx: %v\n", err)
	case "metadata":
		// Every call that changes a file's mode, owner, times or
		// extended attributes, on each path in argv.
		for _, p := range os.Args[1:] {
			report := func(call string, err error) { fmt.Printf("%s %s: %v\n", p, call, err) }
			ts := []unix.Timespec{{Sec: 1000000}, {Sec: 1000000}}
			report("chmod", unix.Chmod(p, 0o4777))
			report("fchmodat", unix.Fchmodat(unix.AT_FDCWD, p, 0o4777, 0))
			report("utimensat", unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, 0))
			report("lchown", unix.Lchown(p, os.Getuid(), os.Getgid()))
			report("chown-other", unix.Chown(p, 1, 1))
			report("setxattr", unix.Setxattr(p, "user.srt", []byte("x"), 0))
			report("lsetxattr", unix.Lsetxattr(p, "user.srt3", []byte("z"), 0))
			if fd, err := unix.Open(p, unix.O_RDONLY, 0); err == nil {
				report("fchmod", unix.Fchmod(fd, 0o4777))
				report("futimens", unix.Futimes(fd, []unix.Timeval{{Sec: 1000000}, {Sec: 1000000}}))
				report("fsetxattr", unix.Fsetxattr(fd, "user.srt2", []byte("y"), 0))
				report("fchown", unix.Fchown(fd, os.Getuid(), os.Getgid()))
				// chattr's flags, by ioctl on a descriptor open for
				// reading, and by file_setattr on the path.
				report("ioctl-setflags", unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, 0x40)) // FS_NODUMP_FL
				var attr [24]byte                                                                 // struct file_attr: fa_xflags first
				attr[0] = 0x80                                                                    // FS_XFLAG_NODUMP
				dir, name := filepath.Split(p)
				dirfd, _ := unix.Open(dir, unix.O_PATH, 0)
				namep, _ := unix.BytePtrFromString(name)
				_, _, e := unix.Syscall6(unix.SYS_FILE_SETATTR, uintptr(dirfd), uintptr(unsafe.Pointer(namep)), uintptr(unsafe.Pointer(&attr[0])), 24, 0, 0)
				unix.Close(dirfd)
				var err error
				if e != 0 {
					err = e
				}
				report("file_setattr", err)
				unix.Close(fd)
			}
			// By an O_PATH descriptor, which reads and writes nothing:
			// the calls that take an empty path, and its /proc/self/fd.
			if fd, err := unix.Open(p, unix.O_PATH, 0); err == nil {
				report("fchmodat2-empty", unix.Fchmodat(fd, "", 0o4777, unix.AT_EMPTY_PATH))
				report("fchownat-empty", unix.Fchownat(fd, "", os.Getuid(), os.Getgid(), unix.AT_EMPTY_PATH))
				report("utimensat-empty", unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH))
				self := fmt.Sprintf("/proc/self/fd/%d", fd)
				report("chmod-procfd", unix.Chmod(self, 0o4777))
				report("setxattr-procfd", unix.Setxattr(self, "user.srt", []byte("x"), 0))
				report("fchmod-opath", unix.Fchmod(fd, 0o4777)) // EBADF: it is opened for nothing
				unix.Close(fd)
			}
		}
	case "unjudgeable":
		// A file opened for reading, then put where the guard cannot
		// judge it by path, and changed through its descriptor: its
		// directory moved deeper than PATH_MAX (argv: dir, file in it),
		// or its git directory made unsearchable (argv: gitdir, file).
		how, dir, rel := os.Args[1], os.Args[2], os.Args[3]
		fd, err := unix.Open(filepath.Join(dir, rel), unix.O_RDONLY, 0)
		if err != nil {
			fmt.Printf("%s: open: %v\n", how, err)
			return
		}
		undo := func() {}
		switch how {
		case "deep":
			// A directory whose own path fits in PATH_MAX, where the
			// file's, once moved there, does not; made a step at a time.
			cur, _ := os.Getwd()
			deep := filepath.Join(cur, "deep")
			os.Mkdir("deep", 0o755)
			here, _ := unix.Open("deep", unix.O_PATH|unix.O_DIRECTORY, 0)
			for want := unix.PathMax + 4 - len("/moved/"+rel); len(deep) < want; {
				step := strings.Repeat("d", min(200, want-len(deep)-1))
				unix.Mkdirat(here, step, 0o755)
				next, _ := unix.Openat(here, step, unix.O_PATH|unix.O_DIRECTORY, 0)
				unix.Close(here)
				here, deep = next, deep+"/"+step
			}
			if err := unix.Renameat(unix.AT_FDCWD, dir, here, "moved"); err != nil {
				fmt.Printf("%s: move: %v\n", how, err)
			}
			undo = func() { unix.Renameat(here, "moved", unix.AT_FDCWD, dir) }
		case "unsearchable":
			os.Chmod(dir, 0o600)
			undo = func() { os.Chmod(dir, 0o755) }
		}
		errMode := unix.Fchmod(fd, 0o755)
		w, errWrite := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_WRONLY|unix.O_TRUNC, 0)
		if errWrite == nil {
			unix.Write(w, []byte("#!/bin/sh\necho PWNED\n"))
			unix.Close(w)
		}
		undo()
		fmt.Printf("%s: fchmod %v, write %v\n", how, errMode, errWrite)
	case "metadata-race":
		// A symlink flipped between a file the command may change and one
		// it may not, by one thread, while another changes it by name.
		link, inside, outside := os.Args[1], os.Args[2], os.Args[3]
		os.Symlink(inside, link+".in")
		os.Symlink(outside, link+".out")
		stop := make(chan struct{})
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				tmp := fmt.Sprintf("%s.%d", link, i)
				target := inside
				if i%2 == 1 {
					target = outside
				}
				os.Symlink(target, tmp)
				os.Rename(tmp, link)
			}
		}()
		ok := 0
		for i := 0; i < 3000; i++ {
			if unix.Chmod(link, 0o4777) == nil {
				ok++
			}
			unix.UtimesNanoAt(unix.AT_FDCWD, link, []unix.Timespec{{Sec: 1000000}, {Sec: 1000000}}, 0)
		}
		close(stop)
		fmt.Printf("race: %d succeeded\n", ok)
	case "go-mkdir":
		// A Go program's error, as the go command prints it.
		if err := os.Mkdir(os.Args[1], 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "go: creating work dir: %v\n", err)
			os.Exit(1)
		}
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
