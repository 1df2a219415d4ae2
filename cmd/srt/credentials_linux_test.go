package main

import (
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/testenv"
)

// Promise 7, end to end: a masked secret is a sentinel inside, and only
// srt's proxy puts the real value back, for the hosts it belongs to, over
// TLS it terminated and verified. The origin servers here run in the
// test, with a CA only srt is told to trust (SSL_CERT_FILE of srt's own
// environment); what they received is judged here, outside the sandbox.

// origin is a test server that records what it received.
type origin struct {
	mu   sync.Mutex
	seen map[string]*http.Request // by path
	body map[string]string
	// verify, if set, checks a SigV4 signature of a request.
	verify func(r *http.Request, body []byte) string
	sig    map[string]string
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	o.mu.Lock()
	o.seen[r.URL.Path] = r
	o.body[r.URL.Path] = string(body)
	if o.verify != nil {
		o.sig[r.URL.Path] = o.verify(r, body)
	}
	o.mu.Unlock()
	switch r.URL.Path {
	case "/trailer":
		// The echo in a trailer (as a gRPC error message would carry it).
		w.Header().Set("Trailer", "X-Echo")
		io.WriteString(w, "body\n")
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		return
	case "/early":
		// The echo in an informational response's headers.
		w.Header().Set("Link", "<"+r.Header.Get("Authorization")+">")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		io.WriteString(w, "final\n")
		return
	}
	switch r.URL.Path {
	case "/ws":
		// An upgrade that writes the request's body back into the
		// upgraded stream, in a WebSocket text frame.
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		text := fmt.Sprintf("UPGRADED %s\n", body)
		fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81%c%s", len(text), text)
		rw.Flush()
		return
	case "/hdrname":
		// The echo in a header's name.
		w.Header().Set("X-"+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), "1")
		io.WriteString(w, "named\n")
		return
	}
	if r.URL.Path == "/echo" {
		// A server that echoes what it got (an error page, a debug
		// endpoint), gzipped when asked: srt must turn the real value
		// back into the sentinel before the command sees it.
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		text := "echo: " + r.Header.Get("Authorization") + "\n"
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			z := gzip.NewWriter(w)
			io.WriteString(z, text)
			z.Close()
			return
		}
		io.WriteString(w, text)
		return
	}
	fmt.Fprintf(w, "ok %s %d\n", r.URL.Path, len(body))
}

func (o *origin) get(path string) (*http.Request, string, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen[path], o.body[path], o.sig[path]
}

// testPKI makes a CA and a server certificate for localhost and
// 127.0.0.1; it returns the server's TLS config and the CA's PEM file.
func testPKI(t *testing.T, ips ...net.IP) (*tls.Config, string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "srt test origin CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: append([]net.IP{net.IPv4(127, 0, 0, 1)}, ips...), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(testenv.SharedTempDir(t), "origin-ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{"h2", "http/1.1"}}, file
}

// serveOrigin serves o over TLS and plain HTTP on loopback (or at the
// address given).
func serveOrigin(t *testing.T, o *origin, cfg *tls.Config, at ...string) (tlsPort, plainPort int) {
	t.Helper()
	o.seen, o.body, o.sig = map[string]*http.Request{}, map[string]string{}, map[string]string{}
	addr := "127.0.0.1:0"
	if len(at) > 0 {
		addr = at[0]
	}
	for _, useTLS := range []bool{true, false} {
		ln, err := net.Listen("tcp4", addr)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: o}
		if useTLS {
			srv.TLSConfig = cfg
			go srv.ServeTLS(ln, "", "")
			tlsPort = ln.Addr().(*net.TCPAddr).Port
		} else {
			go srv.Serve(ln)
			plainPort = ln.Addr().(*net.TCPAddr).Port
		}
		t.Cleanup(func() { srv.Close() })
	}
	return tlsPort, plainPort
}

func requireCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("requires curl (the independent TLS and SigV4 client; .ci/run installs it)")
	}
}

// runSettings runs srt with a settings document in b, with env.
func (b *box) runSettings(settings any, env []string, script string) result {
	b.t.Helper()
	data, _ := json.Marshal(settings)
	cfg := filepath.Join(filepath.Dir(b.W), "settings-creds.json")
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return b.exec(nil, append([]string{"NOSETTINGS"}, env...), "--settings", cfg, "-c", script)
}

func secret(prefix string) string {
	var r [24]byte
	rand.Read(r[:])
	return prefix + hex.EncodeToString(r[:])
}

// dumpScript prints what the command can find of its secrets: its
// environment, its own and every visible process's environ and command
// line, and every file under its home, working dir, temp dirs and srt's
// run dirs.
const dumpScript = `
echo "== env"; env
echo "== proc"; for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; echo; done
echo "== files"; find "$HOME" "$PWD" "$TMPDIR" "$(dirname "$(dirname "$TMPDIR")")" -type f 2>/dev/null | while read -r f; do cat "$f" 2>/dev/null; done
`

func TestCredentialsMasked(t *testing.T) {
	requireCurl(t)
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		o := &origin{}
		cfg, caFile := testPKI(t)
		tlsPort, plainPort := serveOrigin(t, o, cfg)
		realEnv, realFile, deniedEnv, deniedFile := secret("ENVSECRET"), secret("FILESECRET"), secret("DENIEDENV"), secret("DENIEDFILE")
		b.write("~/.token", realFile)
		b.write("~/.denied", deniedFile)
		settings := map[string]any{
			"network":    map[string]any{"allowedDomains": []string{"127.0.0.1", "localhost"}, "deniedDomains": []string{}, "tlsTerminate": map[string]any{}},
			"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
			"credentials": map[string]any{
				"envVars": []any{
					map[string]any{"name": "SRT_TEST_TOKEN", "mode": "mask", "injectHosts": []string{"127.0.0.1"}},
					map[string]any{"name": "SRT_TEST_DENIED", "mode": "deny"},
				},
				"files": []any{
					map[string]any{"path": "~/.token", "mode": "mask", "injectHosts": []string{"127.0.0.1"}},
					map[string]any{"path": "~/.denied", "mode": "deny"},
				},
			},
		}
		script := fmt.Sprintf(`
echo "TOKEN=$SRT_TEST_TOKEN"
echo "FILE=$(cat ~/.token)"
cat ~/.denied >/dev/null 2>&1 && echo DENIED-FILE-"R"EADABLE
[ -n "${SRT_TEST_DENIED+x}" ] && echo DENIED-VAR-"S"ET
c() { curl -sS --noproxy '' --max-time 20 "$@"; echo " rc=$?"; }
c -H "Authorization: Bearer $SRT_TEST_TOKEN" -H "X-File: $(cat ~/.token)" --data "body=$SRT_TEST_TOKEN" https://127.0.0.1:%[1]d/inject
c --http2 -H "Authorization: Bearer $SRT_TEST_TOKEN" https://127.0.0.1:%[1]d/inject-h2
c -H "Authorization: Bearer $SRT_TEST_TOKEN" https://localhost:%[1]d/other
c -H "Authorization: Bearer $SRT_TEST_TOKEN" http://127.0.0.1:%[2]d/plain
c -i --compressed -H "Authorization: Bearer $SRT_TEST_TOKEN" https://127.0.0.1:%[1]d/echo
c -i -H "Accept-Encoding: br" -H "Authorization: Bearer $SRT_TEST_TOKEN" https://127.0.0.1:%[1]d/echo
c -i --raw --http1.1 -H "Authorization: Bearer $SRT_TEST_TOKEN" https://127.0.0.1:%[1]d/trailer
c -v --http1.1 -H "Authorization: Bearer $SRT_TEST_TOKEN" https://127.0.0.1:%[1]d/early 2>&1
c --http1.1 -H "Upgrade: websocket" -H "Connection: Upgrade" --data "b=$SRT_TEST_TOKEN" https://127.0.0.1:%[1]d/ws
c -i -H "Authorization: Bearer $SRT_TEST_TOKEN" https://127.0.0.1:%[1]d/hdrname
%[3]s`, tlsPort, plainPort, dumpScript)
		r := b.runSettings(settings, []string{"SSL_CERT_FILE=" + caFile, "SRT_TEST_TOKEN=" + realEnv, "SRT_TEST_DENIED=" + deniedEnv}, script)
		out := r.stdout + r.stderr
		for _, real := range []string{realEnv, realFile, deniedEnv, deniedFile} {
			if strings.Contains(strings.ToLower(out), strings.ToLower(real)) { // a header's name is canonicalized
				t.Errorf("a real value (%.12s…) was found inside the sandbox", real)
			}
		}
		if !strings.Contains(r.stdout, "UPGRADED b=fake_value_") || !strings.Contains(r.stdout, "named") {
			t.Errorf("the upgrade or the header-name echo did not run:\n%s", r.stdout)
		}
		for _, bad := range []string{"DENIED-FILE-READABLE", "DENIED-VAR-SET"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s", bad)
			}
		}
		sentinel := regexp.MustCompile(`TOKEN=(fake_value_\S+)`).FindStringSubmatch(r.stdout)
		fileSentinel := regexp.MustCompile(`FILE=(fake_value_\S+)`).FindStringSubmatch(r.stdout)
		if sentinel == nil || fileSentinel == nil || len(sentinel[1]) != len(realEnv) {
			t.Fatalf("the command did not see sentinels of the real values' length:\n%s\n%s", r.stdout, r.stderr)
		}
		for _, path := range []string{"/inject", "/inject-h2"} {
			req, body, _ := o.get(path)
			if req == nil {
				t.Errorf("%s never reached the origin:\n%s", path, r.stdout)
				continue
			}
			if got := req.Header.Get("Authorization"); got != "Bearer "+realEnv {
				t.Errorf("%s: the injection host got Authorization %.40q, want the real value", path, got)
			}
			if path == "/inject" {
				if req.Header.Get("X-File") != realFile || body != "body="+realEnv {
					t.Errorf("%s: file header %.30q, body %.30q: not the real values", path, req.Header.Get("X-File"), body)
				}
			}
		}
		if req, _, _ := o.get("/other"); req == nil || req.Header.Get("Authorization") != "Bearer "+sentinel[1] {
			t.Errorf("an allowed host that is not an injection host did not get the sentinel unchanged: %v", req)
		}
		if req, _, _ := o.get("/plain"); req == nil || req.Header.Get("Authorization") != "Bearer "+sentinel[1] {
			t.Errorf("plain HTTP did not get the sentinel unchanged (no allowPlaintextInject): %v", req)
		}
		if req, _, _ := o.get("/echo"); req == nil || req.Header.Get("Authorization") != "Bearer "+realEnv ||
			strings.Count(r.stdout, "\necho: Bearer "+sentinel[1]) != 2 || !strings.Contains(strings.ToLower(r.stdout), strings.ToLower("X-Echo: Bearer "+sentinel[1])) {
			t.Errorf("an echoing injection host: the command did not get the sentinel back:\n%s", r.stdout)
		}
		for _, want := range []string{"X-Echo: Bearer " + sentinel[1], "Link: <Bearer " + sentinel[1] + ">"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the trailer and 1xx echoes: no %q in\n%s", want, r.stdout)
			}
		}
		// With allowPlaintextInject, plain HTTP gets it too.
		settings["credentials"].(map[string]any)["allowPlaintextInject"] = true
		o.seen = map[string]*http.Request{}
		b.runSettings(settings, []string{"SSL_CERT_FILE=" + caFile, "SRT_TEST_TOKEN=" + realEnv},
			fmt.Sprintf(`curl -sS --noproxy '' -H "Authorization: Bearer $SRT_TEST_TOKEN" http://127.0.0.1:%d/plain`, plainPort))
		if req, _, _ := o.get("/plain"); req == nil || req.Header.Get("Authorization") != "Bearer "+realEnv {
			t.Errorf("allowPlaintextInject: plain HTTP did not get the real value")
		}
	})
}

// A SigV4 request signed with a masked key pair is signed again with the
// real one for its host (an origin verifying with the real secret takes
// it), and not for another; a body too large to hash is refused.
func TestCredentialsSigV4(t *testing.T) {
	requireCurl(t)
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		keyID, secretKey, token := "AKIA"+strings.ToUpper(secret("")[:16]), secret("realsecret"), secret("realtoken")
		o := &origin{verify: func(r *http.Request, body []byte) string { return verifySigV4(r, body, keyID, secretKey) }}
		cfg, caFile := testPKI(t)
		tlsPort, _ := serveOrigin(t, o, cfg)
		settings := map[string]any{
			"network":    map[string]any{"allowedDomains": []string{"127.0.0.1", "localhost"}, "deniedDomains": []string{}, "tlsTerminate": map[string]any{}},
			"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
			"credentials": map[string]any{"envVars": []any{
				map[string]any{"name": "AWS_ACCESS_KEY_ID", "mode": "mask", "injectHosts": []string{"127.0.0.1"}},
				map[string]any{"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask", "injectHosts": []string{"127.0.0.1"}},
				map[string]any{"name": "AWS_SESSION_TOKEN", "mode": "mask", "injectHosts": []string{"127.0.0.1"}},
			}},
		}
		script := fmt.Sprintf(`
s() { curl -sS --noproxy '' --max-time 60 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-security-token: $AWS_SESSION_TOKEN" "$@"; echo " rc=$?"; }
s --data-binary 'hello' https://127.0.0.1:%[1]d/signed
s --data-binary 'hello' https://localhost:%[1]d/elsewhere
head -c 68157440 /dev/zero > "$TMPDIR/big"
s -o /dev/null -w 'big=%%{http_code}' --data-binary @"$TMPDIR/big" https://127.0.0.1:%[1]d/big
`, tlsPort)
		r := b.runSettings(settings, []string{"SSL_CERT_FILE=" + caFile, "AWS_ACCESS_KEY_ID=" + keyID, "AWS_SECRET_ACCESS_KEY=" + secretKey, "AWS_SESSION_TOKEN=" + token}, script)
		if strings.Contains(r.stdout+r.stderr, secretKey) || strings.Contains(r.stdout+r.stderr, keyID) || strings.Contains(r.stdout+r.stderr, token) {
			t.Error("a real key was seen inside")
		}
		req, body, verdict := o.get("/signed")
		if verdict != "ok" || body != "hello" {
			t.Errorf("the origin, verifying with the real secret, says %q (body %q)\n%s\n%s", verdict, body, r.stdout, r.stderr)
		}
		if req == nil || req.Header.Get("X-Amz-Security-Token") != token || !strings.Contains(req.Header.Get("Authorization"), "x-amz-security-token") {
			t.Errorf("the session token did not arrive real and signed: %v", req)
		}
		if req, _, verdict := o.get("/elsewhere"); req == nil || verdict == "ok" || strings.Contains(req.Header.Get("Authorization"), keyID) {
			t.Errorf("a request to a host that is not an injection host was signed again: %q", verdict)
		}
		if !strings.Contains(r.stdout, "big=403") {
			t.Errorf("a 65 MiB signed body was not refused 403:\n%s", r.stdout)
		}
		if req, _, _ := o.get("/big"); req != nil {
			t.Error("the refused body reached the origin")
		}
	})
}

// verifySigV4 checks a header-signed SigV4 request (S3 rules: the path as
// sent) with the real key: "ok", or why not. Written here from the
// specification, so that it shares nothing with srt's signer.
func verifySigV4(r *http.Request, body []byte, keyID, secretKey string) string {
	m := regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$`).FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return "no SigV4 Authorization: " + r.Header.Get("Authorization")
	}
	if m[1] != keyID {
		return "signed with key id " + m[1]
	}
	hash := r.Header.Get("X-Amz-Content-Sha256")
	if hash == "" {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:])
	}
	var canonHeaders strings.Builder
	for _, name := range strings.Split(m[5], ";") {
		v := strings.Join(r.Header.Values(name), ",")
		switch name {
		case "host":
			v = r.Host
		case "content-length":
			v = fmt.Sprint(r.ContentLength)
		}
		fmt.Fprintf(&canonHeaders, "%s:%s\n", name, strings.Join(strings.Fields(v), " "))
	}
	q := r.URL.Query()
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var query []string
	for _, k := range keys {
		for _, v := range q[k] {
			query = append(query, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
	}
	canon := strings.Join([]string{r.Method, r.URL.EscapedPath(), strings.Join(query, "&"), canonHeaders.String(), m[5], hash}, "\n")
	sum := sha256.Sum256([]byte(canon))
	scope := strings.Join([]string{m[2], m[3], m[4], "aws4_request"}, "/")
	toSign := strings.Join([]string{"AWS4-HMAC-SHA256", r.Header.Get("X-Amz-Date"), scope, hex.EncodeToString(sum[:])}, "\n")
	mac := func(key []byte, data string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(data))
		return h.Sum(nil)
	}
	k := mac([]byte("AWS4"+secretKey), m[2])
	k = mac(k, m[3])
	k = mac(k, m[4])
	k = mac(k, "aws4_request")
	if hex.EncodeToString(mac(k, toSign)) != m[6] {
		return "bad signature"
	}
	return "ok"
}

// hostAddr is a non-loopback IPv4 address of this host, which a command
// inside reaches only through the transparent path.
func hostAddr(t *testing.T) net.IP {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.To4()
		}
	}
	t.Skip("requires a non-loopback IPv4 address on this host (the transparent path's destination)")
	return nil
}

// A program that ignores the proxy variables is terminated the same way
// on the transparent path: it gets the real value put in for its host,
// and sees only the sentinel.
func TestCredentialsTransparent(t *testing.T) {
	requireCurl(t)
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		ip := hostAddr(t)
		o := &origin{}
		cfg, caFile := testPKI(t, ip)
		tlsPort, _ := serveOrigin(t, o, cfg, ip.String()+":0")
		real := secret("TRANSPARENT")
		settings := map[string]any{
			"network":     map[string]any{"allowedDomains": []string{ip.String()}, "deniedDomains": []string{}, "tlsTerminate": map[string]any{}},
			"filesystem":  map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
			"credentials": map[string]any{"envVars": []any{map[string]any{"name": "SRT_TEST_TOKEN", "mode": "mask"}}},
		}
		// --noproxy '*': curl goes straight for the address, as a program
		// that knows nothing of proxies does.
		r := b.runSettings(settings, []string{"SSL_CERT_FILE=" + caFile, "SRT_TEST_TOKEN=" + real},
			fmt.Sprintf(`env -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy curl -sS --noproxy '*' --max-time 20 -H "Authorization: Bearer $SRT_TEST_TOKEN" https://%s:%d/direct; echo " rc=$?"`, ip, tlsPort))
		if strings.Contains(r.stdout+r.stderr, real) {
			t.Error("the real value was seen inside")
		}
		req, _, _ := o.get("/direct")
		if req == nil || req.Header.Get("Authorization") != "Bearer "+real {
			t.Errorf("the origin did not get the real value over the transparent path: %v\n%s\n%s", req, r.stdout, r.stderr)
		}
	})
}

// The fallback sandbox keeps secrets out too: a masked variable is a
// sentinel, a masked file is hidden (it cannot be bound over there), and
// the proxy on loopback puts the real value in for its host.
func TestCredentialsFallback(t *testing.T) {
	requireCurl(t)
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		o := &origin{}
		cfg, caFile := testPKI(t)
		tlsPort, _ := serveOrigin(t, o, cfg)
		realEnv, realFile := secret("ENVSECRET"), secret("FILESECRET")
		b.write("~/.token", realFile)
		settings := map[string]any{
			"network":                   map[string]any{"allowedDomains": []string{"127.0.0.1"}, "deniedDomains": []string{}, "tlsTerminate": map[string]any{}},
			"filesystem":                map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
			"enableWeakerNestedSandbox": true,
			"credentials": map[string]any{
				"envVars": []any{map[string]any{"name": "SRT_TEST_TOKEN", "mode": "mask"}},
				"files":   []any{map[string]any{"path": "~/.token", "mode": "mask"}},
			},
		}
		data, _ := json.Marshal(settings)
		cfgFile := filepath.Join(filepath.Dir(b.W), "settings-fallback.json")
		if err := os.WriteFile(cfgFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
		script := fmt.Sprintf(`echo "TOKEN=$SRT_TEST_TOKEN"; cat ~/.token 2>/dev/null || echo "file hidden"
curl -sS --noproxy '' --max-time 20 -H "Authorization: Bearer $SRT_TEST_TOKEN" https://127.0.0.1:%d/fb; echo " rc=$?"`, tlsPort)
		r := b.runNoUserns("", []string{"SSL_CERT_FILE=" + caFile, "SRT_TEST_TOKEN=" + realEnv}, "--settings", cfgFile, "-c", script)
		out := r.stdout + r.stderr
		if strings.Contains(out, realEnv) || strings.Contains(out, realFile) {
			t.Error("a real value was seen inside the fallback sandbox")
		}
		if !strings.Contains(r.stdout, "TOKEN=fake_value_") || !strings.Contains(r.stdout, "file hidden") {
			t.Errorf("the fallback: %q\n%s", r.stdout, r.stderr)
		}
		if req, _, _ := o.get("/fb"); req == nil || req.Header.Get("Authorization") != "Bearer "+realEnv {
			t.Errorf("the fallback's proxy did not put the real value in: %v\n%s\n%s", req, r.stdout, r.stderr)
		}
	})
}
