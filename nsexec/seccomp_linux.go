package nsexec

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// installSeccomp loads the command's filter on the calling thread, which
// must be locked and must be the thread that forks the command: a filter
// belongs to a thread and is inherited across fork and exec. It requires
// no_new_privs, which dropPrivileges sets first.
func installSeccomp(allowUnix bool) error {
	arch, ok := Arches[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("no seccomp filter for %s; refusing to run without one", runtime.GOARCH)
	}
	raw, err := bpf.Assemble(Filter(arch, allowUnix))
	if err != nil {
		return fmt.Errorf("assembling the seccomp filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("installing the seccomp filter: %w", err)
	}
	runtime.KeepAlive(filter)
	return nil
}
