package seatbelt

import (
	"fmt"
	"strconv"
	"strings"
)

// The trampoline's options and the keeper's reports, as data: pure, so
// they are read and fuzzed on every system (trampoline.go runs them).

// Launch is how the trampoline starts the command: its first argument.
type Launch struct {
	// Terminal: stdin is a pty made for the command; it becomes the
	// session's controlling terminal, with the command in the foreground.
	Terminal bool
	// NullFDs are descriptors the command finds open on /dev/null.
	NullFDs []int
	// Parent: the keeper also ends with its parent (FDParent), a wrap
	// trampoline.
	Parent bool
}

// String is l as the trampoline's first argument.
func (o Launch) String() string {
	parts := []string{"v1"}
	if o.Terminal {
		parts = append(parts, "tty")
	}
	if o.Parent {
		parts = append(parts, "parent")
	}
	for _, fd := range o.NullFDs {
		parts = append(parts, "null="+strconv.Itoa(fd))
	}
	return strings.Join(parts, ",")
}

// ParseLaunch reads Launch.String.
func ParseLaunch(s string) (Launch, error) {
	var o Launch
	parts := strings.Split(s, ",")
	if parts[0] != "v1" {
		return o, fmt.Errorf("trampoline options %q: not of this srt", s)
	}
	for _, p := range parts[1:] {
		switch p {
		case "tty":
			o.Terminal = true
			continue
		case "parent":
			o.Parent = true
			continue
		}
		v, ok := strings.CutPrefix(p, "null=")
		fd, err := strconv.Atoi(v)
		if !ok || err != nil || fd < 3 || fd > 1024 {
			return o, fmt.Errorf("trampoline option %q", p)
		}
		o.NullFDs = append(o.NullFDs, fd)
	}
	return o, nil
}

// Reports are the lines the keeper writes to srt.
const (
	ReportStarted = "started" // "started <pid>": the command's pid, its process group
	ReportStopped = "stopped" // the command's group stopped: srt stops too
	ReportAsked   = "asked"   // it stopped for the SIGTSTP srt relayed
	ReportEnded   = "ended"   // the command's group is killed: the keeper exits
)

// ParseReport reads one of the keeper's report lines. The keeper runs
// under the profile with the command, so a line may be anything: ok is
// false for all but the four reports, and a started pid is above 1.
func ParseReport(line string) (kind string, pid int, ok bool) {
	word, arg, hasArg := strings.Cut(line, " ")
	switch word {
	case ReportStopped, ReportAsked, ReportEnded:
		if hasArg {
			return "", 0, false
		}
		return word, 0, true
	case ReportStarted:
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 1 || strconv.Itoa(n) != arg {
			return "", 0, false
		}
		return word, n, true
	}
	return "", 0, false
}
