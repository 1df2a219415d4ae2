package credential

import (
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
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
	// What the host sends back is searched for the real values it was
	// given, which go back to sentinels: a server that echoes a request
	// (an error page, a debug endpoint) must not hand the command the
	// secret. Values too short to be told from ordinary text are not.
	var back []pair
	for _, p := range pairs {
		if len(p.new) >= minScrubbed {
			back = append(back, pair{old: p.new, new: p.old})
		}
	}
	h := &hostInjector{r: newReplacer(pairs), sameLength: sameLength, aws: aws, tls: tls, sigv4: inj.sigv4}
	if len(back) > 0 {
		h.back = newReplacer(back)
	}
	return h
}

// minScrubbed is the shortest real value searched for in responses.
const minScrubbed = 8

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
	// back turns real values in responses into sentinels; nil: none is
	// long enough to look for.
	back *replacer
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
	if h.back != nil {
		// Only encodings srt can read come back, so that the response can
		// be searched.
		r.Header.Set("Accept-Encoding", readableEncodings(r.Header.Values("Accept-Encoding")))
	}
	if sign != nil {
		return sign.apply(r)
	}
	return nil
}

// Response turns the real values in a response to r into their
// sentinels: in its headers and its body (decoded from gzip or deflate;
// the command gets it unencoded). A body in an encoding srt cannot read
// is refused.
func (h *hostInjector) Response(resp *http.Response) error {
	if h.back == nil {
		return nil
	}
	for k, vs := range resp.Header {
		for i, v := range vs {
			vs[i] = h.back.replaceString(v)
		}
		resp.Header[k] = vs
	}
	if resp.Body == nil || resp.Body == http.NoBody || resp.StatusCode == http.StatusSwitchingProtocols {
		return nil
	}
	body, err := decoded(resp)
	if err != nil {
		return err
	}
	resp.Body = readCloser{h.back.reader(body), resp.Body}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
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

// readableEncodings is an Accept-Encoding with only what srt can decode.
func readableEncodings(values []string) string {
	var keep []string
	for _, v := range values {
		for _, e := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(e), ";")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "gzip", "x-gzip", "deflate", "identity":
				keep = append(keep, strings.TrimSpace(e))
			}
		}
	}
	if len(keep) == 0 {
		return "identity"
	}
	return strings.Join(keep, ", ")
}

// decoded is resp's body decoded, and resp made to say so.
func decoded(resp *http.Response) (io.Reader, error) {
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	var r io.Reader
	switch enc {
	case "", "identity":
		return resp.Body, nil
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("the response's gzip body: %w", err)
		}
		r = z
	case "deflate":
		r = flate.NewReader(resp.Body)
	default:
		return nil, &proxy.StatusError{Status: http.StatusBadGateway,
			Reason: fmt.Sprintf("the response came in the %q encoding, which srt cannot search for the real values of masked credentials", enc)}
	}
	resp.Header.Del("Content-Encoding")
	resp.Uncompressed = true
	return r, nil
}
