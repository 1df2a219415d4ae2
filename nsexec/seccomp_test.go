package nsexec

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// seccompData encodes struct seccomp_data for the interpreter, which loads
// words big-endian: each field is written so that the load yields its value.
func seccompData(nr, arch, arg0 uint32) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	binary.BigEndian.PutUint32(b[offArg0:], arg0)
	return b
}

func TestSeccompFilterTable(t *testing.T) {
	const i386 = 0x40000003
	for name, a := range Arches {
		vm, err := bpf.NewVM(Filter(a, false))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := bpf.Assemble(Filter(a, false)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// allowAllUnixSockets lifts the AF_UNIX rule and nothing else.
		lifted, err := bpf.NewVM(Filter(a, true))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			nr, arg0, want uint32
		}{{a.Socket, afUnix, retAllow}, {a.Socket, afVsock, retErrno | errnoEPERM}, {a.IOUring[0], 0, retErrno | errnoEPERM}} {
			if got, _ := lifted.Run(seccompData(c.nr, a.AuditArch, c.arg0)); uint32(got) != c.want {
				t.Errorf("%s with AF_UNIX allowed: nr %d arg %d: %#x, want %#x", name, c.nr, c.arg0, got, c.want)
			}
		}
		cases := []struct {
			what     string
			nr, arch uint32
			arg0     uint32
			want     uint32
		}{
			{"socket(AF_UNIX)", a.Socket, a.AuditArch, afUnix, retErrno | errnoEPERM},
			{"socket(AF_VSOCK)", a.Socket, a.AuditArch, afVsock, retErrno | errnoEPERM},
			{"socket(AF_INET)", a.Socket, a.AuditArch, 2, retAllow},
			{"socket(AF_INET6)", a.Socket, a.AuditArch, 10, retAllow},
			{"io_uring_setup", a.IOUring[0], a.AuditArch, 0, retErrno | errnoEPERM},
			{"io_uring_enter", a.IOUring[1], a.AuditArch, 0, retErrno | errnoEPERM},
			{"io_uring_register", a.IOUring[2], a.AuditArch, 0, retErrno | errnoEPERM},
			{"read", 0, a.AuditArch, 0, retAllow},
			{"socket on a foreign arch", a.Socket, i386, afUnix, retKillProcess},
			{"anything on a foreign arch", 3, i386, 0, retKillProcess},
		}
		if a.X32Bit != 0 {
			cases = append(cases, struct {
				what     string
				nr, arch uint32
				arg0     uint32
				want     uint32
			}{"x32 socket", a.X32Bit | a.Socket, a.AuditArch, afUnix, retKillProcess})
		}
		for _, c := range cases {
			got, err := vm.Run(seccompData(c.nr, c.arch, c.arg0))
			if err != nil {
				t.Fatalf("%s %s: %v", name, c.what, err)
			}
			if uint32(got) != c.want {
				t.Errorf("%s %s: action %#x, want %#x", name, c.what, got, c.want)
			}
		}
	}
}
