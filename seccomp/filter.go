// Package seccomp is the command's seccomp filter as data: a classic BPF
// program over struct seccomp_data, assembled here for each architecture
// srt runs on, interpreted in unit tests that need no privilege, printed
// by --debug and srt plan, and installed by the one small file
// install_linux.go. It also knows how the calls the filter sends to srt's
// supervisor lay out their arguments (metadata.go).
package seccomp

import (
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/srt-go/srt/config"
	"golang.org/x/net/bpf"
)

// Seccomp return actions (linux/seccomp.h).
const (
	retAllow       = 0x7fff0000
	retErrno       = 0x00050000
	retUserNotif   = 0x7fc00000
	retKillProcess = 0x80000000
	errnoEPERM     = 1
	errnoENOSYS    = 38
)

// Offsets in struct seccomp_data: nr, arch, then args[6] from 16. The low
// 32 bits of an argument come first on the little-endian machines we
// target, and every argument the filter reads is one the kernel truncates
// to 32 bits (an int family or type, an unsigned int ioctl command, clone
// flags taken through lower_32_bits).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func offArg(i uint32) uint32 { return offArg0 + 8*i }

// Arch describes one syscall ABI the filter knows: its audit arch and the
// numbers of the syscalls the filter names.
type Arch struct {
	Name      string
	AuditArch uint32 // AUDIT_ARCH_*
	// X32Bit, when set, marks syscall numbers of another ABI sharing this
	// audit arch (x32 on x86-64): they are refused whole.
	X32Bit uint32
	// Last is the highest syscall number the filter knows of; anything
	// above is newer than the filter and gets ENOSYS, so a libc falls back
	// to an older call the filter can judge.
	Last uint32
	Nr   map[string]uint32
}

// Syscall numbers from the kernel's tables (arch/x86/entry/syscalls and
// the asm-generic table arm64 uses); 425 and up are shared by both.
var (
	sharedNr = map[string]uint32{
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
		"fsmount": 432, "fspick": 433, "clone3": 435, "mount_setattr": 442,
		"fchmodat2": 452, "openat2": 437, "setxattrat": 463, "removexattrat": 466, "open_tree_attr": 467,
		"file_setattr": 469,
	}
	amd64Nr = withShared(map[string]uint32{
		"read": 0, "ioctl": 16, "socket": 41, "connect": 42, "sendto": 44, "sendmsg": 46,
		"socketpair": 53, "clone": 56, "pivot_root": 155, "mount": 165, "umount2": 166,
		"init_module": 175, "delete_module": 176, "kexec_load": 246, "add_key": 248,
		"request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
		"open_by_handle_at": 304, "sendmmsg": 307, "setns": 308, "finit_module": 313,
		"kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "listen": 50, "bind": 49, "fcntl": 72,
		"shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66,
		"semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "mq_open": 240,
		"mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
		"fchmod": 91, "fchmodat": 268, "fchown": 93, "fchownat": 260, "utimensat": 280,
		"setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198,
		"fremovexattr": 199,
		"openat":       257, "mkdirat": 258, "mknodat": 259, "renameat": 264, "linkat": 265,
		"symlinkat": 266, "renameat2": 316, "truncate": 76, "umask": 95, "unlinkat": 263,
		// Older calls the generic table of arm64 dropped.
		"chmod": 90, "chown": 92, "lchown": 94, "utime": 132, "utimes": 235, "futimesat": 261,
		"open": 2, "creat": 85, "mkdir": 83, "mknod": 133, "rename": 82, "link": 86, "symlink": 88,
		"unlink": 87, "rmdir": 84,
	})
	arm64Nr = withShared(map[string]uint32{
		"read": 63, "ioctl": 29, "socket": 198, "connect": 203, "sendto": 206, "sendmsg": 211,
		"socketpair": 199, "clone": 220, "pivot_root": 41, "mount": 40, "umount2": 39,
		"init_module": 105, "delete_module": 106, "kexec_load": 104, "add_key": 217,
		"request_key": 218, "keyctl": 219, "unshare": 97, "perf_event_open": 241,
		"open_by_handle_at": 265, "sendmmsg": 269, "setns": 268, "finit_module": 273,
		"kexec_file_load": 294, "bpf": 280, "userfaultfd": 282, "listen": 201, "bind": 200, "fcntl": 25,
		"shmget": 194, "shmat": 196, "shmctl": 195, "shmdt": 197, "semget": 190, "semop": 193, "semctl": 191,
		"semtimedop": 192, "msgget": 186, "msgsnd": 189, "msgrcv": 188, "msgctl": 187, "mq_open": 180,
		"mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185,
		"fchmod": 52, "fchmodat": 53, "fchown": 55, "fchownat": 54, "utimensat": 88,
		"setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15,
		"fremovexattr": 16,
		"openat":       56, "mkdirat": 34, "mknodat": 33, "renameat": 38, "linkat": 37,
		"symlinkat": 36, "renameat2": 276, "truncate": 45, "umask": 166, "unlinkat": 35,
	})
	// legacyCalls are the names only some tables have (the generic
	// table of arm64 dropped them for their *at forms).
	legacyCalls = []string{"chmod", "chown", "lchown", "utime", "utimes", "futimesat",
		"open", "creat", "mkdir", "mknod", "rename", "link", "symlink", "unlink", "rmdir"}
)

func withShared(m map[string]uint32) map[string]uint32 {
	for k, v := range sharedNr {
		m[k] = v
	}
	return m
}

// ArchOf returns the ABI of GOARCH goarch, if the filter is built for it.
func ArchOf(goarch string) (Arch, bool) {
	a, ok := arches[goarch]
	return a, ok
}

// Nr is the number of syscall name on the running architecture; -1 when
// the filter does not know it.
func Nr(name string) int32 {
	if nr, ok := arches[runtime.GOARCH].Nr[name]; ok {
		return int32(nr)
	}
	return -1
}

// arches are the ABIs the filter is built for, by GOARCH.
var arches = map[string]Arch{
	"amd64": {Name: "x86_64", AuditArch: 0xc000003e, X32Bit: 0x40000000, Last: 471, Nr: amd64Nr},
	"arm64": {Name: "aarch64", AuditArch: 0xc00000b7, Last: 471, Nr: arm64Nr},
}

// Socket address families and types, ioctl commands and clone flags the
// filter reads.
const (
	afUnix       = 1
	afInet       = 2
	afInet6      = 10
	afVsock      = 40
	sockStream   = 1
	sockDgram    = 2
	sockSeqpack  = 5
	sockTypeMask = 0xf
	ipprotoTCP   = 6
	tiocsti      = 0x5412 // push a byte into the terminal's input: keystroke injection
	tioclinux    = 0x541c // the virtual console's selection paste does the same
	// A lease on a file the command can only read makes every host
	// process that opens it for writing wait for the command (up to
	// lease-break-time, 45 s): refused.
	fSetLease    = 1024
	cloneNewNS   = 0x00020000
	cloneNewUser = 0x10000000
	msgFastOpen  = 0x20000000 // sendto/sendmsg that connects a TCP socket
	// Inode flags and attributes set through an ioctl on any open file,
	// also one opened only for reading, by its owner: chattr's flags, the
	// project id, the inode generation (two spellings), fs-verity (which
	// makes a file read-only for good), an encryption policy (a directory
	// only its key opens), ext4's conversion to extents, FAT's
	// attributes. Btrfs's own ioctls (type 0x94) make subvolumes and
	// snapshots — names no guarded call makes — and set their flags:
	// all are refused but the generic clone and dedupe calls, which need
	// a destination open for writing, and the label's read.
	fsIOCSetFlags       = 0x40086602
	fsIOC32SetFlags     = 0x40046602
	fsIOCFSSetXattr     = 0x401c5820
	fsIOCSetVersion     = 0x40087602
	fsIOC32SetVers      = 0x40047602
	ext4IOCSetVersion   = 0x40086604
	ext4IOC32SetVersion = 0x40046604
	ext4IOCMigrate      = 0x6609
	fsIOCEnableVerity   = 0x40806685
	fsIOCSetEncryption  = 0x800c6613
	fatIOCSetAttributes = 0x40047211
	btrfsType           = 0x9400 // (cmd & 0xff00)
	fiClone             = 0x40049409
	fiCloneRange        = 0x4020940d
	fiDedupeRange       = 0xc0189436
	fsIOCGetFSLabel     = 0x81009431
)

// inodeIoctls are the ioctls above refused outright.
var inodeIoctls = []uint32{fsIOCSetFlags, fsIOC32SetFlags, fsIOCFSSetXattr, fsIOCSetVersion, fsIOC32SetVers,
	ext4IOCSetVersion, ext4IOC32SetVersion, ext4IOCMigrate, fsIOCEnableVerity, fsIOCSetEncryption, fatIOCSetAttributes}

// hostIPC are System V IPC and POSIX message queues: without an IPC
// namespace of its own (the fallback), they are the host's, and another
// process's 0600 segment is the same user's to read and overwrite.
var hostIPC = []string{"shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop",
	"msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive",
	"mq_notify", "mq_getsetattr"}

// refused are syscalls the command never needs and that reach kernel
// state shared with the host: keyrings, eBPF, perf, userfaultfd (a
// building block of kernel exploits), kexec, modules, and file handles
// (open_by_handle_at opens a file by inode number, past every mount mask).
var refused = []string{
	"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"open_by_handle_at",
	// io_uring performs socket, connect and open on the kernel's side,
	// where no seccomp rule sees them.
	"io_uring_setup", "io_uring_enter", "io_uring_register",
}

// mountCalls are the mount family: without allowNestedUserNamespaces
// nothing inside may rearrange mounts, even in a namespace of its own.
var mountCalls = []string{"mount", "umount2", "pivot_root", "open_tree", "open_tree_attr",
	"move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "setns"}

// UnixSockets is how the filter treats Unix-domain sockets.
type UnixSockets int

const (
	// UnixNone refuses socket(AF_UNIX) (the default: a socket file such as
	// docker.sock can be a host escape). Stream and seqpacket socketpairs
	// stay allowed: their two ends are connected to each other for good
	// (connect says EISCONN, an address given to send is refused or
	// dropped), so they reach nothing outside the process tree.
	// Datagram pairs are refused like datagram sockets: sendto and
	// sendmsg take any address, and connect re-targets them.
	UnixNone UnixSockets = iota
	// UnixByPath allows stream sockets (whose sendmsg cannot carry an
	// address) and sends every connect to the supervisor, which checks
	// the path against allowUnixSockets and connects on the command's
	// behalf. Datagram and seqpacket Unix sockets stay refused.
	UnixByPath
	// UnixAll is allowAllUnixSockets: the AF_UNIX rule is lifted (for
	// socketpair too), nothing else.
	UnixAll
)

// Options select the rules of the command's filter.
type Options struct {
	Unix UnixSockets
	// NestedNamespaces is allowNestedUserNamespaces: user and mount
	// namespaces and the mount family are allowed.
	NestedNamespaces bool
	// HostNamespaces is the fallback sandbox, which shares the host's
	// namespaces. Network: only TCP (IPv4, IPv6) and the Unix rule above
	// may create sockets, so no UDP (no direct DNS), raw, packet or
	// netlink socket; every connect and listen goes to the supervisor,
	// which lets connects reach only the proxies (and the command's own
	// listeners) and listens happen only where allowLocalBinding says;
	// and no sendto/sendmsg may connect with MSG_FASTOPEN. IPC: System V
	// IPC and POSIX message queues are refused. Files: changes of a file's
	// mode, owner, times and extended attributes go to the supervisor,
	// and the inode-flag ioctls and file_setattr are refused (both as
	// with Guard).
	HostNamespaces bool
	// OwnSockets (with HostNamespaces) sends every socket(2) the rules
	// above allow to the supervisor, which makes the socket and hands it
	// over: where the supervisor may not take the command's descriptors
	// (a container's seccomp profile refuses pidfd_getfd), it holds its
	// own of each socket it is to connect, bind or listen on.
	OwnSockets bool `json:"ownSockets,omitempty"`
	// ReportSockets sends socket(AF_UNIX), which UnixNone refuses, to the
	// supervisor, which refuses it the same (EPERM) and reports it.
	ReportSockets bool `json:"reportSockets,omitempty"`
	// Guard sends every call that makes, moves or links a name, every
	// open or truncate for writing, and every change of a file's mode,
	// owner, times or extended attributes, to the supervisor's path
	// guard.
	Guard bool `json:"guard,omitempty"`
	// GuardReads sends every open there, for reading too.
	GuardReads bool `json:"guardReads,omitempty"`
}

// reportsSockets reports whether socket(AF_UNIX) goes to the supervisor.
func (o Options) reportsSockets() bool { return o.ReportSockets && o.Unix == UnixNone }

// notifies reports whether the filter sends calls to the supervisor,
// which must then hold the listener.
func (o Options) notifies() bool {
	return o.Unix == UnixByPath || o.HostNamespaces || o.reportsSockets() || o.Guard
}

// Filter returns the command's filter for arch. It kills the process on a
// foreign architecture (a 32-bit binary's syscalls would bypass every rule)
// and on x32 numbers, answers syscalls newer than it knows with ENOSYS,
// refuses with EPERM the calls listed above, AF_VSOCK sockets (the
// hypervisor), the terminal-injection ioctls, Unix sockets as o says, and
// user and mount namespaces unless allowed; everything else is allowed.
func Filter(a Arch, o Options) []bpf.Instruction {
	const (
		kill     = "kill"
		eperm    = "eperm"
		enosys   = "enosys"
		allow    = "allow"
		notify   = "notify"
		socket   = "socket"
		sockPair = "socketpair"
		ioctl    = "ioctl"
		fcntl    = "fcntl"
		cloneNs  = "clone-namespaces"
		unixTyp  = "unix-type"
		inetTyp  = "inet-type"
		fastOp2  = "fastopen-arg2"
		fastOp3  = "fastopen-arg3"
		openArg1 = "open-flags-arg1"
		openArg2 = "open-flags-arg2"
	)
	var p program
	p.load(offArch)
	p.jumpIfNot(a.AuditArch, kill)
	p.load(offNr)
	if a.X32Bit != 0 {
		p.jumpIfAtLeast(a.X32Bit, kill)
	}
	p.jumpIfAtLeast(a.Last+1, enosys)
	for _, name := range refused {
		p.jumpIf(a.Nr[name], eperm)
	}
	p.jumpIf(a.Nr["socket"], socket)
	p.jumpIf(a.Nr["socketpair"], sockPair)
	p.jumpIf(a.Nr["ioctl"], ioctl)
	p.jumpIf(a.Nr["fcntl"], fcntl)
	if !o.NestedNamespaces {
		for _, name := range mountCalls {
			p.jumpIf(a.Nr[name], eperm)
		}
		p.jumpIf(a.Nr["clone"], cloneNs)
		p.jumpIf(a.Nr["unshare"], cloneNs)
		// clone3 takes its flags in memory, out of a filter's reach:
		// ENOSYS makes libc fall back to clone, whose flags it can read.
		p.jumpIf(a.Nr["clone3"], enosys)
	}
	if o.Unix == UnixByPath || o.HostNamespaces {
		p.jumpIf(a.Nr["connect"], notify)
	}
	if o.HostNamespaces {
		p.jumpIf(a.Nr["sendto"], fastOp3)
		p.jumpIf(a.Nr["sendmsg"], fastOp2)
		p.jumpIf(a.Nr["sendmmsg"], fastOp3)
		p.jumpIf(a.Nr["listen"], notify)
		for _, name := range hostIPC {
			p.jumpIf(a.Nr[name], eperm)
		}
	}
	if o.HostNamespaces || o.Guard {
		// Landlock has no right for a file's metadata, and the mounts
		// protect only what exists at launch: the supervisor judges and
		// makes every change. The inode's flags and attributes (chattr's,
		// the project id) are refused, by syscall as by ioctl below.
		for _, name := range slices.Sorted(maps.Keys(metaCalls)) {
			if nr, ok := a.Nr[name]; ok {
				p.jumpIf(nr, notify)
			}
		}
		p.jumpIf(a.Nr["file_setattr"], eperm)
	}
	if o.Guard {
		p.jumpIf(a.Nr["openat2"], enosys)
		// The guard makes files with the command's umask, which it
		// follows through umask(2).
		p.jumpIf(a.Nr["umask"], notify)
		for _, name := range slices.Sorted(maps.Keys(fileCalls)) {
			nr, ok := a.Nr[name]
			switch {
			case !ok:
			case name == "open":
				p.jumpIf(nr, openArg1)
			case name == "openat":
				p.jumpIf(nr, openArg2)
			default:
				p.jumpIf(nr, notify)
			}
		}
	}
	p.ret(retAllow)

	if o.Guard {
		// An open goes to the guard when it may write or create (with
		// GuardReads, every open): a read stays in the kernel. O_PATH
		// does neither (the kernel drops every other flag with it), and
		// its descriptor reads nothing — every use that could goes
		// through the guard by /proc/self/fd — while the guard could not
		// hand one back (ADDFD takes no O_PATH file): it stays in the
		// kernel too.
		openFlags := func(label string, arg uint32) {
			p.label(label)
			p.load(offArg(arg))
			p.jumpIfAnySet(oPath, allow)
			if o.GuardReads {
				p.ret(retUserNotif)
				return
			}
			p.jumpIfAnySet(OpenWrites, notify)
			p.ret(retAllow)
		}
		if _, ok := a.Nr["open"]; ok {
			openFlags(openArg1, 1)
		}
		openFlags(openArg2, 2)
	}

	p.label(socket)
	p.load(offArg(0))
	switch {
	case o.reportsSockets():
		p.jumpIf(afUnix, notify)
	case o.Unix == UnixNone:
		p.jumpIf(afUnix, eperm)
	case o.Unix == UnixByPath:
		p.jumpIf(afUnix, unixTyp)
	}
	p.jumpIf(afVsock, eperm)
	// made is where an allowed socket goes: the kernel, or the
	// supervisor that makes it (OwnSockets).
	made := allow
	if o.HostNamespaces && o.OwnSockets {
		made = notify
	}
	if o.HostNamespaces {
		p.jumpIf(afInet, inetTyp)
		p.jumpIf(afInet6, inetTyp)
		if o.Unix == UnixAll {
			p.jumpIf(afUnix, made)
		}
		p.ret(retErrno | errnoEPERM)
		p.label(inetTyp)
		p.load(offArg(1))
		p.and(sockTypeMask)
		p.jumpIfNot(sockStream, eperm)
		// Plain TCP only: SCTP can connect through setsockopt, past
		// connect(2) and its supervisor.
		p.load(offArg(2))
		p.jumpIf(0, made)
		p.jumpIf(ipprotoTCP, made)
		p.ret(retErrno | errnoEPERM)
	} else {
		p.ret(retAllow)
	}
	if o.Unix == UnixByPath {
		p.label(unixTyp)
		p.load(offArg(1))
		p.and(sockTypeMask)
		p.jumpIf(sockStream, made)
		p.ret(retErrno | errnoEPERM)
	}

	// socketpair: only AF_UNIX makes pairs. A datagram pair (SOCK_RAW is
	// a datagram socket for AF_UNIX) is an unbound datagram socket that
	// sendto, sendmsg's msg_name or connect can aim at any socket file
	// the sandbox sees (syslog, journald, an agent), past the socket()
	// rule: only stream and seqpacket pairs are made, unless every Unix
	// socket is allowed.
	p.label(sockPair)
	p.load(offArg(0))
	p.jumpIfNot(afUnix, eperm)
	if o.Unix != UnixAll {
		p.load(offArg(1))
		p.and(sockTypeMask)
		p.jumpIf(sockStream, allow)
		p.jumpIf(sockSeqpack, allow)
		if o.reportsSockets() {
			p.ret(retUserNotif)
		} else {
			p.ret(retErrno | errnoEPERM)
		}
	} else {
		p.ret(retAllow)
	}

	p.label(fcntl)
	p.load(offArg(1))
	p.jumpIf(fSetLease, eperm)
	p.ret(retAllow)

	p.label(ioctl)
	p.load(offArg(1))
	p.jumpIf(tiocsti, eperm)
	p.jumpIf(tioclinux, eperm)
	if o.HostNamespaces || o.Guard {
		// Read-only mounts refuse these for what exists at launch; in
		// the fallback nothing would, and a file that appears later (a
		// deny entry's match the host makes) has no such mount.
		for _, cmd := range inodeIoctls {
			p.jumpIf(cmd, eperm)
		}
		for _, cmd := range []uint32{fiClone, fiCloneRange, fiDedupeRange, fsIOCGetFSLabel} {
			p.jumpIf(cmd, allow)
		}
		p.and(0xff00)
		p.jumpIf(btrfsType, eperm)
	}
	p.ret(retAllow)

	if !o.NestedNamespaces {
		p.label(cloneNs)
		p.load(offArg(0))
		p.jumpIfAnySet(cloneNewUser|cloneNewNS, eperm)
		p.ret(retAllow)
	}
	if o.HostNamespaces {
		p.label(fastOp2)
		p.load(offArg(2))
		p.jumpIfAnySet(msgFastOpen, eperm)
		p.ret(retAllow)
		p.label(fastOp3)
		p.load(offArg(3))
		p.jumpIfAnySet(msgFastOpen, eperm)
		p.ret(retAllow)
	}

	p.label(allow)
	p.ret(retAllow)
	if o.notifies() {
		p.label(notify)
		p.ret(retUserNotif)
	}
	p.label(eperm)
	p.ret(retErrno | errnoEPERM)
	p.label(enosys)
	p.ret(retErrno | errnoENOSYS)
	p.label(kill)
	p.ret(retKillProcess)
	return p.assemble()
}

// Disassemble prints a filter one instruction per line, with syscall
// numbers named for arch, for srt --debug.
func Disassemble(a Arch, prog []bpf.Instruction) string {
	names := map[uint32]string{}
	for name, nr := range a.Nr {
		names[nr] = name
	}
	var b strings.Builder
	loadedNr := false
	for i, ins := range prog {
		line := fmt.Sprint(ins)
		switch in := ins.(type) {
		case bpf.LoadAbsolute:
			loadedNr = in.Off == offNr
			line += "  ; " + fieldName(in.Off)
		case bpf.JumpIf:
			op := map[bpf.JumpTest]string{bpf.JumpEqual: "==", bpf.JumpGreaterOrEqual: ">=", bpf.JumpBitsSet: "&"}[in.Cond]
			val := fmt.Sprintf("%#x", in.Val)
			if loadedNr {
				val = fmt.Sprint(in.Val)
			}
			line = fmt.Sprintf("if A %s %s goto %d else %d", op, val, i+1+int(in.SkipTrue), i+1+int(in.SkipFalse))
			if loadedNr {
				if n, ok := names[in.Val]; ok {
					line += "  ; " + n
				}
			}
		case bpf.RetConstant:
			line += "  ; " + actionName(in.Val)
		}
		fmt.Fprintf(&b, "%3d  %s\n", i, line)
	}
	return b.String()
}

func fieldName(off uint32) string {
	switch {
	case off == offNr:
		return "syscall number"
	case off == offArch:
		return "audit arch"
	case off >= offArg0 && (off-offArg0)%8 == 0:
		return fmt.Sprintf("arg%d (low 32 bits)", (off-offArg0)/8)
	}
	return fmt.Sprintf("offset %d", off)
}

func actionName(v uint32) string {
	switch {
	case v == retAllow:
		return "allow"
	case v == retUserNotif:
		return "ask the supervisor"
	case v == retKillProcess:
		return "kill the process"
	case v&0xffff0000 == retErrno:
		return fmt.Sprintf("errno %d", v&0xffff)
	}
	return fmt.Sprintf("action %#x", v)
}

// FromSettings returns the filter options of settings s and the Unix socket
// paths a connect may reach (allowUnixSockets, expanded like filesystem
// entries, symlinks resolved where they exist).
func FromSettings(s *config.Settings, home, cwd string) (Options, []string) {
	o := Options{NestedNamespaces: s.AllowNestedUserNamespaces}
	var paths []string
	switch {
	case s.Network.AllowAllUnixSockets:
		o.Unix = UnixAll
	case len(s.Network.AllowUnixSockets) > 0:
		for _, e := range s.Network.AllowUnixSockets {
			p, ok, err := config.Expand(config.PathEntry{Path: e, Literal: true}, home, cwd)
			if err != nil || !ok {
				continue
			}
			if real, err := filepath.EvalSymlinks(p.Path); err == nil {
				paths = append(paths, real)
			} else {
				paths = append(paths, p.Path)
			}
		}
		if len(paths) > 0 {
			o.Unix = UnixByPath
		}
	}
	return o, paths
}

// Describe prints the filter of o for the running architecture.
func Describe(o Options) string {
	a, ok := arches[runtime.GOARCH]
	if !ok {
		return "no seccomp filter for " + runtime.GOARCH + "\n"
	}
	return fmt.Sprintf("%s, %+v:\n%s", a.Name, o, Disassemble(a, Filter(a, o)))
}

// program is a tiny assembler with forward labels for conditional jumps.
type program struct {
	ins    []bpf.Instruction
	fixups []fixup
	labels map[string]int
}

type fixup struct {
	at    int
	label string
	onNot bool // the label is the target when the condition is false
}

func (p *program) load(off uint32) {
	p.ins = append(p.ins, bpf.LoadAbsolute{Off: off, Size: 4})
}

func (p *program) and(v uint32) {
	p.ins = append(p.ins, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: v})
}

func (p *program) jump(cond bpf.JumpTest, v uint32, label string, onNot bool) {
	p.fixups = append(p.fixups, fixup{at: len(p.ins), label: label, onNot: onNot})
	p.ins = append(p.ins, bpf.JumpIf{Cond: cond, Val: v})
}

func (p *program) jumpIf(v uint32, label string)    { p.jump(bpf.JumpEqual, v, label, false) }
func (p *program) jumpIfNot(v uint32, label string) { p.jump(bpf.JumpEqual, v, label, true) }
func (p *program) jumpIfAtLeast(v uint32, label string) {
	p.jump(bpf.JumpGreaterOrEqual, v, label, false)
}
func (p *program) jumpIfAnySet(bits uint32, label string) {
	p.jump(bpf.JumpBitsSet, bits, label, false)
}

func (p *program) ret(v uint32) { p.ins = append(p.ins, bpf.RetConstant{Val: v}) }

func (p *program) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	if _, dup := p.labels[name]; dup {
		panic(fmt.Sprintf("seccomp: label %q placed twice", name))
	}
	p.labels[name] = len(p.ins)
}

// assemble resolves the labels. Every jump is forward and short, so the
// 8-bit skips of classic BPF suffice; anything else is a bug here.
func (p *program) assemble() []bpf.Instruction {
	for _, f := range p.fixups {
		target, ok := p.labels[f.label]
		skip := target - f.at - 1
		if !ok || skip < 0 || skip > 255 {
			panic(fmt.Sprintf("seccomp: bad jump to %q", f.label))
		}
		j := p.ins[f.at].(bpf.JumpIf)
		if f.onNot {
			j.SkipFalse = uint8(skip)
		} else {
			j.SkipTrue = uint8(skip)
		}
		p.ins[f.at] = j
	}
	return p.ins
}
