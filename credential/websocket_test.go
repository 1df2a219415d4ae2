package credential

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/srt-go/srt/internal/leakcheck"
)

// wsFrame is one frame as a server (or a hostile one) writes it.
func wsFrame(fin bool, rsv, op byte, key []byte, payload []byte) []byte {
	b := []byte{op | rsv<<4, 0}
	if fin {
		b[0] |= 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b[1] = byte(n)
	case n < 1<<16:
		b[1] = 126
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b[1] = 127
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	p := bytes.Clone(payload)
	if key != nil {
		b[1] |= 0x80
		b = append(b, key...)
		for i := range p {
			p[i] ^= key[i%4]
		}
	}
	return append(b, p...)
}

// upstream is the server's side of an upgraded connection: what it
// sends, and what it was sent.
type upstream struct {
	r    io.Reader
	sent bytes.Buffer
}

func (u *upstream) Read(b []byte) (int, error)  { return u.r.Read(b) }
func (u *upstream) Write(b []byte) (int, error) { return u.sent.Write(b) }
func (u *upstream) Close() error                { return nil }

// upgraded has inj read a WebSocket upgrade whose server sends stream,
// and returns what the command reads of it (nil, err when refused).
func upgraded(t *testing.T, inj interface {
	Request(*http.Request) error
	Response(*http.Response) error
}, stream io.Reader) ([]byte, error) {
	t.Helper()
	req, _ := http.NewRequest("GET", "https://api.example.com/ws", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	if err := inj.Request(req); err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{StatusCode: 101, Header: http.Header{"Upgrade": {"websocket"}, "Connection": {"Upgrade"}}, Body: &upstream{r: stream}, Request: req}
	if err := inj.Response(resp); err != nil {
		return nil, err
	}
	return readAll(resp.Body)
}

// A stored value comes back in a WebSocket the command opened with no
// sentinel in its handshake: in frames masked or not, fragmented at any
// point (with a ping between the fragments), split across reads, in a
// control frame, in each encoded form, split between two messages. The
// command reads it in no form: frames are searched as bodies are.
func TestStoredValueComesBackInWebSocket(t *testing.T) {
	p, secrets := comeback(t)
	key := []byte{0x5a, 0x01, 0xfe, 0x33}
	for _, s := range secrets {
		inj := p.Injector().For(host(t, "other.test"), true)
		for _, f := range forms(s.Real) {
			payload := append(append([]byte(`{"stored":"`), f.Text...), `"}`...)
			streams := map[string][]byte{
				"one frame":    wsFrame(true, 0, 1, nil, payload),
				"masked":       wsFrame(true, 0, 2, key, payload),
				"in a ping":    append(wsFrame(true, 0, 9, nil, f.Text), wsFrame(true, 0, 1, nil, []byte("after"))...),
				"in a close":   wsFrame(true, 0, 8, nil, append([]byte{0x03, 0xe8}, f.Text...)),
				"long frame":   wsFrame(true, 0, 1, nil, append(bytes.Repeat([]byte("."), 70000), payload...)),
				"three frames": append(append(wsFrame(false, 0, 1, nil, payload[:12]), wsFrame(false, 0, 0, key, payload[12:15])...), wsFrame(true, 0, 0, nil, payload[15:])...),
			}
			for i := 1; i < len(payload); i++ {
				streams[fmt.Sprintf("fragmented at %d", i)] = append(append(wsFrame(false, 0, 1, key, payload[:i]), wsFrame(true, 0, 9, nil, []byte("p"))...), wsFrame(true, 0, 0, nil, payload[i:])...)
				streams[fmt.Sprintf("two messages split at %d", i)] = append(wsFrame(true, 0, 1, nil, payload[:i]), wsFrame(true, 0, 1, nil, payload[i:])...)
			}
			for i := 1; i < len(f.Text); i++ {
				streams[fmt.Sprintf("two pings split at %d", i)] = append(wsFrame(true, 0, 9, nil, f.Text[:i]), wsFrame(true, 0, 9, nil, f.Text[i:])...)
			}
			for name, stream := range streams {
				for how, src := range map[string]io.Reader{"whole": bytes.NewReader(stream), "a byte at a time": iotest.OneByteReader(bytes.NewReader(stream))} {
					out, err := upgraded(t, inj, src)
					if form := leakcheck.FindInWebSocket(out, s.Real); form != "" {
						t.Fatalf("%s %s, %s, %s: the command read it %s", s.Name, f.Name, name, how, form)
					}
					frames, rest := leakcheck.Frames(out)
					if len(rest) > 0 {
						t.Fatalf("%s %s, %s, %s: the command got a broken frame: %q", s.Name, f.Name, name, how, rest)
					}
					var data []byte
					for _, fr := range frames {
						if fr.Masked || fr.RSV != 0 {
							t.Fatalf("%s %s, %s, %s: the command got a masked frame or one with reserved bits", s.Name, f.Name, name, how)
						}
						if fr.Opcode < 8 {
							data = append(data, fr.Payload...)
						}
					}
					if name == "one frame" && f.Name == "as it is" && (err != nil || !bytes.Contains(data, []byte(s.Sentinel))) {
						t.Fatalf("%s as it is, one frame: %q (%v); want its sentinel", s.Name, out, err)
					}
				}
			}
		}
	}
}

// What srt cannot search is refused: a compressed frame (an extension
// srt does not let the two ends agree on), an upgrade to another
// protocol, a 101 that names an extension. The rest of the upgrade is as
// before: what the command sends goes to the server as it is.
func TestWebSocketUnsearchable(t *testing.T) {
	p, secrets := comeback(t)
	real := secrets[0].Real
	inj := p.Injector().For(host(t, "api.example.com"), true)
	var deflated bytes.Buffer
	z, _ := flate.NewWriter(&deflated, flate.BestCompression)
	io.WriteString(z, real)
	z.Flush()
	out, err := upgraded(t, inj, bytes.NewReader(wsFrame(true, 4, 1, nil, bytes.TrimSuffix(deflated.Bytes(), []byte{0, 0, 0xff, 0xff}))))
	frames, _ := leakcheck.Frames(out)
	for _, f := range frames {
		if f.RSV != 0 {
			t.Errorf("a compressed frame was handed to the command (%v)", err)
		}
	}
	req, _ := http.NewRequest("GET", "https://api.example.com/ws", nil)
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")
	if err := inj.Request(req); err != nil {
		t.Fatal(err)
	}
	if got := req.Header.Get("Sec-WebSocket-Extensions"); got != "" {
		t.Errorf("the offer of an extension went upstream: %q", got)
	}
	for _, hdr := range []http.Header{
		{"Upgrade": {"websocket"}, "Sec-Websocket-Extensions": {"permessage-deflate"}},
		{"Upgrade": {"tcp"}},
		{"Upgrade": {"h2c"}},
	} {
		resp := &http.Response{StatusCode: 101, Header: hdr, Body: &upstream{r: strings.NewReader(real)}, Request: req}
		if err := inj.Response(resp); err == nil {
			t.Errorf("a 101 with %v was let through unsearched", hdr)
		}
	}
	// What the command writes goes upstream as it is.
	up := &upstream{r: strings.NewReader("")}
	resp := &http.Response{StatusCode: 101, Header: http.Header{"Upgrade": {"websocket"}}, Body: up, Request: req}
	if err := inj.Response(resp); err != nil {
		t.Fatal(err)
	}
	w, ok := resp.Body.(io.Writer)
	if !ok {
		t.Fatal("the upgraded body cannot be written to")
	}
	frame := wsFrame(true, 0, 1, []byte{1, 2, 3, 4}, []byte("hello"))
	if _, err := w.Write(frame); err != nil || !bytes.Equal(up.sent.Bytes(), frame) {
		t.Errorf("what the command wrote: %q, %v", up.sent.Bytes(), err)
	}
	// HTTP/2's WebSocket (an extended CONNECT, RFC 8441): its response
	// body is the server's frames.
	req, _ = http.NewRequest("CONNECT", "https://api.example.com/ws", nil)
	req.Header.Set(":protocol", "websocket")
	resp = &http.Response{StatusCode: 200, Header: http.Header{}, Request: req,
		Body: io.NopCloser(bytes.NewReader(wsFrame(true, 0, 1, []byte{9, 9, 9, 9}, []byte(real))))}
	if err := inj.Response(resp); err == nil {
		out, _ := readAll(resp.Body)
		if form := leakcheck.FindInWebSocket(out, real); form != "" {
			t.Errorf("HTTP/2 WebSocket: the command read it %s", form)
		}
	}
}
