package nsexec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"
	"golang.org/x/net/netutil"
	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/proxy"
)

// The transparent path: programs that ignore HTTP_PROXY still go through
// the policy. Every address is made local to the sandbox's loopback, an
// nftables rule redirects all TCP not meant for loopback to a listener,
// served by srt (the init opens it and hands it over), which recovers the
// original destination and asks the SOCKS proxy for it, by name where it
// can tell one. A DNS stub answers
// names the policy may allow with addresses from a private range, which
// map back to the name; denied names get NXDOMAIN, and no query leaves.

// fakeRange holds the addresses the DNS stub hands out (RFC 2544's
// benchmarking range, never a real destination).
var fakeRange = netip.MustParsePrefix("198.18.0.0/15")

// nameTable maps names to fake addresses and back.
type nameTable struct {
	mu     sync.Mutex
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
	next   netip.Addr
}

func newNameTable() *nameTable {
	return &nameTable{byName: map[string]netip.Addr{}, byAddr: map[netip.Addr]string{}, next: fakeRange.Addr().Next()}
}

func (t *nameTable) addr(name string) (netip.Addr, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a, ok := t.byName[name]; ok {
		return a, true
	}
	if !fakeRange.Contains(t.next) {
		return netip.Addr{}, false // exhausted: 131,070 names in one run
	}
	a := t.next
	t.next = t.next.Next()
	t.byName[name], t.byAddr[a] = a, name
	return a, true
}

func (t *nameTable) name(a netip.Addr) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, ok := t.byAddr[a]
	return n, ok
}

// interception is the running transparent path of one sandbox.
type interception struct {
	names *nameTable
	socks string // path of the host's SOCKS proxy socket
	// slots bounds the transparent connections in flight. Each holds a
	// descriptor of srt's while its name is read, before the proxy counts
	// it against the command's cap: without a bound, a command connecting
	// in a loop and sending nothing could take all of srt's descriptors,
	// and every other command's connections would fail. Twice the
	// proxy's cap: the connections past the cap still reach the proxy,
	// which refuses them and reports it; only a flood waits in the
	// listener's backlog, which costs srt no descriptor.
	slots chan struct{}
}

// handedSocket is a socket the init opens and hands to srt.
type handedSocket struct {
	socket linkSocket
	conn   fileConn
}

// fileConn is a listener or packet socket that can be handed over.
type fileConn interface {
	File() (*os.File, error)
	Close() error
}

// openInterception sets up, in the init and the sandbox's network
// namespace after loopback is up, the routes, the nftables redirect, the
// transparent listener and the DNS stub's sockets, and returns the
// sockets for srt to serve (serveInterception). The stub's sockets are
// bound here, so it answers once srt has them, before the command starts.
func openInterception() ([]handedSocket, error) {
	var out []handedSocket
	fail := func(err error) ([]handedSocket, error) {
		for _, h := range out {
			h.conn.Close()
		}
		return nil, err
	}
	ln4, err := Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	out = append(out, handedSocket{linkSocket{Kind: socketTransparent}, ln4.(*net.TCPListener)})
	port := uint16(ln4.Addr().(*net.TCPAddr).Port)
	if ln6, err := Listen("tcp", net.JoinHostPort("::1", strconv.Itoa(int(port)))); err == nil {
		out = append(out, handedSocket{linkSocket{Kind: socketTransparent, IPv6: true}, ln6.(*net.TCPListener)})
	}
	const dnsPort = 53
	if err := routeEverythingLocal(); err != nil {
		return fail(fmt.Errorf("routing: %w", err))
	}
	if err := redirectRules(port, dnsPort); err != nil {
		return fail(fmt.Errorf("nftables: %w", err))
	}
	for _, addr := range []string{"127.0.0.1:53", "[::1]:53"} {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			if addr == "[::1]:53" {
				continue // no IPv6 loopback
			}
			return fail(fmt.Errorf("DNS stub on %s/udp: %w", addr, err))
		}
		out = append(out, handedSocket{linkSocket{Kind: socketDNSUDP}, pc.(*net.UDPConn)})
		ln, err := Listen("tcp", addr)
		if err != nil {
			return fail(fmt.Errorf("DNS stub on %s/tcp: %w", addr, err))
		}
		out = append(out, handedSocket{linkSocket{Kind: socketDNSTCP}, ln.(*net.TCPListener)})
	}
	return out, nil
}

// serveInterception serves, in srt, the transparent path's sockets the
// init handed over, towards the SOCKS proxy's Unix socket at socksPath:
// the transparent listeners (v6 for the IPv6 one) and the DNS stub.
// Closing the sockets ends it.
func serveInterception(socksPath string, transparent map[net.Listener]bool, dnsUDP []net.PacketConn, dnsTCP []net.Listener) {
	ic := &interception{names: newNameTable(), socks: socksPath, slots: make(chan struct{}, 2*proxy.MaxConnsPerClient)}
	for ln, v6 := range transparent {
		go ic.serve(ln, v6)
	}
	handler := dns.HandlerFunc(ic.answer)
	for _, pc := range dnsUDP {
		go (&dns.Server{PacketConn: pc, Handler: handler}).ActivateAndServe()
	}
	for _, ln := range dnsTCP {
		// Bounded for the same reason as the transparent path: each
		// connection holds a descriptor of srt's for seconds.
		ln = netutil.LimitListener(ln, dnsTCPConns)
		go (&dns.Server{Listener: ln, Handler: handler}).ActivateAndServe()
	}
}

// routeEverythingLocal makes every IPv4 and IPv6 address local to lo, so
// a connect to any address reaches the output hook instead of failing
// with "network unreachable".
func routeEverythingLocal() error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	for _, cidr := range []string{"0.0.0.0/0", "::/0"} {
		_, dst, _ := net.ParseCIDR(cidr)
		r := &netlink.Route{LinkIndex: lo.Attrs().Index, Dst: dst, Type: unix.RTN_LOCAL, Table: unix.RT_TABLE_LOCAL, Scope: netlink.SCOPE_HOST}
		if err := netlink.RouteAdd(r); err != nil && !errors.Is(err, unix.EEXIST) {
			if cidr == "::/0" {
				continue // no IPv6 in this kernel
			}
			return err
		}
	}
	return nil
}

// redirectRules installs, through netlink, the equivalent of
//
//	table inet srt { chain out { type nat hook output priority -100;
//	  ip daddr 127.0.0.0/8 return; ip6 daddr ::1 return;
//	  meta l4proto tcp redirect to :PORT;
//	  udp dport 53 redirect to :53 } }
func redirectRules(port, dnsPort uint16) error {
	c, err := nftables.New()
	if err != nil {
		return err
	}
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: "srt"})
	ch := c.AddChain(&nftables.Chain{Name: "out", Table: t, Type: nftables.ChainTypeNAT, Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityNATDest})
	ret := &expr.Verdict{Kind: expr.VerdictReturn}
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte{255, 0, 0, 0}, Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{127, 0, 0, 0}},
		ret,
	}})
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV6}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 24, Len: 16},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: net.IPv6loopback},
		ret,
	}})
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(port)},
		&expr.Redir{RegisterProtoMin: 1},
	}})
	c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_UDP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(53)},
		&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(dnsPort)},
		&expr.Redir{RegisterProtoMin: 1},
	}})
	return c.Flush()
}

// mayAllow asks the host's proxy, so the answer follows the live policy.
// Anything but a clear yes is a no.
func (ic *interception) mayAllow(name string) bool {
	c, err := net.DialTimeout("unix", ic.socks, 5*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	ok, err := proxy.SOCKSAsk(c, name)
	return ok && err == nil
}

// answer is the DNS stub: A records from the fake range for names the
// policy may allow, an empty answer for other types of those names, and
// NXDOMAIN for the rest. Nothing is forwarded anywhere.
func (ic *interception) answer(w dns.ResponseWriter, q *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(q)
	m.Authoritative = true
	for _, question := range q.Question {
		name := strings.TrimSuffix(strings.ToLower(question.Name), ".")
		if !ic.mayAllow(name) {
			m.Rcode = dns.RcodeNameError
			break
		}
		if question.Qtype != dns.TypeA {
			continue
		}
		a, ok := ic.names.addr(name)
		if !ok {
			m.Rcode = dns.RcodeServerFailure
			break
		}
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: a.AsSlice()})
	}
	w.WriteMsg(m)
}

// dnsTCPConns bounds the DNS stub's TCP connections of one sandbox; a
// resolver falls back to TCP for one answer at a time.
const dnsTCPConns = 64

// serve accepts on a transparent listener until it is closed.
// proxy.Accept waits out the errors that pass (EMFILE when srt's
// descriptors run out): ending on them would leave the sandbox without
// its transparent path for the rest of its run.
func (ic *interception) serve(ln net.Listener, v6 bool) {
	for {
		ic.slots <- struct{}{}
		c, err := proxy.Accept(ln)
		if err != nil {
			return
		}
		go func() {
			defer func() { <-ic.slots }()
			ic.handle(c.(*net.TCPConn), v6)
		}()
	}
}

// handle forwards one redirected connection to the host's SOCKS proxy: a
// fake address by its name; a real address by the TLS SNI or HTTP Host it
// carries (so the proxy dials that name, never the address); otherwise by
// the address, which only an IP-literal rule can allow.
func (ic *interception) handle(c *net.TCPConn, v6 bool) {
	defer c.Close()
	dst, err := originalDst(c, v6)
	if err != nil {
		return
	}
	host := dst.Addr().String()
	var head []byte
	if name, ok := ic.names.name(dst.Addr()); ok {
		host = name
	} else {
		var name string
		name, head = peekName(c)
		if name != "" {
			host = name
		}
	}
	up, err := socksDial(ic.socks, host, dst.Port())
	if err != nil {
		c.SetLinger(0) // refused: a reset, as a real refusal looks
		return
	}
	if len(head) > 0 {
		if _, err := up.Write(head); err != nil {
			up.Close()
			return
		}
	}
	proxy.Join(c, up)
}

// originalDst reads the destination the redirect replaced.
func originalDst(c *net.TCPConn, v6 bool) (netip.AddrPort, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	var out netip.AddrPort
	var serr error
	rc.Control(func(fd uintptr) {
		if v6 {
			info, err := unix.GetsockoptIPv6MTUInfo(int(fd), unix.SOL_IPV6, 80) // IP6T_SO_ORIGINAL_DST
			if err != nil {
				serr = err
				return
			}
			// The port field holds network-order bytes in a native integer.
			var p [2]byte
			binary.NativeEndian.PutUint16(p[:], info.Addr.Port)
			out = netip.AddrPortFrom(netip.AddrFrom16(info.Addr.Addr).Unmap(), binary.BigEndian.Uint16(p[:]))
			return
		}
		m, err := unix.GetsockoptIPv6Mreq(int(fd), unix.SOL_IP, unix.SO_ORIGINAL_DST)
		if err != nil {
			serr = err
			return
		}
		b := m.Multiaddr // struct sockaddr_in: family, port, address
		out = netip.AddrPortFrom(netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}), binary.BigEndian.Uint16(b[2:4]))
	})
	if serr != nil {
		return netip.AddrPort{}, serr
	}
	return out, nil
}

// peekName reads what the client sends first, briefly, and finds the name
// it asks for: the SNI of a TLS ClientHello or the Host of an HTTP
// request. It returns the bytes read, to be sent on.
func peekName(c *net.TCPConn) (string, []byte) {
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 16<<10)
	n := 0
	for n < len(buf) {
		k, err := c.Read(buf[n:])
		n += k
		if err != nil {
			break
		}
		if name, complete := nameIn(buf[:n]); complete {
			return name, buf[:n]
		}
	}
	name, _ := nameIn(buf[:n])
	return name, buf[:n]
}

// nameIn parses the start of a stream. complete is false while more bytes
// could still change the answer.
func nameIn(b []byte) (name string, complete bool) {
	if len(b) == 0 {
		return "", false
	}
	if b[0] == 0x16 { // TLS handshake record
		return sniOf(b)
	}
	if end := bytes.Index(b, []byte("\r\n\r\n")); end >= 0 {
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b[:end+4])))
		if err != nil {
			return "", true
		}
		host := req.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		return host, true
	}
	return "", len(b) >= 8<<10
}

// sniOf extracts the server name of a TLS ClientHello.
func sniOf(b []byte) (string, bool) {
	if len(b) < 5 {
		return "", false
	}
	recLen := int(binary.BigEndian.Uint16(b[3:5]))
	if len(b) < 5+recLen {
		return "", false
	}
	p := b[5 : 5+recLen]
	skip := func(n int) bool {
		if len(p) < n {
			p = nil
			return false
		}
		p = p[n:]
		return true
	}
	vec := func(lenBytes int) bool {
		if len(p) < lenBytes {
			return false
		}
		n := 0
		for i := 0; i < lenBytes; i++ {
			n = n<<8 | int(p[i])
		}
		return skip(lenBytes + n)
	}
	// handshake header (4), version (2), random (32), session id, cipher
	// suites, compression methods, then extensions.
	if len(p) < 4 || p[0] != 1 || !skip(4+2+32) || !vec(1) || !vec(2) || !vec(1) || len(p) < 2 {
		return "", true
	}
	ext := p[2:]
	for len(ext) >= 4 {
		typ, n := binary.BigEndian.Uint16(ext[0:2]), int(binary.BigEndian.Uint16(ext[2:4]))
		if len(ext) < 4+n {
			break
		}
		body := ext[4 : 4+n]
		if typ == 0 && len(body) >= 5 && body[2] == 0 {
			l := int(binary.BigEndian.Uint16(body[3:5]))
			if len(body) >= 5+l {
				return string(body[5 : 5+l]), true
			}
		}
		ext = ext[4+n:]
	}
	return "", true
}

// socksDial asks the host's SOCKS proxy for host:port.
func socksDial(sock, host string, port uint16) (net.Conn, error) {
	c, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if err := proxy.SOCKSConnect(c, host, port); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
