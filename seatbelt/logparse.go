package seatbelt

import (
	"regexp"
	"strconv"
	"strings"
)

// LogCommand is the system's own reader of the unified log, which
// StreamDenials runs.
const LogCommand = "/usr/bin/log"

// Seatbelt's denials reach the system log as kernel messages: a line
// "Sandbox: <process>(<pid>) deny(<count>) <operation> <target>", and the
// message of the rule that denied (the profile's tag, which srt makes
// unique to each run) on a line of its own, or at the end of the same
// line. A LogReader reads `log stream --style compact` output a line at
// a time and pairs them; it is pure, so it is tested (and fuzzed) here.

// Denial is one operation Seatbelt refused.
type Denial struct {
	// Tag is the run's (the profile's message).
	Tag     string
	Process string
	PID     int
	// Operation is what was refused ("file-read-data",
	// "network-outbound"), Target what on ("/Users/me/.ssh/id",
	// "1.2.3.4:443"; "" when the line names none).
	Operation, Target string
}

// Line is the denial as a violation line: "deny <operation> <target>".
func (d Denial) Line() string {
	if d.Target == "" {
		return "deny " + d.Operation
	}
	return "deny " + d.Operation + " " + d.Target
}

// TagPrefix starts every tag srt writes into a profile; TagSuffix ends it,
// so that the log can be asked for srt's denials alone.
const (
	TagPrefix = "SRT_"
	TagSuffix = "_SBX"
)

// NewTag is the tag of run id in session (both of [A-Za-z0-9], the
// session's chosen at random): what the log is asked for ends in
// session's suffix, and the run is told by id.
func NewTag(session, id string) string { return TagPrefix + id + "_" + session + TagSuffix }

// ParseTag returns the run id and session of a tag srt wrote.
func ParseTag(tag string) (id, session string, ok bool) {
	rest, ok := strings.CutPrefix(tag, TagPrefix)
	if !ok {
		return "", "", false
	}
	rest, ok = strings.CutSuffix(rest, TagSuffix)
	if !ok {
		return "", "", false
	}
	id, session, ok = strings.Cut(rest, "_")
	return id, session, ok && id != "" && session != "" && !strings.Contains(session, "_")
}

var (
	denialRe = regexp.MustCompile(`Sandbox:\s+(.+)\((\d+)\)\s+deny\(\d+\)\s+(\S+)(?:\s+(.*?))?\s*$`)
	tagRe    = regexp.MustCompile(TagPrefix + `[A-Za-z0-9]+_[A-Za-z0-9]+` + TagSuffix + `$`)
)

// noise are denials every process causes and no user needs to read
// (the system's own lookups).
var noise = []string{"mDNSResponder", "mach-lookup com.apple.diagnosticd", "mach-lookup com.apple.analyticsd"}

// LogReader pairs denial lines with their tags.
type LogReader struct {
	pending *Denial
}

// Line reads one line of log output; it returns a denial once its tag is
// known.
func (r *LogReader) Line(line string) (Denial, bool) {
	line = strings.TrimRight(line, "\r\n")
	tag := ""
	if m := tagRe.FindString(line); m != "" {
		tag = m
		line = strings.TrimSpace(strings.TrimSuffix(line, m))
	}
	if m := denialRe.FindStringSubmatch(line); m != nil {
		pid, err := strconv.Atoi(m[2])
		if err != nil {
			return Denial{}, false
		}
		d := Denial{Process: m[1], PID: pid, Operation: m[3], Target: m[4]}
		for _, n := range noise {
			if strings.Contains(d.Line(), n) || d.Process == n {
				r.pending = nil
				return Denial{}, false
			}
		}
		if tag != "" {
			r.pending = nil
			d.Tag = tag
			return d, true
		}
		r.pending = &d
		return Denial{}, false
	}
	if tag != "" && r.pending != nil {
		d := *r.pending
		r.pending = nil
		d.Tag = tag
		return d, true
	}
	return Denial{}, false
}
