package seatbelt

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/srt-go/srt/policy"
)

// What a command may do besides files: the facts of macOS below (service
// names, sysctl names, IOKit classes) are what a process needs to start
// and run ordinary tools; the reference grants the same.

// Settings are the profile's inputs besides the filesystem policy.
type Settings struct {
	Options
	// ProxyPorts are the loopback ports of the run's proxies (HTTP and
	// SOCKS; one when they share a port).
	ProxyPorts []int
	// LocalBinding is network.allowLocalBinding: the command may listen,
	// on loopback, and connect to loopback; never to a remote host.
	LocalBinding bool
	// AllUnixSockets is network.allowAllUnixSockets; UnixSockets the
	// paths of network.allowUnixSockets, resolved.
	AllUnixSockets bool
	UnixSockets    []string
	// MachLookup is network.allowMachLookup; WeakerNetworkIsolation
	// enableWeakerNetworkIsolation (the trustd service, which Go's and
	// other TLS verification asks); AppleEvents allowAppleEvents; Pty
	// allowPty.
	MachLookup             []string
	WeakerNetworkIsolation bool
	AppleEvents            bool
	Pty                    bool
}

var (
	// Not the keychain's services (com.apple.SecurityServer,
	// com.apple.securityd.xpc: they hand out stored secrets that no
	// denyRead can hide), nor Launch Services' (launchservicesd,
	// lsd.mapdb: apps it opens run outside the sandbox), which the
	// reference grants.
	machServices = []string{"com.apple.audio.systemsoundserver", "com.apple.distributed_notifications@Uv3", "com.apple.FontObjectsServer",
		"com.apple.fonts", "com.apple.logd", "com.apple.PowerManagement.control", "com.apple.system.logger",
		"com.apple.system.notification_center", "com.apple.system.opendirectoryd.libinfo", "com.apple.system.opendirectoryd.membership",
		"com.apple.bsd.dirhelper"}
	sysctlNames = []string{"hw.activecpu", "hw.busfrequency_compat", "hw.byteorder", "hw.cacheconfig", "hw.cachelinesize_compat", "hw.cpufamily",
		"hw.cpufrequency", "hw.cpufrequency_compat", "hw.cputype", "hw.l1dcachesize_compat", "hw.l1icachesize_compat", "hw.l2cachesize_compat",
		"hw.l3cachesize_compat", "hw.logicalcpu", "hw.logicalcpu_max", "hw.machine", "hw.memsize", "hw.ncpu", "hw.nperflevels", "hw.packages",
		"hw.pagesize_compat", "hw.pagesize", "hw.physicalcpu", "hw.physicalcpu_max", "hw.tbfrequency_compat", "hw.vectorunit", "kern.argmax",
		"kern.hostname", "kern.maxfiles", "kern.maxfilesperproc", "kern.maxproc", "kern.ngroups", "kern.osproductversion",
		"kern.osrelease", "kern.ostype", "kern.osvariant_status", "kern.osversion", "kern.secure_kernel", "kern.tcsm_available", "kern.tcsm_enable",
		"kern.usrstack64", "kern.version", "kern.willshutdown", "machdep.cpu.brand_string", "machdep.ptrauth_enabled",
		"security.mac.lockdown_mode_state", "sysctl.proc_cputype", "vm.loadavg"}
	// Not kern.proc.all (every process of the host, which the command
	// may not see), nor kern.bootargs.
	sysctlPrefixes = []string{"hw.optional.arm", "hw.optional.armv8_", "hw.perflevel", "kern.proc.pgrp.", "kern.proc.pid.",
		"machdep.cpu.", "net.routetable."}
	// Not /dev/tty: the command runs in a session of its own, with no
	// controlling terminal to push keystrokes into (TIOCSTI).
	ioctlDevices     = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/dtracehelper"}
	writableDevices  = []string{"/dev/stdout", "/dev/stderr", "/dev/null", "/dev/dtracehelper", "/dev/autofs_nowait"}
	appleEventsMachs = []string{"com.apple.coreservices.appleevents", "com.apple.CoreServices.coreservicesd", "com.apple.coreservices.quarantine-resolver"}
)

func symbolFilter(kind, value string) Filter { return Filter{Kind: kind, Value: value, Symbol: true} }

func names(kind string, values []string) []Filter {
	fs := make([]Filter, len(values))
	for i, v := range values {
		fs[i] = Filter{Kind: kind, Value: v}
	}
	return fs
}

// Build is the whole profile of a run: what any process needs, the
// network (only the run's proxies, on loopback), the Mach, Apple Events
// and terminal settings, the filesystem (Filesystem), and what keeps a
// denied path from being moved away from its rule.
func Build(pol *policy.Policy, s Settings) (*Profile, error) {
	sameSandbox := []Filter{symbolFilter("target", "same-sandbox")}
	rules := []Rule{
		{Action: Allow, Ops: []string{"process-exec", "process-fork"}, Why: "running programs"},
		{Action: Allow, Ops: []string{"process-info*", "signal", "mach-priv-task-port"}, Filters: sameSandbox, Why: "the command's own processes, no others"},
		{Action: Allow, Ops: []string{"user-preference-read", "ipc-posix-shm", "ipc-posix-sem", "iokit-get-properties", "distributed-notification-post"}, Why: "what ordinary programs need"},
		{Action: Allow, Ops: []string{"mach-lookup"}, Filters: names("global-name", machServices), Why: "the system services every process uses"},
		{Action: Allow, Ops: []string{"iokit-open"}, Filters: []Filter{{Kind: "iokit-registry-entry-class", Value: "IOSurfaceRootUserClient"},
			{Kind: "iokit-registry-entry-class", Value: "RootDomainUserClient"}, {Kind: "iokit-user-client-class", Value: "IOSurfaceSendRight"}}, Why: "graphics surfaces and power state"},
		{Action: Allow, Ops: []string{"system-socket"}, Filters: []Filter{{All: []Filter{symbolFilter("socket-domain", "AF_SYSTEM"), symbolFilter("socket-protocol", "2")}}}, Why: "kernel control sockets (system information)"},
		{Action: Allow, Ops: []string{"sysctl-read"}, Filters: append(names("sysctl-name", sysctlNames), names("sysctl-name-prefix", sysctlPrefixes)...), Why: "system information"},
		{Action: Allow, Ops: []string{"sysctl-write"}, Filters: []Filter{{Kind: "sysctl-name", Value: "kern.tcsm_enable"}}, Why: "what the C library writes"},
		{Action: Allow, Ops: []string{"file-ioctl"}, Filters: names("literal", ioctlDevices), Why: "the harmless devices"},
	}
	if s.WeakerNetworkIsolation {
		rules = append(rules, Rule{Action: Allow, Ops: []string{"mach-lookup"}, Filters: names("global-name", []string{"com.apple.trustd.agent"}), Why: "enableWeakerNetworkIsolation"})
	}
	if s.AppleEvents {
		rules = append(rules,
			Rule{Action: Allow, Ops: []string{"appleevent-send", "lsopen"}, Why: "allowAppleEvents"},
			Rule{Action: Allow, Ops: []string{"mach-lookup"}, Filters: names("global-name", appleEventsMachs), Why: "allowAppleEvents"})
	}
	for _, m := range s.MachLookup {
		f := Filter{Kind: "global-name", Value: m}
		if p, ok := strings.CutSuffix(m, "*"); ok {
			f = Filter{Kind: "global-name-prefix", Value: p}
		}
		rules = append(rules, Rule{Action: Allow, Ops: []string{"mach-lookup"}, Filters: []Filter{f}, Why: "network.allowMachLookup " + m})
	}
	rules = append(rules, network(s)...)
	fs, err := Filesystem(pol, s.Options)
	if err != nil {
		return nil, err
	}
	rules = append(rules, fs...)
	if !pol.Disabled {
		rules = append(rules, Rule{Action: Allow, Ops: []string{"file-write*"}, Filters: names("subpath", writableDevices), Why: "the standard streams and the null device"})
	}
	// Devices that read around every file rule (raw disks) or the network
	// (packet capture), whatever their modes allow.
	rules = append(rules, Rule{Action: Deny, Ops: []string{"file-read*", "file-write*", "file-ioctl"},
		Filters: []Filter{{Kind: "regex", Value: "^/dev/(r?disk[0-9]|bpf|auditpipe|fsevents|klog|pf$)"}}, Why: "raw disks, packet capture and kernel event devices"})
	// Other terminals of the user (other windows' /dev/ttys*) are neither
	// read nor written: keystrokes typed there, passwords among them, are
	// not the command's. Its own stdio, already open, is not opened again.
	rules = append(rules, Rule{Action: Deny, Ops: []string{"file-read*", "file-write*", "file-ioctl"}, Filters: []Filter{{Kind: "regex", Value: "^/dev/ttys[0-9]+$"}},
		Why: "the user's other terminals"})
	if s.Pty {
		ptys := []Filter{{Kind: "literal", Value: "/dev/ptmx"}, {Kind: "regex", Value: "^/dev/ttys[0-9]+$"}}
		rules = append(rules,
			Rule{Action: Allow, Ops: []string{"pseudo-tty"}, Why: "allowPty"},
			Rule{Action: Allow, Ops: []string{"file-ioctl", "file-read*", "file-write*"}, Filters: ptys, Why: "allowPty"})
	}
	rules = append(rules, moveBlocking(pol)...)
	return &Profile{Tag: s.Tag, Rules: rules}, nil
}

// network lets the command reach the run's proxies and nothing else:
// never a remote host, with allowLocalBinding loopback too.
func network(s Settings) []Rule {
	var rules []Rule
	if s.LocalBinding {
		rules = append(rules,
			Rule{Action: Allow, Ops: []string{"network-bind", "network-inbound"}, Filters: []Filter{{Kind: "local ip", Value: "localhost:*"}}, Why: "allowLocalBinding: listening on loopback"},
			// "remote", not "local": every outbound socket has a local
			// loopback-or-not endpoint, and a rule on it would let any
			// connection through (the reference's srt#131).
			Rule{Action: Allow, Ops: []string{"network-outbound"}, Filters: []Filter{{Kind: "remote ip", Value: "localhost:*"}}, Why: "allowLocalBinding: connecting to loopback"})
	}
	switch {
	case s.AllUnixSockets:
		rules = append(rules,
			Rule{Action: Allow, Ops: []string{"system-socket"}, Filters: []Filter{symbolFilter("socket-domain", "AF_UNIX")}, Why: "allowAllUnixSockets"},
			Rule{Action: Allow, Ops: []string{"network-bind"}, Filters: []Filter{{Kind: "local unix-socket", Inner: &Filter{Kind: "path-regex", Value: "^/"}}}, Why: "allowAllUnixSockets"},
			Rule{Action: Allow, Ops: []string{"network-outbound"}, Filters: []Filter{{Kind: "remote unix-socket", Inner: &Filter{Kind: "path-regex", Value: "^/"}}}, Why: "allowAllUnixSockets"})
	case len(s.UnixSockets) > 0:
		rules = append(rules, Rule{Action: Allow, Ops: []string{"system-socket"}, Filters: []Filter{symbolFilter("socket-domain", "AF_UNIX")}, Why: "allowUnixSockets"})
		for _, p := range s.UnixSockets {
			rules = append(rules, Rule{Action: Allow, Ops: []string{"network-outbound"}, Filters: []Filter{{Kind: "remote unix-socket", Inner: &Filter{Kind: "path-literal", Value: p}}}, Why: "allowUnixSockets " + p})
		}
	}
	if s.AllUnixSockets || len(s.UnixSockets) > 0 {
		// The system's resolver answers any name, a way out past the
		// proxies (DNS exfiltration): never reachable, whatever
		// allowAllUnixSockets or a path under /var says.
		rules = append(rules, Rule{Action: Deny, Ops: []string{"network-outbound"}, Filters: []Filter{
			{Kind: "remote unix-socket", Inner: &Filter{Kind: "path-literal", Value: "/private/var/run/mDNSResponder"}},
			{Kind: "remote unix-socket", Inner: &Filter{Kind: "path-literal", Value: "/var/run/mDNSResponder"}}}, Why: "the system's resolver, a way out past the proxies"})
	}
	seen := map[int]bool{}
	for _, port := range s.ProxyPorts {
		if seen[port] {
			continue
		}
		seen[port] = true
		rules = append(rules, Rule{Action: Allow, Ops: []string{"network-outbound"}, Filters: []Filter{{Kind: "remote ip", Value: fmt.Sprintf("localhost:%d", port)}}, Why: "the run's proxy"})
	}
	return rules
}

// moveBlocking keeps every denied path where its rule names it: a
// directory on its way (up to, not including, "/") cannot be removed or
// renamed, or the denied tree would leave its rule behind (Linux refuses
// such renames too: mount points, and the path guard).
func moveBlocking(pol *policy.Policy) []Rule {
	if pol.Disabled {
		return nil
	}
	seen := map[string]bool{}
	var dirs []string
	add := func(p string) {
		for d := filepath.Dir(p); d != "." && filepath.Dir(d) != d && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, rs := range [][]policy.Rule{pol.Reads, pol.Writes} {
		for _, r := range rs {
			if !r.Allow {
				add(r.Path)
			}
		}
	}
	for _, l := range pol.Later {
		if l.Glob != nil {
			add(l.Glob.Root() + "/x")
		} else {
			add(l.Path)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	sort.Strings(dirs)
	return []Rule{{Action: Deny, Ops: []string{"file-write-unlink"}, Filters: names("literal", dirs), Why: "the directories above denied paths stay where they are"}}
}

// OwnTerminal is the rule that gives a run its own terminal, path, when
// it has one (Launch.Terminal): last in the profile, over the rule that
// denies the user's other terminals.
func OwnTerminal(path string) Rule {
	return Rule{Action: Allow, Ops: []string{"file-read*", "file-write*", "file-ioctl"},
		Filters: []Filter{{Kind: "literal", Value: path}, {Kind: "literal", Value: "/dev/tty"}}, Why: "the run's own terminal"}
}
