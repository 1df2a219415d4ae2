package credential

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
)

var sentinelRe = regexp.MustCompile(`^fake_value_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}[a-z0-9_-]*$`)

func TestSentinel(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range []int{0, 5, 47, 48, 72, 500} {
		s := NewSentinel(n)
		if !sentinelRe.MatchString(s) {
			t.Errorf("NewSentinel(%d) = %q: not of the spec's form", n, s)
		}
		if want := max(n, 47); len(s) != want {
			t.Errorf("NewSentinel(%d) has %d bytes, want %d", n, len(s), want)
		}
		if seen[s] {
			t.Errorf("NewSentinel repeated %q", s)
		}
		seen[s] = true
	}
}

func build(t *testing.T, c *config.Credentials, env []string, files map[string]string) *Plan {
	t.Helper()
	p, err := Build(Input{Credentials: c, AllowedDomains: []string{"api.example.com:443", "*.example.org"}, Env: env, Home: "/home/u", Cwd: "/work",
		Resolve: func(p string) (string, error) {
			if _, ok := files[p]; !ok {
				return "", fs.ErrNotExist
			}
			return p, nil
		},
		ReadFile: func(p string) ([]byte, error) { return []byte(files[p]), nil }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func envVar(name, mode string) config.CredentialEnvVar {
	return config.CredentialEnvVar{Name: name, CredentialRule: config.CredentialRule{Mode: mode}}
}

func TestEnvVars(t *testing.T) {
	real := strings.Repeat("s", 72)
	db := envVar("DB", "mask")
	db.Extract = `://[^:]+:([^@]+)@`
	nomatch := envVar("NOMATCH", "mask")
	nomatch.Extract = `key=(\w+)`
	nodeny := envVar("NODENY", "mask")
	nodeny.Extract, nodeny.OnExtractNoMatch = `key=(\w+)`, "deny"
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{
		envVar("TOKEN", "mask"), envVar("SHORT", "mask"), envVar("GONE", "deny"), envVar("UNSET", "mask"), db, nomatch, nodeny,
	}}, []string{"TOKEN=" + real, "SHORT=abc", "GONE=x", "DB=postgres://bob:hunter2@db:5432/x", "NOMATCH=plain", "NODENY=plain", "OTHER=1"}, nil)
	env := map[string]string{}
	for _, kv := range p.Env([]string{"TOKEN=" + real, "SHORT=abc", "GONE=x", "DB=postgres://bob:hunter2@db:5432/x", "NOMATCH=plain", "NODENY=plain", "OTHER=1"}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if !sentinelRe.MatchString(env["TOKEN"]) || len(env["TOKEN"]) != len(real) {
		t.Errorf("TOKEN inside = %q", env["TOKEN"])
	}
	if !sentinelRe.MatchString(env["SHORT"]) || len(env["SHORT"]) != 47 {
		t.Errorf("SHORT inside = %q", env["SHORT"])
	}
	if _, ok := env["GONE"]; ok {
		t.Error("a denied variable is set inside")
	}
	if _, ok := env["UNSET"]; ok {
		t.Error("a masked variable unset on the host is set inside")
	}
	if _, ok := env["NODENY"]; ok {
		t.Error("onExtractNoMatch deny left the variable set")
	}
	if m := regexp.MustCompile(`^postgres://bob:(fake_value_[^@]+)@db:5432/x$`).FindStringSubmatch(env["DB"]); m == nil {
		t.Errorf("DB inside = %q", env["DB"])
	}
	if env["NOMATCH"] != "plain" || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "UNPROTECTED") {
		t.Errorf("onExtractNoMatch warn: %q, warnings %q", env["NOMATCH"], p.Warnings)
	}
	if env["OTHER"] != "1" {
		t.Error("an unrelated variable changed")
	}
	for _, kv := range p.Env([]string{"TOKEN=" + real, "DB=postgres://bob:hunter2@db:5432/x"}) {
		if strings.Contains(kv, real) || strings.Contains(kv, "hunter2") {
			t.Errorf("a real value is inside: %q", kv)
		}
	}
	// onExtractNoMatch error stops the run.
	nomatch.OnExtractNoMatch = "error"
	if _, err := Build(Input{Credentials: &config.Credentials{EnvVars: []config.CredentialEnvVar{nomatch}}, Env: []string{"NOMATCH=plain"}}); err == nil {
		t.Error("onExtractNoMatch error: no error")
	}
}

func jwt(header, payload string) string {
	return b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(payload)) + ".c2lnbmF0dXJl"
}

func TestJWT(t *testing.T) {
	token := jwt(`{"alg":"RS256","kid":"k1"}`, `{"iss":"me","sub":"user42","secret":"s3cr3t","n":5}`)
	whole := envVar("WHOLE", "mask")
	whole.Decode = "jwt"
	claims := envVar("CLAIMS", "mask")
	claims.Decode, claims.MaskClaims = "jwt", &[]string{"sub", "secret", "missing"}
	notjwt := envVar("NOTJWT", "mask")
	notjwt.Decode = "jwt"
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{whole, claims, notjwt}},
		[]string{"WHOLE=" + token, "CLAIMS=" + token, "NOTJWT=abc"}, nil)
	parts := strings.Split(p.Set["WHOLE"], ".")
	if len(parts) != 3 || parts[2] != fakeSignature {
		t.Fatalf("WHOLE inside = %q", p.Set["WHOLE"])
	}
	pl, _ := b64.DecodeString(parts[1])
	var fake map[string]any
	if json.Unmarshal(pl, &fake) != nil || !sentinelRe.MatchString(fake["sub"].(string)) {
		t.Errorf("fake token's payload: %s", pl)
	}
	parts = strings.Split(p.Set["CLAIMS"], ".")
	if len(parts) != 3 || parts[0] != strings.Split(token, ".")[0] || parts[2] != fakeSignature {
		t.Fatalf("CLAIMS inside = %q", p.Set["CLAIMS"])
	}
	pl, _ = b64.DecodeString(parts[1])
	var got map[string]any
	if err := json.Unmarshal(pl, &got); err != nil {
		t.Fatal(err)
	}
	if got["iss"] != "me" || got["n"] != float64(5) || !sentinelRe.MatchString(got["sub"].(string)) || !sentinelRe.MatchString(got["secret"].(string)) {
		t.Errorf("masked claims: %s", pl)
	}
	if !strings.HasPrefix(string(pl), `{"iss":"me","sub":"fake_value_`) {
		t.Errorf("claim order changed: %s", pl)
	}
	if _, ok := p.Set["NOTJWT"]; ok || len(p.Warnings) != 1 {
		t.Errorf("a value that is no token: set %q, warnings %q", p.Set["NOTJWT"], p.Warnings)
	}
	// The proxy can put back the whole token and each claim.
	var reals []string
	for _, s := range p.Secrets {
		reals = append(reals, s.Real)
	}
	for _, want := range []string{token, "user42", "s3cr3t"} {
		if !strings.Contains(strings.Join(reals, "\n"), want) {
			t.Errorf("no secret for %q", want)
		}
	}
}

func TestFiles(t *testing.T) {
	files := map[string]string{
		"/home/u/.token":   "token-file-secret-value\n",
		"/work/cfg.json":   `{"password":"hunter2","copy":"hunter2","user":"bob"}`,
		"/work/jwts.txt":   "a=" + jwt(`{"alg":"HS256"}`, `{"sub":"x"}`) + "\n",
		"/work/binary.bin": "\xff\xfe",
	}
	dup := config.CredentialFile{Path: "cfg.json", MaskDuplicates: true, CredentialRule: config.CredentialRule{Mode: "mask", Extract: `"password":"([^"]+)"`}}
	p := build(t, &config.Credentials{Files: []config.CredentialFile{
		{Path: "~/.token", CredentialRule: config.CredentialRule{Mode: "mask"}},
		dup,
		{Path: "jwts.txt", CredentialRule: config.CredentialRule{Mode: "mask", Decode: "jwt"}},
		{Path: "binary.bin", CredentialRule: config.CredentialRule{Mode: "mask"}},
		{Path: "missing", CredentialRule: config.CredentialRule{Mode: "mask"}},
		{Path: "~/.aws/**", CredentialRule: config.CredentialRule{Mode: "deny"}},
	}}, nil, files)
	got := map[string]string{}
	for _, f := range p.Files {
		got[f.Path] = string(f.Content)
	}
	if !sentinelRe.MatchString(got["/home/u/.token"]) {
		t.Errorf(".token inside = %q", got["/home/u/.token"])
	}
	if m := regexp.MustCompile(`^\{"password":"(fake_value_[^"]+)","copy":"(fake_value_[^"]+)","user":"bob"\}$`).FindStringSubmatch(got["/work/cfg.json"]); m == nil || m[1] != m[2] {
		t.Errorf("maskDuplicates: %q", got["/work/cfg.json"])
	}
	if !strings.HasPrefix(got["/work/jwts.txt"], "a=eyJ") || !strings.HasSuffix(got["/work/jwts.txt"], fakeSignature+"\n") {
		t.Errorf("jwts.txt inside = %q", got["/work/jwts.txt"])
	}
	for _, f := range p.Files {
		for real := range files {
			if strings.Contains(string(f.Content), strings.TrimSpace(files[real])) {
				t.Errorf("%s holds the real content of %s", f.Path, real)
			}
		}
	}
	var denied []string
	for _, d := range p.DenyRead {
		denied = append(denied, d.Path)
	}
	for _, want := range []string{"/work/binary.bin", "/work/missing", "~/.aws/**"} {
		if !strings.Contains(strings.Join(denied, " "), want) {
			t.Errorf("%s is not hidden: %q", want, denied)
		}
	}
}

func host(t *testing.T, s string) netfilter.Host {
	h, err := netfilter.ParseHost(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestInjector(t *testing.T) {
	real, short := strings.Repeat("R", 60), "abc"
	only := envVar("ONLY", "mask")
	only.InjectHosts = &[]string{"only.example.org"}
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{envVar("TOKEN", "mask"), envVar("SHORT", "mask"), only}},
		[]string{"TOKEN=" + real, "SHORT=" + short, "ONLY=only-secret"}, nil)
	inj := p.Injector()
	tok, sh, on := p.Set["TOKEN"], p.Set["SHORT"], p.Set["ONLY"]

	for _, tc := range []struct {
		host string
		tls  bool
	}{{"api.example.com", false}, {"evil.test", true}} {
		req, _ := http.NewRequest("POST", "https://"+tc.host+"/", strings.NewReader("b="+tok))
		req.Header.Set("Authorization", "Bearer "+tok)
		if err := inj.For(host(t, tc.host), tc.tls).Request(req); err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(req.Body)
		if req.Header.Get("Authorization") != "Bearer "+tok || string(body) != "b="+tok {
			t.Errorf("%s (tls %v) got real values", tc.host, tc.tls)
		}
	}
	req, _ := http.NewRequest("POST", "https://api.example.com/p?q="+tok, strings.NewReader("a="+tok+"&b="+sh+"&c="+on))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Add("X-Multi", sh)
	req.Header.Add("X-Multi", "no")
	if err := inj.For(host(t, "api.example.com"), true).Request(req); err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("Authorization") != "Bearer "+real || req.Header.Values("X-Multi")[0] != short {
		t.Errorf("headers: %v", req.Header)
	}
	if !strings.Contains(req.URL.RawQuery, tok) {
		t.Errorf("the request target was changed: %s", req.URL)
	}
	body, _ := io.ReadAll(req.Body)
	if string(body) != "a="+real+"&b="+short+"&c="+on {
		t.Errorf("body: %q", body)
	}
	if req.ContentLength != -1 {
		t.Errorf("a body whose length changes keeps Content-Length %d", req.ContentLength)
	}
	// A credential with its own injectHosts goes there alone.
	req, _ = http.NewRequest("GET", "https://only.example.org/", nil)
	req.Header.Set("X", on+" "+tok)
	inj.For(host(t, "only.example.org"), true).Request(req)
	if req.Header.Get("X") != "only-secret "+real {
		t.Errorf("only.example.org got %q", req.Header.Get("X"))
	}
	req, _ = http.NewRequest("GET", "https://x.example.org/", nil)
	req.Header.Set("X", on)
	inj.For(host(t, "x.example.org"), true).Request(req)
	if req.Header.Get("X") != on {
		t.Errorf("x.example.org got %q", req.Header.Get("X"))
	}
	// An encoded body is not read.
	req, _ = http.NewRequest("POST", "https://api.example.com/", strings.NewReader(tok))
	req.Header.Set("Content-Encoding", "gzip")
	inj.For(host(t, "api.example.com"), true).Request(req)
	if body, _ := io.ReadAll(req.Body); string(body) != tok {
		t.Errorf("an encoded body was changed")
	}
}

// The stream replacer agrees with replacing the whole at once, whatever
// the reads' sizes: a sentinel may straddle two reads.
func TestReplaceStream(t *testing.T) {
	pairs := []pair{{[]byte("fake_value_aaaa"), []byte("R1")}, {[]byte("aa_x"), []byte("LONGER-THAN-IT")}, {[]byte("fake_value_aaaa_long"), []byte("R3")}}
	r := newReplacer(pairs)
	inputs := []string{
		"", "fake_value_aaaa", "xxfake_value_aaaa_longyy", "fake_value_aaa", "fake_value_aaaafake_value_aaaa",
		strings.Repeat("z", 40000) + "fake_value_aaaa" + strings.Repeat("z", 70000) + "aa_x",
	}
	for _, in := range inputs {
		want := string(r.replace([]byte(in)))
		for _, chunk := range []int{1, 2, 3, 7, 4096} {
			got, err := io.ReadAll(r.reader(iotest.OneByteReader(chunkReader(in, chunk))))
			if err != nil || string(got) != want {
				t.Errorf("chunk %d of %.40q: got %.60q, want %.60q (%v)", chunk, in, got, want, err)
			}
		}
	}
	if got := string(r.replace([]byte("fake_value_aaaa_long"))); got != "R1_long" {
		t.Errorf("the earliest match, first pair on a tie: %q", got)
	}
}

func chunkReader(s string, n int) io.Reader {
	return &chunks{s: s, n: n}
}

type chunks struct {
	s string
	n int
}

func (c *chunks) Read(b []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	k := copy(b[:min(len(b), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}

func TestReaderError(t *testing.T) {
	r := newReplacer([]pair{{[]byte("abc"), []byte("x")}})
	boom := errors.New("boom")
	_, err := io.ReadAll(r.reader(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(boom))))
	if !errors.Is(err, boom) {
		t.Errorf("the source's error was lost: %v", err)
	}
}

// What an injection host sends back is searched for the real values it
// was given: headers, and bodies plain or gzipped; an encoding srt cannot
// read is refused, and is not asked for.
func TestResponseScrub(t *testing.T) {
	real := strings.Repeat("R", 40)
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{envVar("TOKEN", "mask"), envVar("SHORT", "mask")}},
		[]string{"TOKEN=" + real, "SHORT=abc"}, nil)
	inj := p.Injector().For(host(t, "api.example.com"), true)
	req, _ := http.NewRequest("GET", "https://api.example.com/", nil)
	req.Header.Set("Accept-Encoding", "br, gzip;q=0.5, zstd")
	inj.Request(req)
	if got := req.Header.Get("Accept-Encoding"); got != "gzip;q=0.5" {
		t.Errorf("Accept-Encoding sent: %q", got)
	}
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	io.WriteString(z, "token="+real+" short=abc")
	z.Close()
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Encoding": {"gzip"}, "X-Echo": {real}}, Body: io.NopCloser(&gz)}
	if err := inj.Response(resp); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if want := "token=" + p.Set["TOKEN"] + " short=abc"; string(body) != want || resp.Header.Get("X-Echo") != p.Set["TOKEN"] || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("scrubbed response: %q %v", body, resp.Header)
	}
	resp = &http.Response{StatusCode: 200, Header: http.Header{"Content-Encoding": {"br"}}, Body: io.NopCloser(strings.NewReader(real))}
	if err := inj.Response(resp); err == nil {
		t.Error("a body in an encoding srt cannot read was let through")
	}
}

// What the attack round found: trailers, more than one coding, zlib's
// deflate, Range, upgrades, and responses of hosts that are not
// injection hosts.
func TestResponseScrubEdges(t *testing.T) {
	real := strings.Repeat("R", 40)
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{envVar("TOKEN", "mask")}}, []string{"TOKEN=" + real}, nil)
	tok := p.Set["TOKEN"]
	for _, h := range []string{"api.example.com", "other.test"} {
		inj := p.Injector().For(host(t, h), true)
		req, _ := http.NewRequest("GET", "https://"+h+"/", nil)
		req.Header.Set("Range", "bytes=0-10")
		req.Header.Set("If-Range", "x")
		inj.Request(req)
		if req.Header.Get("Range") != "" || req.Header.Get("If-Range") != "" {
			t.Errorf("%s: Range was sent: the real value could come back in pieces", h)
		}
		// Trailers, once the body has ended.
		resp := &http.Response{StatusCode: 200, Header: http.Header{}, Trailer: http.Header{"Grpc-Message": {"bad " + real}}, Body: io.NopCloser(strings.NewReader("x " + real))}
		if err := inj.Response(resp); err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != "x "+tok || resp.Trailer.Get("Grpc-Message") != "bad "+tok {
			t.Errorf("%s: body %q, trailer %q", h, body, resp.Trailer.Get("Grpc-Message"))
		}
		// 1xx headers.
		hdr := http.Header{"Link": {"<" + real + ">"}}
		inj.ResponseHeader(hdr)
		if hdr.Get("Link") != "<"+tok+">" {
			t.Errorf("%s: 1xx header %q", h, hdr.Get("Link"))
		}
	}
	inj := p.Injector().For(host(t, "api.example.com"), true)
	// Two codings, on two lines or one: refused.
	for _, enc := range [][]string{{"gzip", "gzip"}, {"gzip, br"}} {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Encoding": enc}, Body: io.NopCloser(strings.NewReader(""))}
		if err := inj.Response(resp); err == nil {
			t.Errorf("Content-Encoding %q was let through", enc)
		}
	}
	// zlib's deflate, and the raw stream.
	var zb bytes.Buffer
	zw := zlib.NewWriter(&zb)
	io.WriteString(zw, real)
	zw.Close()
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Encoding": {"deflate"}}, Body: io.NopCloser(&zb)}
	if err := inj.Response(resp); err != nil {
		t.Fatal(err)
	}
	if body, _ := io.ReadAll(resp.Body); string(body) != tok {
		t.Errorf("zlib deflate: %q", body)
	}
	// Trailers after a deflate body (zlib's and the raw stream): they come
	// once the body is read to its end, which the stream's own end is not.
	for _, raw := range []bool{false, true} {
		var db bytes.Buffer
		var w io.WriteCloser = zlib.NewWriter(&db)
		if raw {
			w, _ = flate.NewWriter(&db, flate.DefaultCompression)
		}
		io.WriteString(w, "x")
		w.Close()
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Encoding": {"deflate"}}, Trailer: http.Header{}}
		resp.Body = io.NopCloser(&atEOF{r: &db, f: func() { resp.Trailer.Set("X-Echo", "bad "+real) }})
		if err := inj.Response(resp); err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
		if got := resp.Trailer.Get("X-Echo"); got != "bad "+tok {
			t.Errorf("deflate (raw %v): trailer %q, want it searched", raw, got)
		}
	}
	// An upgrade whose request carried a real value: refused.
	req, _ := http.NewRequest("GET", "https://api.example.com/ws", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	h := p.Injector().For(host(t, "api.example.com"), true)
	h.Request(req)
	if err := h.Response(&http.Response{StatusCode: 101, Header: http.Header{}}); err == nil {
		t.Error("an upgraded stream after an injected handshake was let through")
	}
	req, _ = http.NewRequest("GET", "https://api.example.com/ws", nil)
	h = p.Injector().For(host(t, "api.example.com"), true)
	h.Request(req)
	up := &http.Response{StatusCode: 101, Header: http.Header{"Upgrade": {"websocket"}, "X-Stored": {real}}}
	if err := h.Response(up); err != nil {
		t.Errorf("an upgrade that carried no secret: %v", err)
	}
	if got := up.Header.Get("X-Stored"); got != tok {
		t.Errorf("a 101's headers were not searched: %q", got)
	}
	// An upgrade's body keeps its sentinels (the second attack round:
	// the server wrote the body back into the upgraded stream).
	for _, hdr := range []http.Header{{"Upgrade": {"websocket"}, "Connection": {"Upgrade"}}, {"Connection": {"keep-alive, upgrade"}}} {
		req, _ = http.NewRequest("GET", "https://api.example.com/ws", strings.NewReader("b="+tok))
		req.Header = hdr
		h = p.Injector().For(host(t, "api.example.com"), true)
		h.Request(req)
		if body, _ := io.ReadAll(req.Body); string(body) != "b="+tok {
			t.Errorf("an upgrade's body was sent as %q", body)
		}
	}
	// A header whose name holds the real value, in any case: dropped.
	hdr := http.Header{http.CanonicalHeaderKey("X-" + strings.ToLower(real)): {"1"}, "X-Fine": {"1"}}
	resp = &http.Response{StatusCode: 200, Header: hdr, Body: http.NoBody}
	if err := inj.Response(resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Header) != 1 || resp.Header.Get("X-Fine") != "1" {
		t.Errorf("response headers: %v", resp.Header)
	}
}

// SigV4 requests srt cannot sign again are refused, or passed as they are
// where credentials.sigv4 says "passthrough"; malformed ones are refused.
func TestSigV4Kinds(t *testing.T) {
	keyID, secretKey := "AKIAREALKEYID0000000", "real/secret/key/000000000000000000000000"
	for _, pass := range []bool{false, true} {
		mode := "deny"
		if pass {
			mode = "passthrough"
		}
		p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{envVar("AWS_ACCESS_KEY_ID", "mask"), envVar("AWS_SECRET_ACCESS_KEY", "mask")},
			SigV4: &config.SigV4{Streaming: mode, Presigned: mode, SigV4A: mode}},
			[]string{"AWS_ACCESS_KEY_ID=" + keyID, "AWS_SECRET_ACCESS_KEY=" + secretKey}, nil)
		akid := p.Set["AWS_ACCESS_KEY_ID"]
		auth := "AWS4-HMAC-SHA256 Credential=" + akid + "/20261204/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=abcd"
		for _, tc := range []struct {
			name string
			make func() *http.Request
		}{
			{"streaming", func() *http.Request {
				r, _ := http.NewRequest("PUT", "https://api.example.com/b/k", strings.NewReader("x"))
				r.Header.Set("Authorization", auth)
				r.Header.Set("X-Amz-Date", "20261204T100000Z")
				r.Header.Set("X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
				return r
			}},
			{"presigned", func() *http.Request {
				r, _ := http.NewRequest("GET", "https://api.example.com/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="+akid+"%2F20261204%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=abcd", nil)
				return r
			}},
			{"sigv4a", func() *http.Request {
				r, _ := http.NewRequest("GET", "https://api.example.com/", nil)
				r.Header.Set("Authorization", "AWS4-ECDSA-P256-SHA256 Credential="+akid+"/20261204/s3/aws4_request, SignedHeaders=host, Signature=ab")
				return r
			}},
		} {
			err := p.Injector().For(host(t, "api.example.com"), true).Request(tc.make())
			if pass && err != nil || !pass && err == nil {
				t.Errorf("%s with %s: %v", tc.name, mode, err)
			}
		}
	}
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{envVar("AWS_ACCESS_KEY_ID", "mask"), envVar("AWS_SECRET_ACCESS_KEY", "mask")}},
		[]string{"AWS_ACCESS_KEY_ID=" + keyID, "AWS_SECRET_ACCESS_KEY=" + secretKey}, nil)
	akid := p.Set["AWS_ACCESS_KEY_ID"]
	for name, hdr := range map[string][2]string{
		"no x-amz-date":           {"AWS4-HMAC-SHA256 Credential=" + akid + "/20261204/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=ab", ""},
		"malformed":               {"AWS4-HMAC-SHA256 Credential=" + akid + "/20261204/us-east-1, Signature=zz", "20261204T100000Z"},
		"signed header missing":   {"AWS4-HMAC-SHA256 Credential=" + akid + "/20261204/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-meta-a;x-amz-date, Signature=ab", "20261204T100000Z"},
		"date and scope disagree": {"AWS4-HMAC-SHA256 Credential=" + akid + "/20261205/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=ab", "20261204T100000Z"},
	} {
		r, _ := http.NewRequest("GET", "https://api.example.com/", nil)
		r.Header.Set("Authorization", hdr[0])
		if hdr[1] != "" {
			r.Header.Set("X-Amz-Date", hdr[1])
		}
		if err := p.Injector().For(host(t, "api.example.com"), true).Request(r); err == nil {
			t.Errorf("%s: not refused", name)
		}
	}
	// A key id that is not masked is none of srt's business.
	r, _ := http.NewRequest("GET", "https://api.example.com/", nil)
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAOTHER/20261204/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=ab")
	if err := p.Injector().For(host(t, "api.example.com"), true).Request(r); err != nil || !strings.Contains(r.Header.Get("Authorization"), "AKIAOTHER") {
		t.Errorf("another key id: %v %q", err, r.Header.Get("Authorization"))
	}
}

// What the second attack round found in masked tokens and extracts: a
// listed claim that is not a string (an object, a number) or sits in the
// token's header is masked too; a masked value that appears again
// elsewhere in the token is masked there; an env var's extracted value
// that appears again in the same value is masked there too.
func TestMaskEverywhere(t *testing.T) {
	token := jwt(`{"alg":"RS256","kid":"kid-REALKIDVALUE-77"}`,
		`{"api_key":"claimSecretValue-XYZ987654","aud":"claimSecretValue-XYZ987654","pw":{"x":"objSecretValue-000111"},"num":123456789012,"n":5,"iss":"me"}`)
	claims := envVar("CLAIMS", "mask")
	claims.Decode, claims.MaskClaims = "jwt", &[]string{"api_key", "pw", "num", "kid"}
	dsn := envVar("DSN", "mask")
	dsn.Extract = "postgres://bob:([^@]+)@"
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{claims, dsn}},
		[]string{"CLAIMS=" + token, "DSN=postgres://bob:dbPassw0rd-SECRET@db/x?password=dbPassw0rd-SECRET"}, nil)
	parts := strings.Split(p.Set["CLAIMS"], ".")
	if len(parts) != 3 {
		t.Fatalf("CLAIMS inside = %q", p.Set["CLAIMS"])
	}
	hb, _ := b64.DecodeString(parts[0])
	pl, _ := b64.DecodeString(parts[1])
	inside := string(hb) + string(pl)
	for _, real := range []string{"REALKIDVALUE", "claimSecretValue", "objSecretValue", "123456789012"} {
		if strings.Contains(inside, real) {
			t.Errorf("%s is inside the masked token: %s %s", real, hb, pl)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(pl, &got); err != nil || got["iss"] != "me" || got["n"] != float64(5) {
		t.Errorf("the masked payload: %s (%v)", pl, err)
	}
	if !json.Valid(hb) {
		t.Errorf("the masked header is not JSON: %s", hb)
	}
	if strings.Contains(p.Set["DSN"], "dbPassw0rd-SECRET") {
		t.Errorf("DSN inside = %q", p.Set["DSN"])
	}
	// The proxy still puts the whole token back.
	var found bool
	for _, s := range p.Secrets {
		found = found || s.Real == token && s.Sentinel == p.Set["CLAIMS"]
	}
	if !found {
		t.Error("no secret puts the whole token back")
	}
}

// A paired AWS secret key is never written into a request as text, even
// to its own hosts (the second attack round had a host store it); the key
// id still is, and the request is signed again with the real key.
func TestAWSSecretSignOnly(t *testing.T) {
	keyID, secretKey := "AKIAREALKEYID0000000", "real/secret/key/000000000000000000000000"
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{envVar("AWS_ACCESS_KEY_ID", "mask"), envVar("AWS_SECRET_ACCESS_KEY", "mask")}},
		[]string{"AWS_ACCESS_KEY_ID=" + keyID, "AWS_SECRET_ACCESS_KEY=" + secretKey}, nil)
	if len(p.AWS) != 1 {
		t.Fatalf("the trio did not pair: %+v", p.AWS)
	}
	h := p.Injector().For(host(t, "api.example.com"), true)
	req, _ := http.NewRequest("POST", "https://api.example.com/store", strings.NewReader("k="+p.Set["AWS_SECRET_ACCESS_KEY"]))
	req.Header.Set("X-Leak", p.Set["AWS_SECRET_ACCESS_KEY"])
	req.Header.Set("X-Id", p.Set["AWS_ACCESS_KEY_ID"])
	if err := h.Request(req); err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	if strings.Contains(string(body)+req.Header.Get("X-Leak"), secretKey) {
		t.Errorf("the secret key was written into the request: %q %q", body, req.Header.Get("X-Leak"))
	}
	if req.Header.Get("X-Id") != keyID {
		t.Errorf("the key id was not put in: %q", req.Header.Get("X-Id"))
	}
}

// The third attack round's spellings: a copy of a masked claim written as
// JSON may write it (\u escapes, "\/", characters Go would escape), a
// numeric claim copied as a number, and a claim's value outside its token
// in the same variable.
func TestMaskEverywhereSpellings(t *testing.T) {
	token := jwt(`{"alg":"RS256"}`,
		`{"a":"sk&live-AMPSECRET-1234","b":"sk&live-AMPSECRET-1234","c":"path/SLASHSECRET-5678","d":"path\/SLASHSECRET-5678","e":"UESCSECRET-9999abcd","f":"\u0055ESCSECRET-9999abcd","n":123456789012,"m":[123456789012]}`)
	claims := envVar("CLAIMS", "mask")
	claims.Decode, claims.MaskClaims = "jwt", &[]string{"a", "c", "e", "n"}
	outside := envVar("OUTSIDE", "mask")
	outside.Extract, outside.Decode, outside.MaskClaims = `tok=(\S+)`, "jwt", &[]string{"a"}
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{claims, outside}},
		[]string{"CLAIMS=" + token, "OUTSIDE=tok=" + token + " key=sk&live-AMPSECRET-1234"}, nil)
	pl, _ := b64.DecodeString(strings.Split(p.Set["CLAIMS"], ".")[1])
	var got map[string]any
	if err := json.Unmarshal(pl, &got); err != nil {
		t.Fatalf("the masked payload is not JSON: %s", pl)
	}
	decoded, _ := json.Marshal(got) // every string as Go spells it
	for _, real := range []string{"AMPSECRET", "SLASHSECRET", "ESCSECRET", "123456789012"} {
		if strings.Contains(string(pl), real) || strings.Contains(string(decoded), real) {
			t.Errorf("%s is inside the masked token: %s", real, pl)
		}
	}
	if strings.Contains(p.Set["OUTSIDE"], "AMPSECRET") {
		t.Errorf("a claim's value outside its token: %q", p.Set["OUTSIDE"])
	}
}
