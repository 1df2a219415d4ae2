package main

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/nsexec"
	"github.com/srt-go/srt/proxy"
)

// launch is a prepared run, with the pty relay when srt is on a terminal
// and the policy proxies.
type launch struct {
	*nsexec.Launch
	pty     *ptyRelay
	proxies *proxy.Server
}

// startProxies compiles the network policy and serves the HTTP and SOCKS
// proxies on Unix sockets in the run's private directory.
func startProxies(settings *config.Settings, dir string) (*proxy.Server, []nsexec.Bridge, error) {
	n := settings.Network
	s, err := newProxyServer(settings)
	if err != nil {
		return nil, nil, err
	}
	serveHTTP, serveSOCKS := s.ServeHTTP, s.ServeSOCKS
	// The user's own proxies, when the settings name them, take the
	// place of srt's (they decide, not the allow lists).
	if n.HTTPProxyPort != nil {
		serveHTTP = forwardTo(*n.HTTPProxyPort)
	}
	if n.SOCKSProxyPort != nil {
		serveSOCKS = forwardTo(*n.SOCKSProxyPort)
	}
	var bridges []nsexec.Bridge
	for _, p := range []struct {
		name  string
		port  int
		serve func(net.Listener) error
	}{{"http.sock", bridgeHTTPPort, serveHTTP}, {"socks.sock", bridgeSOCKSPort, serveSOCKS}} {
		path, dirFD, err := nsexec.ShortPath(dir, p.name)
		if err != nil {
			s.Close()
			return nil, nil, err
		}
		ln, err := net.Listen("unix", path)
		dirFD.Close()
		if err != nil {
			s.Close()
			return nil, nil, fmt.Errorf("listening for the proxy: %w", err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false) // the runtime dir goes whole
		go p.serve(ln)
		bridges = append(bridges, nsexec.Bridge{Port: p.port, Socket: p.name})
	}
	return s, bridges, nil
}

// newProxyServer compiles the network policy into a proxy server, with
// the parent proxy it dials through.
func newProxyServer(settings *config.Settings) (*proxy.Server, error) {
	n := settings.Network
	policy, err := netfilter.NewPolicy(n.AllowedDomains, n.DeniedDomains, n.DeniedDomainReasons, n.DeniedResolvedAddresses)
	if err != nil {
		return nil, err
	}
	policy.HostAddrs = hostAddrs
	s := proxy.New(policy)
	if s.Parent, err = parentProxy(n.ParentProxy); err != nil {
		return nil, err
	}
	return s, nil
}

// startLoopbackProxies serves the policy proxies on host loopback TCP for
// the fallback sandbox, asking every client for cred; it returns the HTTP
// and SOCKS ports.
func startLoopbackProxies(settings *config.Settings, cred *proxy.Credential) (*proxy.Server, []int, error) {
	s, err := newProxyServer(settings)
	if err != nil {
		return nil, nil, err
	}
	s.Credential = cred
	var ports []int
	for _, serve := range []func(net.Listener) error{s.ServeHTTP, s.ServeSOCKS} {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			s.Close()
			return nil, nil, fmt.Errorf("listening for the proxy: %w", err)
		}
		go serve(ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return s, ports, nil
}

// parentProxy is network.parentProxy, or else srt's own HTTP(S)_PROXY and
// NO_PROXY (read here, for the proxies only: the sandbox gets its own).
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

// forwardTo serves a listener by handing each connection to a proxy of
// the user's on the host's loopback.
func forwardTo(port int) func(net.Listener) error {
	return func(ln net.Listener) error { return proxy.Forward(ln, "tcp", fmt.Sprintf("127.0.0.1:%d", port)) }
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

// sandboxCommand prepares argv to run in the Linux namespace sandbox.
func sandboxCommand(c *cli, settings *config.Settings, argv []string) (*launch, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	home, _ := homeDir()
	pty, err := startPTY()
	if err != nil {
		return nil, fmt.Errorf("setting up the terminal: %w", err)
	}
	var proxies *proxy.Server
	// The weaker fallback runs only when the settings ask for it and the
	// host refuses namespaces.
	fallback := false
	if settings.EnableWeakerNestedSandbox {
		if err := nsexec.NamespacesAvailable(); err != nil {
			fallback = true
			c.debugf("Namespaces unavailable (%v): the weaker fallback sandbox runs", nsexec.Explain(err))
			if pty != nil {
				pty.stop()
				pty = nil
			}
		}
	}
	network := func(dir string) (nsexec.NetSide, error) {
		var side nsexec.NetSide
		var err error
		if fallback {
			cred, err := proxy.NewCredential()
			if err != nil {
				return side, err
			}
			var ports []int
			proxies, ports, err = startLoopbackProxies(settings, cred)
			if err != nil {
				return side, err
			}
			side.Ports = []uint16{uint16(ports[0]), uint16(ports[1])}
			side.Env = proxy.EnvWithCredential(ports[0], ports[1], cred, os.Getenv("JAVA_TOOL_OPTIONS"))
			return side, nil
		}
		proxies, side.Bridges, err = startProxies(settings, dir)
		if err != nil {
			return side, err
		}
		side.Env = proxy.Env(bridgeHTTPPort, bridgeSOCKSPort, os.Getenv("JAVA_TOOL_OPTIONS"))
		if self, err := os.Executable(); err == nil {
			// git's ssh goes through the policy by way of srt itself.
			side.Env = append(side.Env, "GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand='"+self+" ssh-proxy %h %p'")
		}
		return side, nil
	}
	l, err := nsexec.Prepare(settings, nsexec.Options{Argv: argv, Env: os.Environ(), Cwd: cwd, Home: home, Debug: c.debug, Terminal: pty != nil, Network: network,
		Intercept: !fallback, Fallback: fallback})
	if err != nil {
		if pty != nil {
			pty.stop()
		}
		if proxies != nil {
			proxies.Close()
		}
		return nil, err
	}
	if pty != nil {
		l.Cmd.Stdin, l.Cmd.Stdout = pty.slave, pty.slave
		if isTerminal(2) {
			l.Cmd.Stderr = pty.slave
		}
	}
	c.debugf("Mount plan:\n%s", l.Plan)
	c.debugf("Enforcement: %s", l.Enforcement)
	if c.debug {
		c.debugf("Seccomp filter for %s", nsexec.DescribeFilter(l.Seccomp))
		if l.Landlock != nil {
			c.debugf("Landlock layer: read %v; read files %v; list only %v; write %v", l.Landlock.Read, l.Landlock.ReadFile, l.Landlock.ListOnly, l.Landlock.Write)
		}
	}
	return &launch{Launch: l, pty: pty, proxies: proxies}, nil
}

// started runs once the sandbox holds its stdio.
func (l *launch) started() {
	l.Launch.Started()
	if l.pty != nil {
		l.pty.started()
	}
}

// Close waits for the command's last output, restores the terminal and
// removes the run's host state.
func (l *launch) Close() error {
	if l.pty != nil {
		l.pty.stop()
	}
	if l.proxies != nil {
		l.proxies.Close()
	}
	return l.Launch.Close()
}

// explainStart says why the sandbox could not start, with the fix.
func explainStart(err error) error { return nsexec.Explain(err) }
