//go:build darwin

package seatbelt

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

// The one file that touches macOS: a profile is applied with libSystem's
// sandbox_init, called without cgo the way golang.org/x/sys/unix calls
// libSystem (a dynamic import and an assembly trampoline), by the run's
// keeper (trampoline.go) before it starts the command, which inherits the
// profile with everything it starts. Built and vetted for darwin in CI;
// never run on macOS by this project yet.

//go:cgo_import_dynamic libc_sandbox_init sandbox_init "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_sandbox_free_error sandbox_free_error "/usr/lib/libSystem.B.dylib"

var (
	libc_sandbox_init_trampoline_addr       uintptr
	libc_sandbox_free_error_trampoline_addr uintptr
)

//go:linkname syscall_syscall syscall.syscall
func syscall_syscall(fn, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)

// Apply puts profile (the profile language's text) on this process: it and
// every process it starts from then on are confined by it, irrevocably.
func Apply(profile string) error {
	text, err := syscall.BytePtrFromString(profile)
	if err != nil {
		return fmt.Errorf("the profile: %w", err)
	}
	var errbuf *byte
	r, _, _ := syscall_syscall(libc_sandbox_init_trampoline_addr, uintptr(unsafe.Pointer(text)), 0, uintptr(unsafe.Pointer(&errbuf)))
	if r == 0 {
		return nil
	}
	msg := "sandbox_init failed"
	if errbuf != nil {
		msg = cString(errbuf)
		syscall_syscall(libc_sandbox_free_error_trampoline_addr, uintptr(unsafe.Pointer(errbuf)), 0, 0)
	}
	return errors.New("applying the Seatbelt profile: " + msg)
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}
