package netfilter

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseHostCanonicalForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"example.com", "example.com"},
		{"EXAMPLE.Com", "example.com"},
		{"example.com.", "example.com"},
		{"localhost", "localhost"},
		{"_dmarc.example.com", "_dmarc.example.com"},
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f.0.0.1", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0x", "0.0.0.0"},
		{"1.2.3.4.", "1.2.3.4"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[2001:DB8:0:0:0:0:0:1]", "2001:db8::1"},
		{"[::ffff:127.0.0.1]", "127.0.0.1"},
		{"[::ffff:7f00:1]", "127.0.0.1"},
		{"::ffff:169.254.169.254", "169.254.169.254"},
	} {
		h, err := ParseHost(tc.in)
		if err != nil {
			t.Errorf("ParseHost(%q): %v", tc.in, err)
			continue
		}
		if got := h.String(); got != tc.want {
			t.Errorf("ParseHost(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseHostRefuses(t *testing.T) {
	for _, tc := range []struct{ in, why string }{
		{"", "empty"},
		{"exa\x00mple.com", "character"},
		{"exa\nmple.com", "character"},
		{"ex ample.com", "character"},
		{"user@example.com", "character"},
		{"example.com%00", "character"},
		{"[fe80::1%eth0]", "zone"},
		{"fe80::1%25eth0", "zone"},
		{"example.com:443", "IPv6"},
		{"[::1", "unbalanced"},
		{"[1.2.3.4]", "IPv6"},
		{"a..b", "empty label"},
		{".example.com", "empty label"},
		{"example.com..", "empty label"},
		{".", "empty label"},
		{"-bad-.com", "starts or ends"},
		{"bad-.com", "starts or ends"},
		{strings.Repeat("a", 64) + ".com", "label of 64"},
		{strings.Repeat("a.", 127) + "com", "over the limit"},
		{"256.0.0.1", "IPv4"},
		{"1.2.3.4.5", "IPv4"},
		{"4294967296", "IPv4"},
		{"example.123", "IPv4"},
		{"1.2.3.09", "IPv4"},
		{"1.2.3.08", "IPv4"},
		{"\u00e9xample.com", "character"},
	} {
		_, err := ParseHost(tc.in)
		if err == nil {
			t.Errorf("ParseHost(%q) accepted", tc.in)
			continue
		}
		if !errors.Is(err, ErrMalformedHost) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ParseHost(%q) = %v, want a malformed-host error about %q", tc.in, err, tc.why)
		}
	}
	// The longest legal name is accepted, one byte more is not.
	long := strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("b", 61)
	if _, err := ParseHost(long); err != nil {
		t.Errorf("name of %d bytes refused: %v", len(long), err)
	}
	if _, err := ParseHost(long + "a"); err == nil {
		t.Errorf("name of %d bytes accepted", len(long)+1)
	}
}

// The validation table of the settings file (spec testcases 27), plus the
// stricter checks of this implementation.
func TestParsePatternTable(t *testing.T) {
	const ok, reject = true, false
	for _, tc := range []struct {
		entry         string
		allow, deny   bool
		wantCanonical string
	}{
		{"example.com", ok, ok, "example.com"},
		{"EXAMPLE.COM", ok, ok, "example.com"},
		{"localhost", ok, ok, "localhost"},
		{"localhost:8080", ok, ok, "localhost:8080"},
		{"*.example.com", ok, ok, "*.example.com"},
		{"*.github.io", ok, ok, "*.github.io"},
		{"*.co.uk", ok, ok, "*.co.uk"},
		{"*.*.example.com", ok, ok, "*.*.example.com"},
		{"not-a-domain", reject, reject, ""},
		{"intranet", reject, reject, ""},
		{"https://example.com", reject, reject, ""},
		{"example.com/path", reject, reject, ""},
		{"*example.com", reject, reject, ""},
		{"*.com", reject, reject, ""},
		{"*.", reject, reject, ""},
		{"a.*.example.com", reject, reject, ""},
		{"*", reject, ok, "*"},
		{"*:22", reject, ok, "*:22"},
		{"example.com:443", ok, ok, "example.com:443"},
		{"example.com:65535", ok, ok, "example.com:65535"},
		{"example.com:0", reject, reject, ""},
		{"example.com:080", reject, reject, ""},
		{"example.com:65536", reject, reject, ""},
		{"example.com:", reject, reject, ""},
		{":443", reject, reject, ""},
		{"[::1]", ok, ok, "[::1]"},
		{"[::1]:443", ok, ok, "[::1]:443"},
		{"[2001:db8::1]:443", ok, ok, "[2001:db8::1]:443"},
		{"[2001:DB8:0::1]", ok, ok, "[2001:db8::1]"},
		{"[fe80::1%eth0]", ok, ok, "[fe80::1]"},
		{"[::ffff:1.2.3.4]", ok, ok, "1.2.3.4"},
		{"::1", reject, reject, ""},
		{"2001:db8::1", reject, reject, ""},
		{"[::1]:0", reject, reject, ""},
		{"[::1]x", reject, reject, ""},
		{"[1.2.3.4]", reject, reject, ""},
		{"127.0.0.1", ok, ok, "127.0.0.1"},
		{"127.0.0.1:3000", ok, ok, "127.0.0.1:3000"},
		{"1.2.3.4:22", ok, ok, "1.2.3.4:22"},
		{".example.com", reject, reject, ""},
		{"example.com.", reject, reject, ""},
		{"10.0.0.0/8", reject, reject, ""},
		// Accepted by the reference, refused here: no destination can match them.
		{"ex ample.com", reject, reject, ""},
		{"user@example.com", reject, reject, ""},
		{"-bad-.com", reject, reject, ""},
		{"exa\x00mple.com", reject, reject, ""},
		{"exa\tmple.com", reject, reject, ""},
		{strings.Repeat("a", 64) + ".com", reject, reject, ""},
		{strings.Repeat("abc.", 64) + "com", reject, reject, ""},
		{"127.1", reject, reject, ""},
		{"0x7f.0.0.1", reject, reject, ""},
		{"2130706433", reject, reject, ""},
		{"example.123", reject, reject, ""},
		{"*.1.2.3", reject, reject, ""},
		{"", reject, reject, ""},
	} {
		for _, g := range []struct {
			list List
			want bool
		}{{Allow, tc.allow}, {Deny, tc.deny}} {
			p, err := ParsePattern(tc.entry, g.list)
			if (err == nil) != g.want {
				t.Errorf("ParsePattern(%q, %v): err = %v, want accepted = %v", tc.entry, g.list, err, g.want)
				continue
			}
			if err != nil {
				var pe *PatternError
				if !errors.As(err, &pe) || pe.Entry != tc.entry {
					t.Errorf("ParsePattern(%q): error %v does not name the entry", tc.entry, err)
				}
				continue
			}
			if got := p.String(); got != tc.wantCanonical {
				t.Errorf("ParsePattern(%q).String() = %q, want %q", tc.entry, got, tc.wantCanonical)
			}
		}
	}
}

// A URL where a domain pattern belongs is refused for its scheme, with
// the entry to write when its host is one, never as a bad port.
func TestParsePatternScheme(t *testing.T) {
	for _, tc := range []struct {
		entry string
		list  List
		why   string
	}{
		{"https://x.org", Allow, `a scheme ("https://") is not part of a domain pattern; write "x.org"`},
		{"https://x.org", Deny, `a scheme ("https://") is not part of a domain pattern; write "x.org"`},
		{"https://x.org", HostOnly, `a scheme ("https://") is not part of a domain pattern; write "x.org"`},
		{"http://x.org:8080/path?q", Allow, `a scheme ("http://") is not part of a domain pattern; write "x.org:8080"`},
		{"http://x.org:8080", HostOnly, `a scheme ("http://") is not part of a domain pattern; write "x.org"`},
		{"https://user:pw@*.x.org/", Allow, `a scheme ("https://") is not part of a domain pattern; write "*.x.org"`},
		{"ssh://[2001:db8::1]:22", Allow, `a scheme ("ssh://") is not part of a domain pattern; write "[2001:db8::1]:22"`},
		{"https://", Allow, `a scheme ("https://") is not part of a domain pattern`},
		{"https://intranet", Allow, `a scheme ("https://") is not part of a domain pattern`},
	} {
		_, err := ParsePattern(tc.entry, tc.list)
		var pe *PatternError
		if !errors.As(err, &pe) || pe.Entry != tc.entry || pe.Why != tc.why {
			t.Errorf("ParsePattern(%q, %v) = %v, want the reason %q", tc.entry, tc.list, err, tc.why)
		}
	}
}

func TestParsePatternHostOnly(t *testing.T) {
	for _, tc := range []struct {
		entry string
		ok    bool
	}{
		{"api.example.com", true},
		{"*.example.com", true},
		{"::1", true},
		{"[::1]", true},
		{"2001:db8::1", true},
		{"api.example.com:443", false},
		{"*", false},
		{"fe80::1%eth0", false},
		{"intranet", false},
	} {
		_, err := ParsePattern(tc.entry, HostOnly)
		if (err == nil) != tc.ok {
			t.Errorf("ParsePattern(%q, HostOnly): err = %v, want ok = %v", tc.entry, err, tc.ok)
		}
	}
}

func mustCompile(t testing.TB, allowed, denied []string, reasons map[string]string) *Rules {
	t.Helper()
	r, err := Compile(allowed, denied, reasons)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every matching rule of spec b.5 and d.2.
func TestDecide(t *testing.T) {
	r := mustCompile(t,
		[]string{"example.com", "*.github.com", "api.example.org:443", "127.0.0.1:18080", "[::1]:8080", "localhost", "*.*.deep.test", "10.1.2.3", "*.example.net"},
		[]string{"evil.github.com", "*.internal.github.com", "example.com:22", "*:25", "*.example.net"},
		map[string]string{"example.com:22": "SSH is blocked; use https", "*.github.com": "never fires: not a deny entry"})
	for _, tc := range []struct {
		host    string
		port    uint16
		allowed bool
		rule    string
		reason  string
	}{
		{"example.com", 443, true, "example.com", ""},
		{"EXAMPLE.COM.", 80, true, "example.com", ""},
		{"www.example.com", 443, false, "", ReasonNotAllowed},                     // exact does not cover subdomains
		{"example.com", 22, false, "example.com:22", "SSH is blocked; use https"}, // deny wins, with its reason
		{"github.com", 443, false, "", ReasonNotAllowed},                          // *.x never matches x
		{"api.github.com", 443, true, "*.github.com", ""},
		{"a.b.github.com", 443, true, "*.github.com", ""},
		{"evil.github.com", 443, false, "evil.github.com", ReasonDenyListed},
		{"x.internal.github.com", 443, false, "*.internal.github.com", ReasonDenyListed},
		{"internal.github.com", 443, true, "*.github.com", ""}, // the deny wildcard does not cover its base
		{"notgithub.com", 443, false, "", ReasonNotAllowed},
		{"xgithub.com", 443, false, "", ReasonNotAllowed},
		{"api.example.org", 443, true, "api.example.org:443", ""},
		{"api.example.org", 80, false, "", ReasonNotAllowed},
		{"mail.example.com", 25, false, "*:25", ReasonDenyListed},
		{"example.com", 25, false, "*:25", ReasonDenyListed},
		{"127.0.0.1", 25, false, "*:25", ReasonDenyListed}, // "*" covers addresses too
		{"127.0.0.1", 18080, true, "127.0.0.1:18080", ""},
		{"2130706433", 18080, true, "127.0.0.1:18080", ""},
		{"127.1", 18080, true, "127.0.0.1:18080", ""},
		{"0x7f.0.0.1", 18080, true, "127.0.0.1:18080", ""},
		{"0177.0.0.1", 18080, true, "127.0.0.1:18080", ""},
		{"[::ffff:127.0.0.1]", 18080, true, "127.0.0.1:18080", ""},
		{"127.0.0.1", 18081, false, "", ReasonNotAllowed},
		{"[::1]", 8080, true, "[::1]:8080", ""},
		{"::1", 8080, true, "[::1]:8080", ""},
		{"[0:0::1]", 8080, true, "[::1]:8080", ""},
		{"[::1]", 8081, false, "", ReasonNotAllowed},
		{"localhost", 5432, true, "localhost", ""},
		{"x.localhost", 5432, false, "", ReasonNotAllowed},
		{"deep.test", 1, false, "", ReasonNotAllowed},
		{"a.deep.test", 1, false, "", ReasonNotAllowed}, // "*.*." needs two more labels
		{"a.b.deep.test", 1, true, "*.*.deep.test", ""},
		{"10.1.2.3", 5, true, "10.1.2.3", ""},
		{"167838211", 5, true, "10.1.2.3", ""},
		{"a.example.net", 443, false, "*.example.net", ReasonDenyListed}, // in both lists: deny wins
		{"exa\x00mple.com", 443, false, "", ReasonMalformed},
		{"example.com%2f", 443, false, "", ReasonMalformed},
		{"example.com\n", 443, false, "", ReasonMalformed},
		{"[fe80::1%eth0]", 443, false, "", ReasonMalformed},
		{"", 443, false, "", ReasonMalformed},
		{"999.1.1.1", 443, false, "", ReasonMalformed},
	} {
		d := r.Decide(tc.host, tc.port)
		want := Decision{Allowed: tc.allowed, Rule: tc.rule, Reason: tc.reason}
		if d != want {
			t.Errorf("Decide(%q, %d) = %+v, want %+v", tc.host, tc.port, d, want)
		}
		if h, err := ParseHost(tc.host); err == nil {
			if d2 := r.DecideHost(h, tc.port); d2 != d {
				t.Errorf("DecideHost(%v, %d) = %+v, Decide said %+v", h, tc.port, d2, d)
			}
		}
	}
}

func TestDecideFirstEntryWins(t *testing.T) {
	r := mustCompile(t, nil, []string{"*.example.com", "a.example.com", "*"},
		map[string]string{"*.example.com": "first", "a.example.com": "second", "*": "third"})
	if d := r.Decide("a.example.com", 1); d.Reason != "first" {
		t.Errorf("got %+v, want the first deny entry to decide", d)
	}
	if d := r.Decide("other.org", 1); d.Reason != "third" {
		t.Errorf("got %+v, want the bare * entry", d)
	}
}

func TestDecideEmptyListsDenyAll(t *testing.T) {
	r := mustCompile(t, nil, nil, nil)
	if d := r.Decide("example.com", 443); d.Allowed || d.Reason != ReasonNotAllowed {
		t.Errorf("got %+v", d)
	}
}

func TestCompileNamesBadEntry(t *testing.T) {
	_, err := Compile([]string{"example.com", "ok.org", "bad host.com"}, nil, nil)
	var le *ListError
	if !errors.As(err, &le) || le.List != "allowedDomains" || le.Index != 2 {
		t.Fatalf("err = %v, want allowedDomains.2", err)
	}
	if _, err := Compile(nil, []string{"*"}, nil); err != nil {
		t.Errorf("deny * refused: %v", err)
	}
	if _, err := Compile([]string{"*"}, nil, nil); err == nil {
		t.Errorf("allow * accepted")
	}
}

func TestDecideAllocatesNothing(t *testing.T) {
	r := benchRules(t, 10000)
	for _, host := range []string{"host5000.example.com", "API.host7.example.com", "miss.example.org", "10.0.3.7", "2130706433", "bad\x00host"} {
		if n := testing.AllocsPerRun(100, func() { r.Decide(host, 443) }); n != 0 {
			t.Errorf("Decide(%q) allocates %v times", host, n)
		}
	}
}

// benchRules builds n entries: a third exact names, a third wildcards, a
// third addresses, with a few denies.
func benchRules(tb testing.TB, n int) *Rules {
	allowed := make([]string, 0, n)
	for i := 0; len(allowed) < n; i++ {
		allowed = append(allowed, fmt.Sprintf("host%d.example.com", i))
		if len(allowed) < n {
			allowed = append(allowed, fmt.Sprintf("*.host%d.example.com", i))
		}
		if len(allowed) < n {
			allowed = append(allowed, fmt.Sprintf("10.%d.%d.%d:443", i>>16&255, i>>8&255, i&255))
		}
	}
	denied := []string{"evil.example.com", "*.tracker.example.net", "*:25"}
	return mustCompile(tb, allowed, denied, nil)
}

func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		r := benchRules(b, n)
		for _, c := range []struct{ name, host string }{
			{"hit-exact", fmt.Sprintf("host%d.example.com", n/6)},
			{"hit-wildcard", fmt.Sprintf("api.v2.host%d.example.com", n/6)},
			{"hit-ip", "10.0.0.2"},
			{"miss", "unknown.subdomain.example.org"},
			{"miss-near", "www.nohost.example.com"}, // same shape as the rules: every lookup is made
		} {
			b.Run(fmt.Sprintf("rules=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					r.Decide(c.host, 443)
				}
			})
		}
	}
}

func TestMayAllow(t *testing.T) {
	r := mustCompile(t, []string{"api.example.com:443", "*.github.com", "10.0.0.1:22"}, []string{"evil.github.com", "*.github.com:22"}, nil)
	for host, want := range map[string]bool{
		"api.example.com": true, "API.example.com.": true, "x.github.com": true, "evil.github.com": false,
		"other.org": false, "github.com": false, "10.0.0.1": true, "10.0.0.2": false, "bad\x00host": false,
	} {
		if got := r.MayAllow(host); got != want {
			t.Errorf("MayAllow(%q) = %v, want %v", host, got, want)
		}
	}
}
