package proxy

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/internal/testenv"
)

// originalDstChild, set in the environment, makes TestOriginalDst the
// child that runs in user and network namespaces of its own.
const originalDstChild = "SRT_PROXY_ORIGDST_CHILD"

// originalDst reads back the destination an nftables redirect replaced,
// over IPv4 and IPv6, port and all; of a connection that was not
// redirected it reads no other destination than the connection's own;
// and it refuses what is no socket. The redirect runs in a network
// namespace of a re-executed child, where the test may change nftables.
func TestOriginalDst(t *testing.T) {
	if os.Getenv(originalDstChild) != "" {
		originalDstInNamespace(t)
		return
	}
	if _, err := originalDst(&helloConn{}); err == nil {
		t.Error("the original destination of a connection that is no socket")
	}
	testenv.RequireUserNamespaces(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestOriginalDst$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), originalDstChild+"=1")
	// Root of its own user namespace, to keep CAP_NET_ADMIN in its own
	// network namespace across the exec.
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestOriginalDst") {
		t.Fatalf("in the namespace: %v\n%s", err, out)
	}
	t.Logf("in the namespace:\n%s", out)
}

// redirectedPort is the port the child's redirect catches.
const redirectedPort = 9

func originalDstInNamespace(t *testing.T) {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "::1"} {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			if host == "::1" {
				t.Logf("no IPv6 loopback: %v", err)
				continue
			}
			t.Fatal(err)
		}
		defer ln.Close()
		listening := netip.MustParseAddrPort(ln.Addr().String())
		redirectTo(t, listening.Port())
		for _, tc := range []struct {
			dial, want netip.AddrPort
		}{
			{netip.AddrPortFrom(listening.Addr(), redirectedPort), netip.AddrPortFrom(listening.Addr(), redirectedPort)},
			{listening, listening}, // not redirected: its own destination
		} {
			c, err := net.Dial("tcp", tc.dial.String())
			if err != nil {
				t.Fatalf("dialling %v: %v", tc.dial, err)
			}
			s, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			got, err := originalDst(s)
			if err != nil || got != tc.want {
				t.Errorf("dialled %v, accepted on %v: original destination %v, %v; want %v", tc.dial, listening, got, err, tc.want)
			}
			c.Close()
			s.Close()
		}
	}
}

// redirectTo replaces this namespace's ruleset with one that redirects
// TCP to redirectedPort, as the sandbox's redirect does all TCP, to port.
func redirectTo(t *testing.T, port uint16) {
	c, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	c.FlushRuleset()
	tab := c.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: "test"})
	ch := c.AddChain(&nftables.Chain{Name: "out", Table: tab, Type: nftables.ChainTypeNAT, Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityNATDest})
	c.AddRule(&nftables.Rule{Table: tab, Chain: ch, Exprs: []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(redirectedPort)},
		&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(port)},
		&expr.Redir{RegisterProtoMin: 1},
	}})
	if err := c.Flush(); err != nil {
		t.Fatalf("nftables: %v", err)
	}
}
