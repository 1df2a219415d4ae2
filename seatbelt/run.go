package seatbelt

import (
	"path/filepath"

	"github.com/srt-go/srt/config"
)

// What a run's profile takes from srt's settings besides the filesystem
// policy, and the rules about srt's own run directories it ends with:
// for a run (srt's macOS backend) and for its plan (srt plan --os
// darwin), on any host.

// SettingsFor is what a run's profile says besides its filesystem
// policy: the settings' network, Mach, Apple Events and pty keys, the
// run's tag and its proxies' loopback ports. home and cwd expand
// network.allowUnixSockets.
func SettingsFor(settings *config.Settings, home, cwd, tag string, ports []int) Settings {
	n := settings.Network
	s := Settings{Options: Options{Tag: tag, GitConfig: settings.Filesystem.AllowGitConfig}, ProxyPorts: ports,
		LocalBinding: n.AllowLocalBinding, AllUnixSockets: n.AllowAllUnixSockets, MachLookup: n.AllowMachLookup,
		WeakerNetworkIsolation: settings.EnableWeakerNetworkIsolation, AppleEvents: settings.AllowAppleEvents, Pty: settings.AllowPty}
	for _, e := range n.AllowUnixSockets {
		if p, ok, err := config.Expand(config.PathEntry{Path: e, Literal: true}, home, cwd); err == nil && ok {
			if real, err := filepath.EvalSymlinks(p.Path); err == nil {
				p.Path = real
			}
			s.UnixSockets = append(s.UnixSockets, p.Path)
		}
	}
	return s
}

// RunDirRules are the rules a run's profile ends with, about srt's own
// directory base of run dirs (a real path, as Seatbelt sees paths) and
// the run's TMPDIR tmp.
func RunDirRules(base, tmp string, allowAllUnixSockets bool) []Rule {
	under := "^" + LiteralRegex(base) + "/"
	rules := []Rule{
		// The keeper reads the profile before it applies it; the command
		// may read neither its own after, nor another run's: a tag would
		// let it forge that run's denials in the system log.
		{Action: Deny, Ops: []string{"file-read*", "file-write*"},
			Filters: []Filter{{Kind: "regex", Value: under + "run-[^/]+/profile\\.sb$"}}, Why: "the runs' profiles, whose tags are srt's"},
		// srt's own sockets (a wrapped run's, which a command could take
		// or flood) and other runs' are never the command's, whatever
		// allowAllUnixSockets says; its own TMPDIR's are, where that
		// setting allows sockets.
		socketRule(Deny, under, "srt's own sockets, and other runs'"),
	}
	if allowAllUnixSockets {
		rules = append(rules, socketRule(Allow, "^"+LiteralRegex(tmp)+"/", "allowAllUnixSockets: the run's own TMPDIR"))
	}
	return rules
}

// socketRule is a rule on connecting to and binding Unix sockets whose
// paths match re.
func socketRule(a Action, re, why string) Rule {
	return Rule{Action: a, Ops: []string{"network-outbound", "network-bind"}, Filters: []Filter{
		{Kind: "remote unix-socket", Inner: &Filter{Kind: "path-regex", Value: re}},
		{Kind: "local unix-socket", Inner: &Filter{Kind: "path-regex", Value: re}}}, Why: why}
}
