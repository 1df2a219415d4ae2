package testenv

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// RequireUserNamespaces skips t when this kernel, or the policy around
// this process (a container's seccomp profile, an AppArmor restriction),
// does not let the current user create user and mount namespaces. The
// probe is independent of the code under test, so a broken sandbox fails
// instead of skipping.
func RequireUserNamespaces(t testing.TB) {
	t.Helper()
	cmd := exec.Command("/bin/true")
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	if err := cmd.Run(); err != nil {
		t.Skipf("requires user namespaces (uid %d cannot create them here: %v)", uid, err)
	}
}
