package nsexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"syscall"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/landlock"
	"golang.org/x/sys/unix"
)

// The fallback sandbox, for hosts that refuse user namespaces (Docker's
// default seccomp profile, Ubuntu's AppArmor restriction) when the
// settings allow a weaker sandbox: the command runs in the host's
// namespaces under Landlock (reads, writes, TCP ports, scoping) and the
// seccomp filter in its host-network mode, whose connect supervisor here
// in srt lets TCP reach only the proxies on loopback.

const roleFallback = "__srt_fallback"

// fallbackLacks are the guarantees of the full sandbox that do not hold in
// the fallback.
var fallbackLacks = []string{
	"other processes of this user are visible in /proc (Landlock still blocks signalling and tracing them)",
	"denyWrite entries and protected names inside writable trees are writable (Landlock cannot carve them out)",
	"programs that ignore the proxy variables cannot connect (no transparent path, no DNS)",
	"processes the command leaves behind may outlive srt",
	"Java clients cannot authenticate to the proxies",
}

// fallbackEnforcement describes the fallback under Landlock ABI abi.
func fallbackEnforcement(abi int) Enforcement {
	lacks := slices.Clone(fallbackLacks)
	if abi < 4 {
		lacks = append(lacks, fmt.Sprintf("Landlock ABI %d has no TCP rules (the seccomp supervisor still decides every connect)", abi))
	}
	if abi < 6 {
		lacks = append(lacks, fmt.Sprintf("Landlock ABI %d cannot scope signals: the command can signal this user's other processes", abi))
	}
	return Enforcement{Level: "partial", Layers: []string{
		fmt.Sprintf("Landlock ABI %d", abi), "seccomp (TCP only, every connect checked)", "network only through the policy proxies on loopback, with a per-run credential"},
		Lacks: lacks}
}

// prepareFallback fills in l to start the fallback child.
func (l *Launch) prepareFallback(s *config.Settings, o Options, side NetSide, argv, env []string, cwd string, filter FilterOptions, unixPaths []string) error {
	abi := landlock.ABI()
	if abi == 0 {
		return errors.New("refusing to run: neither user namespaces nor Landlock are available here, so no sandbox can be built")
	}
	rules, err := LandlockRules(l.Plan)
	if err != nil {
		return err
	}
	filter.HostNetwork = true
	filter.NestedNamespaces = false
	l.Seccomp, l.Landlock = filter, &rules
	l.Enforcement = fallbackEnforcement(abi)
	ports := side.Ports
	l.connectPolicy = &ConnectPolicy{Proc: "/proc", Unix: filter.Unix, UnixPaths: unixPaths, HostNetwork: true, OnDeny: o.OnEvent,
		Inet: func(ap netip.AddrPort) bool {
			// Exactly the proxies' address: another loopback address
			// could hold another service on the same port.
			return ap.Addr().Unmap() == netip.AddrFrom4([4]byte{127, 0, 0, 1}) && slices.Contains(ports, ap.Port())
		}}

	data, err := json.Marshal(&Spec{Plan: l.Plan, Argv: argv, Env: env, Cwd: cwd, RuntimeDir: l.RuntimeDir, Debug: o.Debug,
		Seccomp: filter, UnixSocketPaths: unixPaths, Landlock: &rules, Ports: ports, NullFDs: o.NullFDs})
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	l.specR = r
	go func() {
		w.Write(data)
		w.Close()
	}()
	cmd := command(o.Context, roleFallback)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{r, l.linkChild}
	cmd.Env = []string{}
	// The command stays in srt's session and process group, so job
	// control works; the filter refuses TIOCSTI on the shared terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	l.Cmd = cmd
	go l.watch()
	return nil
}

// runFallback is the fallback child: it applies Landlock and the seccomp
// filter to itself, hands the filter's listener to srt, and becomes the
// command.
func runFallback() error {
	toSrt, err := sayHello()
	if err != nil {
		return err
	}
	spec, err := readSpec()
	if err != nil {
		return err
	}
	path, err := findCommand(spec)
	if err != nil {
		return err
	}
	if spec.Landlock == nil {
		return errors.New("no Landlock rules in the spec")
	}
	abi, err := landlock.Apply(*spec.Landlock, landlock.Options{Scope: true, TCP: true, ConnectTCP: spec.Ports})
	if err != nil {
		return err
	}
	if abi == 0 {
		return errors.New("refusing to run: Landlock is not available")
	}
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return err
	}
	listener, err := installSeccomp(spec.Seccomp)
	if err != nil {
		return err
	}
	for _, fd := range spec.NullFDs {
		null, err := unix.Open(os.DevNull, unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		if null != fd {
			if err := unix.Dup3(null, fd, 0); err != nil {
				return err
			}
			unix.Close(null)
		}
	}
	err = sendFd(toSrt, listener)
	toSrt.Close()
	unix.Close(listener)
	if err != nil {
		return fmt.Errorf("handing the seccomp listener to srt: %w", err)
	}
	err = syscall.Exec(path, spec.Argv, spec.Env)
	fmt.Fprintf(os.Stderr, "srt: %s: %v\n", spec.Argv[0], err)
	os.Exit(126)
	return nil
}

// NamespacesAvailable reports whether this host lets srt create the
// sandbox's namespaces (one process is started to find out).
func NamespacesAvailable() error { return probeNamespaces() }
