package credential

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/proxy"
)

// AWS Signature Version 4 (spec b.4 awsPairs, sigv4): a request signed
// with a masked key pair carries a signature made with the sentinel
// secret, which AWS would refuse; srt signs it again with the real pair.
// Only header-signed requests can be signed again: a streaming upload
// signs each chunk, a presigned URL and SigV4a are signed in ways the
// proxy cannot redo. Those are refused, or let through unsigned again
// where credentials.sigv4 says "passthrough" (they then fail upstream).

// MaxSignedBody is the most of a body srt buffers to hash it for a new
// signature (64 MiB); a larger one is refused.
const MaxSignedBody = 64 << 20

// sigv4Modes says which kinds pass through (true) rather than being
// refused.
type sigv4Modes struct{ streaming, presigned, sigv4a bool }

func modes(c config.SigV4) sigv4Modes {
	return sigv4Modes{streaming: c.Streaming == "passthrough", presigned: c.Presigned == "passthrough", sigv4a: c.SigV4A == "passthrough"}
}

var (
	credentialRe    = regexp.MustCompile(`Credential=([^/,\s]+)/`)
	authorizationRe = regexp.MustCompile(`^AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)/(\d{8})/([^/,\s]+)/([^/,\s]+)/aws4_request\s*,\s*SignedHeaders=([a-z0-9;._-]+)\s*,\s*Signature=([0-9a-f]+)\s*$`)
)

// refuse403 is a refusal of a SigV4 request.
func refuse403(format string, args ...any) error {
	return &proxy.StatusError{Status: http.StatusForbidden, Reason: fmt.Sprintf(format, args...)}
}

// resign is a header-signed request to sign again.
type resign struct {
	pair                   AWSPair
	region, service        string
	amzDate                time.Time
	unsignedPayload        bool
	hadContentSHA256Header bool
}

// planSigV4 finds whether r is signed with a masked key id this
// destination may get the real one of, and what to do: nothing (nil), a
// refusal, or a new signature after the sentinels are replaced.
func (h *hostInjector) planSigV4(r *http.Request) (*resign, error) {
	auth := r.Header.Get("Authorization")
	var kind, keyID string
	switch {
	case hasPrefixFold(auth, "AWS4-ECDSA-P256-SHA256"):
		kind = "sigv4a"
	case hasPrefixFold(auth, "AWS4-HMAC-SHA256"):
		kind = "header"
		if strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
			kind = "streaming"
		}
	default:
		q := r.URL.Query()
		if q.Get("X-Amz-Algorithm") == "AWS4-HMAC-SHA256" && q.Has("X-Amz-Signature") && q.Get("X-Amz-Credential") != "" {
			kind = "presigned"
			keyID, _, _ = strings.Cut(q.Get("X-Amz-Credential"), "/")
		}
	}
	if kind == "" {
		return nil, nil
	}
	if keyID == "" {
		m := credentialRe.FindStringSubmatch(auth)
		if m == nil {
			return nil, nil
		}
		keyID = m[1]
	}
	i := slices.IndexFunc(h.aws, func(p AWSPair) bool { return p.SentinelKeyID == keyID })
	if i < 0 {
		return nil, nil
	}
	pair := h.aws[i]
	cannot := func(pass bool) error {
		if pass {
			return nil
		}
		return refuse403("AWS SigV4 %s request uses a masked credential, which the sandbox's proxy cannot sign again; refused. Set credentials.sigv4.%s to \"passthrough\" to send it as it is (it will fail upstream: its signature covers the masked stand-in)", kind, map[string]string{"sigv4a": "sigv4a", "streaming": "streaming", "presigned": "presigned"}[kind])
	}
	switch kind {
	case "sigv4a":
		return nil, cannot(h.sigv4.sigv4a)
	case "streaming":
		return nil, cannot(h.sigv4.streaming)
	case "presigned":
		return nil, cannot(h.sigv4.presigned)
	}
	m := authorizationRe.FindStringSubmatch(auth)
	if m == nil {
		return nil, refuse403("AWS SigV4 request uses a masked credential but its Authorization header is malformed; the proxy cannot sign it again")
	}
	date := r.Header.Get("X-Amz-Date")
	if date == "" {
		return nil, refuse403("AWS SigV4 request uses a masked credential but carries no x-amz-date header; the proxy cannot sign it again")
	}
	t, err := time.Parse("20060102T150405Z", date)
	if err != nil || t.Format("20060102") != m[2] {
		return nil, refuse403("AWS SigV4 request uses a masked credential but its x-amz-date %q does not agree with its credential scope; the proxy cannot sign it again", date)
	}
	for _, name := range strings.Split(m[5], ";") {
		if name == "host" || name == "x-amz-security-token" && pair.SessionToken != "" {
			continue
		}
		if _, ok := r.Header[http.CanonicalHeaderKey(name)]; !ok && !(name == "content-length" && r.ContentLength >= 0) {
			return nil, refuse403("AWS SigV4 request uses a masked credential but signed header %q is missing; the proxy cannot sign it again", name)
		}
	}
	_, hadHash := r.Header["X-Amz-Content-Sha256"]
	return &resign{pair: pair, region: m[3], service: m[4], amzDate: t,
		unsignedPayload:        r.Header.Get("X-Amz-Content-Sha256") == "UNSIGNED-PAYLOAD",
		hadContentSHA256Header: hadHash}, nil
}

// apply signs r (its sentinels already replaced) with the real pair.
func (s *resign) apply(r *http.Request) error {
	hash := "UNSIGNED-PAYLOAD"
	if !s.unsignedPayload {
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			var err error
			body, err = io.ReadAll(io.LimitReader(r.Body, MaxSignedBody+1))
			if err != nil {
				return err
			}
			if len(body) > MaxSignedBody {
				return refuse403("AWS SigV4 request uses a masked credential and signs its body's hash, so the proxy must hold the body to sign it again, but the body is over the %d-byte limit; refused. Sign the payload as UNSIGNED-PAYLOAD to stream it, or use a credential that is not masked", MaxSignedBody)
			}
		}
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:])
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Del("Content-Length")
		if s.hadContentSHA256Header {
			r.Header.Set("X-Amz-Content-Sha256", hash)
		}
	}
	// What the transport would drop after signing must not be signed.
	proxy.RemoveHopByHop(r.Header)
	r.Header.Del("Authorization")
	r.Header.Del("X-Amz-Security-Token")
	u := *r.URL
	u.Scheme, u.Host = "https", r.Host
	signing := (&http.Request{Method: r.Method, URL: &u, Host: r.Host, Header: r.Header, ContentLength: r.ContentLength}).WithContext(context.Background())
	creds := aws.Credentials{AccessKeyID: s.pair.KeyID, SecretAccessKey: s.pair.Secret, SessionToken: s.pair.SessionToken}
	err := v4.NewSigner().SignHTTP(context.Background(), creds, signing, hash, s.service, s.region, s.amzDate, func(o *v4.SignerOptions) {
		// S3 signs the path as sent; every other service escapes it once
		// more.
		o.DisableURIPathEscaping = s.service == "s3"
	})
	if err != nil {
		return refuse403("AWS SigV4 signing again failed: %v", err)
	}
	// The signer signs the Host it would send (no default port).
	r.Host = signing.Host
	return nil
}
