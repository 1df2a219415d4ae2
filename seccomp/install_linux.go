package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Install loads the command's filter on every thread of the calling
// process (TSYNC), so whichever thread forks the command passes it on; a
// filter is inherited across fork and exec and can never be removed. It
// requires no_new_privs, which dropPrivileges sets first. When the filter
// asks the supervisor (o.notifies), the listener descriptor is returned;
// otherwise -1.
func Install(o Options) (listener int, err error) {
	arch, ok := arches[runtime.GOARCH]
	if !ok {
		return -1, fmt.Errorf("no seccomp filter for %s; refusing to run without one", runtime.GOARCH)
	}
	raw, err := bpf.Assemble(Filter(arch, o))
	if err != nil {
		return -1, fmt.Errorf("assembling the seccomp filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_TSYNC)
	if o.notifies() {
		// A listener with TSYNC needs TSYNC_ESRCH (5.7); WAIT_KILLABLE_RECV
		// (5.19) keeps an ordinary signal from abandoning a connect the
		// supervisor is already performing. Older kernels go without it.
		flags |= unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_TSYNC_ESRCH
		fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, uintptr(unsafe.Pointer(&prog)))
		if errno == unix.EINVAL {
			fd, _, errno = unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
		}
		runtime.KeepAlive(filter)
		if errno != 0 {
			return -1, fmt.Errorf("installing the seccomp filter with a listener: %w", errno)
		}
		return int(fd), nil
	}
	tid, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return -1, fmt.Errorf("installing the seccomp filter: %w", errno)
	}
	if tid != 0 {
		return -1, fmt.Errorf("installing the seccomp filter: thread %d could not take it", tid)
	}
	return -1, nil
}
