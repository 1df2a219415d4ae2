// Package netfilter is the network policy of the sandbox as pure code: it
// canonicalises destination hosts, parses the domain patterns of
// allowedDomains and deniedDomains, and decides whether a connection to
// (host, port) may go out. It performs no I/O.
package netfilter

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// MaxNameLen is the longest DNS name accepted, in bytes, without the
// trailing dot (RFC 1035: 255 octets on the wire, 253 in text).
const MaxNameLen = 253

// maxLabelLen is the longest DNS label (RFC 1035).
const maxLabelLen = 63

// ErrMalformedHost is matched (errors.Is) by every error that refuses a
// destination host.
var ErrMalformedHost = errors.New("malformed host")

// HostError says why a destination host was refused.
type HostError struct {
	Host string // the host as given
	Why  string
}

func (e *HostError) Error() string { return fmt.Sprintf("malformed host %q: %s", e.Host, e.Why) }

// Unwrap makes errors.Is(err, ErrMalformedHost) hold.
func (e *HostError) Unwrap() error { return ErrMalformedHost }

// Host is a canonical destination: exactly one of Name and Addr is set.
type Host struct {
	Name string     // lower-case DNS name without trailing dot
	Addr netip.Addr // IP address; IPv4-mapped IPv6 is stored as IPv4
}

// IsAddr reports whether the host is an IP address.
func (h Host) IsAddr() bool { return h.Addr.IsValid() }

// String is the canonical spelling: the name, the dotted quad, or the
// compressed IPv6 address (unbracketed).
func (h Host) String() string {
	if h.Addr.IsValid() {
		return h.Addr.String()
	}
	return h.Name
}

// ParseHost canonicalises a destination host as a client would spell it in
// a CONNECT line, a Host header, a SOCKS request or a TLS SNI: lower-case,
// one trailing dot removed, brackets around IPv6 removed, every numeric IPv4
// spelling of the WHATWG URL parser ("2130706433", "127.1", "0x7f.0.0.1",
// "0177.0.0.1") turned into its dotted quad, IPv6 compressed and an
// IPv4-mapped IPv6 address turned into IPv4.
//
// It refuses, before any rule is consulted, what could make two parts of the
// system disagree on the destination: NUL and control characters, '%' (zone
// ids, percent-encoding), anything outside [A-Za-z0-9._-], empty labels,
// labels over 63 bytes or starting or ending with '-', names over 253 bytes,
// and a name whose last label is numeric but which is not an IPv4 address.
func ParseHost(s string) (Host, error) {
	var why problem
	name, upper, addr := canon(s, &why)
	switch {
	case why.msg != "":
		return Host{}, &HostError{Host: s, Why: why.String()}
	case addr.IsValid():
		return Host{Addr: addr}, nil
	case upper:
		return Host{Name: strings.ToLower(name)}, nil
	}
	return Host{Name: name}, nil
}

// canon is the allocation-free core of ParseHost, in one pass over s. It
// returns either an address or a name, a part of s that must still be
// lower-cased when upper is set. On failure it sets *why and returns zeros.
func canon(s string, why *problem) (name string, upper bool, addr netip.Addr) {
	if s == "" {
		*why = problem{msg: "empty host"}
		return "", false, netip.Addr{}
	}
	if s[0] == '[' {
		if s[len(s)-1] != ']' {
			*why = problem{msg: "unbalanced '[' in IPv6 address"}
			return "", false, netip.Addr{}
		}
		return "", false, canonIPv6(s[1:len(s)-1], why)
	}
	if len(s) > 1 && s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	labelStart := 0
	for i := 0; i < len(s); i++ {
		switch byteClass[s[i]] {
		case className:
			continue
		case classUpper:
			upper = true
			continue
		case classColon:
			return "", false, canonIPv6(s, why)
		case classInvalid:
			*why = problem{msg: "character %q is not allowed in a host name", char: s[i], hasChar: true}
			return "", false, netip.Addr{}
		}
		if !checkLabel(s[labelStart:i], why) {
			return "", false, netip.Addr{}
		}
		labelStart = i + 1
	}
	if !checkLabel(s[labelStart:], why) {
		return "", false, netip.Addr{}
	}
	if len(s) > MaxNameLen {
		*why = problem{msg: "name is %d bytes long, over the limit of %d", n: len(s), max: MaxNameLen}
		return "", false, netip.Addr{}
	}
	if endsInNumber(s) {
		a, ok := parseIPv4WHATWG(s)
		if !ok {
			*why = problem{msg: "numeric name that is not a valid IPv4 address"}
			return "", false, netip.Addr{}
		}
		return "", false, a
	}
	return s, upper, netip.Addr{}
}

// Byte classes of host names, looked up in one table on the hot path.
const (
	classInvalid = iota
	className    // a-z 0-9 - _
	classUpper   // A-Z
	classDot
	classColon
)

var byteClass = func() (t [256]byte) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = className
		t[c-'a'+'A'] = classUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = className
	}
	t['-'], t['_'], t['.'], t[':'] = className, className, classDot, classColon
	return t
}()

func canonIPv6(s string, why *problem) netip.Addr {
	if strings.IndexByte(s, '%') >= 0 {
		*why = problem{msg: "IPv6 zone ids ('%') are not allowed"}
		return netip.Addr{}
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		*why = problem{msg: "not a valid IPv6 address"}
		return netip.Addr{}
	}
	return a.Unmap()
}

// checkLabels enforces the DNS label rules on a name of allowed characters.
func checkLabels(s string, why *problem) bool {
	for {
		i := strings.IndexByte(s, '.')
		if i < 0 {
			return checkLabel(s, why)
		}
		if !checkLabel(s[:i], why) {
			return false
		}
		s = s[i+1:]
	}
}

// checkLabel reports whether label is a valid DNS label, else sets *why.
func checkLabel(label string, why *problem) bool {
	switch {
	case label == "":
		*why = problem{msg: "empty label"}
	case len(label) > maxLabelLen:
		*why = problem{msg: "label of %d bytes, over the limit of %d", n: len(label), max: maxLabelLen}
	case label[0] == '-' || label[len(label)-1] == '-':
		*why = problem{msg: "label %q starts or ends with '-'", label: label}
	default:
		return true
	}
	return false
}

// problem is why a host was refused, kept unformatted so that refusing a
// host on the decision path allocates nothing.
type problem struct {
	msg string // a format for the one detail that is set below, if any
	// Exactly one of these, or none, fills msg's verbs.
	char    byte // a character not allowed, when hasChar (NUL is one)
	hasChar bool
	label   string
	n, max  int
}

func (p problem) String() string {
	switch {
	case p.hasChar:
		return fmt.Sprintf(p.msg, p.char)
	case p.label != "":
		return fmt.Sprintf(p.msg, p.label)
	case p.max != 0:
		return fmt.Sprintf(p.msg, p.n, p.max)
	}
	return p.msg
}

// lastLabel returns the part of s after its last dot.
func lastLabel(s string) string {
	return s[strings.LastIndexByte(s, '.')+1:]
}

// endsInNumber is the WHATWG URL "ends in a number" test: a host whose last
// label is all decimal digits, or 0x followed by hex digits, is parsed as
// IPv4 (and is invalid if it is not one).
func endsInNumber(s string) bool {
	l := lastLabel(s)
	if l == "" {
		return false
	}
	if allDigits(l, 10) {
		return true
	}
	return len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') && allDigits(l[2:], 16)
}

func allDigits(s string, base int) bool {
	for i := 0; i < len(s); i++ {
		if digitVal(s[i]) >= base {
			return false
		}
	}
	return true
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

// parseIPv4WHATWG parses 1 to 4 dot-separated numbers, each decimal, octal
// (leading 0) or hex (0x), the last filling the remaining bytes.
func parseIPv4WHATWG(s string) (netip.Addr, bool) {
	var parts [4]uint64
	n := 0
	for start := 0; ; {
		end := strings.IndexByte(s[start:], '.')
		last := end < 0
		if last {
			end = len(s)
		} else {
			end += start
		}
		if n == 4 {
			return netip.Addr{}, false
		}
		v, ok := parseIPv4Number(s[start:end])
		if !ok {
			return netip.Addr{}, false
		}
		parts[n] = v
		n++
		if last {
			break
		}
		start = end + 1
	}
	var ip uint64
	for i := 0; i < n-1; i++ {
		if parts[i] > 255 {
			return netip.Addr{}, false
		}
		ip |= parts[i] << (8 * (3 - i))
	}
	if parts[n-1] >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	ip |= parts[n-1]
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true // "0x" is zero in the WHATWG parser
		}
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := digitVal(s[i])
		if d >= base {
			return 0, false
		}
		v = v*uint64(base) + uint64(d)
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}
