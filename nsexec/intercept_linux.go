package nsexec

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The init's half of the transparent path: programs that ignore
// HTTP_PROXY still go through the policy. In the sandbox's network
// namespace, every address is made local to loopback and an nftables
// rule redirects all TCP not meant for loopback to a listener, and DNS
// to a stub; the init opens those sockets and hands them to srt, which
// serves them (proxy.Server.ServeTransparent): it recovers each
// connection's original destination, asks the policy by name where it
// can tell one, and answers DNS from the live policy, forwarding nothing.

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

// dnsPort is where the DNS stub listens, on loopback, and where the
// redirect sends every DNS query.
const dnsPort = 53

// openInterception sets up, in the init and the sandbox's network
// namespace after loopback is up, the routes, the nftables redirect, the
// transparent listener and the DNS stub's sockets, and returns the
// sockets for srt to serve. The stub's sockets are bound here, so it
// answers once srt has them, before the command starts.
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
		out = append(out, handedSocket{linkSocket{Kind: socketTransparent}, ln6.(*net.TCPListener)})
	}
	if err := routeEverythingLocal(); err != nil {
		return fail(fmt.Errorf("routing: %w", err))
	}
	c, err := nftables.New()
	if err != nil {
		return fail(fmt.Errorf("nftables: %w", err))
	}
	if err := redirectRules(port, dnsPort).apply(c); err != nil {
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

// ruleset is an nftables table, its one chain and the chain's rules, as
// data: built by a pure function and applied by apply.
type ruleset struct {
	table *nftables.Table
	chain *nftables.Chain
	rules []*nftables.Rule
}

// redirectRules is the sandbox's redirect, the equivalent of
//
//	table inet srt { chain out { type nat hook output priority -100;
//	  ip daddr 127.0.0.0/8 return; ip6 daddr ::1 return;
//	  meta l4proto tcp redirect to :port;
//	  udp dport 53 redirect to :dnsPort } }
//
// Loopback is left alone first: the proxy ports, the transparent
// listener and the stub live there, and redirecting the redirect's own
// target would loop. The hook is output, which every packet the
// sandbox's processes send passes; nothing else comes into this
// namespace. UDP other than DNS is not redirected: with every address
// local and nothing listening, it goes nowhere.
func redirectRules(port, dnsPort uint16) ruleset {
	t := &nftables.Table{Family: nftables.TableFamilyINet, Name: "srt"}
	ch := &nftables.Chain{Name: "out", Table: t, Type: nftables.ChainTypeNAT, Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityNATDest}
	ret := &expr.Verdict{Kind: expr.VerdictReturn}
	rule := func(e ...expr.Any) *nftables.Rule { return &nftables.Rule{Table: t, Chain: ch, Exprs: e} }
	return ruleset{table: t, chain: ch, rules: []*nftables.Rule{
		rule( // ip daddr 127.0.0.0/8 return
			&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte{255, 0, 0, 0}, Xor: []byte{0, 0, 0, 0}},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{127, 0, 0, 0}},
			ret,
		),
		rule( // ip6 daddr ::1 return
			&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV6}},
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 24, Len: 16},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: net.IPv6loopback},
			ret,
		),
		rule( // meta l4proto tcp redirect to :port
			&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
			&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(port)},
			&expr.Redir{RegisterProtoMin: 1},
		),
		rule( // udp dport 53 redirect to :dnsPort
			&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_UDP}},
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(53)},
			&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(dnsPort)},
			&expr.Redir{RegisterProtoMin: 1},
		),
	}}
}

// apply installs r through c, in one batch.
func (r ruleset) apply(c *nftables.Conn) error {
	c.AddTable(r.table)
	c.AddChain(r.chain)
	for _, rule := range r.rules {
		c.AddRule(rule)
	}
	return c.Flush()
}
