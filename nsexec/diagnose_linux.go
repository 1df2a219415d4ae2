package nsexec

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Explain turns a failure to start the sandbox's init into a diagnosis:
// which namespace setting of this host refused it, and how to change it.
func Explain(err error) error {
	if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EACCES) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	read := func(p string) string { return strings.TrimSpace(readFile(p)) }
	var why string
	switch {
	case read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
		why = `kernel.apparmor_restrict_unprivileged_userns=1 forbids unprivileged user namespaces; run "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0", or add an AppArmor profile for srt that allows "userns,"`
	case read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
		why = `kernel.unprivileged_userns_clone=0 forbids unprivileged user namespaces; run "sysctl -w kernel.unprivileged_userns_clone=1"`
	case read("/proc/sys/user/max_user_namespaces") == "0":
		why = `user.max_user_namespaces=0 allows no user namespace; run "sysctl -w user.max_user_namespaces=15000"`
	case errors.Is(err, syscall.ENOSPC):
		why = "the limit of user namespaces (user.max_user_namespaces) is reached"
	case inContainer():
		why = "this looks like a container whose seccomp profile or capabilities forbid namespaces; for the full sandbox run it with " + dockerFull
	default:
		why = "the kernel refused to create the namespaces"
	}
	return fmt.Errorf("cannot create the sandbox's user namespace: %v: %s; or set enableWeakerNestedSandbox to run under the weaker Landlock + seccomp fallback, which srt doctor describes", err, why)
}

// dockerFull are the docker run options under which the namespace
// sandbox runs in a Docker container: namespaces (seccomp), and a /proc
// without masked paths, which the kernel requires of a fresh /proc.
const dockerFull = "docker run --security-opt seccomp=unconfined --security-opt systempaths=unconfined"

func inContainer() bool {
	if _, err := os.Stat("/.dockerenv"); err == nil {
		return true
	}
	data, _ := os.ReadFile("/proc/1/cgroup")
	return strings.Contains(string(data), "docker") || strings.Contains(string(data), "kubepods")
}
