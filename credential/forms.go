package credential

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// The forms of a real value that responses are searched for. A host that
// stored what srt sent it can give it back as it was, or through a
// feature that encodes it: a JSON API escapes it, a URL percent-encodes
// it, a file or a Kubernetes secret comes base64-encoded, a digest view
// shows hex. The value as it is becomes its sentinel again; an encoded
// form cannot (a sentinel of another length would shift every base64
// group after it), so a response that carries one is cut off before it,
// and the refusal reported.
//
// What no list of forms reaches: a value the server encrypts, compresses
// (a git pack, a zip), hashes, breaks into lines (MIME and GitHub's
// contents API wrap base64), cuts into pieces (two messages, two
// responses), or encodes twice or otherwise.

// Names of the forms, as refusals say them.
const (
	formBase64  = "base64"
	formHex     = "hex"
	formPercent = "percent-encoded"
	formJSON    = "JSON-escaped"
)

// needle is one form of one real value.
type needle struct {
	text []byte
	// fold: text matches ignoring ASCII case (hex digits, %2f and %2F,
	// \u00e9 and \u00E9).
	fold bool
	// lead is how many base64 characters before text also carry bits of
	// the value (its first bytes share a group with bytes before it):
	// they are held back, and cut off with it.
	lead int
	// replace is what the value as it is becomes (its sentinel); nil for
	// an encoded form, which cuts the response off.
	replace []byte
	form    string // "" for the value as it is
	secret  string // Secret.Name, for messages
}

// needles returns the forms of s to search responses for, each once: the
// value itself, then base64 (standard and URL-safe alphabets, at each of
// the three alignments of its bytes in the encoded data), hex, percent-
// encodings and JSON escapes as the common encoders write them. Encoded
// forms that are the value as it is are left out (its sentinel replaces
// it there).
func needles(s Secret) []needle {
	real := []byte(s.Real)
	out := []needle{{text: real, replace: []byte(s.Sentinel), secret: s.Name}}
	seen := map[string]bool{}
	add := func(form string, text []byte, fold bool, lead int) {
		key := string(text)
		if fold {
			key = string(bytes.ToLower(text))
		}
		if !seen[key] && !bytes.Equal(text, real) {
			seen[key] = true
			out = append(out, needle{text: text, fold: fold, lead: lead, form: form, secret: s.Name})
		}
	}
	// base64: the characters that encode the value's bytes alone. After
	// a bytes before it in its group (a = 0, 1, 2), the first 3-a bytes
	// (mod 3) share a group with what came before: those characters are
	// the lead, and are not matched.
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for a := range 3 {
			skip := (3 - a) % 3
			whole := (len(real) - skip) / 3 * 3
			if whole < 6 {
				continue
			}
			add(formBase64, []byte(enc.EncodeToString(real[skip:skip+whole])), false, []int{0, 3, 2}[a])
		}
	}
	add(formHex, []byte(hex.EncodeToString(real)), true, 0)
	// Percent-encodings: every byte but the unreserved (RFC 3986; Go's
	// QueryEscape), and as Go's PathEscape, JavaScript's
	// encodeURIComponent and encodeURI and Python's quote leave more as
	// they are, with a space as %20 or '+'; and every byte escaped.
	for _, keep := range []string{"", "$&+,:;=@", "!'()*", ";,/?:@&=+$#!'()*", "/"} {
		for _, plus := range []bool{false, true} {
			add(formPercent, percentEncode(real, unreserved+keep, plus), true, 0)
		}
	}
	add(formPercent, percentEncode(real, "", false), true, 0)
	// JSON escapes, as encoders write them: '"', '\' and control
	// characters always (short forms or \u00XX), and as each may choose,
	// <, > and & (Go's HTML escaping), '/' (PHP), everything not ASCII
	// (Python's ensure_ascii).
	if utf8.Valid(real) {
		for style := range jsonStyles {
			add(formJSON, jsonEscape(real, style), true, 0)
		}
	}
	return out
}

const unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"

// percentEncode escapes every byte of b not in keep as %XX; plus: a
// space is '+'.
func percentEncode(b []byte, keep string, plus bool) []byte {
	const digits = "0123456789ABCDEF"
	var out []byte
	for _, c := range b {
		switch {
		case c == ' ' && plus:
			out = append(out, '+')
		case bytes.IndexByte([]byte(keep), c) >= 0:
			out = append(out, c)
		default:
			out = append(out, '%', digits[c>>4], digits[c&15])
		}
	}
	return out
}

// JSON escaping styles: a set of these bits.
const (
	jsonHTML    = 1 << iota // <, >, & as \u003c, \u003e, \u0026
	jsonSlash               // '/' as \/
	jsonASCII               // every rune past ASCII as \uXXXX
	jsonLongCtl             // \n, \r, \t, \b, \f as \u00XX
	jsonStyles  = 1 << iota // how many styles there are
)

// jsonEscape writes b, valid UTF-8, as inside a JSON string.
func jsonEscape(b []byte, style int) []byte {
	var out []byte
	short := map[rune]string{'\n': `\n`, '\r': `\r`, '\t': `\t`, '\b': `\b`, '\f': `\f`}
	for _, r := range string(b) {
		switch {
		case r == '"' || r == '\\':
			out = append(out, '\\', byte(r))
		case r == '/' && style&jsonSlash != 0:
			out = append(out, `\/`...)
		case short[r] != "" && style&jsonLongCtl == 0:
			out = append(out, short[r]...)
		case r < 0x20, r == 0x2028, r == 0x2029,
			style&jsonHTML != 0 && (r == '<' || r == '>' || r == '&'),
			style&jsonASCII != 0 && r >= 0x80 && r <= 0xffff:
			out = fmt.Appendf(out, `\u%04x`, r)
		case style&jsonASCII != 0 && r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		default:
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}

// asciiEqualFold reports whether a and b are equal ignoring ASCII case.
func asciiEqualFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x != y && lower(x) != lower(y) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
