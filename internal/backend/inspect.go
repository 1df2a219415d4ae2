package backend

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/credential"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/proxy"
)

// The inspecting proxy and the credentials, as every backend sets them
// up: the session's TLS termination (network.tlsTerminate and the
// request policy keys) and trust bundle, and each run's credential plan.

// TrustVars name the trust bundle inside the sandbox (spec d.4).
var TrustVars = []string{"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "PIP_CERT",
	"GIT_SSL_CAINFO", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "DENO_CERT", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "NIX_SSL_CERT_FILE"}

// inspection is n's inspecting proxy, nil when n asks for none (and a
// request filter does not need one: filter), and the trust bundle
// commands get (nil without TLS termination). prev is the inspection in
// force, whose CA is kept when n names the same one (an ephemeral CA
// stays for the session: running commands trust it).
func inspection(n config.Network, prev *proxy.Inspection, filter bool) (*proxy.Inspection, []byte, error) {
	t := n.TLSTerminate
	if t == nil && !n.RefuseOpaqueTunnels && len(n.StripResponseHeaders) == 0 && !n.RequireHostMatch && !filter {
		return nil, nil, nil
	}
	in := &proxy.Inspection{RefuseOpaque: n.RefuseOpaqueTunnels, RequireHostMatch: n.RequireHostMatch, StripResponseHeaders: n.StripResponseHeaders,
		AllowPlaintextHeaderSet: n.AllowPlaintextHeaderSet, AmbiguousTarget: n.AmbiguousRequestTarget}
	if t == nil {
		return in, nil, nil
	}
	var err error
	switch {
	case prev != nil && prev.CA != nil && prev.CA.Source == t.CACertPath+"\x00"+t.CAKeyPath:
		in.CA = prev.CA
	case t.CACertPath != "":
		certPEM, err := os.ReadFile(t.CACertPath)
		if err != nil {
			return nil, nil, fmt.Errorf("network.tlsTerminate.caCertPath: %w", err)
		}
		keyPEM, err := os.ReadFile(t.CAKeyPath)
		if err != nil {
			return nil, nil, fmt.Errorf("network.tlsTerminate.caKeyPath: %w", err)
		}
		if in.CA, err = proxy.LoadCA(certPEM, keyPEM); err != nil {
			return nil, nil, fmt.Errorf("network.tlsTerminate: the CA at %s: %w", t.CACertPath, err)
		}
	default:
		if in.CA, err = proxy.NewCA(); err != nil {
			return nil, nil, err
		}
	}
	in.CA.Source = t.CACertPath + "\x00" + t.CAKeyPath
	for _, e := range t.ExcludeDomains {
		p, err := netfilter.ParsePattern(e, netfilter.HostOnly)
		if err != nil {
			return nil, nil, fmt.Errorf("network.tlsTerminate.excludeDomains: %w", err)
		}
		in.Exclude = append(in.Exclude, p)
	}
	// The host's roots verify every upstream: read them now, not at the
	// first request, which would wait for them.
	go x509.SystemCertPool()
	in.MaxTunnels = t.MaxTunnels
	in.HandshakeTimeout = time.Duration(t.HandshakeTimeoutMs) * time.Millisecond
	var extra [][]byte
	for _, p := range t.ExtraCACertPaths {
		if b, err := os.ReadFile(p); err == nil { // missing or unreadable: skipped (spec b.4)
			extra = append(extra, b)
		}
	}
	return in, proxy.TrustBundle(hostRoots(), in.CA, extra...), nil
}

// mitmProxy is n's network.mitmProxy, nil without one.
func mitmProxy(n config.Network) (*proxy.MITM, error) {
	m := n.MITMProxy
	if m == nil {
		return nil, nil
	}
	out := &proxy.MITM{SocketPath: m.SocketPath}
	for _, d := range m.Domains {
		p, err := netfilter.ParsePattern(d, netfilter.HostOnly)
		if err != nil {
			return nil, fmt.Errorf("network.mitmProxy.domains: %w", err)
		}
		out.Domains = append(out.Domains, p)
	}
	return out, nil
}

// hostRoots is the PEM of the roots this host trusts, as Go reads them:
// SSL_CERT_FILE, or the first system bundle found, and the files of
// SSL_CERT_DIR.
func hostRoots() []byte {
	var out []byte
	files := []string{os.Getenv("SSL_CERT_FILE")}
	if files[0] == "" {
		files = []string{
			"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
			"/etc/pki/tls/cacert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem",
		}
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			out = append(out, b...)
			break
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv("SSL_CERT_DIR")) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				out = append(out, '\n')
				out = append(out, b...)
			}
		}
	}
	return out
}

// credentials plans the credentials section for one run in env.
func credentials(settings *config.Settings, env []string, home, cwd string) (*credential.Plan, error) {
	// The log lines of every library srt links go through the redactor
	// that keeps the run's real values out (credential.Redacting),
	// wherever the program has sent them.
	log.SetOutput(credential.Redacting(log.Writer()))
	return credential.Build(credential.Input{Credentials: settings.Credentials, AllowedDomains: settings.Network.AllowedDomains, Env: env, Home: home, Cwd: cwd})
}

// withCredentials is settings with the credential plan's hidden files
// joined to filesystem.denyRead (masked ones too: they are bound over by
// their masked copies), and the masks.
func withCredentials(settings *config.Settings, p *credential.Plan) (*config.Settings, map[string][]byte, error) {
	if len(p.DenyRead) == 0 && len(p.Files) == 0 {
		return settings, nil, nil
	}
	if settings.Filesystem.Disabled {
		return nil, nil, errors.New("srt: credentials.files cannot be hidden or masked with filesystem.disabled, which drops every filesystem rule; remove one of them")
	}
	s := *settings
	s.Filesystem.DenyRead = append(append([]config.PathEntry(nil), settings.Filesystem.DenyRead...), p.DenyRead...)
	masks := map[string][]byte{}
	for _, f := range p.Files {
		s.Filesystem.DenyRead = append(s.Filesystem.DenyRead, config.PathEntry{Path: f.Path, Literal: true})
		masks[f.Path] = f.Content
	}
	return &s, masks, nil
}

// CredentialConflicts refuses a plan whose filesystem grants reopen what a
// credential rule hides: an allowRead or allowWrite entry at or beneath a
// denied or masked credential file would show the command the real bytes
// (the policy lets the more specific rule win, and an equal allow wins
// over a deny), and a credential rule is never weakened by another.
func CredentialConflicts(pol *policy.Policy, p *credential.Plan, home, cwd string) error {
	if pol == nil || pol.Disabled {
		return nil
	}
	type hidden struct {
		entry string
		path  string
		glob  *config.Glob
	}
	var hs []hidden
	add := func(e config.PathEntry) {
		x, ok, err := config.Expand(e, home, cwd)
		if err != nil || !ok {
			return
		}
		h := hidden{entry: e.Path, path: x.Path, glob: x.Glob}
		if x.Glob == nil {
			if real, err := filepath.EvalSymlinks(x.Path); err == nil {
				h.path = real
			}
		}
		hs = append(hs, h)
	}
	for _, e := range p.DenyRead {
		add(e)
	}
	for _, f := range p.Files {
		add(config.PathEntry{Path: f.Path, Literal: true})
	}
	for _, rs := range [][]policy.Rule{pol.Reads, pol.Writes} {
		for _, r := range rs {
			if !r.Allow {
				continue
			}
			for _, h := range hs {
				reopens := policy.Under(r.Path, h.path)
				if h.glob != nil {
					reopens = h.glob.MatchOrBeneath(r.Path)
				}
				if reopens {
					return fmt.Errorf("srt: %s (%s) would show what the credentials rule for %q hides; a credential rule is never weakened: remove the grant, or the credential rule", r.Path, r.Why, h.entry)
				}
			}
		}
	}
	return nil
}
