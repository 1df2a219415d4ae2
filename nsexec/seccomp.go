package nsexec

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// The seccomp filter of the command, as data: a classic BPF program over
// struct seccomp_data, assembled here, interpreted in unit tests, and
// installed by seccomp_linux.go. This is the first, minimal filter; the
// full one (spec e.5) extends the same table.

// Seccomp return actions (linux/seccomp.h).
const (
	retAllow       = 0x7fff0000
	retErrno       = 0x00050000
	retKillProcess = 0x80000000
	errnoEPERM     = 1
)

// Offsets in struct seccomp_data: nr, arch, then args[6] from 16 (the low
// 32 bits of each argument first, on the little-endian machines we target).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

// Arch describes one syscall ABI the filter knows.
type Arch struct {
	Name      string
	AuditArch uint32 // AUDIT_ARCH_*
	// X32Bit, when set, marks syscall numbers of another ABI sharing this
	// audit arch (x32 on x86-64): they are refused whole.
	X32Bit uint32
	Socket uint32
	// IOUring are io_uring_setup, io_uring_enter and io_uring_register:
	// io_uring can create sockets without calling socket(2).
	IOUring [3]uint32
}

// Arches are the ABIs the filter is built for.
var Arches = map[string]Arch{
	"amd64": {Name: "x86_64", AuditArch: 0xc000003e, X32Bit: 0x40000000, Socket: 41, IOUring: [3]uint32{425, 426, 427}},
	"arm64": {Name: "aarch64", AuditArch: 0xc00000b7, Socket: 198, IOUring: [3]uint32{425, 426, 427}},
}

// Address families the command may not create sockets in: AF_UNIX reaches
// host services through their socket files (a docker.sock is a host
// escape), AF_VSOCK reaches the hypervisor.
const (
	afUnix  = 1
	afVsock = 40
)

// Filter returns the command's filter for arch. It kills the process on a
// foreign architecture (a 32-bit binary's syscalls would bypass every rule)
// and on x32 numbers, refuses AF_UNIX (unless allowUnix: the settings'
// allowAllUnixSockets) and AF_VSOCK sockets and io_uring with EPERM, and
// allows the rest.
func Filter(a Arch, allowUnix bool) []bpf.Instruction {
	const (
		kill  = "kill"
		eperm = "eperm"
		allow = "allow"
		sock  = "socket"
	)
	var p program
	p.load(offArch)
	p.jumpIfNot(a.AuditArch, kill)
	p.load(offNr)
	if a.X32Bit != 0 {
		p.jumpIfAtLeast(a.X32Bit, kill)
	}
	p.jumpIf(a.Socket, sock)
	for _, nr := range a.IOUring {
		p.jumpIf(nr, eperm)
	}
	p.ret(retAllow)
	p.label(sock)
	p.load(offArg0)
	if !allowUnix {
		p.jumpIf(afUnix, eperm)
	}
	p.jumpIf(afVsock, eperm)
	p.ret(retAllow)
	p.label(eperm)
	p.ret(retErrno | errnoEPERM)
	p.label(kill)
	p.ret(retKillProcess)
	return p.assemble()
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

func (p *program) jumpIf(v uint32, label string) {
	p.fixups = append(p.fixups, fixup{at: len(p.ins), label: label})
	p.ins = append(p.ins, bpf.JumpIf{Cond: bpf.JumpEqual, Val: v})
}

func (p *program) jumpIfNot(v uint32, label string) {
	p.fixups = append(p.fixups, fixup{at: len(p.ins), label: label, onNot: true})
	p.ins = append(p.ins, bpf.JumpIf{Cond: bpf.JumpEqual, Val: v})
}

func (p *program) jumpIfAtLeast(v uint32, label string) {
	p.fixups = append(p.fixups, fixup{at: len(p.ins), label: label})
	p.ins = append(p.ins, bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: v})
}

func (p *program) ret(v uint32) { p.ins = append(p.ins, bpf.RetConstant{Val: v}) }

func (p *program) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
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
