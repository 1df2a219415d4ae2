package nsexec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// packet is what the redirect's rules look at of an outgoing packet.
type packet struct {
	proto byte // unix.IPPROTO_TCP, IPPROTO_UDP, ...
	dst   netip.AddrPort
}

// network is the packet's network header, as far as the rules read it:
// the destination address at its offset (16 in IPv4, 24 in IPv6).
func (p packet) network() []byte {
	if p.dst.Addr().Is4() {
		h := make([]byte, 20)
		a := p.dst.Addr().As4()
		copy(h[16:], a[:])
		return h
	}
	h := make([]byte, 40)
	a := p.dst.Addr().As16()
	copy(h[24:], a[:])
	return h
}

// transport is the packet's TCP or UDP header: the destination port at
// offset 2.
func (p packet) transport() []byte {
	h := make([]byte, 8)
	binary.BigEndian.PutUint16(h[2:], p.dst.Port())
	return h
}

// verdict is what the chain does to a packet: 0 leaves it alone, any
// other value redirects it to that local port.
type verdict uint16

// interpret interprets rules, as nft_do_chain would, on p: rule by rule, each
// expression in turn, until one rule ends the chain. It fails t on an
// expression it does not know, so that a new kind of rule is not passed
// over untested.
func interpret(t *testing.T, rules []*nftables.Rule, p packet) verdict {
	t.Helper()
	family := byte(unix.NFPROTO_IPV4)
	if p.dst.Addr().Is6() {
		family = unix.NFPROTO_IPV6
	}
	for _, r := range rules {
		reg := map[uint32][]byte{}
	exprs:
		for _, e := range r.Exprs {
			switch e := e.(type) {
			case *expr.Meta:
				switch e.Key {
				case expr.MetaKeyNFPROTO:
					reg[e.Register] = []byte{family}
				case expr.MetaKeyL4PROTO:
					reg[e.Register] = []byte{p.proto}
				default:
					t.Fatalf("meta key %v", e.Key)
				}
			case *expr.Payload:
				var h []byte
				switch e.Base {
				case expr.PayloadBaseNetworkHeader:
					h = p.network()
				case expr.PayloadBaseTransportHeader:
					h = p.transport()
				default:
					t.Fatalf("payload base %v", e.Base)
				}
				if int(e.Offset+e.Len) > len(h) {
					t.Fatalf("payload %d+%d past a %d-byte header: the rule reads another field than it means", e.Offset, e.Len, len(h))
				}
				reg[e.DestRegister] = h[e.Offset : e.Offset+e.Len]
			case *expr.Bitwise:
				src, out := reg[e.SourceRegister], make([]byte, e.Len)
				for i := range out {
					out[i] = src[i]&e.Mask[i] ^ e.Xor[i]
				}
				reg[e.DestRegister] = out
			case *expr.Cmp:
				if e.Op != expr.CmpOpEq && e.Op != expr.CmpOpNeq {
					t.Fatalf("comparison %v", e.Op)
				}
				got := reg[e.Register]
				eq := len(got) >= len(e.Data) && bytes.Equal(got[:len(e.Data)], e.Data)
				if eq != (e.Op == expr.CmpOpEq) {
					break exprs // no match: the next rule
				}
			case *expr.Immediate:
				reg[e.Register] = e.Data
			case *expr.Verdict:
				if e.Kind != expr.VerdictReturn {
					t.Fatalf("verdict %v", e.Kind)
				}
				return 0
			case *expr.Redir:
				return verdict(binary.BigEndian.Uint16(reg[e.RegisterProtoMin]))
			default:
				t.Fatalf("expression %T", e)
			}
		}
	}
	return 0 // the chain's policy: accept, untouched
}

// applied installs rs through the library's test dialer and returns the
// batch it sent, decoded back by the library itself (GetRules) from the
// netlink messages, as the kernel would receive them.
func applied(t *testing.T, rs ruleset) (types []string, rules []*nftables.Rule) {
	t.Helper()
	var sent []netlink.Message
	c, err := nftables.New(nftables.WithTestDial(func(req []netlink.Message) ([]netlink.Message, error) {
		for _, m := range req {
			switch m.Header.Type & 0xff {
			case unix.NFT_MSG_NEWTABLE:
				types = append(types, "table")
			case unix.NFT_MSG_NEWCHAIN:
				types = append(types, "chain")
			case unix.NFT_MSG_NEWRULE:
				types = append(types, "rule")
				sent = append(sent, m)
			}
		}
		return req, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.apply(c); err != nil {
		t.Fatal(err)
	}
	// The messages the batch carried, answered to a rule dump.
	reader, err := nftables.New(nftables.WithTestDial(func(req []netlink.Message) ([]netlink.Message, error) {
		if len(req) == 1 && req[0].Header.Type&0xff == unix.NFT_MSG_GETRULE {
			return sent, nil
		}
		return nil, fmt.Errorf("unexpected request %v", req)
	}))
	if err != nil {
		t.Fatal(err)
	}
	rules, err = reader.GetRules(rs.table, rs.chain)
	if err != nil {
		t.Fatal(err)
	}
	return types, rules
}

// The redirect, decoded from what goes to the kernel and interpreted:
// all TCP not meant for loopback goes to the transparent listener, DNS
// over UDP to the stub, and loopback (the proxy ports, the listener and
// the stub themselves) is left alone.
func TestRedirectRules(t *testing.T) {
	const port, stub = 40123, 5353
	rs := redirectRules(port, stub)
	types, rules := applied(t, rs)
	if fmt.Sprint(types) != "[table chain rule rule rule rule]" {
		t.Errorf("batch %v", types)
	}
	if ch := rs.chain; ch.Type != nftables.ChainTypeNAT || *ch.Hooknum != *nftables.ChainHookOutput || *ch.Priority != *nftables.ChainPriorityNATDest || rs.table.Family != nftables.TableFamilyINet {
		t.Errorf("chain %+v in table %+v: want nat, output hook, dstnat priority, family inet", ch, rs.table)
	}
	tcp, udp := byte(unix.IPPROTO_TCP), byte(unix.IPPROTO_UDP)
	for _, tc := range []struct {
		proto byte
		dst   string
		want  verdict
	}{
		{tcp, "93.184.215.14:443", port},
		{tcp, "198.18.0.1:80", port},
		{tcp, "10.0.0.1:53", port},
		{tcp, "[2001:db8::1]:443", port},
		{tcp, "127.0.0.1:3128", 0},
		{tcp, "127.0.0.1:1080", 0},
		{tcp, "127.8.9.10:80", 0},
		{tcp, "[::1]:3128", 0},
		{udp, "8.8.8.8:53", stub},
		{udp, "[2001:4860::8888]:53", stub},
		{udp, "127.0.0.1:53", 0},
		{udp, "[::1]:53", 0},
		{udp, "8.8.8.8:123", 0},
		{udp, "8.8.8.8:5353", 0},
		{unix.IPPROTO_ICMP, "8.8.8.8:0", 0},
		{unix.IPPROTO_SCTP, "8.8.8.8:53", 0},
	} {
		p := packet{proto: tc.proto, dst: netip.MustParseAddrPort(tc.dst)}
		if got := interpret(t, rules, p); got != tc.want {
			t.Errorf("protocol %d to %s: redirected to %d, want %d (0: untouched)", tc.proto, tc.dst, got, tc.want)
		}
	}
}
