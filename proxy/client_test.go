package proxy

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/srt-go/srt/netfilter"
)

// A client's own allowances widen the policy for its listener alone,
// never past a deny entry, and every decision names the client it was
// made for, DNS questions included.
func TestClientAllowancesAndAttribution(t *testing.T) {
	port, _ := upstream(t)
	target := fmt.Sprintf("127.0.0.1:%d", port)
	s := New(policy(t, nil, []string{"denied.test"}, nil))
	var mu sync.Mutex
	var got []Decision
	s.OnDecision = func(d Decision) {
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
	}
	extra, err := netfilter.Compile([]string{target, "denied.test", "extra.test"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Client{ID: "a", Allow: extra}
	b := &Client{ID: "b"}
	ha, _ := startFor(t, s, a)
	hb, _ := startFor(t, s, b)
	sa := newSandbox(t, func(tr Transparent, dst dstFunc) { s.serveTransparent(a, tr, dst) })
	sb := newSandbox(t, func(tr Transparent, dst dstFunc) { s.serveTransparent(b, tr, dst) })

	get := "GET http://" + target + "/x HTTP/1.1\r\nHost: " + target + "\r\n\r\n"
	if out := rawHTTP(t, ha, get); !strings.Contains(out, "hello /x") {
		t.Errorf("client a, allowed for it alone: %q", out)
	}
	if out := rawHTTP(t, hb, get); !strings.Contains(out, "403") {
		t.Errorf("client b got client a's allowance: %q", out)
	}
	if out := rawHTTP(t, ha, "CONNECT denied.test:443 HTTP/1.1\r\n\r\n"); !strings.Contains(out, "403 host is on the deny list") {
		t.Errorf("a client allowance overrode a deny entry: %q", out)
	}
	ask := func(sb *sandbox, host string) bool {
		_, rcode := sb.resolve(t, "udp", host)
		return rcode == dns.RcodeSuccess
	}
	if !ask(sa, "extra.test") || ask(sb, "extra.test") || ask(sa, "denied.test") {
		t.Errorf("DNS stubs: a extra.test %v, b extra.test %v, a denied.test %v", ask(sa, "extra.test"), ask(sb, "extra.test"), ask(sa, "denied.test"))
	}

	mu.Lock()
	defer mu.Unlock()
	var denied []string
	for _, d := range got {
		if d.Client == nil {
			t.Errorf("decision without its client: %+v", d)
			continue
		}
		if !d.Allowed {
			denied = append(denied, fmt.Sprintf("%s %s %s:%d %q", d.Client.ID, d.Protocol, d.Host, d.Port, d.Rule))
		}
	}
	want := []string{
		fmt.Sprintf("b http 127.0.0.1:%d %q", port, ""),
		`a connect denied.test:443 "denied.test"`,
		`b dns extra.test:0 ""`, `a dns denied.test:0 "denied.test"`,
	}
	if fmt.Sprint(denied) != fmt.Sprint(want) {
		t.Errorf("denials:\n got %q\nwant %q", denied, want)
	}
}

// Under a strict policy (strictAllowlist) a client's own allowances count
// for nothing, for connections and DNS questions alike, from the next
// connection on.
func TestStrictPolicyIgnoresClientAllowances(t *testing.T) {
	port, hits := upstream(t)
	target := fmt.Sprintf("127.0.0.1:%d", port)
	p := policy(t, nil, nil, nil)
	s := New(p)
	extra, err := netfilter.Compile([]string{target, "extra.test"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Client{ID: "a", Allow: extra}
	h, _ := startFor(t, s, a)
	sb := newSandbox(t, func(tr Transparent, dst dstFunc) { s.serveTransparent(a, tr, dst) })
	get := "GET http://" + target + "/x HTTP/1.1\r\nHost: " + target + "\r\n\r\n"
	ask := func() bool {
		_, rcode := sb.resolve(t, "udp", "extra.test")
		return rcode == dns.RcodeSuccess
	}
	if out := rawHTTP(t, h, get); !strings.Contains(out, "hello /x") || !ask() {
		t.Fatalf("without strict, the client's allowance should count: %q", out)
	}
	strict := policy(t, nil, nil, nil)
	strict.Strict = true
	s.SetPolicy(strict)
	before := hits()
	if out := rawHTTP(t, h, get); !strings.Contains(out, "403") {
		t.Errorf("strict policy, the client's allowance still counts: %q", out)
	}
	if ask() {
		t.Errorf("strict policy, the DNS stub may still answer extra.test")
	}
	if hits() != before {
		t.Errorf("the upstream saw %d connections under the strict policy", hits()-before)
	}
}
