package backend

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/srt-go/srt/proxy"
)

// Kinds of violation.
const (
	KindNetwork    = "network"
	KindFilesystem = "filesystem"
	KindUnixSocket = "unix-socket"
	KindSyscall    = "syscall"
)

// Violation is one thing the sandbox denied a command.
type Violation struct {
	Time time.Time `json:"time"`
	// CommandID is the attribution key: the Run's ID, or its text when it
	// has none.
	CommandID string `json:"commandId"`
	// Command is the command as the user reads it (Run.Text).
	Command string `json:"command,omitempty"`
	Kind    string `json:"kind"`
	// Target is what was denied: "host:port", a path, a socket family.
	Target string `json:"target"`
	// Operation is what the command tried: "connect", "resolve",
	// "write", "read", "socket".
	Operation string `json:"operation"`
	// Rule is the settings entry that denied, as written; empty when no
	// entry allowed it (the default is to deny).
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason"`
	// Inferred marks a violation read from the command's error output
	// rather than observed where the sandbox denied it.
	Inferred bool `json:"inferred,omitempty"`
}

// Probe reports whether v is a refused socket(AF_UNIX): the C library
// tries a Unix socket (nscd) for nearly every user or host lookup, so
// such a refusal is seldom why a command failed. It is recorded, once a
// run, but left out of AnnotateStderr's block and the CLI's summary.
func (v Violation) Probe() bool { return v.Kind == KindUnixSocket && v.Operation == "socket" }

// String is the violation as one line, in the reference's words where it
// has them: "deny network-outbound github.com:22 (reason)".
func (v Violation) String() string {
	var what string
	switch v.Kind {
	case KindNetwork:
		switch v.Operation {
		case "resolve":
			what = "network-resolve"
		case "http-request", "socks-tunnel":
			what = v.Operation
		default:
			what = "network-outbound"
		}
	case KindFilesystem:
		what = "file-" + v.Operation
	case KindUnixSocket:
		what = "unix-socket"
	default:
		what = v.Operation
	}
	line := "deny " + what + " " + v.Target
	if v.Reason != "" {
		line += " (" + v.Reason + ")"
	}
	return Sanitize(line)
}

// Summary is the violation for a person: what was blocked, by which rule.
func (v Violation) Summary() string {
	s := "blocked: " + v.Operation + " " + v.Target
	switch {
	case v.Rule != "" && v.Reason != "":
		s += fmt.Sprintf(" (%s: %s)", v.Rule, v.Reason)
	case v.Reason != "":
		s += " (" + v.Reason + ")"
	}
	return Sanitize(s)
}

// Sanitize turns control and invisible characters into single spaces and
// drops angle brackets, so that a violation line cannot forge the
// <sandbox_violations> block or a terminal escape.
func Sanitize(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == '<' || r == '>' {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// MarshalLine is v as one JSON line (with the newline).
func (v Violation) MarshalLine() []byte {
	b, _ := json.Marshal(v)
	return append(b, '\n')
}

// FromDecision is the violation of a proxy's denial.
func FromDecision(d proxy.Decision) Violation {
	v := Violation{Kind: KindNetwork, Operation: "connect", Target: hostPort(d.Host, d.Port), Rule: d.Rule, Reason: d.Reason}
	switch d.Protocol {
	case "dns":
		v.Operation, v.Target = "resolve", d.Host
	case proxy.ProtocolHTTPRequest, proxy.ProtocolSOCKSTunnel:
		// A request or tunnel the inspecting proxy refused: the target
		// is "METHOD url", or host:port, as the proxy spelled it.
		v.Operation, v.Target = d.Protocol, d.Host
	}
	if d.Rule != "" {
		v.Rule = "deniedDomains " + `"` + d.Rule + `"`
	}
	if d.Resolved != nil {
		v.Rule = "resolved address"
	}
	return v
}

func hostPort(host string, port uint16) string {
	if port == 0 {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(int(port)))
}
