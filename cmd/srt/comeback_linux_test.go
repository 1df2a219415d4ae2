package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/leakcheck"
	"github.com/srt-go/srt/internal/testenv"
)

// hoard is a hostile origin for issue #34 item 3: it keeps the value it
// was sent (/store) and gives it back later (/get, /ws), as it is or
// encoded (form: an index into forms), in the ways a response can come:
// one write, chunks split inside the value, gzip, Server-Sent Events,
// WebSocket frames masked or not, fragmented, or a few bytes per write.
type hoard struct {
	mu     sync.Mutex
	stored []byte
}

// forms are the stored value as it is and in every encoded form.
func (h *hoard) forms() []leakcheck.Form {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]leakcheck.Form{{Name: "as it is", Text: bytes.Clone(h.stored)}}, leakcheck.Forms(h.stored)...)
}

func (h *hoard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/store" {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.stored = bytes.TrimPrefix(body, []byte("v="))
		h.mu.Unlock()
		io.WriteString(w, "stored\n")
		return
	}
	forms := h.forms()
	i, err := strconv.Atoi(r.URL.Query().Get("form"))
	if err != nil || i < 0 || i >= len(forms) {
		http.Error(w, "no such form", 404)
		return
	}
	text := forms[i].Text
	content := append(append([]byte(`{"stored":"`), text...), `"}`...)
	// The pieces of content, split inside the value at three points.
	head := len(`{"stored":"`)
	cuts := []int{head + len(text)/3, head + len(text)/2 + 1, head + len(text)*2/3 + 2}
	pieces := [][]byte{content[:cuts[0]], content[cuts[0]:cuts[1]], content[cuts[1]:cuts[2]], content[cuts[2]:]}
	flush := func() {
		w.(http.Flusher).Flush()
		time.Sleep(3 * time.Millisecond)
	}
	how := r.URL.Query().Get("how")
	switch r.URL.Path {
	case "/get":
		switch how {
		case "plain":
			w.Header().Set("Content-Length", strconv.Itoa(len(content)))
			w.Write(content)
		case "chunked", "sse":
			if how == "sse" {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: stored\ndata: ")
			}
			for _, p := range pieces {
				w.Write(p)
				flush()
			}
			if how == "sse" {
				io.WriteString(w, "\n\n")
			}
		case "gzip":
			w.Header().Set("Content-Encoding", "gzip")
			z := gzip.NewWriter(w)
			for _, p := range pieces {
				z.Write(p)
				z.Flush()
				flush()
			}
			z.Close()
		}
	case "/ws":
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
		rw.Flush()
		frame := func(fin bool, op byte, masked bool, p []byte) []byte {
			b := []byte{op, 0}
			if fin {
				b[0] |= 0x80
			}
			if len(p) < 126 {
				b[1] = byte(len(p))
			} else {
				b[1] = 126
				b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
			}
			p = bytes.Clone(p)
			if masked {
				key := []byte{0x37, 0xfa, 0x21, 0x3d}
				b[1] |= 0x80
				b = append(b, key...)
				for i := range p {
					p[i] ^= key[i%4]
				}
			}
			return append(b, p...)
		}
		var stream []byte
		switch how {
		case "unmasked", "split":
			stream = frame(true, 1, false, content)
		case "masked":
			stream = frame(true, 1, true, content)
		case "fragmented":
			stream = frame(false, 1, false, pieces[0])
			stream = append(stream, frame(false, 0, true, pieces[1])...)
			stream = append(stream, frame(true, 9, false, []byte("ping"))...)
			stream = append(stream, frame(false, 0, false, pieces[2])...)
			stream = append(stream, frame(true, 0, false, pieces[3])...)
		}
		step := len(stream)
		if how == "split" {
			step = 5
		}
		for len(stream) > 0 {
			n := min(step, len(stream))
			c.Write(stream[:n])
			stream = stream[n:]
			time.Sleep(time.Millisecond)
		}
	}
}

// A value the command had an injection host store comes back later, from
// that host or another, in every form of leakcheck.Forms and every way a
// response can come (HTTP/1.1 and HTTP/2, chunks split inside the value,
// gzip, Server-Sent Events, WebSocket frames masked, fragmented, or a few
// bytes per TCP write): the command's output carries it in no form, the
// value as it is comes back as its sentinel, and every response cut off
// for an encoded form is a violation srt reports.
func TestCredentialsComeBack(t *testing.T) {
	requireCurl(t)
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		h := &hoard{}
		cfg, caFile := testPKI(t)
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h, TLSConfig: cfg}
		go srv.ServeTLS(ln, "", "")
		t.Cleanup(func() { srv.Close() })
		port := ln.Addr().(*net.TCPAddr).Port
		real := `s3cr+t/` + secret("")[:24] + `"<&>\ é~=`
		nforms := len(leakcheck.Forms([]byte(real))) + 1
		settings := map[string]any{
			"network":    map[string]any{"allowedDomains": []string{"127.0.0.1", "localhost"}, "deniedDomains": []string{}, "tlsTerminate": map[string]any{}},
			"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
			"credentials": map[string]any{"envVars": []any{
				map[string]any{"name": "SRT_TEST_TOKEN", "mode": "mask", "injectHosts": []string{"127.0.0.1"}},
			}},
		}
		var script strings.Builder
		fmt.Fprintf(&script, `c() { curl -sS --noproxy '' --max-time 10 "$@"; echo " rc=$?"; }
c --data-binary "v=$SRT_TEST_TOKEN" https://127.0.0.1:%d/store
`, port)
		for i := range nforms {
			for _, how := range []string{"plain", "chunked", "gzip", "sse"} {
				fmt.Fprintf(&script, "echo '== %d %s'; c --http1.1 --compressed 'https://localhost:%d/get?form=%d&how=%s'\n", i, how, port, i, how)
			}
			fmt.Fprintf(&script, "echo '== %d h2'; c --http2 'https://127.0.0.1:%d/get?form=%d&how=chunked'\n", i, port, i)
			for _, how := range []string{"unmasked", "masked", "fragmented", "split"} {
				fmt.Fprintf(&script, "echo '== ws %d %s'; curl -sS --noproxy '' --http1.1 -N --max-time 10 -H 'Upgrade: websocket' -H 'Connection: Upgrade' "+
					"-H 'Sec-WebSocket-Version: 13' -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' 'https://localhost:%d/ws?form=%d&how=%s' | base64 -w0; echo\n", i, how, port, i, how)
			}
		}
		script.WriteString("exit 1\n")
		data, _ := json.Marshal(settings)
		cfgFile := filepath.Join(filepath.Dir(b.W), "settings-comeback.json")
		if err := os.WriteFile(cfgFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
		vfile := filepath.Join(filepath.Dir(b.W), "violations.jsonl")
		r := b.exec(nil, []string{"NOSETTINGS", "SSL_CERT_FILE=" + caFile, "SRT_TEST_TOKEN=" + real}, "--settings", cfgFile, "--violations", vfile, "-c", script.String())
		h.mu.Lock()
		stored := string(h.stored)
		h.mu.Unlock()
		if stored != real {
			t.Fatalf("the injection host stored %.20q, not the real value:\n%s", stored, r.stderr)
		}
		out := r.stdout + r.stderr
		if form := leakcheck.Find([]byte(out), real); form != "" {
			t.Errorf("the command's output carries the real value %s", form)
		}
		sentinels := 0
		for _, block := range strings.Split(r.stdout, "== ")[1:] {
			name, body, _ := strings.Cut(block, "\n")
			if strings.Contains(body, "fake_value_") {
				sentinels++
			}
			if !strings.HasPrefix(name, "ws ") {
				continue
			}
			stream, err := base64.StdEncoding.DecodeString(strings.TrimSpace(body))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if form := leakcheck.FindInWebSocket(stream, real); form != "" {
				t.Errorf("%s: the command read the real value %s", name, form)
			}
			if strings.HasSuffix(name, " 0 unmasked") {
				if frames, _ := leakcheck.Frames(stream); len(frames) == 0 || !bytes.Contains(frames[0].Payload, []byte("fake_value_")) {
					t.Errorf("%s: the value as it is did not come back as its sentinel: %q", name, stream)
				}
			}
		}
		// The value as it is, by HTTP in five ways (its sentinel).
		if sentinels < 5 {
			t.Errorf("the value as it is came back as its sentinel in %d responses, want 5 or more:\n%.3000s", sentinels, r.stdout)
		}
		vs, _ := os.ReadFile(vfile)
		for _, want := range []string{"base64", "hex", "percent-encoded", "JSON-escaped", "WebSocket"} {
			if !strings.Contains(string(vs), want) {
				t.Errorf("no violation says %q:\n%.2000s", want, vs)
			}
		}
	})
}
