package seccomp

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
)

// seccompData encodes struct seccomp_data for the interpreter, which loads
// words big-endian: each field is written so that the load yields its value.
func seccompData(nr, arch uint32, args ...uint32) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[offArg(uint32(i)):], a)
	}
	return b
}

const (
	eperm  = retErrno | errnoEPERM
	enosys = retErrno | errnoENOSYS
	i386   = 0x40000003
)

type call struct {
	what string
	nr   string // a name of Arch.Nr, or "" with raw
	raw  uint32
	arch uint32 // 0: the filter's own
	args []uint32
}

func run(t *testing.T, a Arch, o Options, c call) uint32 {
	t.Helper()
	prog := Filter(a, o)
	if _, err := bpf.Assemble(prog); err != nil {
		t.Fatalf("%s: %v", a.Name, err)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatalf("%s: %v", a.Name, err)
	}
	nr := c.raw
	if c.nr != "" {
		var ok bool
		if nr, ok = a.Nr[c.nr]; !ok {
			t.Fatalf("%s has no number for %s", a.Name, c.nr)
		}
	}
	arch := c.arch
	if arch == 0 {
		arch = a.AuditArch
	}
	got, err := vm.Run(seccompData(nr, arch, c.args...))
	if err != nil {
		t.Fatalf("%s %s: %v", a.Name, c.what, err)
	}
	return uint32(got)
}

// TestSeccompFilterTable runs the assembled filter in the BPF interpreter
// for both architectures over (options, syscall, arguments) → action.
func TestSeccompFilterTable(t *testing.T) {
	none := Options{}
	byPath := Options{Unix: UnixByPath}
	all := Options{Unix: UnixAll}
	nested := Options{NestedNamespaces: true}
	host := Options{HostNamespaces: true}
	hostAll := Options{HostNamespaces: true, Unix: UnixAll}
	hostPath := Options{HostNamespaces: true, Unix: UnixByPath}
	report := Options{ReportSockets: true}
	reportPath := Options{ReportSockets: true, Unix: UnixByPath}
	reportHost := Options{ReportSockets: true, HostNamespaces: true}
	owned := Options{HostNamespaces: true, OwnSockets: true, ReportSockets: true}
	ownedPath := Options{HostNamespaces: true, OwnSockets: true, Unix: UnixByPath}
	ownedAll := Options{HostNamespaces: true, OwnSockets: true, Unix: UnixAll}
	cases := []struct {
		o    Options
		c    call
		want uint32
	}{
		// Architecture.
		{none, call{what: "read", nr: "read"}, retAllow},
		{none, call{what: "anything on a foreign arch", raw: 3, arch: i386}, retKillProcess},
		{none, call{what: "socket on a foreign arch", nr: "socket", arch: i386, args: []uint32{afUnix}}, retKillProcess},
		{none, call{what: "a syscall newer than the filter", raw: 472}, enosys},
		{none, call{what: "the newest known syscall", raw: 471}, retAllow},
		// Sockets.
		{none, call{what: "socket(AF_UNIX)", nr: "socket", args: []uint32{afUnix, sockStream}}, eperm},
		{none, call{what: "socket(AF_UNIX, SOCK_DGRAM)", nr: "socket", args: []uint32{afUnix, 2}}, eperm},
		{none, call{what: "socket(AF_VSOCK)", nr: "socket", args: []uint32{afVsock, sockStream}}, eperm},
		{none, call{what: "socket(AF_INET)", nr: "socket", args: []uint32{afInet, sockStream}}, retAllow},
		{none, call{what: "socket(AF_INET6, SOCK_DGRAM)", nr: "socket", args: []uint32{afInet6, 2}}, retAllow},
		{none, call{what: "socketpair(AF_UNIX)", nr: "socketpair", args: []uint32{afUnix, sockStream}}, retAllow},
		{none, call{what: "socketpair(AF_UNIX, SOCK_SEQPACKET|SOCK_CLOEXEC)", nr: "socketpair", args: []uint32{afUnix, sockSeqpack | 0x80000}}, retAllow},
		{none, call{what: "socketpair(AF_UNIX, SOCK_DGRAM)", nr: "socketpair", args: []uint32{afUnix, sockDgram}}, eperm},
		{none, call{what: "socketpair(AF_UNIX, SOCK_DGRAM|SOCK_NONBLOCK)", nr: "socketpair", args: []uint32{afUnix, sockDgram | 0x800}}, eperm},
		{none, call{what: "socketpair(AF_UNIX, SOCK_RAW), a datagram pair", nr: "socketpair", args: []uint32{afUnix, 3}}, eperm},
		{none, call{what: "socketpair(AF_INET)", nr: "socketpair", args: []uint32{afInet, sockStream}}, eperm},
		{none, call{what: "socketpair(AF_TIPC)", nr: "socketpair", args: []uint32{30, 5}}, eperm},
		{report, call{what: "reported: socketpair(AF_UNIX, SOCK_DGRAM)", nr: "socketpair", args: []uint32{afUnix, sockDgram}}, retUserNotif},
		{report, call{what: "reported: socketpair(AF_UNIX, SOCK_STREAM)", nr: "socketpair", args: []uint32{afUnix, sockStream}}, retAllow},
		{byPath, call{what: "socketpair(AF_UNIX, SOCK_DGRAM) by path", nr: "socketpair", args: []uint32{afUnix, sockDgram}}, eperm},
		{reportPath, call{what: "reported, by path: socketpair(AF_UNIX, SOCK_DGRAM)", nr: "socketpair", args: []uint32{afUnix, sockDgram}}, eperm},
		{all, call{what: "socketpair(AF_UNIX, SOCK_DGRAM) with allowAllUnixSockets", nr: "socketpair", args: []uint32{afUnix, sockDgram}}, retAllow},
		{host, call{what: "host: socketpair(AF_UNIX, SOCK_DGRAM)", nr: "socketpair", args: []uint32{afUnix, sockDgram}}, eperm},
		{host, call{what: "host: socketpair(AF_UNIX, SOCK_STREAM)", nr: "socketpair", args: []uint32{afUnix, sockStream}}, retAllow},
		{reportHost, call{what: "reported, host: socketpair(AF_UNIX, SOCK_DGRAM)", nr: "socketpair", args: []uint32{afUnix, sockDgram}}, retUserNotif},
		{hostAll, call{what: "host: socketpair(AF_UNIX, SOCK_DGRAM) with allowAllUnixSockets", nr: "socketpair", args: []uint32{afUnix, sockDgram}}, retAllow},
		{none, call{what: "connect", nr: "connect"}, retAllow},
		{report, call{what: "reported socket(AF_UNIX)", nr: "socket", args: []uint32{afUnix, sockStream}}, retUserNotif},
		{report, call{what: "reported: socket(AF_INET)", nr: "socket", args: []uint32{afInet, sockStream}}, retAllow},
		{report, call{what: "reported: socket(AF_VSOCK)", nr: "socket", args: []uint32{afVsock, sockStream}}, eperm},
		{report, call{what: "reported: connect", nr: "connect"}, retAllow},
		{reportPath, call{what: "reported, by path: socket(AF_UNIX) stream", nr: "socket", args: []uint32{afUnix, sockStream}}, retAllow},
		{reportHost, call{what: "reported, host: socket(AF_UNIX)", nr: "socket", args: []uint32{afUnix, sockStream}}, retUserNotif},
		{reportHost, call{what: "reported, host: socket(AF_INET) UDP", nr: "socket", args: []uint32{afInet, 2}}, eperm},
		{all, call{what: "socket(AF_UNIX) with allowAllUnixSockets", nr: "socket", args: []uint32{afUnix, 2}}, retAllow},
		{all, call{what: "socket(AF_VSOCK) with allowAllUnixSockets", nr: "socket", args: []uint32{afVsock, sockStream}}, eperm},
		{all, call{what: "io_uring_setup with allowAllUnixSockets", nr: "io_uring_setup"}, eperm},
		{all, call{what: "keyctl with allowAllUnixSockets", nr: "keyctl"}, eperm},
		{byPath, call{what: "socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC) by path", nr: "socket", args: []uint32{afUnix, sockStream | 0x80000}}, retAllow},
		{byPath, call{what: "socket(AF_UNIX, SOCK_DGRAM) by path", nr: "socket", args: []uint32{afUnix, 2}}, eperm},
		{byPath, call{what: "socket(AF_UNIX, SOCK_SEQPACKET) by path", nr: "socket", args: []uint32{afUnix, 5}}, eperm},
		{byPath, call{what: "connect by path", nr: "connect"}, retUserNotif},
		{byPath, call{what: "socket(AF_VSOCK) by path", nr: "socket", args: []uint32{afVsock, sockStream}}, eperm},
		// The fallback where srt makes the sockets (pidfd_getfd refused):
		// every socket the rules allow goes to it, no other.
		{owned, call{what: "owned: socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK)", nr: "socket", args: []uint32{afInet, sockStream | 0x800}}, retUserNotif},
		{owned, call{what: "owned: socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP)", nr: "socket", args: []uint32{afInet6, sockStream, 6}}, retUserNotif},
		{owned, call{what: "owned: socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP)", nr: "socket", args: []uint32{afInet, sockStream, 132}}, eperm},
		{owned, call{what: "owned: socket(AF_INET, SOCK_DGRAM)", nr: "socket", args: []uint32{afInet, 2}}, eperm},
		{owned, call{what: "owned: socket(AF_NETLINK)", nr: "socket", args: []uint32{16, 3}}, eperm},
		{owned, call{what: "owned, reported: socket(AF_UNIX)", nr: "socket", args: []uint32{afUnix, sockStream}}, retUserNotif},
		{owned, call{what: "owned: socketpair(AF_UNIX, SOCK_STREAM) stays the kernel's", nr: "socketpair", args: []uint32{afUnix, sockStream}}, retAllow},
		{ownedPath, call{what: "owned, by path: socket(AF_UNIX, SOCK_STREAM)", nr: "socket", args: []uint32{afUnix, sockStream}}, retUserNotif},
		{ownedPath, call{what: "owned, by path: socket(AF_UNIX, SOCK_DGRAM)", nr: "socket", args: []uint32{afUnix, sockDgram}}, eperm},
		{ownedAll, call{what: "owned, all: socket(AF_UNIX, SOCK_DGRAM)", nr: "socket", args: []uint32{afUnix, sockDgram}}, retUserNotif},
		{Options{OwnSockets: true}, call{what: "OwnSockets alone (no host network): socket(AF_INET)", nr: "socket", args: []uint32{afInet, sockStream}}, retAllow},
		// The fallback's host network.
		{host, call{what: "host: socket(AF_INET, SOCK_STREAM)", nr: "socket", args: []uint32{afInet, sockStream | 0x800}}, retAllow},
		{host, call{what: "host: socket(AF_INET6, SOCK_STREAM)", nr: "socket", args: []uint32{afInet6, sockStream}}, retAllow},
		{host, call{what: "host: socket(AF_INET, SOCK_STREAM, IPPROTO_TCP)", nr: "socket", args: []uint32{afInet, sockStream, 6}}, retAllow},
		{host, call{what: "host: socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP)", nr: "socket", args: []uint32{afInet, sockStream, 132}}, eperm},
		{host, call{what: "host: socket(AF_INET6, SOCK_STREAM, IPPROTO_MPTCP)", nr: "socket", args: []uint32{afInet6, sockStream, 262}}, eperm},
		{none, call{what: "socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP) in the sandbox's own network", nr: "socket", args: []uint32{afInet, sockStream, 132}}, retAllow},
		{host, call{what: "host: socket(AF_INET, SOCK_DGRAM)", nr: "socket", args: []uint32{afInet, 2}}, eperm},
		{host, call{what: "host: socket(AF_INET6, SOCK_RAW)", nr: "socket", args: []uint32{afInet6, 3}}, eperm},
		{host, call{what: "host: socket(AF_NETLINK)", nr: "socket", args: []uint32{16, 3}}, eperm},
		{host, call{what: "host: socket(AF_PACKET)", nr: "socket", args: []uint32{17, 3}}, eperm},
		{host, call{what: "host: socket(AF_UNIX)", nr: "socket", args: []uint32{afUnix, sockStream}}, eperm},
		{hostAll, call{what: "host: socket(AF_UNIX) with allowAllUnixSockets", nr: "socket", args: []uint32{afUnix, 2}}, retAllow},
		{hostPath, call{what: "host: socket(AF_UNIX) by path", nr: "socket", args: []uint32{afUnix, sockStream}}, retAllow},
		{host, call{what: "host: connect", nr: "connect"}, retUserNotif},
		{host, call{what: "host: sendto with MSG_FASTOPEN", nr: "sendto", args: []uint32{3, 0, 0, msgFastOpen}}, eperm},
		{host, call{what: "host: sendto", nr: "sendto", args: []uint32{3, 0, 0, 0x40}}, retAllow},
		{host, call{what: "host: sendmsg with MSG_FASTOPEN", nr: "sendmsg", args: []uint32{3, 0, msgFastOpen}}, eperm},
		{host, call{what: "host: sendmmsg with MSG_FASTOPEN", nr: "sendmmsg", args: []uint32{3, 0, 1, msgFastOpen}}, eperm},
		{none, call{what: "sendto with MSG_FASTOPEN in the sandbox's own network", nr: "sendto", args: []uint32{3, 0, 0, msgFastOpen}}, retAllow},
		// The fallback's host IPC, listen and metadata.
		{host, call{what: "host: shmget", nr: "shmget"}, eperm},
		{host, call{what: "host: shmat", nr: "shmat"}, eperm},
		{host, call{what: "host: semop", nr: "semop"}, eperm},
		{host, call{what: "host: msgsnd", nr: "msgsnd"}, eperm},
		{host, call{what: "host: mq_open", nr: "mq_open"}, eperm},
		{none, call{what: "shmget in the sandbox's own IPC namespace", nr: "shmget"}, retAllow},
		{host, call{what: "host: listen", nr: "listen"}, retUserNotif},
		{none, call{what: "listen in the sandbox's own network", nr: "listen"}, retAllow},
		{host, call{what: "host: fchmod", nr: "fchmod"}, retUserNotif},
		{host, call{what: "host: fchownat", nr: "fchownat"}, retUserNotif},
		{host, call{what: "host: utimensat", nr: "utimensat"}, retUserNotif},
		{host, call{what: "host: fsetxattr", nr: "fsetxattr"}, retUserNotif},
		{host, call{what: "host: fchmodat2", nr: "fchmodat2"}, retUserNotif},
		{host, call{what: "host: removexattrat", nr: "removexattrat"}, retUserNotif},
		{none, call{what: "fchmod under read-only mounts", nr: "fchmod"}, retAllow},
		{host, call{what: "host: ioctl(FS_IOC_SETFLAGS)", nr: "ioctl", args: []uint32{3, fsIOCSetFlags}}, eperm},
		{host, call{what: "host: ioctl(FS_IOC_FSSETXATTR)", nr: "ioctl", args: []uint32{3, fsIOCFSSetXattr}}, eperm},
		{none, call{what: "ioctl(FS_IOC_SETFLAGS) under read-only mounts", nr: "ioctl", args: []uint32{3, fsIOCSetFlags}}, retAllow},
		{host, call{what: "host: file_setattr", nr: "file_setattr"}, eperm},
		{none, call{what: "file_setattr under read-only mounts", nr: "file_setattr"}, retAllow},
		// Terminal injection.
		{none, call{what: "ioctl(TIOCSTI)", nr: "ioctl", args: []uint32{0, tiocsti}}, eperm},
		{none, call{what: "ioctl(TIOCLINUX)", nr: "ioctl", args: []uint32{0, tioclinux}}, eperm},
		{none, call{what: "ioctl(TCGETS)", nr: "ioctl", args: []uint32{0, 0x5401}}, retAllow},
		{none, call{what: "ioctl(TIOCGWINSZ)", nr: "ioctl", args: []uint32{1, 0x5413}}, retAllow},
		// Leases (a host writer waits for the command) and ordinary fcntl.
		{none, call{what: "fcntl(F_SETLEASE)", nr: "fcntl", args: []uint32{3, fSetLease}}, eperm},
		{host, call{what: "host: fcntl(F_SETLEASE)", nr: "fcntl", args: []uint32{3, fSetLease}}, eperm},
		{none, call{what: "fcntl(F_GETFL)", nr: "fcntl", args: []uint32{3, 3}}, retAllow},
		{none, call{what: "fcntl(F_SETLK)", nr: "fcntl", args: []uint32{3, 6}}, retAllow},
		// Namespaces and mounts.
		{none, call{what: "unshare(CLONE_NEWUSER)", nr: "unshare", args: []uint32{cloneNewUser}}, eperm},
		{none, call{what: "unshare(CLONE_NEWNS)", nr: "unshare", args: []uint32{cloneNewNS}}, eperm},
		{none, call{what: "unshare(CLONE_FILES)", nr: "unshare", args: []uint32{0x400}}, retAllow},
		{none, call{what: "clone(CLONE_NEWUSER|SIGCHLD)", nr: "clone", args: []uint32{cloneNewUser | 17}}, eperm},
		{none, call{what: "clone for a thread", nr: "clone", args: []uint32{0x3d0f00}}, retAllow},
		{none, call{what: "clone(SIGCHLD) for fork", nr: "clone", args: []uint32{17}}, retAllow},
		{none, call{what: "clone3", nr: "clone3"}, enosys},
		{none, call{what: "mount", nr: "mount"}, eperm},
		{none, call{what: "fsopen", nr: "fsopen"}, eperm},
		{none, call{what: "open_tree_attr", nr: "open_tree_attr"}, eperm},
		{none, call{what: "setns", nr: "setns"}, eperm},
		{nested, call{what: "unshare(CLONE_NEWUSER) nested", nr: "unshare", args: []uint32{cloneNewUser}}, retAllow},
		{nested, call{what: "clone3 nested", nr: "clone3"}, retAllow},
		{nested, call{what: "mount nested", nr: "mount"}, retAllow},
		{nested, call{what: "bpf nested", nr: "bpf"}, eperm},
		{nested, call{what: "socket(AF_UNIX) nested", nr: "socket", args: []uint32{afUnix}}, eperm},
	}
	for _, name := range refused {
		cases = append(cases, struct {
			o    Options
			c    call
			want uint32
		}{none, call{what: name, nr: name}, eperm})
	}
	for goarch, a := range arches {
		for _, c := range cases {
			if got := run(t, a, c.o, c.c); got != c.want {
				t.Errorf("%s (%s) %s %+v: action %#x, want %#x", goarch, a.Name, c.c.what, c.o, got, c.want)
			}
		}
		for _, name := range legacyCalls {
			if _, meta := metaCalls[name]; !meta {
				continue
			}
			if nr, ok := a.Nr[name]; ok {
				if got := run(t, a, host, call{what: name, raw: nr}); got != retUserNotif {
					t.Errorf("%s host: %s: %#x, want the supervisor", goarch, name, got)
				}
			}
		}
		ptrace := map[string]uint32{"amd64": 101, "arm64": 117}[goarch]
		if got := run(t, a, none, call{what: "ptrace", raw: ptrace}); got != retAllow {
			t.Errorf("%s ptrace: %#x, want allowed", goarch, got)
		}
		if a.X32Bit != 0 {
			if got := run(t, a, none, call{what: "x32 socket", raw: a.X32Bit | a.Nr["socket"], args: []uint32{afInet}}); got != retKillProcess {
				t.Errorf("%s x32 socket: %#x, want kill", goarch, got)
			}
			if got := run(t, a, none, call{what: "x32 read", raw: a.X32Bit}); got != retKillProcess {
				t.Errorf("%s x32 read: %#x, want kill", goarch, got)
			}
		}
	}
}

// The two tables agree where the kernel's do: every name is numbered on
// both architectures, and numbers from 425 up are shared.
func TestSeccompTables(t *testing.T) {
	amd, arm := arches["amd64"], arches["arm64"]
	for name, n := range amd.Nr {
		m, ok := arm.Nr[name]
		if !ok {
			if !slices.Contains(legacyCalls, name) {
				t.Errorf("aarch64 lacks %s", name)
			}
			continue
		}
		if n >= 425 && n != m {
			t.Errorf("%s: %d on x86_64, %d on aarch64", name, n, m)
		}
	}
	for _, a := range arches {
		seen := map[uint32]string{}
		for name, n := range a.Nr {
			if other, dup := seen[n]; dup {
				t.Errorf("%s: %s and %s share %d", a.Name, name, other, n)
			}
			seen[n] = name
			if n > a.Last {
				t.Errorf("%s: %s (%d) is above Last %d", a.Name, name, n, a.Last)
			}
		}
	}
}

// Every metadata call the supervisor knows is numbered where the kernel
// has it, and its arguments are where the kernel puts them.
func TestMetadataCalls(t *testing.T) {
	for name := range metaCalls {
		if _, ok := arches["amd64"].Nr[name]; !ok {
			t.Errorf("x86_64 has no number for %s", name)
		}
		if _, ok := arches["arm64"].Nr[name]; !ok && !slices.Contains(legacyCalls, name) {
			t.Errorf("aarch64 has no number for %s", name)
		}
	}
	legacyMeta := 0
	for _, name := range legacyCalls {
		if _, ok := metaCalls[name]; ok {
			legacyMeta++
		}
	}
	if len(metaCallsOf(arches["arm64"])) != len(metaCalls)-legacyMeta {
		t.Errorf("aarch64 metadata calls: %d", len(metaCallsOf(arches["arm64"])))
	}
	// Spot checks against the prototypes.
	for name, want := range map[string]MetaCall{
		"fchownat":   {Op: OpOwner, Dir: 0, Path: 1, Fd: -1, Flags: 4, Follow: true, Rest: 2}, // (dirfd, path, uid, gid, flags)
		"utimensat":  {Op: OpTimes, Dir: 0, Path: 1, Fd: -1, Flags: 3, Follow: true, Rest: 2}, // (dirfd, path, times, flags)
		"setxattrat": {Op: OpSetXattrAt, Dir: 0, Path: 1, Fd: -1, Flags: 2, Follow: true, Rest: 3},
		"fsetxattr":  {Op: OpSetXattr, Dir: -1, Path: -1, Fd: 0, Flags: -1, Rest: 1}, // (fd, name, value, size, flags)
	} {
		if metaCalls[name] != want {
			t.Errorf("%s: %+v, want %+v", name, metaCalls[name], want)
		}
	}
}

func TestSeccompDisassembly(t *testing.T) {
	a := arches["amd64"]
	out := Disassemble(a, Filter(a, Options{Unix: UnixByPath}))
	for _, want := range []string{"audit arch", "; keyctl", "; connect", "ask the supervisor", "kill the process", "errno 38", "arg1 (low 32 bits)"} {
		if !strings.Contains(out, want) {
			t.Errorf("disassembly lacks %q:\n%s", want, out)
		}
	}
}
