package config

import (
	"fmt"
	"strings"
)

// Every key of the settings file has one written rule per platform: srt
// applies it, refuses it (exits before anything runs when the settings
// ask for something with it), or it has no meaning there (accepted, and
// listed under --debug). A setting that is accepted and silently ignored
// would let a user believe in a protection that does not exist (DESIGN,
// promise 5), so a key whose feature is not built is refused, not
// accepted. The table below is the only place these rules live: Check
// and Meaningless read it, the README shows it (MarkdownRules), and a
// test walks the schema so that a new field cannot come in without a row.

// Handling is what srt does with a settings key on one platform.
type Handling int

const (
	// Applied: srt does what the key asks.
	Applied Handling = iota + 1
	// Refused: settings that ask for something with the key are refused
	// before anything runs, naming the key and why.
	Refused
	// NoMeaning: the key is accepted and changes nothing on the
	// platform; srt --debug lists it when the settings set it.
	NoMeaning
)

// String is the handling as the README table says it.
func (h Handling) String() string {
	switch h {
	case Applied:
		return "applied"
	case Refused:
		return "refused"
	case NoMeaning:
		return "no meaning"
	}
	return fmt.Sprintf("Handling(%d)", int(h))
}

// Rule is the handling of one key on one platform, and why: for Refused
// and NoMeaning the reason, for Applied an optional note on how.
type Rule struct {
	Handling Handling
	Why      string
}

// Platforms are the GOOS values every key has a rule for.
func Platforms() []string { return []string{"linux", "darwin", "windows"} }

// KeyRule is one row of the table: a key and its rule on each platform.
type KeyRule struct {
	// Key is the dotted path of the key in the settings file
	// ("network.tlsTerminate"); the rule covers everything beneath it.
	Key                    string
	Linux, Darwin, Windows Rule
	// set reports whether settings ask for something with the key: a
	// value other than the default. nil: the key can never be set.
	set func(*Settings) bool
}

// On returns the key's rule on goos; false for a GOOS the table has no
// column for.
func (k KeyRule) On(goos string) (Rule, bool) {
	switch goos {
	case "linux":
		return k.Linux, true
	case "darwin":
		return k.Darwin, true
	case "windows":
		return k.Windows, true
	}
	return Rule{}, false
}

// IsSet reports whether s asks for something with the key. Spelling out a
// default ("strictAllowlist": false, "credentials": {}, "git": {}) asks
// for nothing.
func (k KeyRule) IsSet(s *Settings) bool { return k.set != nil && k.set(s) }

// Rules returns the table, in the order of the settings schema.
func Rules() []KeyRule { return append([]KeyRule(nil), keyRules...) }

// Ruling is a key the settings set and the rule of one platform for it.
type Ruling struct {
	Key  string
	GOOS string
	Rule Rule
}

// String is the sentence srt prints for the key: why it is refused, or
// why it has no meaning.
func (r Ruling) String() string {
	switch r.Rule.Handling {
	case Refused:
		return fmt.Sprintf("%s is not supported on %s yet (%s)", r.Key, r.GOOS, r.Rule.Why)
	case NoMeaning:
		return fmt.Sprintf("%s has no meaning on %s (%s)", r.Key, r.GOOS, r.Rule.Why)
	}
	return fmt.Sprintf("%s is applied on %s", r.Key, r.GOOS)
}

// RefusedError lists every key the settings set that a platform refuses.
type RefusedError struct {
	GOOS     string
	Refusals []Ruling
}

// Error names every refused key with why, and what to do.
func (e *RefusedError) Error() string {
	parts := make([]string, len(e.Refusals))
	for i, r := range e.Refusals {
		parts[i] = r.String()
	}
	msg := strings.Join(parts, "; ")
	if !appliesAnything(e.GOOS) {
		// Removing the keys would not help: nothing runs there.
		return msg
	}
	them, what := "it", "to run"
	if len(parts) > 1 {
		them = "them"
	}
	if e.GOOS == "windows" {
		what = "to plan a run (srt-go's Windows backend is an alpha that plans, and runs nothing yet)"
	}
	return msg + "; remove " + them + " from the settings " + what
}

// appliesAnything reports whether srt applies any key on goos, which is
// whether it has a sandbox backend there.
func appliesAnything(goos string) bool {
	for _, k := range keyRules {
		if r, _ := k.On(goos); r.Handling == Applied {
			return true
		}
	}
	return false
}

// Check returns a *RefusedError naming every key s sets that goos
// refuses, or nil when goos applies (or has no use for) all of them. A
// GOOS the table has no column for refuses every key s sets.
func Check(s *Settings, goos string) error {
	var refused []Ruling
	for _, k := range keyRules {
		if !k.IsSet(s) {
			continue
		}
		r, ok := k.On(goos)
		if !ok {
			r = Rule{Refused, "srt has no rules for " + goos}
		}
		if r.Handling == Refused {
			refused = append(refused, Ruling{Key: k.Key, GOOS: goos, Rule: r})
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return &RefusedError{GOOS: goos, Refusals: refused}
}

// Meaningless returns the keys s sets that have no meaning on goos: they
// are accepted there and change nothing.
func Meaningless(s *Settings, goos string) []Ruling {
	var out []Ruling
	for _, k := range keyRules {
		if r, ok := k.On(goos); ok && r.Handling == NoMeaning && k.IsSet(s) {
			out = append(out, Ruling{Key: k.Key, GOOS: goos, Rule: r})
		}
	}
	return out
}

// MarkdownRules renders the table for README.md.
func MarkdownRules() string {
	var b strings.Builder
	b.WriteString("| key | Linux | macOS | Windows |\n|---|---|---|---|\n")
	escape := strings.NewReplacer("|", `\|`, "*", `\*`, "<", "&lt;", ">", "&gt;", "_", `\_`)
	cell := func(r Rule) string {
		s := r.Handling.String()
		if r.Handling == Refused {
			s = "**refused**"
		}
		if r.Why != "" {
			s += " — " + escape.Replace(r.Why)
		}
		return s
	}
	for _, k := range keyRules {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Key, cell(k.Linux), cell(k.Darwin), cell(k.Windows))
	}
	return b.String()
}

// The reasons shared by many rows.
var (
	// winApplied is a key the Windows plan applies; that backend is an
	// alpha (its plan is tested on Linux; it has never run on Windows,
	// where srt still refuses to run commands).
	winApplied = Rule{Applied, "alpha: in the Windows plan (srt plan --os windows); never run on Windows"}
	applied    = Rule{Applied, ""}
	// macApplied is a key the macOS backend applies; that backend is
	// experimental (it has never run on a Mac, and runs only with
	// SRT_EXPERIMENTAL_DARWIN=1).
	macApplied = Rule{Applied, "experimental backend"}
)

// core is a key every backend applies.
func core(key string, linux Rule, set func(*Settings) bool) KeyRule {
	return KeyRule{Key: key, Linux: linux, Darwin: macApplied, Windows: winApplied, set: set}
}

// onWin gives a row a Windows rule of its own.
func (k KeyRule) onWin(kind Handling, why string) KeyRule {
	if kind == Applied {
		why = winApplied.Why + ": " + why
	}
	k.Windows = Rule{kind, why}
	return k
}

// onMac gives a row a macOS rule of its own.
func (k KeyRule) onMac(what string) KeyRule {
	k.Darwin = Rule{Applied, "experimental backend: " + what}
	return k
}

// macOnly is a key only the macOS backend has a use for.
func macOnly(key, what string, set func(*Settings) bool) KeyRule {
	no := Rule{NoMeaning, "macOS only: " + what}
	return KeyRule{Key: key, Linux: no, Darwin: Rule{Applied, "experimental backend: " + what}, Windows: no, set: set}
}

// linuxOnly is a key of the Linux sandbox alone.
func linuxOnly(key string, linux Rule, what string, set func(*Settings) bool) KeyRule {
	no := Rule{NoMeaning, "Linux only: " + what}
	return KeyRule{Key: key, Linux: linux, Darwin: no, Windows: no, set: set}
}

// everywhere is a key with the same rule on every platform.
func everywhere(key string, r Rule, set func(*Settings) bool) KeyRule {
	return KeyRule{Key: key, Linux: r, Darwin: r, Windows: r, set: set}
}

const forFilterRequest = "it shapes what a request filter sees or does: the library's WithRequestFilter; the CLI has none, so there it changes nothing, as in the reference without filterRequest"

// keyRules is the table. Keys appear in the order of settingsSchema; a key
// covers its subtree, so an object whose members cannot differ has one
// row. set answers "do the settings ask for something?": a value other
// than the default, where an absent object, an empty list and a default
// spelled out all ask for nothing — except where the mere presence of an
// object is the request ("tlsTerminate": {} turns TLS termination on with
// an ephemeral CA; "parentProxy": {} replaces the environment's proxy).
var keyRules = []KeyRule{
	core("network.allowedDomains", applied, func(s *Settings) bool { return len(s.Network.AllowedDomains) > 0 }),
	core("network.deniedDomains", applied, func(s *Settings) bool { return len(s.Network.DeniedDomains) > 0 }),
	core("network.deniedDomainReasons", applied, func(s *Settings) bool { return len(s.Network.DeniedDomainReasons) > 0 }),
	core("network.strictAllowlist", Rule{Applied, "a command's own allowed domains (the library's Run.AllowedDomains) are refused, and those of running commands stop counting"},
		func(s *Settings) bool { return s.Network.StrictAllowlist }),
	core("network.deniedResolvedAddresses", applied, func(s *Settings) bool { return len(s.Network.DeniedResolvedAddresses) > 0 }),
	core("network.allowUnixSockets", Rule{Applied, "by path (the reference ignores it on Linux)"},
		func(s *Settings) bool { return len(s.Network.AllowUnixSockets) > 0 }).onMac("connecting to each path (the reference also lets a socket listen there)").
		onWin(Refused, "the Windows plan grants the sandbox account no socket path yet"),
	core("network.allowAllUnixSockets", applied, func(s *Settings) bool { return s.Network.AllowAllUnixSockets }).
		onWin(Refused, "the Windows plan grants the sandbox account no socket path yet"),
	core("network.allowLocalBinding", Rule{Applied, "the namespace sandbox always lets the command listen, on ports private to its own network namespace; the fallback, which shares the host's network, lets a socket listen only with this key, and then only on loopback (the command also reaches its own listeners)"},
		func(s *Settings) bool { return s.Network.AllowLocalBinding }).onMac("listening and connecting on loopback, never to a remote host").
		onWin(Applied, "WFP filters let the sandbox account connect to and accept from loopback"),
	macOnly("network.allowMachLookup", "Mach services", func(s *Settings) bool { return len(s.Network.AllowMachLookup) > 0 }),
	core("network.httpProxyPort", applied, func(s *Settings) bool { return s.Network.HTTPProxyPort != nil }),
	core("network.socksProxyPort", applied, func(s *Settings) bool { return s.Network.SOCKSProxyPort != nil }),
	core("network.mitmProxy", Rule{Applied, "allowed connections to its domains go over its Unix socket with a CONNECT, and nowhere else"},
		func(s *Settings) bool { return s.Network.MITMProxy != nil }),
	core("network.parentProxy", applied, func(s *Settings) bool { return s.Network.ParentProxy != nil }),
	core("network.tlsTerminate", Rule{Applied, "an ephemeral CA in srt's memory (or caCertPath/caKeyPath) signs a leaf per name; HTTP/1.1 and HTTP/2 on both sides; tunnels by CONNECT, SOCKS5 and the transparent path alike"},
		func(s *Settings) bool { return s.Network.TLSTerminate != nil }),
	// A library callback: a settings file cannot hold it (the schema
	// refuses it with its own message) and Settings has no field for it.
	everywhere("network.filterRequest", Rule{Refused, "a callback of the reference's library: no settings file can hold it; this library takes a Go function instead (WithRequestFilter)"}, nil),
	core("network.allowPlaintextHeaderSet", Rule{Applied, forFilterRequest}, func(s *Settings) bool { return s.Network.AllowPlaintextHeaderSet }),
	core("network.stripResponseHeaders", Rule{Applied, "on every response the proxies relay from a request they read (terminated TLS, plain HTTP)"},
		func(s *Settings) bool { return len(s.Network.StripResponseHeaders) > 0 }),
	core("network.refuseOpaqueTunnels", Rule{Applied, "a tunnel to a host the proxy does not terminate, or whose bytes are not TLS, is refused; SOCKS5 tunnels are terminated like CONNECT ones, so only their opaque ones are refused"},
		func(s *Settings) bool { return s.Network.RefuseOpaqueTunnels }),
	core("network.requireHostMatch", Rule{Applied, "a request inside a terminated tunnel whose TLS server name or Host names another host gets 421 (without it, the Host sent upstream is the tunnel's target all the same)"},
		func(s *Settings) bool { return s.Network.RequireHostMatch }),
	core("network.ambiguousRequestTarget", Rule{Applied, forFilterRequest}, func(s *Settings) bool {
		return s.Network.AmbiguousRequestTarget != "" && s.Network.AmbiguousRequestTarget != "refuse"
	}),

	core("filesystem.disabled", applied, func(s *Settings) bool { return s.Filesystem.Disabled }).
		onWin(Refused, "the sandbox account writes only where an ACE grants it: list the paths in allowWrite"),
	core("filesystem.denyRead", applied, func(s *Settings) bool { return len(s.Filesystem.DenyRead) > 0 }).
		onWin(Applied, "ACEs for the sandbox account on the paths that exist at launch; patterns and paths made later are not enforced"),
	core("filesystem.allowRead", applied, func(s *Settings) bool { return len(s.Filesystem.AllowRead) > 0 }).
		onWin(Applied, "ACEs for the sandbox account on the paths that exist at launch; patterns and paths made later are not enforced"),
	core("filesystem.allowWrite", applied, func(s *Settings) bool { return len(s.Filesystem.AllowWrite) > 0 }).
		onWin(Applied, "ACEs for the sandbox account on the paths that exist at launch; patterns and paths made later are not enforced"),
	core("filesystem.denyWrite", applied, func(s *Settings) bool { return len(s.Filesystem.DenyWrite) > 0 }).
		onWin(Applied, "ACEs for the sandbox account on the paths that exist at launch; patterns and paths made later are not enforced"),
	core("filesystem.allowGitConfig", applied, func(s *Settings) bool { return s.Filesystem.AllowGitConfig }),
	linuxOnly("filesystem.skipPathGuard", Rule{Applied, "the path guard is off: the protected names that exist at launch stay read-only mounts (as in the reference), those made during the run are not refused, and the enforcement report says so; the fallback refuses it (only the guard keeps its protected names)"},
		"the path guard", func(s *Settings) bool { return s.Filesystem.SkipPathGuard }),

	// Running with a credential rule dropped would put the very secret
	// the rule names into the command's environment or files.
	{Key: "credentials", Linux: Rule{Applied, "denied variables unset, denied files hidden; masked ones hold sentinels, and only srt's proxy puts the real values back, for their hosts, over TLS it terminated; a masked file reads as its masked copy (the fallback sandbox hides it instead)"},
		Darwin: Rule{Applied, "experimental backend: masked files are hidden (a profile cannot put another file in their place), as in the reference"}, Windows: Rule{Refused, "the Windows plan does not hide credential files yet; it will hide masked files, as the reference does"}, set: credentialsSet},
	core("ignoreViolations", applied, func(s *Settings) bool { return len(s.IgnoreViolations) > 0 }),
	linuxOnly("enableWeakerNestedSandbox", applied, "the fallback for hosts without user namespaces", func(s *Settings) bool { return s.EnableWeakerNestedSandbox }),
	linuxOnly("allowNestedUserNamespaces", applied, "user namespaces", func(s *Settings) bool { return s.AllowNestedUserNamespaces }),
	macOnly("enableWeakerNetworkIsolation", "the trustd Mach service", func(s *Settings) bool { return s.EnableWeakerNetworkIsolation }),
	macOnly("allowAppleEvents", "Apple Events", func(s *Settings) bool { return s.AllowAppleEvents }),
	{Key: "allowPty", Linux: Rule{Applied, "the namespace sandbox always has pseudo-terminals of its own (its /dev/ptmx and /dev/pts); the fallback refuses to run with it, as new pseudo-terminals there would open in the host's /dev/pts, among this user's other terminals"},
		Darwin: Rule{Applied, "experimental backend: new pseudo-terminals (/dev/ptmx, /dev/ttys*)"}, Windows: Rule{NoMeaning, "macOS only: pseudo-terminals"}, set: func(s *Settings) bool { return s.AllowPty }},
	everywhere("ripgrep", Rule{NoMeaning, "srt-go finds protected names itself and runs no ripgrep"}, func(s *Settings) bool { return s.Ripgrep != nil }),
	core("mandatoryDenySearchDepth", applied, func(s *Settings) bool {
		return s.MandatoryDenySearchDepth != 0 && s.MandatoryDenySearchDepth != DefaultSearchDepth
	}),
	everywhere("seccomp", Rule{NoMeaning, "srt-go assembles its own seccomp filter and runs no helper"}, func(s *Settings) bool { return s.Seccomp != nil }),
	everywhere("bwrapPath", Rule{NoMeaning, "srt-go needs no bubblewrap"}, func(s *Settings) bool { return s.BwrapPath != "" }),
	everywhere("socatPath", Rule{NoMeaning, "srt-go needs no socat"}, func(s *Settings) bool { return s.SocatPath != "" }),
	{Key: "javaAgentJarPath", Linux: Rule{Applied, "-javaagent:<path> leads JAVA_TOOL_OPTIONS, before the inherited value"},
		Darwin: macApplied, Windows: Rule{NoMeaning, "the reference uses it on macOS and Linux only"},
		set: func(s *Settings) bool { return s.JavaAgentJarPath != "" }},
	{Key: "windows", Linux: Rule{NoMeaning, "Windows only"}, Darwin: Rule{NoMeaning, "Windows only"},
		Windows: Rule{Applied, winApplied.Why + ": sandboxUser, proxyPortRange and the WFP sublayer (sublayerGuid, or wfpSublayerGuid) are planned; backend must be srt-win (srt-go builds no MXC backend); srtWin.path means nothing to a single binary"},
		set:     func(s *Settings) bool { return s.Windows != nil && !s.Windows.isZero() }},
	core("git.safeDirectories", Rule{Applied, "GIT_CONFIG_COUNT/KEY_n/VALUE_n give safe.directory for each directory and what is beneath it (\"*\" past 8), after an inherited GIT_CONFIG_COUNT; an inherited GIT_CONFIG_COUNT=0 opts out"},
		func(s *Settings) bool { return s.Git != nil && len(s.Git.SafeDirectories) > 0 }),
}

// credentialsSet: any rule, or a setting that differs from the default.
func credentialsSet(s *Settings) bool {
	c := s.Credentials
	if c == nil {
		return false
	}
	if len(c.Files) > 0 || len(c.EnvVars) > 0 || len(c.AWSPairs) > 0 || c.AllowPlaintextInject {
		return true
	}
	if v := c.SigV4; v != nil {
		for _, mode := range []string{v.Streaming, v.Presigned, v.SigV4A} {
			if mode != "" && mode != "deny" {
				return true
			}
		}
	}
	return false
}

func (w *Windows) isZero() bool {
	return w.Backend == "" && w.SandboxUser == "" && w.SublayerGUID == "" && w.WFPSublayerGUID == "" &&
		len(w.ProxyPortRange) == 0 && (w.SrtWin == nil || w.SrtWin.Path == "")
}
