package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/srt-go/srt/netfilter"
)

// crossChecks are the rules that relate fields to each other (spec b.3,
// b.4 and the credentials rules). They run on a document that passed the
// schema, as a pipeline of named checks.
func crossChecks(s *Settings, r *report) {
	checkDenyGlobSeparators(s, r)
	checkNetworkCombinations(s, r)
	checkSeccomp(s, r)
	if s.Credentials != nil {
		checkCredentials(s, r)
	}
}

// checkDenyGlobSeparators refuses an absolute or ~ deny glob that ends in
// "/": as a pattern it matches no path, so it would protect nothing.
func checkDenyGlobSeparators(s *Settings, r *report) {
	if s.Filesystem.Disabled {
		return
	}
	for _, l := range []struct {
		name    string
		entries []PathEntry
	}{{"denyRead", s.Filesystem.DenyRead}, {"denyWrite", s.Filesystem.DenyWrite}} {
		for i, e := range l.entries {
			if !e.Literal && denyGlobEndsInSeparator(e.Path) {
				r.add([]string{"filesystem", l.name, strconv.Itoa(i)}, "%s", denyGlobMessage(e.Path))
			}
		}
	}
	if c := s.Credentials; c != nil {
		for i, f := range c.Files {
			if f.Mode == "deny" && denyGlobEndsInSeparator(f.Path) {
				r.add([]string{"credentials", "files", strconv.Itoa(i), "path"}, "%s", denyGlobMessage(f.Path))
			}
		}
	}
}

func denyGlobEndsInSeparator(p string) bool {
	return hasGlobChars(p) && strings.HasSuffix(p, "/") && (strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"))
}

func denyGlobMessage(p string) string {
	trimmed := strings.TrimRight(p, "/")
	return fmt.Sprintf("Deny glob %q ends in a separator, so as a pattern it can match no path. Write %q, or %q to name what is beneath the matches", p, trimmed, trimmed+"/**")
}

func checkNetworkCombinations(s *Settings, r *report) {
	n := &s.Network
	if n.TLSTerminate != nil && n.MITMProxy != nil {
		r.add([]string{"network"}, "network.tlsTerminate and network.mitmProxy are mutually exclusive")
	}
	if t := n.TLSTerminate; t != nil && (t.CACertPath == "") != (t.CAKeyPath == "") {
		r.add([]string{"network", "tlsTerminate"}, "caCertPath and caKeyPath must be provided together")
	}
}

func checkSeccomp(s *Settings, r *report) {
	if s.Seccomp != nil && s.Seccomp.Argv0 != "" && s.Seccomp.ApplyPath == "" {
		r.add([]string{"seccomp", "argv0"}, "seccompConfig.argv0 requires seccompConfig.applyPath")
	}
}

// parentProxyURL checks a parentProxy URL: http or https, with a host.
func parentProxyURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "Invalid url"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("parent proxy URL must use http:// or https://, not %s://", u.Scheme)
	}
	return ""
}

// covers reports whether allowed domain patterns reach host pattern h, ports
// ignored: an exact host is covered when an allowed pattern matches it; a
// "*.X" only by an allowed "*.Y" with X equal to Y or a subdomain of it.
func covers(allowed []netfilter.Pattern, h netfilter.Pattern) bool {
	for _, a := range allowed {
		switch {
		case a.Any:
			return true
		case h.Suffix != "":
			if a.Suffix != "" && (h.Suffix == a.Suffix || strings.HasSuffix(h.Suffix, "."+a.Suffix)) {
				return true
			}
		case h.Addr.IsValid():
			if a.MatchHost(netfilter.Host{Addr: h.Addr}) {
				return true
			}
		default:
			if a.MatchHost(netfilter.Host{Name: h.Name}) {
				return true
			}
		}
	}
	return false
}

func parseAll(entries []string, list netfilter.List) []netfilter.Pattern {
	var ps []netfilter.Pattern
	for _, e := range entries {
		if p, err := netfilter.ParsePattern(e, list); err == nil { // the schema already refused bad entries
			ps = append(ps, p)
		}
	}
	return ps
}

func checkCredentials(s *Settings, r *report) {
	c := s.Credentials
	allowed := parseAll(s.Network.AllowedDomains, netfilter.Allow)
	var excluded []netfilter.Pattern
	if s.Network.TLSTerminate != nil {
		excluded = parseAll(s.Network.TLSTerminate.ExcludeDomains, netfilter.HostOnly)
	}
	anyMask := false
	rule := func(path []string, cr CredentialRule) {
		anyMask = anyMask || cr.Mode == "mask"
		if cr.Extract != "" {
			re, err := regexp.Compile(cr.Extract)
			switch {
			case err != nil:
				r.add(append(path, "extract"), "extract is not a valid regular expression: %v", err)
			case re.NumSubexp() < 1:
				r.add(append(path, "extract"), "extract must contain at least one capturing group — group 1 is the secret that is masked")
			}
		}
		if cr.MaskClaims != nil {
			switch {
			case cr.Decode == "":
				r.add(append(path, "maskClaims"), `maskClaims needs decode: "jwt"`)
			case len(*cr.MaskClaims) == 0:
				r.add(append(path, "maskClaims"), "maskClaims is explicitly empty — list the claims to mask, or leave it out")
			}
		}
		if cr.InjectHosts == nil {
			if cr.Mode == "mask" && len(excluded) > 0 && len(allowed) > 0 {
				all := true
				for _, a := range allowed {
					all = all && covers(excluded, a)
				}
				if all {
					r.add(path, "This masked credential has no injectHosts, so it defaults to network.allowedDomains — but every allowed domain is in tlsTerminate.excludeDomains, where no substitution happens. Name the hosts in injectHosts")
				}
			}
			return
		}
		if cr.Mode == "mask" && len(*cr.InjectHosts) == 0 {
			r.add(append(path, "injectHosts"), "injectHosts is explicitly empty — the real value could never be sent anywhere; name the hosts, or leave it out to use network.allowedDomains")
		}
		for i, e := range *cr.InjectHosts {
			h, err := netfilter.ParsePattern(e, netfilter.HostOnly)
			if err != nil {
				continue // reported by the schema
			}
			ip := append(path, "injectHosts", strconv.Itoa(i))
			if !covers(allowed, h) {
				r.add(ip, "injectHosts entry %q is not reachable via network.allowedDomains — add it there, or remove it", e)
			} else if len(excluded) > 0 && covers(excluded, h) {
				r.add(ip, "injectHosts entry %q is in tlsTerminate.excludeDomains, where no substitution happens", e)
			}
		}
	}
	for i, f := range c.Files {
		path := []string{"credentials", "files", strconv.Itoa(i)}
		rule(path, f.CredentialRule)
		if f.Mode == "mask" && strings.HasSuffix(f.Path, "/") {
			r.add(append(path, "path"), `Credential mode "mask" applies to a single file, and %q names a directory; use mode "deny" for directories`, f.Path)
		}
	}
	maskVars := map[string]CredentialEnvVar{}
	for i, e := range c.EnvVars {
		rule([]string{"credentials", "envVars", strconv.Itoa(i)}, e.CredentialRule)
		maskVars[e.Name] = e
	}
	if anyMask && s.Network.TLSTerminate == nil && !c.AllowPlaintextInject {
		r.add([]string{"credentials"}, "Credential masking requires network.tlsTerminate so substitution runs only over a verified TLS connection. Add \"tlsTerminate\": {} to network, or set credentials.allowPlaintextInject")
	}
	slots := map[string]string{}
	for i, p := range c.AWSPairs {
		for _, v := range []struct{ key, name string }{
			{"accessKeyIdVar", p.AccessKeyIDVar}, {"secretAccessKeyVar", p.SecretAccessKeyVar}, {"sessionTokenVar", p.SessionTokenVar},
		} {
			if v.name == "" {
				continue
			}
			path := []string{"credentials", "awsPairs", strconv.Itoa(i), v.key}
			if prev, dup := slots[v.name]; dup {
				r.add(path, "%q appears in more than one awsPairs slot (also %s)", v.name, prev)
				continue
			}
			slots[v.name] = strings.Join(path, ".")
			e, ok := maskVars[v.name]
			if !ok || e.Mode != "mask" || e.Extract != "" || e.Decode != "" {
				r.add(path, "%q does not reference a credentials.envVars entry with mode \"mask\" and no extract or decode", v.name)
			}
		}
	}
}
