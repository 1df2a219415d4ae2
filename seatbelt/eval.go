package seatbelt

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// An evaluator of the subset of the profile language srt writes: it reads
// a profile's text back (so the rendering is what is checked, not the
// data it came from) and answers, as Seatbelt does, with the last rule
// that matches an operation on a target; what no rule matches is denied.

// Compiled is a profile read back for evaluation.
type Compiled struct {
	rules []compiledRule
}

type compiledRule struct {
	allow   bool
	ops     []string
	filters []compiledFilter
}

type compiledFilter struct {
	kind  string
	value string
	re    *regexp.Regexp
}

// Compile reads a profile's text.
func Compile(text string) (*Compiled, error) {
	forms, err := read(text)
	if err != nil {
		return nil, err
	}
	c := &Compiled{}
	for _, f := range forms {
		list, ok := f.([]any)
		if !ok || len(list) == 0 {
			return nil, fmt.Errorf("a top-level form that is not a list: %v", f)
		}
		head, _ := list[0].(symbol)
		switch head {
		case "version":
			continue
		case "allow", "deny":
		default:
			return nil, fmt.Errorf("unknown form %q", head)
		}
		r := compiledRule{allow: head == "allow"}
		for _, x := range list[1:] {
			switch x := x.(type) {
			case symbol:
				r.ops = append(r.ops, string(x))
			case []any:
				kind, _ := x[0].(symbol)
				if kind == "with" {
					continue // (with message "...")
				}
				if f, ok := socketFilter(x); ok {
					r.filters = append(r.filters, f)
					continue
				}
				if len(x) != 2 {
					// (remote ip "..."), (require-all ...): no path
					// filter, kept so that the rule matches no path.
					r.filters = append(r.filters, compiledFilter{kind: "other"})
					continue
				}
				var value string
				switch v := x[1].(type) {
				case string:
					value = v
				case symbol:
					value = string(v)
				case []any: // (with message ...) inside a default rule
					continue
				}
				f := compiledFilter{kind: string(kind), value: value}
				if kind == "regex" {
					if f.re, err = regexp.Compile(value); err != nil {
						return nil, fmt.Errorf("regex %q: %v", value, err)
					}
				}
				r.filters = append(r.filters, f)
			default:
				return nil, fmt.Errorf("unexpected %v in a rule", x)
			}
		}
		c.rules = append(c.rules, r)
	}
	return c, nil
}

// socketFilter reads (remote unix-socket (path-literal|path-regex "…"))
// and its local twin as a filter on the socket's path, which Allowed
// matches as it matches a file's.
func socketFilter(x []any) (compiledFilter, bool) {
	if len(x) != 3 {
		return compiledFilter{}, false
	}
	side, _ := x[0].(symbol)
	what, _ := x[1].(symbol)
	inner, _ := x[2].([]any)
	if side != "remote" && side != "local" || what != "unix-socket" || len(inner) != 2 {
		return compiledFilter{}, false
	}
	kind, _ := inner[0].(symbol)
	value, _ := inner[1].(string)
	switch kind {
	case "path-literal":
		return compiledFilter{kind: "literal", value: value}, true
	case "path-regex":
		re, err := regexp.Compile(value)
		if err != nil {
			return compiledFilter{}, false
		}
		return compiledFilter{kind: "regex", value: value, re: re}, true
	}
	return compiledFilter{}, false
}

// Allowed answers whether op (as "file-read-data") is allowed on path: a
// file's, or a Unix socket's for network-outbound and network-bind.
func (c *Compiled) Allowed(op, path string) bool {
	allowed := false
	for _, r := range c.rules {
		if r.matches(op, path) {
			allowed = r.allow
		}
	}
	return allowed
}

func (r compiledRule) matches(op, path string) bool {
	opOK := false
	for _, o := range r.ops {
		if o == "default" || o == op || strings.HasSuffix(o, "*") && strings.HasPrefix(op, strings.TrimSuffix(o, "*")) {
			opOK = true
		}
	}
	if !opOK {
		return false
	}
	if len(r.filters) == 0 {
		return true
	}
	for _, f := range r.filters {
		switch f.kind {
		case "literal":
			if path == f.value {
				return true
			}
		case "subpath":
			if path == f.value || f.value == "/" || strings.HasPrefix(path, f.value+"/") {
				return true
			}
		case "regex":
			if f.re.MatchString(path) {
				return true
			}
		}
	}
	return false
}

type symbol string

// read reads the forms of a profile: lists, symbols, strings (with the
// escapes Quote writes), numbers as symbols; ';' starts a comment.
func read(text string) ([]any, error) {
	var stack [][]any
	var top []any
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		case c == '(':
			stack = append(stack, top)
			top = nil
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, errors.New("unbalanced )")
			}
			done := top
			top = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			top = append(top, done)
			i++
		case c == '"':
			s, n, err := unquote(text[i:])
			if err != nil {
				return nil, err
			}
			top = append(top, s)
			i += n
		default:
			j := i
			for j < len(text) && !strings.ContainsRune(" \n\t\r();\"", rune(text[j])) {
				j++
			}
			top = append(top, symbol(text[i:j]))
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, errors.New("unbalanced (")
	}
	return top, nil
}

// unquote reads the string at the start of s and how long it was.
func unquote(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 >= len(s) {
				return "", 0, errors.New("a string ends in a backslash")
			}
			i++
			switch s[i] {
			case '"', '\\':
				b.WriteByte(s[i])
			case 'x':
				if i+2 >= len(s) {
					return "", 0, errors.New("a short \\x escape")
				}
				v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
				if err != nil {
					return "", 0, fmt.Errorf("a bad \\x escape: %v", err)
				}
				b.WriteByte(byte(v))
				i += 2
			default:
				return "", 0, fmt.Errorf("an unknown escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("an unterminated string")
}
