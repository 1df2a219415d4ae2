package credential

import (
	"net/http"
	"strings"

	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
)

// Injector puts a plan's real values back into the requests that may
// carry them. Make one with Plan.Injector.
type Injector struct {
	secrets   []Secret
	aws       []AWSPair
	plaintext bool
	sigv4     sigv4Modes
}

// Injector returns the plan's injector, nil when the plan masks nothing.
func (p *Plan) Injector() *Injector {
	if len(p.Secrets) == 0 {
		return nil
	}
	return &Injector{secrets: p.Secrets, aws: p.AWS, plaintext: p.Plaintext, sigv4: modes(p.SigV4)}
}

// For returns what is done to requests to host: over TLS srt terminated
// and verified (tls), or over plain HTTP, which gets nothing unless
// allowPlaintextInject. nil: none of the secrets may go there.
func (inj *Injector) For(host netfilter.Host, tls bool) proxy.Injector {
	if inj == nil || (!tls && !inj.plaintext) {
		return nil
	}
	var pairs []pair
	sameLength := true
	for _, s := range inj.secrets {
		if matchesAny(s.Hosts, host) {
			pairs = append(pairs, pair{old: []byte(s.Sentinel), new: []byte(s.Real)})
			sameLength = sameLength && len(s.Sentinel) == len(s.Real)
		}
	}
	var aws []AWSPair
	for _, a := range inj.aws {
		if matchesAny(a.Hosts, host) {
			aws = append(aws, a)
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	return &hostInjector{r: newReplacer(pairs), sameLength: sameLength, aws: aws, tls: tls, sigv4: inj.sigv4}
}

func matchesAny(ps []netfilter.Pattern, h netfilter.Host) bool {
	for _, p := range ps {
		if p.MatchHost(h) {
			return true
		}
	}
	return false
}

// hostInjector is an Injector's work for one destination.
type hostInjector struct {
	r *replacer
	// sameLength: every sentinel is as long as its real value, so a body
	// keeps its length.
	sameLength bool
	aws        []AWSPair
	tls        bool
	sigv4      sigv4Modes
}

// Request replaces the sentinels in r's headers (never in Host or the
// request target: a secret has no business in a URL, which servers log)
// and body, and signs again a SigV4 request signed with a masked key
// pair. A body with a Content-Encoding is not read (its bytes are not
// text), so its sentinels go as they are.
func (h *hostInjector) Request(r *http.Request) error {
	var sign *resign
	if h.tls {
		var err error
		if sign, err = h.planSigV4(r); err != nil {
			return err
		}
	}
	for k, vs := range r.Header {
		for i, v := range vs {
			vs[i] = h.r.replaceString(v)
		}
		r.Header[k] = vs
	}
	if r.Body != nil && r.Body != http.NoBody && r.Header.Get("Content-Encoding") == "" {
		r.Body = readCloser{h.r.reader(r.Body), r.Body}
		if !h.sameLength {
			r.ContentLength = -1
			r.Header.Del("Content-Length")
		}
	}
	if sign != nil {
		return sign.apply(r)
	}
	return nil
}

// readCloser reads from one and closes the other.
type readCloser struct {
	r interface{ Read([]byte) (int, error) }
	c interface{ Close() error }
}

func (rc readCloser) Read(b []byte) (int, error) { return rc.r.Read(b) }
func (rc readCloser) Close() error               { return rc.c.Close() }

// hasPrefixFold is strings.HasPrefix ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
