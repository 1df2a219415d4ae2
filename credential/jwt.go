package credential

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/srt-go/srt/config"
)

// JSON Web Tokens (decode "jwt"): a token is replaced by one that reads
// as a token to the command — a fake one, or the real one with the listed
// claims masked — and never carries the real signature.

// fakeSignature ends every token srt makes ("srt-fake", base64url).
const fakeSignature = "c3J0LWZha2U"

var b64 = base64.RawURLEncoding

// decodeJWT verifies the shape of a token: three parts, a header that is
// a JSON object with "alg", and a payload that is JSON. It returns the
// header's text and the payload.
func decodeJWT(token string) (header string, payload []byte, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", nil, false
	}
	h, err := b64.DecodeString(strings.TrimRight(parts[0], "="))
	if err != nil {
		return "", nil, false
	}
	var hdr map[string]json.RawMessage
	if json.Unmarshal(h, &hdr) != nil || hdr == nil {
		return "", nil, false
	}
	if _, ok := hdr["alg"]; !ok {
		return "", nil, false
	}
	pl, err := b64.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil || !json.Valid(pl) {
		return "", nil, false
	}
	return parts[0], pl, true
}

// maskJWT masks one token: with no claims listed, a fake token whose
// subject is a sentinel stands in for it; with claims, the token keeps
// its header and payload but each listed top-level claim, in either,
// becomes a sentinel (a claim that is not a string, an object or a
// number, becomes a sentinel string as long as its JSON), every other
// place the masked values appear in the token is masked too, and the
// signature is a fake one. ok is false when token is not a token, or
// has none of the claims.
func maskJWT(token string, claims *[]string, newSecret func(suffix, real string) Secret, suffix string) (string, []Secret, bool) {
	header, payload, ok := decodeJWT(token)
	if !ok {
		return "", nil, false
	}
	if claims == nil {
		fake := b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
			b64.EncodeToString([]byte(`{"sub":"`+NewSentinel(0)+`","exp":9999999999}`)) + "." + fakeSignature
		s := newSecret(suffix, token)
		s.Sentinel = fake
		return fake, []Secret{s}, true
	}
	masked, secrets, ok := maskClaims(payload, *claims, newSecret, suffix)
	if !ok {
		return "", nil, false
	}
	if hb, err := b64.DecodeString(strings.TrimRight(header, "=")); err == nil {
		if mh, hs, ok := maskClaims(hb, *claims, newSecret, suffix+".header"); ok {
			secrets = append(secrets, hs...)
			header = b64.EncodeToString(maskText(mh, secrets))
		} else if other := maskText(hb, secrets); !bytes.Equal(other, hb) {
			header = b64.EncodeToString(other)
		}
	}
	fake := header + "." + b64.EncodeToString(maskText(masked, secrets)) + "." + fakeSignature
	whole := newSecret(suffix, token)
	whole.Sentinel = fake
	return fake, append([]Secret{whole}, secrets...), true
}

// maskText replaces, in a JSON text, every other appearance of a masked
// value (8 bytes and longer, as the search of responses) by its sentinel:
// inside a string however JSON spells it there (each string is decoded,
// searched and, when it held one, written again), and a number that is a
// masked value's JSON. Everything else is left as it is.
func maskText(text []byte, secrets []Secret) []byte {
	var out []byte
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(text) && text[j] != '"' {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(text))
			out = append(out, maskString(text[i:j], secrets)...)
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(text) && strings.IndexByte("0123456789.eE+-", text[j]) >= 0 {
				j++
			}
			lit := text[i:j]
			for _, s := range secrets {
				if len(s.Real) >= minScrubbed && string(lit) == s.Real {
					lit, _ = json.Marshal(s.Sentinel)
					break
				}
			}
			out = append(out, lit...)
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// maskString is a JSON string literal with the masked values in what it
// says replaced by their sentinels (itself when it holds none).
func maskString(lit []byte, secrets []Secret) []byte {
	var str string
	if json.Unmarshal(lit, &str) != nil {
		return lit
	}
	masked := str
	for _, s := range secrets {
		if len(s.Real) >= minScrubbed {
			masked = strings.ReplaceAll(masked, s.Real, s.Sentinel)
		}
	}
	if masked == str {
		return lit
	}
	b, _ := json.Marshal(masked)
	return b
}

// maskClaims replaces the listed top-level claims of a JSON object by
// sentinels, keeping the order and spelling of everything else: a string
// claim's value is its text, any other's its JSON.
func maskClaims(payload []byte, claims []string, newSecret func(suffix, real string) Secret, suffix string) ([]byte, []Secret, bool) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	var out bytes.Buffer
	out.WriteByte('{')
	var secrets []Secret
	first := true
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		key := k.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, false
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(key)
		out.Write(kb)
		out.WriteByte(':')
		var compact bytes.Buffer
		if json.Compact(&compact, raw) != nil {
			return nil, nil, false
		}
		if slices.Contains(claims, key) && compact.String() != "null" {
			real := compact.String()
			var str string
			if json.Unmarshal(raw, &str) == nil {
				real = str
			}
			s := newSecret(suffix+"."+key, real)
			secrets = append(secrets, s)
			vb, _ := json.Marshal(s.Sentinel)
			out.Write(vb)
			continue
		}
		out.Write(compact.Bytes())
	}
	out.WriteByte('}')
	return out.Bytes(), secrets, len(secrets) > 0
}

// jwtWhy says why a value was not masked as a token.
func jwtWhy(value string, claims *[]string) string {
	if _, _, ok := decodeJWT(value); !ok {
		return "the value does not verify as a JWT"
	}
	return fmt.Sprintf("none of the claims %q is present", *claims)
}

// awsPairs pairs masked access keys (spec b.4 awsPairs): the explicit
// pairs, and the standard trio unless a pair names one of its variables.
// A pair counts when its key id and secret are both masked whole and set.
func awsPairs(pairs []config.AWSPair, whole map[string]Secret, warnings []string) ([]AWSPair, []string) {
	specs := slices.Clone(pairs)
	trio := config.AWSPair{AccessKeyIDVar: "AWS_ACCESS_KEY_ID", SecretAccessKeyVar: "AWS_SECRET_ACCESS_KEY", SessionTokenVar: "AWS_SESSION_TOKEN"}
	named := false
	for _, p := range pairs {
		for _, v := range []string{p.AccessKeyIDVar, p.SecretAccessKeyVar, p.SessionTokenVar} {
			named = named || v == trio.AccessKeyIDVar || v == trio.SecretAccessKeyVar || v == trio.SessionTokenVar
		}
	}
	if !named {
		specs = append(specs, trio)
	}
	var out []AWSPair
	for _, p := range specs {
		id, idOK := whole[p.AccessKeyIDVar]
		secret, secretOK := whole[p.SecretAccessKeyVar]
		if !idOK || !secretOK {
			if secretOK && !idOK {
				warnings = append(warnings, fmt.Sprintf("%q is masked but %q is not, so requests signed with the masked secret cannot be signed again with the real one, and will fail upstream; mask both (whole values)", p.SecretAccessKeyVar, p.AccessKeyIDVar))
			}
			continue
		}
		pair := AWSPair{SentinelKeyID: id.Sentinel, KeyID: id.Real, Secret: secret.Real, Hosts: id.Hosts}
		if tok, ok := whole[p.SessionTokenVar]; ok && p.SessionTokenVar != "" {
			pair.SessionToken, pair.SentinelToken = tok.Real, tok.Sentinel
		}
		out = append(out, pair)
	}
	return out, warnings
}

func sortLongestFirst(s []string) {
	slices.SortStableFunc(s, func(a, b string) int { return len(b) - len(a) })
}

func sortSpans[T any](s []T, start func(T) int) {
	slices.SortStableFunc(s, func(a, b T) int { return start(a) - start(b) })
}
