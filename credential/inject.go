package credential

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
)

// Injector puts a plan's real values back into the requests that may
// carry them, and turns them back into sentinels in every response.
// Make one with Plan.Injector.
type Injector struct {
	secrets   []Secret
	aws       []AWSPair
	plaintext bool
	sigv4     sigv4Modes
	// back searches responses for every form of every real value long
	// enough to search for; nil: none is.
	back *scanner
	// signOnly are the paired AWS secret keys: only ever used to sign
	// again, never written into a request, where a host that stores what
	// it is sent would keep them.
	signOnly map[string]bool
}

// Injector returns the plan's injector, nil when the plan masks nothing.
func (p *Plan) Injector() *Injector {
	if len(p.Secrets) == 0 {
		return nil
	}
	inj := &Injector{secrets: p.Secrets, aws: p.AWS, plaintext: p.Plaintext, sigv4: modes(p.SigV4), signOnly: map[string]bool{}}
	for _, a := range p.AWS {
		inj.signOnly[a.Secret] = true
	}
	// A real value sent to a host may come back: echoed (an error page,
	// a debug endpoint), or stored there and served later, by that host
	// or another (a gist's raw file), as it was or encoded (forms.go).
	// Every response srt reads, from any host, is searched for every
	// form of every real value: the value as it is goes back to its
	// sentinel, an encoded form is refused. Values too short to be told
	// from ordinary text are not searched for.
	var raw, encoded []needle
	for _, s := range p.Secrets {
		if len(s.Real) >= minScrubbed {
			ns := needles(s)
			raw, encoded = append(raw, ns[0]), append(encoded, ns[1:]...)
		}
	}
	if len(raw) > 0 {
		// The values as they are first: one wins a tie.
		inj.back = newScanner(append(raw, encoded...))
	}
	return inj
}

// For returns what is done to requests to host and their responses: real
// values put in over TLS srt terminated and verified (tls), or over plain
// HTTP only with allowPlaintextInject, for the secrets that may go to
// host; every response searched. nil: nothing to do.
func (inj *Injector) For(host netfilter.Host, tls bool) proxy.Injector {
	if inj == nil {
		return nil
	}
	var pairs []pair
	sameLength := true
	if tls || inj.plaintext {
		for _, s := range inj.secrets {
			if matchesAny(s.Hosts, host) && !inj.signOnly[s.Real] {
				pairs = append(pairs, pair{old: []byte(s.Sentinel), new: []byte(s.Real)})
				sameLength = sameLength && len(s.Sentinel) == len(s.Real)
			}
		}
	}
	var aws []AWSPair
	for _, a := range inj.aws {
		if matchesAny(a.Hosts, host) {
			aws = append(aws, a)
		}
	}
	if len(pairs) == 0 && inj.back == nil {
		return nil
	}
	h := &hostInjector{sameLength: sameLength, aws: aws, tls: tls, sigv4: inj.sigv4, back: inj.back}
	if len(pairs) > 0 {
		h.r = newReplacer(pairs)
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

// hostInjector is an Injector's work for one request.
type hostInjector struct {
	// r puts real values in; nil: none may go to this destination.
	r *replacer
	// sameLength: every sentinel is as long as its real value, so a body
	// keeps its length.
	sameLength bool
	aws        []AWSPair
	tls        bool
	sigv4      sigv4Modes
	// back searches responses; nil: no value is long enough to look
	// for.
	back *scanner
	// injected: a real value went into the request's headers.
	injected bool
}

// Request replaces the sentinels in r's headers (never in Host or the
// request target: a secret has no business in a URL, which servers log)
// and body, and signs again a SigV4 request signed with a masked key
// pair. A body with a Content-Encoding is not read (its bytes are not
// text), so its sentinels go as they are. It asks for what the response
// can be searched in: an encoding srt can decode, and the whole resource
// (no Range: a real value stored there must not come back in pieces).
func (h *hostInjector) Request(r *http.Request) error {
	if h.back != nil {
		r.Header.Set("Accept-Encoding", readableEncodings(r.Header.Values("Accept-Encoding")))
		r.Header.Del("Range")
		r.Header.Del("If-Range")
		if isUpgrade(r.Header) {
			// No WebSocket extension: permessage-deflate would compress
			// the frames srt searches.
			r.Header.Del("Sec-WebSocket-Extensions")
			// HTTP/2 over an upgraded stream could not be searched; the
			// offer is one a server may ignore.
			if strings.EqualFold(strings.TrimSpace(r.Header.Get("Upgrade")), "h2c") {
				r.Header.Del("Upgrade")
				r.Header.Del("HTTP2-Settings")
			}
		}
	}
	if h.r == nil {
		return nil
	}
	var sign *resign
	if h.tls {
		var err error
		if sign, err = h.planSigV4(r); err != nil {
			return err
		}
	}
	for k, vs := range r.Header {
		for i, v := range vs {
			if nv := h.r.replaceString(v); nv != v {
				vs[i], h.injected = nv, true
			}
		}
		r.Header[k] = vs
	}
	// An upgrade's body goes as it is: once the server answers 101, srt
	// reads nothing more of the connection, so no real value may be
	// where the server could send it back into the upgraded stream (its
	// headers are refused at the 101 instead; see Response).
	if r.Body != nil && r.Body != http.NoBody && r.Header.Get("Content-Encoding") == "" && !isUpgrade(r.Header) {
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

// ResponseHeader searches the headers of an informational (1xx)
// response, in place (see header): a header dropped for an encoded form
// is a refusal the proxy reports.
func (h *hostInjector) ResponseHeader(hdr http.Header) error {
	return h.header(hdr, "an informational response's header")
}

// header searches headers in place: a real value as it is becomes its
// sentinel; a header whose name holds any form of one (in any case: Go
// has canonicalized the name) is dropped; a header whose value holds an
// encoded form is dropped too, and the refusal is returned (the response
// must not go on).
func (h *hostInjector) header(hdr http.Header, where string) error {
	if h.back == nil {
		return nil
	}
	var err error
	for k, vs := range hdr {
		if h.back.inName(k) != nil {
			delete(hdr, k)
			continue
		}
		for i, v := range vs {
			nv, cut := h.back.scrub(v)
			if cut != nil {
				delete(hdr, k)
				err = refusal(fmt.Sprintf("%s carried the real value of %s %s; srt refused the response", where, cut.secret, cut.form))
				break
			}
			vs[i] = nv
		}
	}
	return err
}

// refusal is an error that ends or refuses a response, for the proxy to
// report.
func refusal(reason string) error {
	return &proxy.StatusError{Status: http.StatusBadGateway, Reason: reason}
}

// isUpgrade reports whether a request asks to switch protocols.
func isUpgrade(h http.Header) bool {
	if len(h.Values("Upgrade")) > 0 {
		return true
	}
	for _, v := range h.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

// Response searches a response: its headers, its body (decoded from gzip
// or deflate; the command gets it unencoded) and its trailers; a
// WebSocket's frames. A real value as it is becomes its sentinel; an
// encoded form refuses the response (in a header), or cuts the body off
// before it, or closes the WebSocket, with an error the proxy reports. A
// body in an encoding srt cannot read is refused, and so is an upgrade
// srt cannot search (another protocol, an extension agreed), and one
// whose request carried a real value.
func (h *hostInjector) Response(resp *http.Response) error {
	if resp.StatusCode == http.StatusSwitchingProtocols {
		if h.injected {
			return refusal("srt put a real credential value into this upgrade's request, which the server could send back in ways srt does not search; refused")
		}
		if err := h.header(resp.Header, "the upgrade's response header"); err != nil || h.back == nil {
			return err
		}
		return h.upgraded(resp)
	}
	if h.back == nil {
		return nil
	}
	if err := h.header(resp.Header, "a response header"); err != nil {
		return err
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		return nil
	}
	if r := resp.Request; r != nil && r.Method == http.MethodConnect && r.Header.Get(":protocol") != "" && resp.StatusCode/100 == 2 {
		// HTTP/2's WebSocket (an extended CONNECT, RFC 8441): the body
		// is the server's frames.
		if !strings.EqualFold(r.Header.Get(":protocol"), "websocket") {
			return refusal(fmt.Sprintf("the server opened a %q stream, which srt cannot search for the real values of masked credentials; refused", r.Header.Get(":protocol")))
		}
		resp.Body = readCloser{newWSFilter(h.back, resp.Body, refusal), resp.Body}
		return nil
	}
	body, err := decoded(resp)
	if err != nil {
		return err
	}
	var trailerErr error
	trailers := func() { trailerErr = h.header(resp.Trailer, "a trailer") }
	sr := &scrubReader{st: stream{s: h.back}, src: body, refused: func(n *needle) error {
		return refusal(fmt.Sprintf("the response carried the real value of %s %s; srt cut it off there", n.secret, n.form))
	}}
	resp.Body = readCloser{&atEOF{r: sr, f: trailers, err: &trailerErr}, resp.Body}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return nil
}

// upgraded searches what the server sends after a 101: WebSocket
// frames, and nothing else srt could read.
func (h *hostInjector) upgraded(resp *http.Response) error {
	if proto := resp.Header.Get("Upgrade"); !strings.EqualFold(strings.TrimSpace(proto), "websocket") {
		return refusal(fmt.Sprintf("the server switched to %q, a stream srt cannot search for the real values of masked credentials; refused", proto))
	}
	if ext := resp.Header.Values("Sec-WebSocket-Extensions"); len(ext) > 0 {
		return refusal(fmt.Sprintf("the server agreed to a WebSocket extension srt did not offer (%s), whose frames srt cannot search; refused", strings.Join(ext, ", ")))
	}
	if resp.Body == nil {
		return nil
	}
	conn, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		return refusal("srt cannot read this upgraded stream; refused")
	}
	resp.Body = wsConn{r: newWSFilter(h.back, conn, refusal), WriteCloser: conn}
	return nil
}

// atEOF calls f once its reader has ended (the trailers are in then);
// if err is set then, it ends the reader instead.
type atEOF struct {
	r    io.Reader
	f    func()
	err  *error
	done bool
}

func (a *atEOF) Read(b []byte) (int, error) {
	n, err := a.r.Read(b)
	if err == io.EOF && !a.done {
		a.done = true
		a.f()
	}
	if err == io.EOF && a.err != nil && *a.err != nil {
		err = *a.err
	}
	return n, err
}

// drainAtEOF reads r; at its end, it reads what is left of rest (at most
// maxDrained bytes, dropped) before it says so.
type drainAtEOF struct {
	r, rest io.Reader
}

// maxDrained bounds what is read past the end of a deflate stream.
const maxDrained = 1 << 20

func (d *drainAtEOF) Read(b []byte) (int, error) {
	n, err := d.r.Read(b)
	if err == io.EOF {
		io.Copy(io.Discard, io.LimitReader(d.rest, maxDrained))
	}
	return n, err
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

// decoded is resp's body decoded, and resp made to say so. More than one
// coding is not decoded: refused, as an encoding srt cannot read.
func decoded(resp *http.Response) (io.Reader, error) {
	var codings []string
	for _, v := range resp.Header.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	cannot := func(what string) error {
		return &proxy.StatusError{Status: http.StatusBadGateway,
			Reason: fmt.Sprintf("the response came %s, which srt cannot search for the real values of masked credentials", what)}
	}
	var r io.Reader
	switch {
	case len(codings) == 0:
		return resp.Body, nil
	case len(codings) > 1:
		return nil, cannot(fmt.Sprintf("in %d encodings (%s)", len(codings), strings.Join(codings, ", ")))
	case codings[0] == "gzip" || codings[0] == "x-gzip":
		z, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("the response's gzip body: %w", err)
		}
		r = z
	case codings[0] == "deflate":
		// RFC 9110's deflate is zlib's format; some servers send the raw
		// stream.
		br := bufio.NewReader(resp.Body)
		if head, err := br.Peek(2); err == nil && head[0]&0x0f == 8 && (uint(head[0])<<8|uint(head[1]))%31 == 0 {
			z, err := zlib.NewReader(br)
			if err != nil {
				return nil, fmt.Errorf("the response's deflate body: %w", err)
			}
			r = z
		} else {
			r = flate.NewReader(br)
		}
		// A deflate stream ends before its body does: the body is read
		// to its end, where the trailers come (gzip's reader does that
		// itself, looking for another member).
		r = &drainAtEOF{r: r, rest: br}
	default:
		return nil, cannot(fmt.Sprintf("in the %q encoding", codings[0]))
	}
	resp.Header.Del("Content-Encoding")
	resp.Uncompressed = true
	return r, nil
}
