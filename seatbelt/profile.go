// Package seatbelt is the macOS backend's profile: the platform-neutral
// policy (package policy) as a Seatbelt profile, pure data rendered to
// the profile language by one String, and a small evaluator of the
// subset srt emits, so that what a profile means can be tested on any
// host against what the Linux backend enforces for the same settings.
// Nothing here calls macOS; the trampoline that applies a profile is a
// file of its own.
package seatbelt

import (
	"strings"
)

// Action is what a rule does.
type Action string

const (
	Allow Action = "allow"
	Deny  Action = "deny"
)

// Filter narrows a rule to some of its operation's targets.
type Filter struct {
	// Kind is the filter's name: "literal", "subpath" and "regex"
	// (paths), "global-name" and "global-name-prefix" (Mach services),
	// "local ip" and "remote ip" (network), "target", "socket-domain",
	// "vnode-type", "iokit-user-client-class", "sysctl-name" and
	// "sysctl-name-prefix".
	Kind  string `json:"kind"`
	Value string `json:"value"`
	// Symbol: Value is a name of the language (same-sandbox, AF_UNIX,
	// DIRECTORY), written as it is; srt writes only fixed ones.
	Symbol bool `json:"symbol,omitempty"`
	// Inner, if set, is the filter's argument in place of Value:
	// (remote unix-socket (path-literal "/p")). All, if set, makes the
	// filter (require-all ...) of its members.
	Inner *Filter  `json:"inner,omitempty"`
	All   []Filter `json:"all,omitempty"`
}

// render writes f in the profile language.
func (f Filter) render() string {
	switch {
	case len(f.All) > 0:
		parts := make([]string, len(f.All))
		for i, a := range f.All {
			parts[i] = a.render()
		}
		return "(require-all " + strings.Join(parts, " ") + ")"
	case f.Inner != nil:
		return "(" + f.Kind + " " + f.Inner.render() + ")"
	case f.Symbol && isSymbol(f.Value):
		return "(" + f.Kind + " " + f.Value + ")"
	}
	return "(" + f.Kind + " " + Quote(f.Value) + ")"
}

// Rule is one line of a profile: an action on operations, for targets
// that match any of its filters (all targets with none).
type Rule struct {
	Action  Action   `json:"action"`
	Ops     []string `json:"ops"`
	Filters []Filter `json:"filters,omitempty"`
	// Why is the setting behind the rule, rendered as a comment.
	Why string `json:"why,omitempty"`
}

// Profile is a whole profile. Seatbelt applies the last rule that
// matches; what none matches is denied, with the message Tag (by which
// srt tells its commands' denials apart in the system log).
type Profile struct {
	Tag   string `json:"tag"`
	Rules []Rule `json:"rules"`
}

// String renders p in the profile language.
func (p *Profile) String() string {
	var b strings.Builder
	b.WriteString("(version 1)\n")
	b.WriteString("(deny default (with message " + Quote(p.Tag) + "))\n")
	for _, r := range p.Rules {
		b.WriteString(r.String())
	}
	return b.String()
}

// String renders r in the profile language: its comment line, if any,
// and the rule, each ending in a newline.
func (r Rule) String() string {
	var b strings.Builder
	if r.Why != "" {
		b.WriteString("; " + comment(r.Why) + "\n")
	}
	b.WriteString("(" + string(r.Action))
	for _, op := range r.Ops {
		b.WriteString(" " + op)
	}
	for _, f := range r.Filters {
		b.WriteString(" " + f.render())
	}
	b.WriteString(")\n")
	return b.String()
}

// comment makes s one comment line: a newline would end the comment and
// make the rest of s profile text.
func comment(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == 0x85 {
			return ' '
		}
		return r
	}, s)
}

// isSymbol says whether s can be written as a name of the language.
func isSymbol(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
