// Package leakcheck judges, for tests and from outside the sandbox,
// whether what a command received carries a secret: as it is, or in one
// of the forms a server could give it back in — base64 of either
// alphabet at any alignment, hex of either case, percent-encoding, JSON
// escapes. It decodes what it is given instead of encoding the secret,
// so it shares no code and no assumption with the search it judges: a
// run of hex digits is read at both offsets, a run of base64 characters
// at all four, and any mix of escaped and literal characters (or of
// upper- and lower-case hex) decodes to the same bytes.
package leakcheck

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Find returns the first form in which data carries secret ("as it is",
// "hex", "base64", "percent-encoded", "JSON-escaped"), or "" when it
// carries it in none of them.
func Find(data []byte, secret string) string {
	s := []byte(secret)
	switch {
	case len(s) == 0:
		return ""
	case bytes.Contains(data, s):
		return "as it is"
	case inRuns(data, isHex, 2, decodeHex, s):
		return "hex"
	case inRuns(data, isBase64, 4, decodeBase64, s):
		return "base64"
	case bytes.Contains(unpercent(data, false), s), bytes.Contains(unpercent(data, true), s):
		return "percent-encoded"
	case bytes.Contains(unJSON(data), s):
		return "JSON-escaped"
	}
	return ""
}

// inRuns decodes every maximal run of characters in(c) at each of its
// group's offsets and looks for s in what comes out.
func inRuns(data []byte, in func(byte) bool, group int, decode func([]byte) []byte, s []byte) bool {
	for i := 0; i < len(data); {
		if !in(data[i]) {
			i++
			continue
		}
		j := i
		for j < len(data) && in(data[j]) {
			j++
		}
		for off := 0; off < group && i+off < j; off++ {
			run := data[i+off : j]
			if bytes.Contains(decode(run[:len(run)/group*group]), s) {
				return true
			}
		}
		i = j
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func decodeHex(run []byte) []byte {
	out := make([]byte, len(run)/2)
	for i := range out {
		out[i] = hexVal(run[2*i])<<4 | hexVal(run[2*i+1])
	}
	return out
}

func isBase64(c byte) bool { return base64Val(c) >= 0 }

// base64Val reads both alphabets: '+' and '-' are 62, '/' and '_' 63.
func base64Val(c byte) int {
	switch {
	case 'A' <= c && c <= 'Z':
		return int(c - 'A')
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 26
	case '0' <= c && c <= '9':
		return int(c-'0') + 52
	case c == '+' || c == '-':
		return 62
	case c == '/' || c == '_':
		return 63
	}
	return -1
}

func decodeBase64(run []byte) []byte {
	out := make([]byte, 0, len(run)/4*3)
	for i := 0; i+4 <= len(run); i += 4 {
		v := base64Val(run[i])<<18 | base64Val(run[i+1])<<12 | base64Val(run[i+2])<<6 | base64Val(run[i+3])
		out = append(out, byte(v>>16), byte(v>>8), byte(v))
	}
	return out
}

// unpercent decodes every %XX (either case); plus: '+' is a space.
func unpercent(data []byte, plus bool) []byte {
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '%' && i+2 < len(data) && isHex(data[i+1]) && isHex(data[i+2]):
			out = append(out, hexVal(data[i+1])<<4|hexVal(data[i+2]))
			i += 2
		case c == '+' && plus:
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

// unJSON decodes every JSON string escape, wherever it is: \" \\ \/ \b
// \f \n \r \t and \uXXXX (either case; a surrogate pair as one rune).
func unJSON(data []byte) []byte {
	out := make([]byte, 0, len(data))
	short := map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
	u := func(i int) (rune, bool) {
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' || i+1 == len(data) {
			out = append(out, data[i])
			continue
		}
		if c, ok := short[data[i+1]]; ok {
			out = append(out, c)
			i++
			continue
		}
		r, ok := u(i)
		if !ok {
			out = append(out, data[i])
			continue
		}
		i += 5
		if utf16.IsSurrogate(r) {
			if r2, ok := u(i + 1); ok {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					r = pair
					i += 6
				}
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// Frame is one WebSocket frame as a client reads it, its payload
// unmasked.
type Frame struct {
	Fin     bool
	RSV     byte
	Opcode  byte
	Masked  bool
	Payload []byte
}

// Frames reads a stream of WebSocket frames, as a client would, as far
// as they go: rest is what follows the last whole frame.
func Frames(stream []byte) (frames []Frame, rest []byte) {
	for {
		if len(stream) < 2 {
			return frames, stream
		}
		f := Frame{Fin: stream[0]&0x80 != 0, RSV: stream[0] >> 4 & 7, Opcode: stream[0] & 0x0f, Masked: stream[1]&0x80 != 0}
		n, head := uint64(stream[1]&0x7f), 2
		switch n {
		case 126:
			if len(stream) < 4 {
				return frames, stream
			}
			n, head = uint64(binary.BigEndian.Uint16(stream[2:])), 4
		case 127:
			if len(stream) < 10 {
				return frames, stream
			}
			n, head = binary.BigEndian.Uint64(stream[2:]), 10
		}
		var key []byte
		if f.Masked {
			if len(stream) < head+4 {
				return frames, stream
			}
			key, head = stream[head:head+4], head+4
		}
		if uint64(len(stream)-head) < n {
			return frames, stream
		}
		f.Payload = bytes.Clone(stream[head : head+int(n)])
		for i := range f.Payload {
			if key != nil {
				f.Payload[i] ^= key[i%4]
			}
		}
		frames = append(frames, f)
		stream = stream[head+int(n):]
	}
}

// FindInWebSocket judges a WebSocket stream as a client could read it:
// the bytes as they came, the data frames' payloads joined (across
// frames and messages), and each control frame's payload, unmasked.
func FindInWebSocket(stream []byte, secret string) string {
	if form := Find(stream, secret); form != "" {
		return form + " (in the stream as it came)"
	}
	frames, _ := Frames(stream)
	var data, control []byte
	for _, f := range frames {
		if f.Opcode&0x8 == 0 {
			data = append(data, f.Payload...)
		} else {
			control = append(control, f.Payload...)
			if form := Find(f.Payload, secret); form != "" {
				return form + " (in a control frame)"
			}
		}
	}
	if form := Find(data, secret); form != "" {
		return form + " (in the messages joined)"
	}
	if form := Find(control, secret); form != "" {
		return form + " (in the control frames joined)"
	}
	return ""
}

// Form is a secret as a server may give it back.
type Form struct {
	Name string
	Text []byte
}

// Forms returns v in the forms Find reads, made with the standard
// library's encoders (or spelled out here where a server's library
// differs from Go's): base64 of both alphabets, padded and not, with v
// after 0, 1 and 2 other bytes (every alignment of its groups); hex in
// lower, upper and mixed case; percent-encoded as Go's QueryEscape and
// PathEscape, JavaScript's encodeURIComponent, Python's quote, and
// every byte escaped (upper- and lower-case hex); JSON-escaped as Go's
// encoder (with and without HTML escaping), PHP's ("\/") and Python's
// (ensure_ascii). Forms that are v as it is, and repeats, are left out.
func Forms(v []byte) []Form {
	var out []Form
	seen := map[string]bool{string(v): true}
	add := func(name string, text []byte) {
		if !seen[string(text)] {
			seen[string(text)] = true
			out = append(out, Form{name, text})
		}
	}
	for a := range 3 {
		data := append(append([]byte{0xfb, 0xef}[:a:a], v...), 0xff, 0xfe)
		for _, e := range []struct {
			name string
			enc  *base64.Encoding
		}{{"base64", base64.StdEncoding}, {"base64url", base64.URLEncoding}, {"base64-unpadded", base64.RawStdEncoding}, {"base64url-unpadded", base64.RawURLEncoding}} {
			add(fmt.Sprintf("%s after %d bytes", e.name, a), []byte(e.enc.EncodeToString(data)))
		}
	}
	h := hex.EncodeToString(v)
	add("hex", []byte(h))
	add("HEX", []byte(strings.ToUpper(h)))
	mixed := []byte(h)
	for i := range mixed {
		if i%3 == 0 {
			mixed[i] = byte(unicode.ToUpper(rune(mixed[i])))
		}
	}
	add("hex of mixed case", mixed)
	add("QueryEscape", []byte(url.QueryEscape(string(v))))
	add("PathEscape", []byte(url.PathEscape(string(v))))
	percent := func(keep string, digits string) []byte {
		var b []byte
		for _, c := range v {
			if c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))) && keep != "" || strings.IndexByte(keep, c) >= 0 {
				b = append(b, c)
			} else {
				b = append(b, '%', digits[c>>4], digits[c&15])
			}
		}
		return b
	}
	add("encodeURIComponent", percent("-_.!~*'()", "0123456789ABCDEF"))
	add("Python quote", percent("-_.~/", "0123456789ABCDEF"))
	add("every byte percent-encoded", percent("", "0123456789ABCDEF"))
	add("every byte percent-encoded, lower case", percent("", "0123456789abcdef"))
	if utf8.Valid(v) {
		js, _ := json.Marshal(string(v))
		js = js[1 : len(js)-1]
		add("JSON", js)
		var plain bytes.Buffer
		e := json.NewEncoder(&plain)
		e.SetEscapeHTML(false)
		e.Encode(string(v))
		noHTML := bytes.TrimSuffix(plain.Bytes(), []byte("\n"))
		noHTML = noHTML[1 : len(noHTML)-1]
		add("JSON without HTML escapes", noHTML)
		add(`JSON with \/`, bytes.ReplaceAll(noHTML, []byte("/"), []byte(`\/`)))
		var ascii []byte
		for _, r := range string(noHTML) {
			switch {
			case r < 0x80:
				ascii = append(ascii, byte(r))
			case r > 0xffff:
				r1, r2 := utf16.EncodeRune(r)
				ascii = fmt.Appendf(ascii, `\u%04x\u%04x`, r1, r2)
			default:
				ascii = fmt.Appendf(ascii, `\u%04x`, r)
			}
		}
		add("JSON, ASCII only", ascii)
	}
	return out
}
