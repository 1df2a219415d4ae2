package config

import (
	"net/netip"
	"strings"
	"sync"

	"github.com/srt-go/srt/netfilter"
)

// The settings file, field by field (spec b.4). Every field of the
// reference is here, also those whose features are not built yet, so a
// valid reference file is accepted.

func obj(doc string, fields ...field) *node { return &node{kind: kObject, doc: doc, fields: fields} }
func strictObj(doc string, fields ...field) *node {
	return &node{kind: kObject, doc: doc, fields: fields, strict: true}
}
func req(name string, n *node) field { return field{name: name, required: true, n: n} }
func opt(name string, n *node) field { return field{name: name, n: n} }
func str(doc string) *node           { return &node{kind: kString, doc: doc} }
func nonEmpty(doc string) *node      { return &node{kind: kString, doc: doc, minLen: 1} }
func checked(doc string, check func(string) string) *node {
	return &node{kind: kString, doc: doc, check: check}
}
func boolean(doc string) *node { return &node{kind: kBool, doc: doc, defaultValue: false} }
func integer(doc string, lo, hi int64) *node {
	return &node{kind: kInt, doc: doc, min: lo, max: hi, hasMin: true, hasMax: true}
}
func enum(doc string, values ...string) *node { return &node{kind: kEnum, doc: doc, enum: values} }
func array(doc string, elem *node) *node      { return &node{kind: kArray, doc: doc, elem: elem} }
func nonEmptyArray(doc string, elem *node) *node {
	return &node{kind: kArray, doc: doc, elem: elem, minItems: 1}
}
func record(doc string, elem *node) *node { return &node{kind: kRecord, doc: doc, elem: elem} }
func pathEntry(check func(string) string) *node {
	return &node{kind: kPathEntry, check: check}
}

func domainCheck(list netfilter.List) func(string) string {
	return func(s string) string {
		if _, err := netfilter.ParsePattern(s, list); err != nil {
			if pe, ok := err.(*netfilter.PatternError); ok && pe.Fix != "" {
				return err.Error() // it says what to write
			}
			return err.Error() + `. Write a domain ("example.com"), a wildcard ("*.example.com"), an IPv4 address or a bracketed IPv6 literal ("[2001:db8::1]")` + portHint(list)
		}
		return ""
	}
}

func portHint(list netfilter.List) string {
	switch list {
	case netfilter.Deny:
		return `, or "*" for every host. An optional ":port" suffix (1-65535) restricts the entry to that port.`
	case netfilter.Allow:
		return `. An optional ":port" suffix (1-65535) restricts the entry to that port.`
	}
	return "; no port."
}

func absolutePath(s string) string {
	if !strings.HasPrefix(s, "/") {
		return "Binary path must be absolute"
	}
	return noNUL(s)
}

func noNUL(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return "contains a NUL byte"
	}
	return ""
}

// pathOrGlob checks a filesystem entry: a glob must compile.
func pathOrGlob(s string) string {
	if msg := noNUL(s); msg != "" || !hasGlobChars(s) {
		return msg
	}
	if _, err := CompileGlob(s); err != nil {
		return err.Error()
	}
	return ""
}

func addressOrCIDR(s string) string {
	if strings.Contains(s, "/") {
		if p, err := netip.ParsePrefix(s); err != nil || p.Addr().Zone() != "" {
			return "Expected an IP address or CIDR range (e.g. 10.0.0.0/8, fc00::/7)"
		}
		return ""
	}
	if a, err := netip.ParseAddr(s); err != nil || a.Zone() != "" {
		return "Expected an IP address or CIDR range (e.g. 10.0.0.0/8, fc00::/7)"
	}
	return ""
}

func machLookup(s string) string {
	if i := strings.IndexByte(s, '*'); i >= 0 && i != len(s)-1 {
		return `"*" is only allowed as the last character (e.g. "com.example.*")`
	}
	return ""
}

func envVarName(s string) string {
	ok := s != ""
	for i := 0; i < len(s) && ok; i++ {
		c := s[i]
		ok = c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9'
	}
	if !ok {
		return "Environment variable name must start with a letter or underscore and contain only letters, digits and underscores"
	}
	return ""
}

func uuid(s string) string {
	// 8-4-4-4-12 hexadecimal digits.
	ok := len(s) == 36
	for i := 0; i < len(s) && ok; i++ {
		switch c := s[i]; i {
		case 8, 13, 18, 23:
			ok = c == '-'
		default:
			ok = '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
		}
	}
	if !ok {
		return "Invalid uuid"
	}
	return ""
}

func headerName(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return "not a valid HTTP header name"
		}
	}
	return ""
}

func portRange(a []any) string {
	lo, _ := a[0].(interface{ Int64() (int64, error) }).Int64()
	hi, _ := a[1].(interface{ Int64() (int64, error) }).Int64()
	if lo > hi || hi-lo+1 > 64 {
		return "low must be ≤ high and range width ≤ 64"
	}
	return ""
}

var credentialCommon = []field{
	opt("extract", str("a regular expression whose first capturing group is the secret inside the value")),
	opt("onExtractNoMatch", enum("what to do when extract does not match", "warn", "deny", "error")),
	opt("decode", enum("decode the secret before masking claims", "jwt")),
	opt("maskClaims", array("JWT claims to mask (needs decode)", str(""))),
	opt("injectHosts", array("hosts to which the proxy substitutes the real value (default: allowedDomains)", checked("", domainCheck(netfilter.HostOnly)))),
}

// settingsSchema is the whole settings file, built on first use: every
// process of the binary — the sandbox's init too — would pay for it at
// start.
var settingsSchema = sync.OnceValue(func() *node { return schemaTree() })

func schemaTree() *node {
	return obj("Settings of the srt sandbox (~/.srt-settings.json)",
		req("network", obj("Network policy: what the sandboxed command may connect to",
			req("allowedDomains", array(`Destinations the command may reach: "example.com", "*.example.com", "example.com:443", "192.0.2.1", "[2001:db8::1]:443". [] = no network.`,
				checked("", domainCheck(netfilter.Allow)))),
			req("deniedDomains", array(`Destinations always refused, before allowedDomains; also "*" and "*:port".`,
				checked("", domainCheck(netfilter.Deny)))),
			opt("deniedDomainReasons", record("Text reported when a deniedDomains entry (spelled exactly) denies a connection", nonEmpty(""))),
			opt("strictAllowlist", boolean("No per-command lists and no ask callback: only allowedDomains allows")),
			opt("deniedResolvedAddresses", array("Addresses or CIDR ranges an allowed name may not resolve to", checked("", addressOrCIDR))),
			opt("allowUnixSockets", array("Unix socket paths the command may connect to", checked("", noNUL))),
			opt("allowAllUnixSockets", boolean("Allow creating and connecting any Unix-domain socket")),
			opt("allowLocalBinding", boolean("macOS/Windows: allow binding local ports")),
			opt("allowMachLookup", array("macOS: Mach services the command may look up", checked("", machLookup))),
			opt("httpProxyPort", integer("Use an external HTTP proxy on localhost:port instead of srt's own", 1, 65535)),
			opt("socksProxyPort", integer("Use an external SOCKS proxy on localhost:port instead of srt's own", 1, 65535)),
			opt("mitmProxy", obj("Tunnel matching hosts to a MITM proxy on a Unix socket",
				req("socketPath", nonEmpty("")),
				req("domains", nonEmptyArray("", checked("", domainCheck(netfilter.HostOnly)))))),
			opt("parentProxy", obj("Upstream proxy the policy proxy dials through (default: srt's own HTTP(S)_PROXY)",
				opt("http", checked("URL of the proxy for plain HTTP", parentProxyURL)),
				opt("https", checked("URL of the proxy for CONNECT and SOCKS traffic", parentProxyURL)),
				opt("noProxy", str("Hosts reached directly, as in NO_PROXY")))),
			opt("tlsTerminate", obj("Experimental: terminate TLS in the proxy to inspect requests",
				opt("caCertPath", nonEmpty("CA certificate (PEM); with caKeyPath")),
				opt("caKeyPath", nonEmpty("CA key (PEM); with caCertPath")),
				opt("excludeDomains", array("Hosts tunnelled without termination", checked("", domainCheck(netfilter.HostOnly)))),
				opt("extraCaCertPaths", array("Extra CA certificates for the trust bundle", nonEmpty(""))),
				opt("maxTunnels", withDefault(integer("", 1, 65536), 256)),
				opt("handshakeTimeoutMs", withDefault(integer("", 100, 600000), 10000)))),
			opt("filterRequest", &node{kind: kNever, never: "filterRequest is a callback of the library API and cannot be set in a settings file"}),
			opt("allowPlaintextHeaderSet", boolean("")),
			opt("stripResponseHeaders", nonEmptyArray("Response headers removed by the proxy", &node{kind: kString, minLen: 1, check: headerName})),
			opt("refuseOpaqueTunnels", boolean("Refuse CONNECTs the proxy cannot inspect")),
			opt("requireHostMatch", boolean("Refuse requests whose Host/SNI differs from the CONNECT target")),
			opt("ambiguousRequestTarget", enum("", "refuse", "asSpelled", "normalize")),
		)),
		req("filesystem", obj("Filesystem policy",
			opt("disabled", boolean("Drop every filesystem rule, the protected names included")),
			req("denyRead", array("Paths (and globs) hidden from the command", pathEntry(pathOrGlob))),
			opt("allowRead", array("Paths re-opened inside denyRead areas", pathEntry(pathOrGlob))),
			req("allowWrite", array("Paths the command may write (recursively)", pathEntry(pathOrGlob))),
			req("denyWrite", array("Paths inside allowWrite that stay read-only", pathEntry(pathOrGlob))),
			opt("allowGitConfig", boolean("Let the command write .git/config (hooks stay protected)")),
			opt("skipPathGuard", boolean("Turn the path guard off: protected names that exist at launch stay read-only, those made during the run are not refused (faster file-heavy work)")),
		)),
		opt("credentials", strictObj("Secrets hidden from the command",
			opt("files", array("", obj("",
				append([]field{req("path", nonEmpty("")), req("mode", enum("", "deny", "mask")),
					opt("maskDuplicates", boolean(""))}, credentialCommon...)...))),
			opt("envVars", array("", obj("",
				append([]field{req("name", checked("", envVarName)), req("mode", enum("", "deny", "mask"))}, credentialCommon...)...))),
			opt("allowPlaintextInject", boolean("Substitute masked values on plaintext connections too")),
			opt("awsPairs", array("", strictObj("",
				req("accessKeyIdVar", checked("", envVarName)),
				req("secretAccessKeyVar", checked("", envVarName)),
				opt("sessionTokenVar", checked("", envVarName))))),
			opt("sigv4", strictObj("",
				opt("streaming", enum("", "deny", "passthrough")),
				opt("presigned", enum("", "deny", "passthrough")),
				opt("sigv4a", enum("", "deny", "passthrough")))),
		)),
		opt("ignoreViolations", record("Command pattern → paths whose violations are not reported", array("", str("")))),
		opt("enableWeakerNestedSandbox", boolean("Linux: run with Landlock + seccomp only where namespaces are unavailable")),
		opt("allowNestedUserNamespaces", boolean("Linux: let the command create user namespaces")),
		opt("enableWeakerNetworkIsolation", boolean("macOS: allow the trustd mach service")),
		opt("allowAppleEvents", boolean("macOS: allow Apple Events")),
		opt("allowPty", boolean("macOS: allow pseudo-terminals")),
		opt("ripgrep", obj("Reference only: srt-go scans in process and ignores this",
			req("command", str("")), opt("args", array("", str(""))), opt("argv0", str("")))),
		opt("mandatoryDenySearchDepth", withDefault(integer("How deep protected names are searched for below each root", 1, 10), 3)),
		opt("seccomp", obj("Reference only: srt-go assembles its own filter and ignores this",
			opt("applyPath", str("")), opt("argv0", str("")))),
		opt("bwrapPath", checked("Reference only: srt-go needs no bubblewrap", absolutePath)),
		opt("socatPath", checked("Reference only: srt-go needs no socat", absolutePath)),
		opt("javaAgentJarPath", checked("Java agent jar added to JAVA_TOOL_OPTIONS", absolutePath)),
		opt("windows", obj("Windows sandbox (alpha)",
			opt("backend", enum("", "srt-win", "mxc")),
			opt("sandboxUser", checked("", func(s string) string {
				if s == "" || len(s) > 20 {
					return "must be 1 to 20 characters"
				}
				return ""
			})),
			opt("sublayerGuid", checked("", uuid)),
			opt("wfpSublayerGuid", checked("", uuid)),
			opt("proxyPortRange", &node{kind: kArray, length: 2, elem: integer("", 1, 65535), arrayCheck: portRange}),
			opt("srtWin", obj("", opt("path", nonEmpty("")))),
		)),
		opt("git", obj("", opt("safeDirectories", array("Directories git treats as safe inside the sandbox", str(""))))),
	)
}

func withDefault(n *node, v any) *node { n.defaultValue = v; return n }
