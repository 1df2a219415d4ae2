package nsexec

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Confinement of the process that becomes the command: its privileges.

// dropPrivileges leaves the calling thread, and what it executes, with no
// capability in any set and no way to regain one: the bounding and
// ambient sets are emptied, the inheritable set cleared, and no_new_privs
// set, so not even a setuid or file-capability binary can add any; the
// permitted and effective sets then come out of execve empty. A caller
// without CAP_SETPCAP (the fallback run by a user other than root) cannot
// shrink its bounding set, and needs not: with no_new_privs and nothing
// inheritable, execve grants nothing. No core dump can be written either.
func dropPrivileges() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading capabilities: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		last := len(allCaps()) - 1
		for c := 0; c <= last; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	for i := range data {
		data[i].Inheritable = 0
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing inheritable capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	// No core dumps: the kernel writes one where the dying process's cwd
	// is, a file no guarded call makes (in a hooks directory, at a denied
	// path). The hard limit goes back up only with CAP_SYS_RESOURCE.
	if err := unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}); err != nil {
		return fmt.Errorf("refusing core dumps: %w", err)
	}
	// Descriptors this process inherited stay out of the command.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("marking descriptors close-on-exec: %w", err)
	}
	return nil
}
