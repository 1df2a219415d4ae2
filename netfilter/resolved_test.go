package netfilter

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// Spec d.5, row by row.
func TestCheckResolved(t *testing.T) {
	p, err := NewPolicy([]string{"allowed.test", "127.0.0.1:18080", "localhost", "[fd00:ec2::254]"}, []string{"10.9.9.9"}, nil, []string{"192.168.0.0/16", "fc00::/7"})
	if err != nil {
		t.Fatal(err)
	}
	p.HostAddrs = func() []netip.Addr { return addrs("198.51.100.7") }
	name := Host{Name: "allowed.test"}
	for _, tc := range []struct {
		host  Host
		port  uint16
		in    []netip.Addr
		ok    string // the survivors, joined
		error string
	}{
		{name, 443, addrs("93.184.216.34"), "93.184.216.34", ""},
		{name, 443, addrs("127.0.0.1"), "", "resolved to a loopback address"},
		{name, 18080, addrs("127.0.0.1"), "127.0.0.1", ""}, // the IP literal is allowed explicitly, for this port
		{name, 443, addrs("::1", "0.0.0.0", "169.254.169.254"), "", "resolved to a loopback address / an unspecified address / a link-local address"},
		{name, 443, addrs("fe80::1", "224.0.0.1", "ff02::1", "255.255.255.255"), "", "resolved to a link-local address / a multicast address / the broadcast address"},
		{name, 443, addrs("100.100.100.200", "168.63.129.16", "fd00:ec2::254"), "fd00:ec2::254", ""}, // the last one is allowed
		{name, 443, addrs("100.100.100.200"), "", "resolved to a cloud metadata address"},
		{name, 443, addrs("::ffff:127.0.0.1"), "", "resolved to a loopback address"},
		{name, 443, addrs("64:ff9b::7f00:1"), "", "resolved to a loopback address"},
		{name, 443, addrs("2002:7f00:1::"), "", "resolved to a loopback address"},
		{name, 443, addrs("::a9fe:a9fe"), "", "resolved to a link-local address"},
		{name, 443, addrs("192.168.1.10", "fc00::1"), "", "resolved to a listed address"},
		{name, 443, addrs("10.9.9.9"), "", "resolved to a deny-listed address"},
		{name, 443, addrs("198.51.100.7"), "", "resolved to one of this host's addresses"},
		{name, 443, addrs("10.0.0.1"), "10.0.0.1", ""}, // private ranges are not refused by default
		{name, 443, addrs("127.0.0.1", "93.184.216.34"), "93.184.216.34", ""},
		{Host{Name: "localhost"}, 5432, addrs("127.0.0.1"), "127.0.0.1", ""},
		{Host{Name: "db.localhost"}, 5432, addrs("::1", "93.184.216.34"), "::1", ""},
		{Host{Name: "localhost"}, 5432, addrs("93.184.216.34"), "", "resolved to a non-loopback address"},
		{name, 443, nil, "", "resolved to no address"},
	} {
		got, err := p.CheckResolved(tc.host, tc.port, tc.in)
		var joined []string
		for _, a := range got {
			joined = append(joined, a.String())
		}
		if tc.error != "" {
			var re *ResolvedError
			if !errors.As(err, &re) || err.Error() != tc.error {
				t.Errorf("%v %v: err %v, want %q", tc.host, tc.in, err, tc.error)
			}
			continue
		}
		if err != nil || strings.Join(joined, ",") != tc.ok {
			t.Errorf("%v %v: %v %v, want %s", tc.host, tc.in, joined, err, tc.ok)
		}
	}
	if _, err := NewPolicy(nil, nil, nil, []string{"10.0.0.0/33"}); err == nil {
		t.Error("a bad CIDR is accepted")
	}
}
