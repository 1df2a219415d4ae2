package srt

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
)

// proxySession is the session's policy proxies as every backend runs
// them: the policy, the parent proxy, the request filter and the ask
// callback, the inspecting proxy and its trust bundle, the user's MITM
// proxy.
type proxySession struct {
	proxies *proxy.Server
	// inspection is the inspecting proxy in force, and bundle the trust
	// bundle of its TLS termination; nil without them. Guarded by the
	// Sandbox's mu once the session runs.
	inspection *proxy.Inspection
	bundle     []byte
}

// startProxies starts the proxies of settings for s; denied decisions of
// a client go to denied.
func (ps *proxySession) startProxies(s *Sandbox, settings *config.Settings, denied func(proxy.Decision)) error {
	policy, err := compilePolicy(settings.Network)
	if err != nil {
		return err
	}
	policy.HostAddrs = hostAddrs
	p := proxy.New(policy)
	p.Filter = s.filter
	if s.ask != nil {
		p.Ask = func(c *proxy.Client, host string, port uint16) (bool, string, error) {
			q := AskRequest{Host: host, Port: port}
			if c != nil {
				q.CommandID = c.ID
			}
			return s.ask(q)
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
	ps.proxies = p
	return ps.inspect(s, settings.Network)
}

// inspect puts n's inspecting proxy, and its MITM proxy, in force. The
// caller holds s.mu, or the session has not started.
func (ps *proxySession) inspect(s *Sandbox, n config.Network) error {
	// A filter decides on plain requests too, which the inspecting
	// server reads.
	in, bundle, err := inspection(n, ps.inspection, s.filter != nil)
	if err != nil {
		return err
	}
	m, err := mitmProxy(n)
	if err != nil {
		return err
	}
	ps.proxies.SetInspection(in)
	ps.proxies.SetMITM(m)
	ps.inspection, ps.bundle = in, bundle
	return nil
}

// setNetwork puts an Update's network section in force (s.mu held).
func (ps *proxySession) setNetwork(s *Sandbox, n config.Network, p *netfilter.Policy) error {
	if err := ps.inspect(s, n); err != nil {
		return err
	}
	p.HostAddrs = hostAddrs
	ps.proxies.SetPolicy(p)
	return nil
}

func (ps *proxySession) stopProxies() {
	if ps.proxies != nil {
		ps.proxies.Close()
	}
}

// trustBundle is the bundle a run gets now (nil without TLS
// termination).
func (ps *proxySession) trustBundle(s *Sandbox) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ps.bundle
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

// commandAllow is a command's own allowedDomains (Run.AllowedDomains),
// nil for none; under network.strictAllowlist they are refused, as
// dropping them would leave the caller believing the command may reach
// them.
func commandAllow(o Run, settings *config.Settings) (*netfilter.Rules, error) {
	if len(o.AllowedDomains) == 0 {
		return nil, nil
	}
	if settings.Network.StrictAllowlist {
		return nil, fmt.Errorf("srt: network.strictAllowlist is set, so only network.allowedDomains may allow a destination: the command's own allowed domains %q are refused; add them to network.allowedDomains, or drop strictAllowlist", o.AllowedDomains)
	}
	extra, err := netfilter.Compile(o.AllowedDomains, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("the command's allowedDomains: %w", err)
	}
	return extra, nil
}

// forwardTo serves a listener by handing each connection to a proxy of
// the user's on the host's loopback.
func forwardTo(port int) func(net.Listener) {
	return func(ln net.Listener) { proxy.Forward(ln, "tcp", fmt.Sprintf("127.0.0.1:%d", port)) }
}

// defaults completes a run's options as every backend does: the text its
// violations are filed under, and its working directory and environment
// (the process's own when unset). It returns those and the user's home.
func (o *Run) defaults(argv []string) (cwd string, env []string, home string, err error) {
	if o.Text == "" {
		o.Text = strings.Join(argv, " ")
	}
	if cwd = o.Dir; cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return "", nil, "", err
		}
	}
	if env = o.Env; env == nil {
		env = os.Environ()
	}
	home, _ = os.UserHomeDir()
	return cwd, env, home, nil
}
