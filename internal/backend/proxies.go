package backend

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
)

// Proxies are the session's policy proxies as every backend runs them:
// the policy, the parent proxy, the request filter and the ask callback,
// the inspecting proxy and its trust bundle, the user's MITM proxy.
type Proxies struct {
	// Server is the proxies' server, nil until Start.
	Server *proxy.Server
	host   Host

	mu sync.Mutex
	// inspection is the inspecting proxy in force, and bundle the trust
	// bundle of its TLS termination; nil without them.
	inspection *proxy.Inspection
	bundle     []byte
}

// Start starts the proxies of settings for h's session; denied decisions
// of a client go to denied.
func (ps *Proxies) Start(h Host, settings *config.Settings, denied func(proxy.Decision)) error {
	policy, err := CompilePolicy(settings.Network)
	if err != nil {
		return err
	}
	policy.HostAddrs = hostAddrs
	p := proxy.New(policy)
	p.Filter = h.Filter()
	if ask := h.Ask(); ask != nil {
		p.Ask = func(c *proxy.Client, host string, port uint16) (bool, string, error) {
			id := ""
			if c != nil {
				id = c.ID
			}
			return ask(id, host, port)
		}
	}
	if p.Parent, err = parentProxy(settings.Network.ParentProxy); err != nil {
		return err
	}
	p.OnDecision = func(d proxy.Decision) {
		if !d.Allowed && d.Client != nil {
			denied(d)
		}
	}
	ps.Server, ps.host = p, h
	return ps.inspect(settings.Network)
}

// inspect puts n's inspecting proxy, and its MITM proxy, in force.
func (ps *Proxies) inspect(n config.Network) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	// A filter decides on plain requests too, which the inspecting
	// server reads.
	in, bundle, err := inspection(n, ps.inspection, ps.host.Filter() != nil)
	if err != nil {
		return err
	}
	m, err := mitmProxy(n)
	if err != nil {
		return err
	}
	ps.Server.SetInspection(in)
	ps.Server.SetMITM(m)
	ps.inspection, ps.bundle = in, bundle
	return nil
}

// SetNetwork puts an Update's network section in force.
func (ps *Proxies) SetNetwork(n config.Network, p *netfilter.Policy) error {
	if err := ps.inspect(n); err != nil {
		return err
	}
	p.HostAddrs = hostAddrs
	ps.Server.SetPolicy(p)
	return nil
}

// Stop stops the proxies, if they started.
func (ps *Proxies) Stop() {
	if ps.Server != nil {
		ps.Server.Close()
	}
}

// TrustBundle is the bundle a run gets now (nil without TLS
// termination).
func (ps *Proxies) TrustBundle() []byte {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.bundle
}

// CompilePolicy is the network section as the proxies decide by it.
func CompilePolicy(n config.Network) (*netfilter.Policy, error) {
	p, err := netfilter.NewPolicy(n.AllowedDomains, n.DeniedDomains, n.DeniedDomainReasons, n.DeniedResolvedAddresses)
	if err != nil {
		return nil, err
	}
	p.Strict = n.StrictAllowlist
	return p, nil
}

// ForwardTo serves a listener by handing each connection to a proxy of
// the user's on the host's loopback.
func ForwardTo(port int) func(net.Listener) {
	return func(ln net.Listener) { proxy.Forward(ln, "tcp", fmt.Sprintf("127.0.0.1:%d", port)) }
}

// parentProxy is network.parentProxy, or else this process's own
// HTTP(S)_PROXY and NO_PROXY (read here, for the proxies only: the
// sandbox gets its own).
func parentProxy(pp *config.ParentProxy) (*proxy.Parent, error) {
	if pp != nil {
		return proxy.ParseParent(pp.HTTP, pp.HTTPS, pp.NoProxy)
	}
	env := func(names ...string) string {
		for _, n := range names {
			if v := os.Getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	return proxy.ParseParent(env("HTTP_PROXY", "http_proxy"), env("HTTPS_PROXY", "https_proxy"), env("NO_PROXY", "no_proxy"))
}

// hostAddrs lists this host's own addresses, which an allowed name may not
// resolve to (spec d.5). The proxies ask for every resolved connection, so
// the list is read from the kernel at most once a second.
var hostAddrs = func() func() []netip.Addr {
	var mu sync.Mutex
	var cached []netip.Addr
	var read time.Time
	return func() []netip.Addr {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(read) < time.Second {
			return cached
		}
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			return cached
		}
		cached = cached[:0:0]
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				cached = append(cached, p.Addr())
			}
		}
		read = time.Now()
		return cached
	}
}()
