package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// redirect stands in for the sandbox's nftables redirect: a connection to
// its listener is taken to have been meant for the destination set
// before it was dialled.
type redirect struct {
	addr string
	to   atomic.Pointer[netip.AddrPort]
}

func (r *redirect) dst(net.Conn) (netip.AddrPort, error) {
	if to := r.to.Load(); to != nil {
		return *to, nil
	}
	return netip.AddrPort{}, errors.New("no destination")
}

// connect connects through the redirect, as a connection meant for to.
func (r *redirect) connect(to netip.AddrPort) (net.Conn, error) {
	r.to.Store(&to)
	return net.Dial("tcp", r.addr)
}

// dial is connect for a test, which closes the connection at its end.
func (r *redirect) dial(t testing.TB, to netip.AddrPort) *net.TCPConn {
	t.Helper()
	c, err := r.connect(to)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// send writes what a client sends first, ends its side, and returns what
// came back and how the connection ended.
func send(t testing.TB, c *net.TCPConn, first []byte) (string, error) {
	t.Helper()
	c.Write(first)
	c.CloseWrite()
	out, err := io.ReadAll(c)
	return string(out), err
}

// sandbox is a transparent path on loopback sockets, as a sandbox's init
// would hand them over.
type sandbox struct {
	redirect
	dnsUDP, dnsTCP string
	sockets        Transparent
}

// newSandbox opens the sockets and serves them with serve.
func newSandbox(t testing.TB, serve func(Transparent, dstFunc)) *sandbox {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sb := &sandbox{redirect: redirect{addr: ln.Addr().String()}, dnsUDP: pc.LocalAddr().String(), dnsTCP: dl.Addr().String(),
		sockets: Transparent{TCP: []net.Listener{ln}, DNSUDP: []net.PacketConn{pc}, DNSTCP: []net.Listener{dl}}}
	t.Cleanup(func() {
		ln.Close()
		pc.Close()
		dl.Close()
	})
	serve(sb.sockets, sb.dst)
	return sb
}

// lookup asks the stub for name's records of type qtype over network
// ("udp" or "tcp").
func (sb *sandbox) lookup(t testing.TB, network, name string, qtype uint16) *dns.Msg {
	t.Helper()
	addr := sb.dnsUDP
	if network == "tcp" {
		addr = sb.dnsTCP
	}
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	r, _, err := (&dns.Client{Net: network, Timeout: 10 * time.Second}).Exchange(q, addr)
	if err != nil {
		t.Fatalf("asking the stub for %s over %s: %v", name, network, err)
	}
	return r
}

// resolve asks the stub for name's A record: its address, or the
// answer's code.
func (sb *sandbox) resolve(t testing.TB, network, name string) (netip.Addr, int) {
	t.Helper()
	r := sb.lookup(t, network, name, dns.TypeA)
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		return netip.Addr{}, r.Rcode
	}
	a, _ := netip.AddrFromSlice(r.Answer[0].(*dns.A).A)
	return a.Unmap(), r.Rcode
}

// abbrev shortens s for a message.
func abbrev(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// decisions records a server's decisions.
type decisions struct {
	mu  sync.Mutex
	all []Decision
}

func (d *decisions) add(x Decision) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.all = append(d.all, x)
}

// denied lists the denials as "client protocol host:port rule".
func (d *decisions) denied() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, x := range d.all {
		if !x.Allowed {
			id := "<nil>"
			if x.Client != nil {
				id = x.Client.ID
			}
			out = append(out, fmt.Sprintf("%s %s %s:%d %q", id, x.Protocol, x.Host, x.Port, x.Rule))
		}
	}
	return out
}

// A redirected connection goes where its name says: the name behind a
// fake address of the stub's, else the SNI or Host it sends (never the
// address it was sent to), else the address; it is decided as the
// client's, reported, and refused with a reset.
func TestTransparentDestinations(t *testing.T) {
	port, hits := upstream(t)
	s := New(policy(t, []string{"allowed.test", fmt.Sprintf("127.0.0.1:%d", port)}, []string{"evil.test"}, nil))
	s.Resolve = fakeDNS(map[string]string{"allowed.test": "127.0.0.1", "evil.test": "127.0.0.1"})
	var dialled []string
	var mu sync.Mutex
	s.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, address)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}
	var got decisions
	s.OnDecision = got.add
	c := &Client{ID: "cmd"}
	sb := newSandbox(t, func(tr Transparent, dst dstFunc) { s.serveTransparent(c, tr, dst) })
	t.Cleanup(func() { s.Close() })

	fake, rcode := sb.resolve(t, "udp", "allowed.test")
	if !fakeRange.Contains(fake) {
		t.Fatalf("the stub answered allowed.test with %v (rcode %d), want an address of %v", fake, rcode, fakeRange)
	}
	real := netip.MustParseAddr("198.51.100.9") // unreachable from here: a connection that works went by name
	lo := netip.MustParseAddr("127.0.0.1")
	hello := clientHello(t, &tls.Config{ServerName: "allowed.test"})
	for _, tc := range []struct {
		name  string
		to    netip.Addr
		first string
		want  string // "" for a reset
	}{
		{"fake address: its name, whatever Host says", fake, "GET /fake HTTP/1.1\r\nHost: unlisted.test\r\n\r\n", "hello /fake host=unlisted.test"},
		{"real address, HTTP Host", real, fmt.Sprintf("GET /host HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", port), "hello /host"},
		{"real address, TLS SNI; the ClientHello goes on", real, string(hello), "echo:" + string(hello)},
		{"no name: the address, allowed by an IP rule", lo, "ping", "echo:ping"},
		{"no name: the address, not allowed", real, "ping", ""},
		{"a denied name at an allowed address", lo, "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", ""},
		{"a name the canonicaliser refuses", real, "GET / HTTP/1.1\r\nHost: allowed%2etest\r\n\r\n", ""},
	} {
		out, err := send(t, sb.dial(t, netip.AddrPortFrom(tc.to, port)), []byte(tc.first))
		if tc.want == "" {
			if out != "" || !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("%s: got %q, %v; want a reset", tc.name, out, err)
			}
		} else if !strings.Contains(out, tc.want) {
			t.Errorf("%s: got %q, %v; want %q", tc.name, abbrev(out), err, abbrev(tc.want))
		}
	}
	if hits() != 4 {
		t.Errorf("the upstream got %d connections, want 4", hits())
	}
	mu.Lock()
	for _, a := range dialled {
		if a != fmt.Sprintf("127.0.0.1:%d", port) {
			t.Errorf("dialled %s, not the allowed name's address", a)
		}
	}
	mu.Unlock()
	want := []string{
		fmt.Sprintf(`cmd transparent 198.51.100.9:%d ""`, port),
		fmt.Sprintf(`cmd transparent evil.test:%d "evil.test"`, port),
	}
	if d := got.denied(); !slices.Equal(d, want) {
		t.Errorf("denials:\n got %q\nwant %q", d, want)
	}
}

// The stub answers from the live policy and the client's own allowances:
// an A record from the fake range for a name that could be allowed (the
// same one over UDP and TCP, every time), no records of other types,
// NXDOMAIN for the rest, reported; it resolves nothing.
func TestTransparentDNSStub(t *testing.T) {
	s := New(policy(t, []string{"*.allowed.test"}, []string{"bad.allowed.test"}, nil))
	var resolved atomic.Int32
	s.Resolve = func(context.Context, string) ([]netip.Addr, error) { resolved.Add(1); return nil, errors.New("no") }
	var got decisions
	s.OnDecision = got.add
	extra := policy(t, []string{"extra.test"}, nil, nil).Rules
	a := &Client{ID: "a", Allow: extra}
	b := &Client{ID: "b"}
	sa := newSandbox(t, func(tr Transparent, dst dstFunc) { s.serveTransparent(a, tr, dst) })
	sbx := newSandbox(t, func(tr Transparent, dst dstFunc) { s.serveTransparent(b, tr, dst) })
	t.Cleanup(func() { s.Close() })

	first, _ := sa.resolve(t, "udp", "api.allowed.test")
	if !fakeRange.Contains(first) {
		t.Fatalf("api.allowed.test: %v", first)
	}
	for _, network := range []string{"udp", "tcp"} {
		if again, _ := sa.resolve(t, network, "API.allowed.test."); again != first {
			t.Errorf("%s: api.allowed.test is %v, then %v", network, first, again)
		}
		if r := sa.lookup(t, network, "api.allowed.test", dns.TypeAAAA); r.Rcode != dns.RcodeSuccess || len(r.Answer) != 0 {
			t.Errorf("%s: AAAA of an allowed name: %v", network, r)
		}
		for _, tc := range []struct {
			name string
			want int
		}{{"bad.allowed.test", dns.RcodeNameError}, {"other.test", dns.RcodeNameError}, {"allowed%2etest", dns.RcodeNameError}, {"extra.test", dns.RcodeSuccess}} {
			if _, rcode := sa.resolve(t, network, tc.name); rcode != tc.want {
				t.Errorf("%s: %s answered %s, want %s", network, tc.name, dns.RcodeToString[rcode], dns.RcodeToString[tc.want])
			}
		}
	}
	if _, rcode := sbx.resolve(t, "udp", "extra.test"); rcode != dns.RcodeNameError {
		t.Errorf("client b resolved client a's own allowance: %s", dns.RcodeToString[rcode])
	}
	s.SetPolicy(policy(t, []string{"other.test"}, nil, nil))
	if _, rcode := sa.resolve(t, "udp", "api.allowed.test"); rcode != dns.RcodeNameError {
		t.Errorf("after the update, api.allowed.test answered %s", dns.RcodeToString[rcode])
	}
	if a, _ := sa.resolve(t, "udp", "other.test"); !fakeRange.Contains(a) || a == first {
		t.Errorf("after the update, other.test is %v", a)
	}
	if n := resolved.Load(); n != 0 {
		t.Errorf("the stub resolved %d names", n)
	}
	want := []string{
		`a dns bad.allowed.test:0 "bad.allowed.test"`, `a dns other.test:0 ""`,
		`a dns bad.allowed.test:0 "bad.allowed.test"`, `a dns other.test:0 ""`,
		`b dns extra.test:0 ""`, `a dns api.allowed.test:0 ""`,
	}
	if d := got.denied(); !slices.Equal(d, want) {
		t.Errorf("denials:\n got %q\nwant %q", d, want)
	}
}

// Transparent connections count against their client's cap with its
// SOCKS and HTTP requests, from accept to close: past the cap, one is
// reset and the refusal reported once; the client's proxy requests are
// refused too, another client's are not.
func TestTransparentSharesTheCap(t *testing.T) {
	port, _ := upstream(t)
	s := New(policy(t, []string{"allowed.test", fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
	s.Resolve = fakeDNS(map[string]string{"allowed.test": "127.0.0.1"})
	s.MaxConnsPerClient = 2
	var got decisions
	s.OnDecision = got.add
	c, other := &Client{ID: "cmd"}, &Client{ID: "other"}
	sb := newSandbox(t, func(tr Transparent, dst dstFunc) { s.serveTransparent(c, tr, dst) })
	_, socksC := startFor(t, s, c)
	_, socksOther := startFor(t, s, other)

	hello := clientHello(t, &tls.Config{ServerName: "allowed.test"})
	to := netip.AddrPortFrom(netip.MustParseAddr("198.51.100.9"), port)
	// Two tunnels held open: the echo upstream answers at the end.
	for range 2 {
		sb.dial(t, to).Write(hello)
	}
	out, err := send(t, sb.dial(t, to), hello)
	if out != "" || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("past the cap: got %q, %v; want a reset", out, err)
	}
	if code, _ := socksConnect(t, socksC, 1, []byte{127, 0, 0, 1}, port); code != socksGeneralFailure {
		t.Errorf("the client's SOCKS request past the cap: reply %d", code)
	}
	if code, conn := socksConnect(t, socksOther, 1, []byte{127, 0, 0, 1}, port); code != socksSucceeded || !echoes(t, conn) {
		t.Errorf("another client's SOCKS request: reply %d", code)
	}
	want := []string{fmt.Sprintf(`cmd transparent allowed.test:%d ""`, port)}
	if d := got.denied(); !slices.Equal(d, want) {
		t.Errorf("denials:\n got %q\nwant %q", d, want)
	}
	got.mu.Lock()
	for _, d := range got.all {
		if !d.Allowed && !strings.Contains(d.Reason, "too many open connections from this sandbox, limit 2") {
			t.Errorf("refusal reason %q", d.Reason)
		}
	}
	got.mu.Unlock()
}

// Close ends the transparent path: its listener and the stub's sockets
// are closed.
func TestServeTransparentClose(t *testing.T) {
	s := New(policy(t, nil, nil, nil))
	sb := newSandbox(t, func(tr Transparent, dst dstFunc) { s.serveTransparent(&Client{}, tr, dst) })
	sb.resolve(t, "tcp", "unlisted.test") // served
	s.Close()
	if c, err := net.Dial("tcp", sb.addr); err == nil {
		c.Close()
		t.Error("the transparent listener still accepts after Close")
	}
	if _, err := sb.sockets.DNSUDP[0].WriteTo([]byte{0}, sb.sockets.DNSUDP[0].LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the stub's UDP socket after Close: %v", err)
	}
	if c, err := net.Dial("tcp", sb.dnsTCP); err == nil {
		c.Close()
		t.Error("the stub's TCP listener still accepts after Close")
	}
}

// With a SOCKS5 proxy of the user's, the transparent path asks it, by the
// same name, and decides nothing itself; its stub, which cannot know what
// that proxy allows, refuses every name.
func TestForwardTransparent(t *testing.T) {
	port, _ := upstream(t)
	user := New(policy(t, []string{"allowed.test", fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
	user.Resolve = fakeDNS(map[string]string{"allowed.test": "127.0.0.1"})
	var got decisions
	user.OnDecision = got.add
	_, socks := start(t, user)
	sb := newSandbox(t, func(tr Transparent, dst dstFunc) { forwardTransparent(tr, "tcp", socks, dst) })

	to := netip.AddrPortFrom(netip.MustParseAddr("198.51.100.9"), port)
	if out, err := send(t, sb.dial(t, to), fmt.Appendf(nil, "GET /user HTTP/1.1\r\nHost: allowed.test:%d\r\n\r\n", port)); !strings.Contains(out, "hello /user") {
		t.Errorf("allowed by the user's proxy: %q %v", out, err)
	}
	if out, err := send(t, sb.dial(t, to), []byte("GET / HTTP/1.1\r\nHost: other.test\r\n\r\n")); out != "" || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("refused by the user's proxy: %q, %v; want a reset", out, err)
	}
	want := []string{fmt.Sprintf(`<nil> socks5 other.test:%d ""`, port)}
	if d := got.denied(); !slices.Equal(d, want) {
		t.Errorf("the user's proxy's denials:\n got %q\nwant %q", d, want)
	}
	for _, name := range []string{"allowed.test", "other.test"} {
		if _, rcode := sb.resolve(t, "udp", name); rcode != dns.RcodeNameError {
			t.Errorf("the stub answered %s for %s", dns.RcodeToString[rcode], name)
		}
	}
}

// The name table gives each name its own address of the range, the same
// one every time, maps it back, and says when the range is used up.
func TestNameTable(t *testing.T) {
	tab := newNameTable(netip.MustParsePrefix("10.9.9.0/30"))
	a, _ := tab.addr("a.test")
	b, _ := tab.addr("b.test")
	again, _ := tab.addr("a.test")
	if a != netip.MustParseAddr("10.9.9.1") || b != netip.MustParseAddr("10.9.9.2") || again != a {
		t.Errorf("a %v, b %v, a again %v", a, b, again)
	}
	if n, ok := tab.name(b); n != "b.test" || !ok {
		t.Errorf("%v maps back to %q %v", b, n, ok)
	}
	if _, ok := tab.name(netip.MustParseAddr("10.9.9.3")); ok {
		t.Error("an address never given has a name")
	}
	tab.addr("c.test")
	if x, ok := tab.addr("d.test"); ok {
		t.Errorf("a /30 gave a fourth name %v", x)
	}
	if n, _ := tab.name(netip.MustParseAddr("10.9.9.3")); n != "c.test" {
		t.Errorf("the last address is %q's", n)
	}
}

// A transparent connection held open costs the proxy two descriptors,
// the command's socket and the upstream, as a SOCKS tunnel does; the
// Unix socket hop it used to take cost two more.
func TestTransparentDescriptors(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("requires /proc")
	}
	port, hits := upstream(t)
	s := New(policy(t, []string{"allowed.test", fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
	s.Resolve = fakeDNS(map[string]string{"allowed.test": "127.0.0.1"})
	sb := newSandbox(t, func(tr Transparent, dst dstFunc) { s.serveTransparent(&Client{ID: "cmd"}, tr, dst) })
	t.Cleanup(func() { s.Close() })
	countFDs := func() int {
		entries, _ := os.ReadDir("/proc/self/fd")
		return len(entries)
	}
	hello := clientHello(t, &tls.Config{ServerName: "allowed.test"})
	to := netip.AddrPortFrom(netip.MustParseAddr("198.51.100.9"), port)
	const n = 50
	before := countFDs()
	for range n {
		sb.dial(t, to).Write(hello) // the echo upstream answers at the end: held open
	}
	for deadline := time.Now().Add(10 * time.Second); hits() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	// Each connection: the test's client end and the upstream server's
	// end, and the proxy's two.
	if grown := countFDs() - before; hits() != n || grown > 4*n+4 {
		t.Errorf("%d connections reached the upstream; descriptors grew by %d, want %d (4 a connection)", hits(), grown, 4*n)
	}
}
