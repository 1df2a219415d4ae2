package netfilter

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// Policy is the whole network decision: the domain rules, and the check of
// the addresses an allowed host name resolves to (spec d.5). It is
// immutable; replace it whole to change policy.
type Policy struct {
	Rules *Rules
	// DeniedResolved are deniedResolvedAddresses.
	DeniedResolved []netip.Prefix
	// HostAddrs returns the addresses on this host's interfaces; nil means
	// none are known.
	HostAddrs func() []netip.Addr
	// Strict is strictAllowlist: only Rules allow, and the allowances a
	// client has for itself alone count for nothing.
	Strict bool
}

// NewPolicy compiles the network settings.
func NewPolicy(allowed, denied []string, reasons map[string]string, deniedResolved []string) (*Policy, error) {
	r, err := Compile(allowed, denied, reasons)
	if err != nil {
		return nil, err
	}
	p := &Policy{Rules: r}
	for i, s := range deniedResolved {
		pfx, err := parsePrefix(s)
		if err != nil {
			return nil, &ListError{List: "deniedResolvedAddresses", Index: i, Err: err}
		}
		p.DeniedResolved = append(p.DeniedResolved, pfx)
	}
	return p, nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		return pfx.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Address classes refused for resolved host names, in the order they are
// reported.
var (
	loopback4    = netip.MustParsePrefix("127.0.0.0/8")
	unspecified4 = netip.MustParsePrefix("0.0.0.0/8")
	linkLocal4   = netip.MustParsePrefix("169.254.0.0/16")
	linkLocal6   = netip.MustParsePrefix("fe80::/10")
	multicast4   = netip.MustParsePrefix("224.0.0.0/4")
	multicast6   = netip.MustParsePrefix("ff00::/8")
	broadcast4   = netip.MustParseAddr("255.255.255.255")
	nat64        = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour    = netip.MustParsePrefix("2002::/16")
	metadata     = []netip.Prefix{
		netip.MustParsePrefix("100.100.100.200/32"), netip.MustParsePrefix("168.63.129.16/32"),
		netip.MustParsePrefix("192.0.0.192/32"), netip.MustParsePrefix("fd00:ec2::/32"),
		netip.MustParsePrefix("fd20:ce::254/128"), netip.MustParsePrefix("fd00:c1::a9fe:a9fe/128"),
		netip.MustParsePrefix("fd00:42::42/128"), netip.MustParsePrefix("fd00:a9fe:a9fe::1/128"),
		netip.MustParsePrefix("fd00:100::100:200/128"),
	}
)

// classOrder is the order refusals are reported in (spec d.5).
var classOrder = map[string]int{
	"a deny-listed address": 1, "a non-loopback address": 2, "a loopback address": 3, "an unspecified address": 4,
	"a link-local address": 5, "a multicast address": 6, "the broadcast address": 7, "a cloud metadata address": 8,
	"a listed address": 9, "one of this host's addresses": 10,
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries (mapped,
// compatible, NAT64, 6to4), so IPv4 rules apply to it too.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if a.Is4() {
		return a, true
	}
	b := a.As16()
	switch {
	case a.Is4In6():
		return a.Unmap(), true
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case b == [16]byte{12: b[12], 13: b[13], 14: b[14], 15: b[15]} && (b[12]|b[13]) != 0:
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true // IPv4-compatible ::a.b.c.d
	}
	return netip.Addr{}, false
}

// classify says why address a may not be dialled for a host name, or "".
func (p *Policy) classify(a netip.Addr) string {
	forms := []netip.Addr{a}
	if v4, ok := embeddedIPv4(a); ok && v4 != a {
		forms = append(forms, v4)
	}
	for _, f := range forms {
		switch {
		case loopback4.Contains(f) || f == netip.IPv6Loopback():
			return "a loopback address"
		case unspecified4.Contains(f) || f == netip.IPv6Unspecified():
			return "an unspecified address"
		case linkLocal4.Contains(f) || linkLocal6.Contains(f):
			return "a link-local address"
		case multicast4.Contains(f) || multicast6.Contains(f):
			return "a multicast address"
		case f == broadcast4:
			return "the broadcast address"
		}
		for _, m := range metadata {
			if m.Contains(f) {
				return "a cloud metadata address"
			}
		}
	}
	for _, f := range forms {
		for _, d := range p.DeniedResolved {
			if d.Contains(f) {
				return "a listed address"
			}
		}
	}
	if p.HostAddrs != nil {
		for _, h := range p.HostAddrs() {
			for _, f := range forms {
				if h.Unmap() == f.Unmap() {
					return "one of this host's addresses"
				}
			}
		}
	}
	return ""
}

// ResolvedError refuses every address a host name resolved to.
type ResolvedError struct {
	Host    string
	Classes []string // one per refused class, in the fixed order
}

func (e *ResolvedError) Error() string {
	return fmt.Sprintf("resolved to %s", strings.Join(e.Classes, " / "))
}

// CheckResolved filters the addresses an allowed host name resolved to
// (spec d.5). It returns the ones that may be dialled, in order, or a
// *ResolvedError when none may: so an allowed name cannot be pointed at
// the host's loopback, a private metadata service or the host itself,
// unless that address was allowed explicitly.
func (p *Policy) CheckResolved(h Host, port uint16, addrs []netip.Addr) ([]netip.Addr, error) {
	var ok []netip.Addr
	seen := map[string]bool{}
	var classes []string
	refuse := func(class string) {
		if !seen[class] {
			seen[class] = true
			classes = append(classes, class)
		}
	}
	localhost := h.Name == "localhost" || strings.HasSuffix(h.Name, ".localhost")
	for _, a := range addrs {
		a = a.Unmap()
		denied, allowed := p.Rules.addrRule(a, port)
		switch {
		case denied:
			refuse("a deny-listed address")
		case allowed:
			ok = append(ok, a)
		case localhost:
			if a.IsLoopback() {
				ok = append(ok, a)
			} else {
				refuse("a non-loopback address")
			}
		default:
			if c := p.classify(a); c != "" {
				refuse(c)
			} else {
				ok = append(ok, a)
			}
		}
	}
	if len(ok) == 0 {
		sort.SliceStable(classes, func(i, j int) bool { return classOrder[classes[i]] < classOrder[classes[j]] })
		if len(classes) == 0 {
			classes = []string{"no address"}
		}
		return nil, &ResolvedError{Host: h.String(), Classes: classes}
	}
	return ok, nil
}

// addrRule reports whether an IP-literal entry of deniedDomains or of
// allowedDomains names a (for port).
func (r *Rules) addrRule(a netip.Addr, port uint16) (denied, allowed bool) {
	for _, rl := range r.addrs[a.As16()] {
		if rl.port == 0 || rl.port == port {
			if rl.deny {
				denied = true
			} else {
				allowed = true
			}
		}
	}
	return denied, allowed
}
