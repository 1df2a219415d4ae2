// Package credential keeps secrets out of the sandbox (spec b.4
// "credentials", DESIGN promise 7). From the settings and the host's
// environment and files it plans what the command gets instead: denied
// variables unset and denied files hidden, masked ones replaced by
// sentinels (random stand-ins of the real value's length). srt's
// host-side proxy alone holds the real values, and puts them back, in
// place of the sentinels, only into requests to the hosts each belongs
// to, over TLS it terminated and verified (Injector). Pure code: it reads
// what it is given and changes nothing.
package credential

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
)

// Secret is one real value and its stand-in.
type Secret struct {
	// Name says where the value came from ("env:NAME", "file:/p#1"), for
	// messages; never the value.
	Name     string
	Sentinel string
	Real     string
	// Hosts are where the real value may go (host-only patterns).
	Hosts []netfilter.Pattern
}

// FileMask is a file the command reads in place of a masked one.
type FileMask struct {
	// Path is the masked file, symlinks resolved.
	Path string
	// Content is what the command reads there: the file with each secret
	// replaced by its sentinel.
	Content []byte
}

// Plan is what the credentials section does to one command.
type Plan struct {
	// Unset are the variables the command does not get.
	Unset []string
	// Set are the masked variables, as the command gets them.
	Set map[string]string
	// Files are the masked files.
	Files []FileMask
	// DenyRead are the paths (and patterns) hidden like denyRead entries.
	DenyRead []config.PathEntry
	// Secrets are every real value with its sentinel, for the proxy.
	Secrets []Secret
	// AWS are the SigV4 key pairs the proxy re-signs with.
	AWS []AWSPair
	// Warnings are for the user's stderr: a rule that protects nothing.
	Warnings []string
	// Plaintext: the real values may go over plain HTTP too
	// (allowPlaintextInject).
	Plaintext bool
	// SigV4 is credentials.sigv4.
	SigV4 config.SigV4
}

// AWSPair is a masked access key pair: a request signed with the
// sentinel key id is signed again with the real pair.
type AWSPair struct {
	SentinelKeyID string
	KeyID, Secret string
	SessionToken  string // "" without one
	// SentinelToken is the session token's sentinel, "" without one.
	SentinelToken string
	Hosts         []netfilter.Pattern
}

// Input is what a plan is made from.
type Input struct {
	Credentials *config.Credentials
	// AllowedDomains is network.allowedDomains: injectHosts' default.
	AllowedDomains []string
	// Env is the command's environment as it would be without the plan.
	Env []string
	// Home and Cwd expand file paths.
	Home, Cwd string
	// ReadFile reads a masked file (nil: os.ReadFile after resolving
	// symlinks); Resolve resolves a path's symlinks (nil:
	// filepath.EvalSymlinks).
	ReadFile func(path string) ([]byte, error)
	Resolve  func(path string) (string, error)
}

// sentinelPrefix starts every sentinel srt makes.
const sentinelPrefix = "fake_value_"

// sentinelAlphabet pads a sentinel to the real value's length.
const sentinelAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789_-"

// NewSentinel returns "fake_value_" and a random UUID (47 bytes), padded
// with random characters of [a-z0-9_-] to length when length is more.
func NewSentinel(length int) string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	s := fmt.Sprintf("%s%x-%x-%x-%x-%x", sentinelPrefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	if pad := length - len(s); pad > 0 {
		b := make([]byte, pad)
		rand.Read(b)
		for i := range b {
			b[i] = sentinelAlphabet[int(b[i])%len(sentinelAlphabet)]
		}
		s += string(b)
	}
	return s
}

// Build plans the credentials section for one command. An error is a
// rule that says "error" when its pattern finds nothing: nothing runs.
func Build(in Input) (*Plan, error) {
	p := &Plan{Set: map[string]string{}}
	c := in.Credentials
	if c == nil {
		return p, nil
	}
	p.Plaintext = c.AllowPlaintextInject
	if c.SigV4 != nil {
		p.SigV4 = *c.SigV4
	}
	if in.ReadFile == nil {
		in.ReadFile = os.ReadFile
	}
	if in.Resolve == nil {
		in.Resolve = filepath.EvalSymlinks
	}
	defaults := defaultHosts(in.AllowedDomains)
	env := map[string]string{}
	for _, kv := range in.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	whole := map[string]Secret{} // whole-value masked variables, for AWS pairs
	for _, e := range c.EnvVars {
		hosts := hostsOf(e.InjectHosts, defaults)
		if e.Mode == "deny" {
			p.Unset = append(p.Unset, e.Name)
			continue
		}
		real, set := env[e.Name]
		if !set {
			continue // nothing to hide
		}
		name := "env:" + e.Name
		what := fmt.Sprintf("credentials.envVars entry %q", e.Name)
		// An extracted value that appears again in the variable is masked
		// there too (maskDuplicates is a file's setting; in one variable
		// there is no reason to leave a copy real).
		masked, secrets, err := mask(real, e.CredentialRule, hosts, name, true)
		switch {
		case errors.Is(err, errNoMatch):
			switch e.OnExtractNoMatch {
			case "deny":
				p.Unset = append(p.Unset, e.Name)
			case "error":
				return nil, fmt.Errorf("%s: %v (onExtractNoMatch: \"error\"); fix the pattern, choose \"warn\" or \"deny\", or remove the entry", what, err)
			default:
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v; the variable is left UNPROTECTED, visible as it is inside the sandbox. Fix the pattern, set onExtractNoMatch to \"deny\" or \"error\", or remove the entry", what, err))
			}
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %v", what, err)
		}
		p.Set[e.Name] = masked
		p.Secrets = append(p.Secrets, secrets...)
		if e.Extract == "" && e.Decode == "" {
			whole[e.Name] = secrets[0]
		}
	}
	p.AWS, p.Warnings = awsPairs(c.AWSPairs, whole, p.Warnings)
	for i, f := range c.Files {
		if err := p.file(i, f, in, defaults); err != nil {
			return nil, err
		}
	}
	p.keepOutOfPrint()
	return p, nil
}

// file plans one credentials.files entry.
func (p *Plan) file(i int, f config.CredentialFile, in Input, defaults []netfilter.Pattern) error {
	if f.Mode == "deny" {
		p.DenyRead = append(p.DenyRead, config.PathEntry{Path: f.Path})
		return nil
	}
	// A masked file names one file: never a pattern.
	path, ok, err := config.Expand(config.PathEntry{Path: f.Path, Literal: true}, in.Home, in.Cwd)
	if err != nil || !ok {
		return fmt.Errorf("credentials.files.%d: %q names no file", i, f.Path)
	}
	what := fmt.Sprintf("credentials.files entry %q", f.Path)
	real, err := in.Resolve(path.Path)
	if err != nil {
		// Nothing there to read now. Hidden all the same: a file made
		// there later must not be read either.
		p.DenyRead = append(p.DenyRead, config.PathEntry{Path: path.Path, Literal: true})
		return nil
	}
	data, err := in.ReadFile(real)
	if err != nil {
		// A directory, or a file srt cannot read: denied, never shown.
		p.DenyRead = append(p.DenyRead, config.PathEntry{Path: real, Literal: true})
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v; it is hidden instead (mode \"deny\")", what, err))
		return nil
	}
	if !utf8.Valid(data) {
		p.DenyRead = append(p.DenyRead, config.PathEntry{Path: real, Literal: true})
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: the file is not text; it is hidden instead (mode \"deny\")", what))
		return nil
	}
	rule := f.CredentialRule
	if rule.Decode == "jwt" && rule.Extract == "" {
		rule.Extract = jwtPattern
	}
	hosts := hostsOf(f.InjectHosts, defaults)
	masked, secrets, err := mask(string(data), rule, hosts, "file:"+real, f.MaskDuplicates)
	switch {
	case errors.Is(err, errNoMatch):
		switch f.OnExtractNoMatch {
		case "deny":
			p.DenyRead = append(p.DenyRead, config.PathEntry{Path: real, Literal: true})
		case "error":
			return fmt.Errorf("%s: %v (onExtractNoMatch: \"error\"); fix the pattern, choose \"warn\" or \"deny\", or remove the entry", what, err)
		default:
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %v; the file is left UNPROTECTED, readable as it is inside the sandbox. Fix the pattern, set onExtractNoMatch to \"deny\" or \"error\", or remove the entry", what, err))
		}
		return nil
	case err != nil:
		return fmt.Errorf("%s: %v", what, err)
	}
	p.Files = append(p.Files, FileMask{Path: real, Content: []byte(masked)})
	p.Secrets = append(p.Secrets, secrets...)
	return nil
}

// errNoMatch is a rule whose pattern found nothing to mask.
var errNoMatch = errors.New("no match")

// noMatch explains errNoMatch.
type noMatchError struct{ why string }

func (e *noMatchError) Error() string { return e.why }
func (e *noMatchError) Is(t error) bool {
	return t == errNoMatch
}

// jwtPattern finds JSON Web Tokens in a file (decode "jwt" without
// extract).
const jwtPattern = `(eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)`

// mask replaces the secrets of value as rule says: the whole value, each
// distinct capture of group 1 of rule.Extract (and, with duplicates,
// every other place the captured text appears), a JWT by a fake one or
// with its listed claims masked. It returns the masked value and its
// secrets.
func mask(value string, rule config.CredentialRule, hosts []netfilter.Pattern, name string, duplicates bool) (string, []Secret, error) {
	newSecret := func(suffix, real string) Secret {
		return Secret{Name: name + suffix, Sentinel: NewSentinel(len(real)), Real: real, Hosts: hosts}
	}
	if rule.Extract == "" && rule.Decode == "" {
		s := newSecret("", value)
		return s.Sentinel, []Secret{s}, nil
	}
	if rule.Extract == "" { // decode "jwt" of the whole value (an env var)
		masked, secrets, ok := maskJWT(value, rule.MaskClaims, newSecret, "")
		if !ok {
			return "", nil, &noMatchError{fmt.Sprintf("decode \"jwt\": %s", jwtWhy(value, rule.MaskClaims))}
		}
		return masked, secrets, nil
	}
	re, err := regexp.Compile(rule.Extract)
	if err != nil {
		return "", nil, err
	}
	type span struct {
		start, end int
		repl       string
	}
	var spans []span
	var secrets []Secret
	byReal := map[string]string{} // real capture → its replacement
	for _, m := range re.FindAllStringSubmatchIndex(value, -1) {
		if len(m) < 4 || m[2] < 0 || m[3] <= m[2] {
			continue
		}
		real := value[m[2]:m[3]]
		repl, seen := byReal[real]
		if !seen {
			suffix := fmt.Sprintf("#%d", len(byReal))
			if rule.Decode == "jwt" {
				masked, ss, ok := maskJWT(real, rule.MaskClaims, newSecret, suffix)
				if !ok {
					continue // not a token, or none of the claims
				}
				repl = masked
				secrets = append(secrets, ss...)
			} else {
				s := newSecret(suffix, real)
				repl = s.Sentinel
				secrets = append(secrets, s)
			}
			byReal[real] = repl
		}
		spans = append(spans, span{m[2], m[3], repl})
	}
	if len(spans) == 0 {
		why := fmt.Sprintf("extract pattern %q matched nothing", rule.Extract)
		if rule.Decode == "jwt" {
			why = fmt.Sprintf("decode \"jwt\" with pattern %q matched no token that verifies", rule.Extract)
			if rule.MaskClaims != nil {
				why += fmt.Sprintf(" with any of the claims %q", *rule.MaskClaims)
			}
		}
		return "", nil, &noMatchError{why}
	}
	if duplicates {
		// Every other place a masked text appears, longest first: a
		// captured value, and a masked claim of a captured token (8 bytes
		// and longer, as the search of responses); the pattern's own
		// matches, and longer texts, keep their places.
		for _, s := range secrets {
			if _, ok := byReal[s.Real]; !ok && len(s.Real) >= minScrubbed {
				byReal[s.Real] = s.Sentinel
			}
		}
		reals := make([]string, 0, len(byReal))
		for r := range byReal {
			reals = append(reals, r)
		}
		sortLongestFirst(reals)
		for _, r := range reals {
			for off := 0; ; {
				i := strings.Index(value[off:], r)
				if i < 0 {
					break
				}
				start, end := off+i, off+i+len(r)
				off = end
				free := true
				for _, s := range spans {
					if start < s.end && s.start < end {
						free = false
						break
					}
				}
				if free {
					spans = append(spans, span{start, end, byReal[r]})
				}
			}
		}
	}
	sortSpans(spans, func(s span) int { return s.start })
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(value[last:s.start])
		b.WriteString(s.repl)
		last = s.end
	}
	b.WriteString(value[last:])
	return b.String(), secrets, nil
}

// defaultHosts is allowedDomains without ports: where a credential with
// no injectHosts may go.
func defaultHosts(allowed []string) []netfilter.Pattern {
	var out []netfilter.Pattern
	seen := map[string]bool{}
	for _, a := range allowed {
		p, err := netfilter.ParsePattern(a, netfilter.Allow)
		if err != nil {
			continue
		}
		p.Port = 0
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

// hostsOf is a rule's injectHosts, or the defaults.
func hostsOf(list *[]string, defaults []netfilter.Pattern) []netfilter.Pattern {
	if list == nil {
		return defaults
	}
	var out []netfilter.Pattern
	for _, h := range *list {
		if p, err := netfilter.ParsePattern(h, netfilter.HostOnly); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Env applies the plan to an environment: denied variables go, masked
// ones take their sentinels.
func (p *Plan) Env(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if p.unset(k) {
			continue
		}
		if v, ok := p.Set[k]; ok {
			out = append(out, k+"="+v)
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (p *Plan) unset(k string) bool {
	for _, u := range p.Unset {
		if u == k {
			return true
		}
	}
	return false
}
