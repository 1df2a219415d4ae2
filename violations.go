package srt

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
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
		what = "network-outbound"
		if v.Operation == "resolve" {
			what = "network-resolve"
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
	return sanitize(line)
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
	return sanitize(s)
}

// sanitize turns control and invisible characters into single spaces and
// drops angle brackets, so that a violation line cannot forge the
// <sandbox_violations> block or a terminal escape.
func sanitize(s string) string {
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

// ViolationBuffer is how many violations a Sandbox keeps, oldest dropped
// first.
const ViolationBuffer = 1024

// store is the session's ring of violations.
type store struct {
	mu     sync.Mutex
	ring   []Violation
	next   int
	full   bool
	total  int
	ignore map[string][]string
	notify func(Violation)
}

func newStore(ignore map[string][]string, notify func(Violation)) *store {
	return &store{ring: make([]Violation, ViolationBuffer), ignore: ignore, notify: notify}
}

// add records v unless ignoreViolations says not to.
func (s *store) add(v Violation) {
	if v.Time.IsZero() {
		v.Time = time.Now()
	}
	v.Target, v.Reason = sanitize(v.Target), sanitize(v.Reason)
	s.mu.Lock()
	if ignored(s.ignore, v.Command, v.String()) {
		s.mu.Unlock()
		return
	}
	s.ring[s.next] = v
	s.next = (s.next + 1) % len(s.ring)
	s.full = s.full || s.next == 0
	s.total++
	notify := s.notify
	s.mu.Unlock()
	if notify != nil {
		notify(v)
	}
}

// of returns the kept violations of key, oldest first.
func (s *store) of(key string) []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Violation
	n := s.next
	if s.full {
		n = len(s.ring)
	}
	start := 0
	if s.full {
		start = s.next
	}
	for i := range n {
		v := s.ring[(start+i)%len(s.ring)]
		if v.CommandID == key {
			out = append(out, v)
		}
	}
	return out
}

// ignored applies ignoreViolations: a pattern under "*" found in the line
// ignores it; so does a pattern under another key, when that key is found
// in the command's text.
func ignored(rules map[string][]string, command, line string) bool {
	for key, patterns := range rules {
		if key != "*" && (command == "" || !strings.Contains(command, key)) {
			continue
		}
		for _, p := range patterns {
			if p != "" && strings.Contains(line, p) {
				return true
			}
		}
	}
	return false
}

// annotate appends the <sandbox_violations> block to stderr; without
// violations stderr comes back unchanged.
func annotate(stderr string, vs []Violation) string {
	if len(vs) == 0 {
		return stderr
	}
	var b strings.Builder
	b.WriteString(stderr)
	b.WriteString("\n<sandbox_violations>\n")
	for _, v := range vs {
		b.WriteString(v.String())
		b.WriteByte('\n')
	}
	b.WriteString("</sandbox_violations>")
	return b.String()
}

// MarshalLine is v as one JSON line (with the newline).
func (v Violation) MarshalLine() []byte {
	b, _ := json.Marshal(v)
	return append(b, '\n')
}

// fsRule is what a plan does at a path: the mount that decides it.
type fsRule struct {
	path     string
	readOnly bool // a read-only rebind (denyWrite, a protected name)
	hidden   bool // a mask (denyRead)
	why      string
}

// denialMessages are the error texts (strerror) of a denied file access.
var denialMessages = []string{"Permission denied", "Read-only file system", "Operation not permitted"}

// inferFilesystem reads denied file accesses out of a command's error
// output: lines such as "sh: 1: cannot create /etc/x: Permission denied"
// or "touch: cannot touch '/etc/x': Read-only file system" name a path;
// the plan says which rule covers it. Paths no rule denies (a file the
// user cannot write outside the sandbox either) are not reported.
func inferFilesystem(stderr, cwd string, rules []fsRule, writable func(string) bool) []Violation {
	var out []Violation
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		msg := ""
		for _, m := range denialMessages {
			if strings.Contains(line, m) {
				msg = m
				break
			}
		}
		if msg == "" {
			continue
		}
		at := strings.LastIndex(line, msg)
		// Python and others put the path after the message.
		path := pathIn(line[at+len(msg):])
		if path == "" {
			path = pathIn(line[:at])
		}
		if path != "" && !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		if path == "" || seen[path] {
			continue
		}
		v, ok := judgePath(path, msg, rules, writable)
		if !ok {
			continue
		}
		seen[path] = true
		out = append(out, v)
	}
	return out
}

// pathIn finds the path a message names in s: the last word, quoted or
// bare ("sh: 1: cannot create out.txt", "touch: cannot touch '/a b'",
// ": '/etc/x'" after Python's message). The error-number prefixes of
// some tools ("[Errno 13]") are no path.
func pathIn(s string) string {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), ":,"))
	if s == "" {
		return ""
	}
	for _, q := range [][2]string{{"'", "'"}, {"\"", "\""}, {"‘", "’"}, {"`", "'"}} {
		if strings.HasSuffix(s, q[1]) {
			if i := strings.LastIndex(s[:len(s)-len(q[1])], q[0]); i >= 0 {
				return filepath.Clean(s[i+len(q[0]) : len(s)-len(q[1])])
			}
		}
	}
	f := s
	if i := strings.LastIndexAny(s, " \t"); i >= 0 {
		f = s[i+1:]
	}
	f = strings.Trim(f, ":,")
	if f == "" || strings.HasPrefix(f, "[") || strings.HasPrefix(f, "-") {
		return ""
	}
	return filepath.Clean(f)
}

// judgePath says which rule denied path, if one did.
func judgePath(path, msg string, rules []fsRule, writable func(string) bool) (Violation, bool) {
	var best *fsRule
	for i := range rules {
		r := &rules[i]
		if path == r.path || strings.HasPrefix(path, strings.TrimSuffix(r.path, "/")+"/") {
			if best == nil || len(r.path) >= len(best.path) {
				best = r
			}
		}
	}
	v := Violation{Kind: KindFilesystem, Target: path, Inferred: true, Reason: msg}
	switch {
	case best != nil && best.hidden:
		v.Operation, v.Rule = "read", best.why
	case best != nil && best.readOnly:
		v.Operation, v.Rule = "write", best.why
	case best != nil:
		return v, false // under allowWrite: the denial is not the sandbox's
	case msg == "Read-only file system" || writable(path):
		// Outside every allowWrite root, where the host would have let
		// the user write.
		v.Operation, v.Reason = "write", "not under any allowWrite entry"
	default:
		return v, false
	}
	return v, true
}
