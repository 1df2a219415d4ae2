package netfilter

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// List says which grammar an entry is parsed with.
type List int

const (
	// Allow is the grammar of allowedDomains: host with optional ":port".
	Allow List = iota
	// Deny is the grammar of deniedDomains: Allow plus a bare "*" (every
	// host), optionally with a port ("*:22").
	Deny
	// HostOnly is the grammar of mitmProxy.domains, excludeDomains and
	// injectHosts: no port, and an IPv6 address may be written bare.
	HostOnly
)

// Pattern is one parsed entry of a domain list. Exactly one of Any, Suffix,
// Name and Addr is set.
type Pattern struct {
	Entry string // as written in the settings

	Any bool // "*": every host, names and addresses alike
	// Suffix is X of "*.X": every strict subdomain of X with at least
	// Depth more labels, never X itself and never an IP address.
	Suffix string
	Depth  int
	Name   string     // an exact, lower-case DNS name
	Addr   netip.Addr // an exact IP address (IPv4-mapped IPv6 as IPv4)
	Port   uint16     // the only destination port matched; 0 for any
}

// PatternError says why an entry was refused.
type PatternError struct {
	Entry string
	Why   string
	// Fix is the entry as it was evidently meant, when that is plain
	// ("x.org" for "https://x.org"); Why then says what to write.
	Fix string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("invalid domain pattern %q: %s", e.Entry, e.Why)
}

// ParsePattern parses one entry with the grammar of list. It accepts what
// the reference accepts, except where the reference lets garbage through
// (spaces, '@', control characters, labels starting or ending with '-',
// over-long labels and names, ambiguous numeric addresses such as "127.1"),
// which no destination could ever match and which usually hide a typo.
func ParsePattern(entry string, list List) (Pattern, error) {
	p := Pattern{Entry: entry}
	fail := func(format string, args ...any) (Pattern, error) {
		return Pattern{}, &PatternError{Entry: entry, Why: fmt.Sprintf(format, args...)}
	}
	if entry == "" {
		return fail("empty entry")
	}
	if scheme, rest, ok := strings.Cut(entry, "://"); ok && isScheme(scheme) {
		return Pattern{}, schemeError(entry, scheme, rest, list)
	}
	host := entry
	if list == HostOnly {
		if strings.Count(host, ":") >= 2 && host[0] != '[' {
			a, err := netip.ParseAddr(host)
			if err != nil || !a.Is6() || a.Zone() != "" {
				return fail("not a valid IPv6 address")
			}
			p.Addr = a.Unmap()
			return p, nil
		}
	} else {
		if strings.Count(host, ":") >= 2 && host[0] != '[' {
			return fail(`an IPv6 address must be written in brackets, e.g. "[2001:db8::1]" or "[2001:db8::1]:443"`)
		}
		var port string
		host, port = splitPort(host)
		if port != "" {
			n, ok := parsePort(port)
			if !ok {
				return fail("port %q is not a number from 1 to 65535 without leading zeros", port)
			}
			p.Port = n
		}
	}
	if host == "" {
		return fail("no host before the port")
	}
	if host[0] == '[' {
		if host[len(host)-1] != ']' {
			return fail("unbalanced '['")
		}
		inner := host[1 : len(host)-1]
		if i := strings.IndexByte(inner, '%'); i >= 0 {
			inner = inner[:i] // a zone id names a local interface; the address is what is matched
		}
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() {
			return fail("brackets must hold an IPv6 address")
		}
		p.Addr = a.Unmap()
		return p, nil
	}
	switch {
	case host == "*":
		if list != Deny {
			return fail(`a bare "*" is only allowed in deniedDomains`)
		}
		p.Any = true
		return p, nil
	case strings.Contains(host, "/"):
		return fail("a domain pattern is a host name, not a URL or a path")
	case strings.Contains(host, ":") && list == HostOnly:
		return fail("this list takes host names only, without a port")
	case strings.Contains(host, ":"):
		return fail("port must be a number from 1 to 65535 without leading zeros")
	}
	for strings.HasPrefix(host, "*.") {
		p.Depth++
		host = host[2:]
	}
	if strings.IndexByte(host, '*') >= 0 {
		return fail(`a wildcard is only allowed as a leading "*." (as in "*.example.com")`)
	}
	if host != "localhost" && strings.IndexByte(host, '.') < 0 {
		if p.Depth > 0 {
			return fail(`"*." must be followed by a name of at least two labels (as in "*.example.com", not "*.com")`)
		}
		return fail(`a single-label name is not allowed; write a fully qualified name (as in "example.com")`)
	}
	if host[0] == '.' || host[len(host)-1] == '.' {
		return fail("a name may not start or end with '.'")
	}
	if len(host) > MaxNameLen {
		return fail("name is %d bytes long, over the limit of %d", len(host), MaxNameLen)
	}
	for i := 0; i < len(host); i++ {
		if k := byteClass[host[i]]; k == classInvalid || k == classColon {
			return fail("character %q is not allowed in a host name", host[i])
		}
	}
	var why problem
	if !checkLabels(host, &why) {
		return fail("%s", why)
	}
	if endsInNumber(host) {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is4() || p.Depth > 0 {
			return fail("a numeric name must be an IPv4 address written as four decimal numbers (as in \"192.0.2.1\")")
		}
		p.Addr = a
		return p, nil
	}
	host = strings.ToLower(host)
	if p.Depth > 0 {
		p.Suffix = host
	} else {
		p.Name = host
	}
	return p, nil
}

// splitPort splits a ":port" suffix off an entry: after a bracketed address,
// or at the last colon. A suffix that is not a valid port is returned as
// the port too, so the caller can say what is wrong with it.
// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, '+', '-' and '.').
func isScheme(s string) bool {
	if s == "" || !('a' <= s[0]|0x20 && s[0]|0x20 <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// schemeError refuses a URL written where a domain pattern belongs
// ("https://x.org"), saying what to write when the host in it is a valid
// entry: without this, the "//x.org" after the colon would be read as a
// port.
func schemeError(entry, scheme, rest string, list List) *PatternError {
	e := &PatternError{Entry: entry, Why: fmt.Sprintf("a scheme (%q) is not part of a domain pattern", scheme+"://")}
	host := rest
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:] // user:password@ is no part of it either
	}
	if list == HostOnly && host != "" {
		if h, port := splitPort(host); port != "" && !strings.Contains(h, ":") {
			host = h // this list takes no port
		}
	}
	if host == "" || strings.Contains(host, "://") {
		return e
	}
	if _, err := ParsePattern(host, list); err == nil {
		e.Fix = host
		e.Why += fmt.Sprintf("; write %q", host)
	}
	return e
}

func splitPort(s string) (host, port string) {
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		if end < 0 || end == len(s)-1 {
			return s, ""
		}
		if s[end+1] != ':' {
			return s, "" // reported as an unbalanced bracket by the caller
		}
		return s[:end+1], s[end+2:]
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, ""
	}
	if i == len(s)-1 {
		return s[:i], ":" // "example.com:" — refused as a bad port
	}
	return s[:i], s[i+1:]
}

// parsePort accepts 1..65535 in decimal without leading zeros.
func parsePort(s string) (uint16, bool) {
	if s == "" || s[0] < '1' || s[0] > '9' || len(s) > 5 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, false
	}
	return uint16(n), true
}

// String spells the pattern canonically; ParsePattern(p.String(), list)
// gives back the same pattern (with Entry set to that spelling).
func (p Pattern) String() string {
	var host string
	switch {
	case p.Any:
		host = "*"
	case p.Addr.IsValid():
		host = p.Addr.String()
		if p.Addr.Is6() {
			host = "[" + host + "]"
		}
	case p.Suffix != "":
		host = strings.Repeat("*.", p.Depth) + p.Suffix
	default:
		host = p.Name
	}
	if p.Port != 0 {
		return host + ":" + strconv.Itoa(int(p.Port))
	}
	return host
}

// MatchHost reports whether the pattern covers the canonical host h,
// ignoring ports.
func (p Pattern) MatchHost(h Host) bool {
	switch {
	case p.Any:
		return true
	case p.Addr.IsValid():
		return h.Addr == p.Addr
	case h.Addr.IsValid():
		return false // "*.x" and names never match an address
	case p.Suffix != "":
		return suffixDepth(h.Name, p.Suffix) >= p.Depth
	default:
		return h.Name == p.Name
	}
}

// suffixDepth returns how many labels name has in front of suffix, or 0
// when name is not a strict subdomain of suffix.
func suffixDepth(name, suffix string) int {
	if len(name) <= len(suffix)+1 || !strings.HasSuffix(name, suffix) || name[len(name)-len(suffix)-1] != '.' {
		return 0
	}
	return strings.Count(name[:len(name)-len(suffix)-1], ".") + 1
}
