package netfilter

import (
	"strings"
	"testing"
)

// FuzzParseHost checks that canonicalisation never panics, yields only the
// characters a DNS name or address may have, is idempotent, and agrees with
// the decision path.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"example.com", "EXAMPLE.com.", "127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433",
		"[::ffff:127.0.0.1]", "::1", "[fe80::1%eth0]", "a..b", "-x-.com", "x\x00y", "1.2.3.4.5", "0x", "é.com"} {
		f.Add(s)
	}
	r, err := Compile([]string{"example.com", "*.example.com", "127.0.0.1"}, []string{"bad.example.com"}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHost(s)
		d := r.Decide(s, 443)
		if err != nil {
			if d.Reason != ReasonMalformed {
				t.Fatalf("ParseHost(%q) failed (%v) but Decide said %+v", s, err, d)
			}
			return
		}
		c := h.String()
		if h.Addr.IsValid() == (h.Name != "") {
			t.Fatalf("ParseHost(%q) = %+v: want exactly one of name and address", s, h)
		}
		if h.Name != "" {
			if len(h.Name) > MaxNameLen || strings.Trim(h.Name, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != "" {
				t.Fatalf("ParseHost(%q) = %q: not a canonical name", s, h.Name)
			}
		}
		h2, err := ParseHost(c)
		if err != nil || h2 != h {
			t.Fatalf("ParseHost(%q) = %q, but that reparses to %+v, %v", s, c, h2, err)
		}
		if d2 := r.DecideHost(h, 443); d2 != d {
			t.Fatalf("Decide(%q) = %+v but DecideHost(%q) = %+v", s, d, c, d2)
		}
	})
}

// FuzzParsePattern checks that a pattern accepted once is accepted again
// in its canonical spelling, with the same meaning.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com:443", "*", "*:22", "[::1]:8080", "[fe80::1%eth0]",
		"*.*.a.b", "localhost", "1.2.3.4:22", "a.*.b", "example.com:080", "::1"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, list uint8) {
		l := List(list % 3)
		p, err := ParsePattern(s, l)
		if err != nil {
			return
		}
		q, err := ParsePattern(p.String(), l)
		if err != nil {
			t.Fatalf("ParsePattern(%q) = %q, which is refused: %v", s, p.String(), err)
		}
		q.Entry = p.Entry
		if q != p {
			t.Fatalf("ParsePattern(%q) = %+v, reparsed as %+v", s, p, q)
		}
	})
}
