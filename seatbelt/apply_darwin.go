//go:build darwin

package seatbelt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"unsafe"
)

// The one file that touches macOS: a profile is applied with libSystem's
// sandbox_init, called without cgo the way golang.org/x/sys/unix calls
// libSystem (a dynamic import and an assembly trampoline), by a
// trampoline process that then executes the command,
// which inherits the profile with everything it starts. Built and vetted
// for darwin in CI; never run on macOS by this project yet.

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

// Trampoline is the re-executed srt's role on macOS: it reads the profile
// from the descriptor profileFD (a pipe or a file of the private runtime
// directory, never argv: long deny lists would overflow ARG_MAX), applies
// it, and executes argv with env in place of itself. It returns only on
// failure, and then nothing of the command has run.
func Trampoline(profileFD int, argv, env []string) error {
	f := os.NewFile(uintptr(profileFD), "profile")
	if f == nil {
		return errors.New("no profile descriptor")
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("reading the profile: %w", err)
	}
	if len(argv) == 0 {
		return errors.New("no command")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	if err := Apply(string(data)); err != nil {
		return err
	}
	return syscall.Exec(path, argv, env)
}
