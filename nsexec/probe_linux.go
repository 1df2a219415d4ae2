package nsexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/srt-go/srt/landlock"

	"golang.org/x/sys/unix"
)

// roleProbe is the re-executed binary that only proves the namespaces
// could be created.
const roleProbe = "__srt_nsexec_probe"

// Feature is one line of what the host supports.
type Feature struct {
	Name   string
	OK     bool
	Detail string
}

// Facts are what this host offers the sandbox, for srt doctor.
type Facts struct {
	Features []Feature
	// Namespaces is nil when the namespace sandbox can run here, or why
	// not, explained.
	Namespaces error
	// LandlockABI is the kernel's Landlock ABI; 0: none.
	LandlockABI int
	// MaskedProc: Namespaces is ErrMaskedProc.
	MaskedProc bool
	// Guard is nil when srt can serve the sandbox's guard here (for the
	// namespace sandbox; the fallback's in FallbackGuard), or why not.
	Guard, FallbackGuard error
}

// Probe checks what this host offers the sandbox. It starts one process in
// the sandbox's namespaces, the way a run would, and reads kernel settings.
func Probe() *Facts {
	f := &Facts{LandlockABI: landlock.ABI()}
	add := func(name string, ok bool, detail string) {
		f.Features = append(f.Features, Feature{Name: name, OK: ok, Detail: detail})
	}
	if err := probeNamespaces(); err == nil {
		add("user namespaces", true, "user, mount, PID, network, IPC, UTS and cgroup namespaces can be created")
	} else if errors.Is(err, ErrMaskedProc) {
		f.Namespaces, f.MaskedProc = err, true
		add("user namespaces", false, err.Error())
	} else {
		f.Namespaces = Explain(err)
		add("user namespaces", false, f.Namespaces.Error())
	}
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == 0:
		add("Landlock", true, fmt.Sprintf("ABI %d", abi))
	case errno == unix.EOPNOTSUPP:
		add("Landlock", false, "built into the kernel but disabled (add landlock to the lsm= boot parameter)")
	default:
		add("Landlock", false, fmt.Sprintf("not available (%v)", errno))
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		add("seccomp", true, "filters can be installed")
	} else {
		add("seccomp", false, err.Error())
	}
	_, nft := os.Stat("/sys/module/nf_tables")
	add("nftables", nft == nil, map[bool]string{true: "nf_tables is loaded", false: "nf_tables is not loaded (it may load on first use)"}[nft == nil])
	_, cg := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	add("cgroup v2", cg == nil, map[bool]string{true: "unified hierarchy at /sys/fs/cgroup", false: "no unified cgroup hierarchy"}[cg == nil])
	f.Guard, f.FallbackGuard = GuardServable(false), GuardServable(true)
	switch {
	case f.Guard == nil:
		how := "served with process_vm_readv, pidfd_getfd and a thread of its own"
		if sharedFS.Load() {
			how = "served with process_vm_readv and pidfd_getfd; srt's threads share one umask (unshare is refused)"
		}
		add("path guard", true, how)
	case f.FallbackGuard == nil:
		missing := "some of its calls"
		var se *ServableError
		if errors.As(f.Guard, &se) {
			missing = strings.Join(se.Missing, ", ")
		}
		add("path guard", false, "this seccomp profile refuses "+missing+": the namespace sandbox's guard cannot be served; the fallback's is, through /proc/PID/mem, /proc/PID/fd and sockets srt makes")
	default:
		add("path guard", false, f.FallbackGuard.Error())
	}
	c := inContainer()
	add("container", !c, map[bool]string{true: "running inside a container", false: "not inside a container"}[c])
	restrict := strings.TrimSpace(readFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"))
	add("AppArmor userns restriction", restrict != "1", map[string]string{"1": "on: unprivileged user namespaces are refused", "0": "off", "": "not present"}[restrict])
	return f
}

func readFile(p string) string {
	data, _ := os.ReadFile(p)
	return string(data)
}

// ErrMaskedProc is what probeNamespaces says where namespaces can be
// made but no fresh /proc mounted in them: a container's /proc with
// masked paths (Docker's default; systempaths=unconfined lifts it).
var ErrMaskedProc = errors.New("the namespaces can be created, but this /proc has masked paths (a container's), and the kernel then lets no namespace mount a fresh one; the full sandbox needs one (Docker: --security-opt systempaths=unconfined)")

// probeProcMasked is the probe's exit status for ErrMaskedProc.
const probeProcMasked = 3

// probeProc is the probe's work in the namespaces: it mounts a fresh
// /proc in its own mount namespace, as the init would.
func probeProc() int {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return 0 // the init would fail earlier, and say why
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err == unix.EPERM {
		return probeProcMasked
	}
	return 0
}

func probeNamespaces() error {
	cmd := exec.Command("/proc/self/exe", roleProbe)
	cmd.SysProcAttr = sandboxNamespaces()
	if out, err := cmd.CombinedOutput(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == probeProcMasked {
			return ErrMaskedProc
		}
		if errors.As(err, &ee) {
			return fmt.Errorf("the probe failed inside the namespaces: %s", strings.TrimSpace(string(out)))
		}
		return err
	}
	return nil
}
