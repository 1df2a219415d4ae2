package proxy

import (
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/miekg/dns"
	"golang.org/x/net/netutil"

	"github.com/srt-go/srt/netfilter"
)

// The transparent path: programs that ignore HTTP_PROXY still go through
// the policy. Inside the sandbox every address is local, and an nftables
// rule redirects all TCP not meant for loopback to a listener and DNS to
// a stub; the sandbox's init opens those sockets and hands them to srt,
// which serves them here. The stub answers names the policy may allow
// with addresses from a private range, which map back to the name; it
// answers every other name NXDOMAIN, and forwards no query anywhere.

// Transparent is the transparent path of one sandbox: the sockets its
// init opened in the sandbox's network namespace and handed to srt.
type Transparent struct {
	// TCP are the listeners the redirect sends all TCP not meant for
	// loopback to (IPv4, IPv6). The destination each connection was
	// meant for is read from its socket, on Linux.
	TCP []net.Listener
	// DNSUDP and DNSTCP are the DNS stub's sockets.
	DNSUDP []net.PacketConn
	DNSTCP []net.Listener
}

// protocolTransparent is the Decision.Protocol of the transparent path.
const protocolTransparent = "transparent"

// ServeTransparent serves t for client c until Close, or until t's
// sockets are closed; it returns at once.
//
// A redirected connection goes to a name where one is known: for a fake
// address the DNS stub handed out, the name behind it; for a real
// address, the TLS SNI or HTTP Host the connection starts with, dialled
// by that name and never at the address, so that an allowed name cannot
// front for an address the policy does not allow; failing both, the
// address, which only an IP-literal rule allows. From there it is a
// request of c's as a SOCKS5 CONNECT is: decided and reported (protocol
// "transparent"), counted against c's connections from accept to
// close, dialled with the resolved-address check. A refused connection
// is reset, as a refused connect looks to the command.
//
// The stub answers for a name the live policy could allow c on some
// port: an A query with a fake address, any other type with no records.
// Any other name gets NXDOMAIN, reported as protocol "dns".
func (s *Server) ServeTransparent(c *Client, t Transparent) {
	s.serveTransparent(c, t, originalDst)
}

// serveTransparent is ServeTransparent with dst reading each
// connection's destination.
func (s *Server) serveTransparent(c *Client, t Transparent, dst dstFunc) {
	tp := newTransparentPath(dst)
	handle := func(conn net.Conn, client *Client, full bool) { s.handleTransparent(tp, conn, client, full) }
	// Tracked before this returns, so that a Close after it closes them.
	for _, ln := range t.TCP {
		if !s.track(ln) {
			return // closed
		}
		go func() {
			defer s.untrack(ln)
			s.accept(ln, c, handle)
		}()
	}
	stub := tp.stub(func(host string) bool { return s.mayAllow(c, host) })
	for _, ss := range stubSockets(stub, t) {
		if !s.track(ss.sock) {
			return
		}
		go func() {
			defer s.untrack(ss.sock)
			ss.srv.ActivateAndServe()
		}()
	}
}

// handleTransparent serves one redirected connection of client; full
// says that the client is at its cap.
func (s *Server) handleTransparent(tp *transparentPath, c net.Conn, client *Client, full bool) {
	host, port, head, ok := tp.target(c)
	if !ok {
		reset(c)
		return
	}
	if full {
		s.refuse(client, protocolTransparent, host, port)
		reset(c)
		return
	}
	d, p := s.decide(client, protocolTransparent, host, port)
	if !d.Allowed {
		reset(c)
		return
	}
	ins := s.inspect.Load()
	if ins != nil && len(head) == 0 {
		// A connection to a name's fake address was decided by the name;
		// its first bytes still say whether it is HTTP for the
		// inspecting server to read.
		head = peekHead(c)
	}
	if ins != nil && len(head) > 0 && head[0] != recordHandshake && looksHTTP(head) {
		// Plain HTTP of a program that ignores the proxy variables: read
		// as the HTTP proxy's requests are (response headers stripped,
		// the filter asked, credentials only with allowPlaintextInject).
		ins.serveHTTPConn(c, head, newTunnel(client, protocolTransparent, host, port))
		return
	}
	if ins, t, refuse := s.terminating(client, protocolTransparent, host, port); ins != nil {
		ins.serveTunnel(c, head, t, false)
		return
	} else if refuse {
		s.refuseOpaque(client, protocolTransparent, host, port, "the connection cannot be inspected: its host is in tlsTerminate.excludeDomains")
		reset(c)
		return
	}
	if s.relayTo(c, head, client, p, protocolTransparent, host, port) != nil {
		reset(c)
	}
}

// ForwardTransparent serves a sandbox's transparent path t with no
// policy of its own, for a SOCKS5 proxy of the user's at network,
// address (network.socksProxyPort), which decides instead: each
// redirected connection is asked of it by the name or address
// ServeTransparent would decide on. The DNS stub, which cannot know what
// that proxy allows, answers every name NXDOMAIN: programs that ignore
// the proxy variables get through by address, SNI or Host alone. It
// returns at once; closing t's sockets ends it.
func ForwardTransparent(t Transparent, network, address string) {
	forwardTransparent(t, network, address, originalDst)
}

// forwardTransparent is ForwardTransparent with dst reading each
// connection's destination.
func forwardTransparent(t Transparent, network, address string, dst dstFunc) {
	tp := newTransparentPath(dst)
	// Nothing counts these connections against the command's cap, and
	// each holds a descriptor of srt's while its name is read: without
	// a bound, a command connecting in a loop and sending nothing could
	// take all of them. The bound is what srt's own proxies let one
	// command hold; past it, connections wait in the listener's
	// backlog, which costs srt nothing.
	slots := make(chan struct{}, MaxConnsPerClient+refusalRoom(MaxConnsPerClient))
	for _, ln := range t.TCP {
		go func() {
			for {
				slots <- struct{}{}
				c, err := Accept(ln)
				if err != nil {
					return
				}
				go func() {
					defer func() { <-slots }()
					defer c.Close()
					tp.forward(c, network, address)
				}()
			}
		}()
	}
	stub := tp.stub(func(string) bool { return false })
	for _, ss := range stubSockets(stub, t) {
		go ss.srv.ActivateAndServe()
	}
}

// forward hands one redirected connection to the SOCKS5 proxy at
// network, address.
func (tp *transparentPath) forward(c net.Conn, network, address string) {
	host, port, head, ok := tp.target(c)
	if !ok {
		reset(c)
		return
	}
	up, err := net.DialTimeout(network, address, HandshakeTimeout)
	if err != nil {
		reset(c)
		return
	}
	if err := SOCKSConnect(up, host, port); err != nil {
		up.Close()
		reset(c)
		return
	}
	if len(head) > 0 {
		if _, err := up.Write(head); err != nil {
			up.Close()
			return
		}
	}
	Join(c, up)
}

// reset makes c's close a reset, as a refused connect looks, instead of
// an empty answer the command could take for the server's.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
}

// dstFunc reads where a redirected connection was meant to go.
type dstFunc func(net.Conn) (netip.AddrPort, error)

// transparentPath is what one sandbox's transparent path knows, whoever
// decides: the names its stub handed out, and how to read where a
// connection was meant to go.
type transparentPath struct {
	names *nameTable
	dst   dstFunc
}

func newTransparentPath(dst dstFunc) *transparentPath {
	return &transparentPath{names: newNameTable(fakeRange), dst: dst}
}

// target finds where c goes: host (as targetHost spells it) and port,
// and the bytes read from c to find out, which go first upstream. ok is
// false for a connection to refuse unasked, as the SOCKS proxy refuses
// such a request before asking its policy: its destination cannot be
// read or has port 0, or it names a host the canonicaliser refuses.
func (tp *transparentPath) target(c net.Conn) (host string, port uint16, head []byte, ok bool) {
	dst, err := tp.dst(c)
	if err != nil || dst.Port() == 0 {
		return "", 0, nil, false
	}
	if name, known := tp.names.name(dst.Addr()); known {
		return name, dst.Port(), nil, true
	}
	name, head, err := peekName(c)
	if err != nil {
		return "", 0, nil, false
	}
	if name == "" {
		return dst.Addr().String(), dst.Port(), head, true
	}
	if host, err = targetHost(name); err != nil {
		return "", 0, nil, false
	}
	return host, dst.Port(), head, true
}

// targetHost spells a host as a SOCKS5 request carries it, so that a
// destination reads the same in decisions whichever way the command
// went: an address in canonical text, a name as given. A host the
// canonicaliser refuses is an error.
func targetHost(name string) (string, error) {
	if _, err := netfilter.ParseHost(name); err != nil {
		return "", err
	}
	if a, err := netip.ParseAddr(name); err == nil {
		return a.Unmap().String(), nil
	}
	return name, nil
}

// stub is the DNS stub's handler; mayAllow asks the policy about a host.
// Nothing is forwarded anywhere.
func (tp *transparentPath) stub(mayAllow func(host string) bool) dns.Handler {
	return dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.Authoritative = true
		for _, question := range q.Question {
			host, err := targetHost(strings.TrimSuffix(strings.ToLower(question.Name), "."))
			if err != nil || !mayAllow(host) {
				m.Rcode = dns.RcodeNameError
				break
			}
			if question.Qtype != dns.TypeA {
				continue
			}
			a, ok := tp.names.addr(host)
			if !ok {
				m.Rcode = dns.RcodeServerFailure
				break
			}
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: a.AsSlice()})
		}
		w.WriteMsg(m)
	})
}

// dnsTCPConns bounds the DNS stub's TCP connections of one sandbox:
// each holds a descriptor of srt's for seconds, and a resolver falls
// back to TCP for one answer at a time.
const dnsTCPConns = 64

// stubSocket is one of the DNS stub's sockets and its server.
type stubSocket struct {
	sock io.Closer
	srv  *dns.Server
}

func stubSockets(h dns.Handler, t Transparent) []stubSocket {
	var out []stubSocket
	for _, pc := range t.DNSUDP {
		out = append(out, stubSocket{pc, &dns.Server{PacketConn: pc, Handler: h}})
	}
	for _, ln := range t.DNSTCP {
		out = append(out, stubSocket{ln, &dns.Server{Listener: netutil.LimitListener(ln, dnsTCPConns), Handler: h}})
	}
	return out
}

// fakeRange holds the addresses the DNS stub hands out (RFC 2544's
// benchmarking range, never a real destination).
var fakeRange = netip.MustParsePrefix("198.18.0.0/15")

// nameTable maps names to fake addresses of a range and back, for one
// sandbox. An address once given stays its name's: a program may hold
// on to it for as long as it runs.
type nameTable struct {
	mu     sync.Mutex
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
	pool   netip.Prefix
	next   netip.Addr
}

func newNameTable(pool netip.Prefix) *nameTable {
	pool = pool.Masked()
	return &nameTable{byName: map[string]netip.Addr{}, byAddr: map[netip.Addr]string{}, pool: pool, next: pool.Addr().Next()}
}

// addr returns name's address, a new one for a new name; false when the
// range is used up (after 131,071 names of one run, for fakeRange).
func (t *nameTable) addr(name string) (netip.Addr, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a, ok := t.byName[name]; ok {
		return a, true
	}
	if !t.pool.Contains(t.next) {
		return netip.Addr{}, false
	}
	a := t.next
	t.next = t.next.Next()
	t.byName[name], t.byAddr[a] = a, name
	return a, true
}

// name returns the name a was given for.
func (t *nameTable) name(a netip.Addr) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.byAddr[a]
	return n, ok
}
