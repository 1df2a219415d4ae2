package seatbelt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Quote renders s as a string of the profile language: quotes and
// backslashes escaped, every control character and DEL as \xHH, so that no
// path can end the string or the rule early.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ereMeta are the characters a POSIX extended regular expression gives a
// meaning to outside a bracket expression.
const ereMeta = `.[]()*+?{}|^$\`

// LiteralRegex is s as a regular expression that matches s alone.
func LiteralRegex(s string) string { return literalRegex(s) }

// literalRegex is s as a regular expression that matches s alone.
func literalRegex(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(ereMeta, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// GlobRegex translates a glob (spec c.3: "*" a run of non-'/', "**" any
// run, "**/" zero or more directories, "?" one non-'/' character,
// "[...]" a set with no negation, an invalid bracket literal text) into a
// POSIX extended regular expression, anchored, that matches the path
// itself and, with beneath, what lies under it. It writes nothing that
// reads differently as POSIX ERE and as RE2 (no backslash or bracket
// inside a bracket expression), so Go's regexp can check it.
func GlobRegex(pattern string, beneath bool) (string, error) {
	return globRegex(pattern, beneath, literalRegex)
}

// CaselessGlobRegex is GlobRegex whose literal text matches in any case:
// what a deny rule names on a volume that ignores case (APFS's default)
// is reached by every spelling of it.
func CaselessGlobRegex(pattern string, beneath bool) (string, error) {
	return globRegex(pattern, beneath, caseless)
}

func globRegex(pattern string, beneath bool, literal func(string) string) (string, error) {
	if strings.IndexByte(pattern, 0) >= 0 || !utf8.ValidString(pattern) {
		return "", fmt.Errorf("glob %q: not a path", pattern)
	}
	var b strings.Builder
	b.WriteByte('^')
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
			if i+2 < len(pattern) && pattern[i+2] == '/' {
				b.WriteString(`(.*/)?`)
				i += 3
			} else {
				b.WriteString(`.*`)
				i += 2
			}
		case c == '*':
			b.WriteString(`[^/]*`)
			i++
		case c == '?':
			b.WriteString(`[^/]`)
			i++
		case c == '[':
			set, n, ok, err := bracketRegex(pattern[i:])
			if err != nil {
				return "", fmt.Errorf("glob %q: %v", pattern, err)
			}
			if !ok {
				b.WriteString(`\[`)
				i++
				continue
			}
			b.WriteString(set)
			i += n
		default:
			_, n := utf8.DecodeRuneInString(pattern[i:])
			b.WriteString(literal(pattern[i : i+n]))
			i += n
		}
	}
	if beneath {
		b.WriteString(`(/.*)?`)
	}
	b.WriteByte('$')
	return b.String(), nil
}

// bracketRegex translates a "[...]" set at the start of s: ok is false
// when s starts with no valid set (it is then literal text, as in
// package config). Members are one ASCII bracket expression, and an
// alternation for the rest: those special inside a bracket in either
// dialect, and non-ASCII ones (a range of them is refused).
func bracketRegex(s string) (re string, n int, ok bool, err error) {
	end := strings.IndexByte(s[1:], ']')
	if end <= 0 {
		return "", 0, false, nil
	}
	body := []rune(s[1 : end+1])
	var class strings.Builder
	var alts []string
	for i := 0; i < len(body); i++ {
		lo := body[i]
		if i+2 < len(body) && body[i+1] == '-' {
			hi := body[i+2]
			if hi < lo {
				return "", 0, false, nil
			}
			if hi >= utf8.RuneSelf || strings.ContainsRune(`\[]^-`, lo) || strings.ContainsRune(`\[]^-`, hi) {
				if hi >= utf8.RuneSelf || hi-lo > 64 {
					return "", 0, false, fmt.Errorf("the range %c-%c cannot be written for Seatbelt", lo, hi)
				}
				for r := lo; r <= hi; r++ {
					alts = append(alts, literalRegex(string(r)))
				}
			} else {
				class.WriteRune(lo)
				class.WriteByte('-')
				class.WriteRune(hi)
			}
			i += 2
			continue
		}
		if lo >= utf8.RuneSelf || strings.ContainsRune(`\[]^-`, lo) {
			alts = append(alts, literalRegex(string(lo)))
			continue
		}
		class.WriteRune(lo)
	}
	if class.Len() > 0 {
		alts = append(alts, "["+class.String()+"]")
	}
	return "(" + strings.Join(alts, "|") + ")", end + 2, true, nil
}
