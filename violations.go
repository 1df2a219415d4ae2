package srt

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/policy"
)

// Kinds of violation.
const (
	KindNetwork    = backend.KindNetwork    // "network"
	KindFilesystem = backend.KindFilesystem // "filesystem"
	KindUnixSocket = backend.KindUnixSocket // "unix-socket"
	KindSyscall    = backend.KindSyscall    // "syscall"
)

// Violation is one thing the sandbox denied a command: when, the command
// (CommandID, its attribution key, and Command, its text), the Kind, the
// Operation tried on the Target, the Rule of the settings that denied and
// the Reason, and whether it was Inferred from the command's error
// output. Its JSON is a --violations record; String is the reference's
// line, Summary the line for a person, Probe says whether it is the C
// library's probe for nscd (go doc ./internal/backend.Violation).
type Violation = backend.Violation

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
	v.Target, v.Reason = backend.Sanitize(v.Target), backend.Sanitize(v.Reason)
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

// fsRule is what a plan does at a path: the mount that decides it, or an
// allowWrite entry that made no mount.
// planInfo is what a plan does to paths, for reading denials.
type planInfo struct {
	text, cwd string
	rules     []fsRule
}

type fsRule struct {
	path     string
	readOnly bool // a read-only rebind (denyWrite, a protected name)
	hidden   bool // a mask (denyRead)
	why      string
	// skipped: an allowWrite entry the plan left out (its path did not
	// exist when the command started, say); why is then the whole reason
	// of a write denied beneath it. glob, when set, is the entry's
	// pattern, and path its literal root.
	skipped bool
	glob    *config.Glob
}

// covers reports whether the rule applies at path.
func (r *fsRule) covers(path string) bool {
	if r.glob != nil {
		return r.glob.MatchOrBeneath(path)
	}
	return policy.Under(path, r.path)
}

// planRules is what p does to paths, for reading denials: its mounts,
// and the allowWrite entries (of allowWrite, the settings p was built
// from) that it skipped, which explain a write refused where they point.
func planRules(pol *policy.Policy, allowWrite []config.PathEntry, text, cwd, home string) *planInfo {
	info := &planInfo{text: text, cwd: cwd}
	if pol.Disabled {
		info.rules = []fsRule{{path: "/", why: "filesystem.disabled"}} // everything writable
		return info
	}
	// The view changes only at the paths rules name: there, what the
	// policy says, and the rule that says it.
	paths := map[string]bool{}
	for _, r := range pol.Reads {
		paths[r.Path] = true
	}
	for _, r := range pol.Writes {
		paths[r.Path] = true
	}
	for p := range paths {
		v := pol.View(p)
		reads, writes := pol.Decider(p)
		r := fsRule{path: p}
		switch {
		case !v.Readable:
			r.hidden, r.why = true, firstWhy(reads, false)
		case v.Writable:
			r.why = firstWhy(writes, true)
		case firstWhy(writes, true) != "":
			r.readOnly, r.why = true, firstWhy(writes, false)
		default:
			continue // read-only as the whole host is: no rule of its own
		}
		info.rules = append(info.rules, r)
	}
	done := map[int]bool{}
	for _, s := range pol.Skipped {
		// The plan names an entry "filesystem.allowWrite.<index> <path>".
		rest, ok := strings.CutPrefix(s.Rule, "filesystem.allowWrite.")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, " ")
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(allowWrite) || done[i] {
			continue
		}
		done[i] = true
		e := allowWrite[i]
		path, ok, err := config.Expand(e, home, cwd)
		if err != nil || !ok {
			continue
		}
		why := fmt.Sprintf("allowWrite entry %q was not applied: %s", e.Path, s.Why)
		switch {
		case strings.HasPrefix(s.Why, "does not exist"):
			why = fmt.Sprintf("allowWrite entry %q did not exist when the command started", e.Path)
		case strings.HasPrefix(s.Why, "the pattern matches nothing"):
			why = fmt.Sprintf("allowWrite entry %q matched nothing when the command started", e.Path)
		}
		r := fsRule{path: path.Path, why: why, skipped: true}
		if path.Glob != nil {
			r.path, r.glob = path.Glob.Root(), path.Glob
			info.rules = append(info.rules, r)
			continue
		}
		info.rules = append(info.rules, r)
		// The mounts are at real paths, and so are the paths a command
		// names through cwd: the entry's, resolved as far as it exists.
		if real := resolveExisting(path.Path); real != path.Path {
			r.path = real
			info.rules = append(info.rules, r)
		}
	}
	return info
}

// firstWhy is the Why of the first rule of rs that allows (allow) or
// denies: the deepest, as Policy.Decider lists them.
func firstWhy(rs []policy.Rule, allow bool) string {
	for _, r := range rs {
		if r.Allow == allow {
			return r.Why
		}
	}
	return ""
}

// Error texts of a denied file access. denialMessages are C's strerror
// (shells, coreutils, Python, Rust); goDenials the same errnos as Go's
// syscall.Errno and Node's errors spell them. Lower-case words are common
// in prose, so a line with one counts only in the shape Go or Node prints
// (see goDenial, nodeDenial).
var (
	denialMessages = []string{"Permission denied", "Read-only file system", "Operation not permitted"}
	goDenials      = []string{"permission denied", "read-only file system", "operation not permitted"}
)

// denial is one line's failed file access.
type denial struct {
	path string
	msg  string // the error text, as the line has it
	// op is what the failing call did, as the line words it: "write",
	// "read", or "" when it does not say ("cat: x: Permission denied").
	op string
}

// inferFilesystem reads denied file accesses out of a command's error
// output: lines such as "sh: 1: cannot create /etc/x: Permission denied",
// "touch: cannot touch '/etc/x': Read-only file system" or Go's
// "mkdir /etc/x: read-only file system" name a path; the plan says which
// rule covers it. Paths no rule denies (a file the user cannot write
// outside the sandbox either) are not reported.
func inferFilesystem(stderr, cwd string, rules []fsRule, writable func(string) bool) []Violation {
	var out []Violation
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stderr))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		d, ok := readDenial(sc.Text())
		if !ok {
			continue
		}
		path := d.path
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		// /proc and /dev are the sandbox's own, which no settings rule
		// governs: "unshare -Ur" failing to write /proc/self/uid_map,
		// or a write to /proc/sys, was refused by the kernel for its
		// own reasons, whatever the settings say.
		if path == "/proc" || path == "/dev" || strings.HasPrefix(path, "/proc/") || strings.HasPrefix(path, "/dev/") {
			continue
		}
		if seen[path] {
			continue
		}
		// The plan's rules name real paths; the line names the path
		// as the command spelled it (a TMPDIR behind a symlink).
		v, ok := judgePath(resolveExisting(path), d, rules, writable)
		if !ok {
			continue
		}
		v.Target = path
		seen[path] = true
		out = append(out, v)
	}
	return out
}

// readDenial finds the failed access a line reports, in any of the
// shapes srt knows.
func readDenial(line string) (denial, bool) {
	for _, m := range denialMessages {
		at := strings.LastIndex(line, m)
		if at < 0 {
			continue
		}
		d := denial{msg: m}
		// Python and others put the path after the message; Rust puts
		// "(os error 13)" there, and ssh "(publickey)".
		wording, after := line[:at], line[at+len(m):]
		if strings.HasPrefix(strings.TrimLeft(after, pathTrim), "(") {
			after = ""
		}
		if d.path, _, _ = pathIn(after); d.path == "" {
			// "head: cannot open 'x' for reading: Permission denied"
			before := strings.TrimRight(wording, pathTrim)
			for _, s := range []string{" for reading", " for writing"} {
				before = strings.TrimSuffix(before, s)
			}
			var start, end int
			d.path, start, end = pathIn(before)
			// The path's own words say nothing of the call.
			wording = wording[:start] + wording[end:]
		}
		d.op = wordedOp(wording)
		return d, d.path != ""
	}
	if d, ok := goDenial(line); ok {
		return d, true
	}
	return nodeDenial(line)
}

// pathTrim is what surrounds a path in a message.
const pathTrim = " \t\r\n\v\f:,"

// pathIn finds the path a message names in s, and where it is written
// (s[start:end], quotes included): the last word, quoted or bare ("sh:
// 1: cannot create out.txt", "touch: cannot touch '/a b'", ": '/etc/x'"
// after Python's message). The error-number prefixes of some tools
// ("[Errno 13]") are no path.
func pathIn(s string) (path string, start, end int) {
	end = len(strings.TrimRight(s, pathTrim))
	start = end - len(strings.TrimLeft(s[:end], pathTrim))
	t := s[start:end]
	if t == "" {
		return "", 0, 0
	}
	for _, q := range [][2]string{{"'", "'"}, {"\"", "\""}, {"‘", "’"}, {"`", "'"}} {
		if strings.HasSuffix(t, q[1]) {
			if i := strings.LastIndex(t[:len(t)-len(q[1])], q[0]); i >= 0 {
				inner := t[i+len(q[0]) : len(t)-len(q[1])]
				if inner == "" {
					return "", 0, 0
				}
				return filepath.Clean(inner), start + i, end
			}
		}
	}
	if i := strings.LastIndexAny(t, " \t"); i >= 0 {
		start += i + 1
	}
	start = end - len(strings.TrimLeft(s[start:end], ":,"))
	f := s[start:end]
	if f == "" || strings.HasPrefix(f, "[") || strings.HasPrefix(f, "-") {
		return "", 0, 0
	}
	return filepath.Clean(f), start, end
}

// callOps are the operation names Go's *fs.PathError and *os.LinkError
// and Node's errors give a failed call, and what the call did; "" for a
// call that may have done either (open).
var callOps = map[string]string{
	"open": "", "openat": "",
	"mkdir": "write", "mkdirat": "write", "remove": "write", "unlink": "write", "unlinkat": "write",
	"rmdir": "write", "rename": "write", "renameat": "write", "link": "write", "symlink": "write",
	"chmod": "write", "fchmod": "write", "chown": "write", "lchown": "write", "fchown": "write",
	"chtimes": "write", "utime": "write", "lutime": "write", "futime": "write", "truncate": "write",
	"ftruncate": "write", "write": "write", "copyfile": "write", "cp": "write", "mkdtemp": "write",
	"stat": "read", "lstat": "read", "fstatat": "read", "readlink": "read", "read": "read",
	"readdirent": "read", "readdir": "read", "scandir": "read", "opendir": "read", "access": "read",
	"realpath": "read",
}

// linkOps name two paths; the second is the one made or replaced.
var linkOps = map[string]bool{"rename": true, "renameat": true, "link": true, "symlink": true, "copyfile": true, "cp": true}

// goDenial reads Go's error shape: "op path: errno text" at the end of
// the line, after the error's wrappers ("go: creating work dir: mkdir
// /home/u/go: read-only file system"). The op must be one of a file
// call's, so that "connect: permission denied" and prose are no path.
func goDenial(line string) (denial, bool) {
	line = strings.TrimRight(line, " \t\r")
	for _, m := range goDenials {
		head, ok := strings.CutSuffix(line, ": "+m)
		if !ok {
			continue
		}
		if i := strings.LastIndex(head, ": "); i >= 0 {
			head = head[i+2:]
		}
		name, path, _ := strings.Cut(head, " ")
		op, known := callOps[name]
		if !known || path == "" {
			return denial{}, false
		}
		if linkOps[name] {
			// "rename old new": names with spaces cannot be told apart;
			// the last word is the new name as far as can be known.
			path = path[strings.LastIndexByte(path, ' ')+1:]
		}
		return denial{path: filepath.Clean(path), msg: m, op: op}, true
	}
	return denial{}, false
}

// nodeDenial reads Node's error shape: "EACCES: permission denied, open
// '/etc/x'", "EROFS: read-only file system, rename '/a' -> '/b'".
func nodeDenial(line string) (denial, bool) {
	for _, m := range goDenials {
		at := strings.Index(line, ": "+m+", ")
		if at < 0 {
			continue
		}
		code := line[:at]
		if i := strings.LastIndexAny(code, " \t"); i >= 0 {
			code = code[i+1:]
		}
		if code != "EACCES" && code != "EROFS" && code != "EPERM" {
			return denial{}, false
		}
		rest := line[at+len(": "+m+", "):]
		name, quoted, _ := strings.Cut(rest, " ")
		op, known := callOps[name]
		if !known {
			return denial{}, false
		}
		if linkOps[name] {
			if _, dest, ok := strings.Cut(quoted, "' -> '"); ok {
				quoted = "'" + dest
			}
		}
		path, ok := quotedPrefix(quoted)
		if !ok {
			return denial{}, false
		}
		return denial{path: filepath.Clean(path), msg: m, op: op}, true
	}
	return denial{}, false
}

// quotedPrefix is the text between the single quotes s starts with.
func quotedPrefix(s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, "'")
	if !ok {
		return "", false
	}
	end := strings.IndexByte(rest, '\'')
	if end <= 0 {
		return "", false
	}
	return rest[:end], true
}

// Tools' words for a failed write or read, after "cannot", "could not"
// and the like ("touch: cannot touch", "git: could not lock config file",
// "ls: cannot open directory", "head: cannot open 'x' for reading").
var (
	failedWords = []string{"cannot ", "can't ", "could not ", "couldn't ", "unable to ", "failed to "}
	writeVerbs  = map[string]bool{"create": true, "touch": true, "remove": true, "make": true, "move": true, "overwrite": true,
		"unlink": true, "write": true, "rename": true, "link": true, "lock": true, "truncate": true, "mkdir": true,
		"delete": true, "change": true, "set": true, "copy": true, "save": true}
	readVerbs = map[string]bool{"read": true, "access": true, "stat": true, "list": true, "load": true}
	// Tools that say what they were doing rather than what failed
	// ("chmod: changing permissions of 'x': Operation not permitted").
	writeDoings = []string{"changing permissions of", "changing ownership of", "changing group of", "setting times of"}
)

// wordedOp is what the words before a line's path say the call did:
// "write", "read", or "" when they do not say.
func wordedOp(wording string) string {
	w := strings.ToLower(wording)
	switch {
	case strings.Contains(w, "for writing"):
		return "write"
	case strings.Contains(w, "for reading"):
		return "read"
	}
	for _, d := range writeDoings {
		if strings.Contains(w, d) {
			return "write"
		}
	}
	at, failed := -1, ""
	for _, f := range failedWords {
		if i := strings.LastIndex(w, f); i > at {
			at, failed = i, f
		}
	}
	if at < 0 {
		return ""
	}
	verb, rest, _ := strings.Cut(w[at+len(failed):], " ")
	switch {
	case writeVerbs[verb]:
		return "write"
	case readVerbs[verb], verb == "open" && strings.HasPrefix(rest, "directory"):
		return "read"
	}
	return ""
}

// judgePath says which rule denied d at path, if one did. The operation
// is what the failing call did (a write into a hidden tree is a write),
// as the message ("Read-only file system" is a write's) or the line's
// words say; when they do not say, what the rule denies.
func judgePath(path string, d denial, rules []fsRule, writable func(string) bool) (Violation, bool) {
	var best, skip *fsRule
	for i := range rules {
		r := &rules[i]
		if !r.covers(path) {
			continue
		}
		if r.skipped {
			if skip == nil || len(r.path) >= len(skip.path) {
				skip = r
			}
		} else if best == nil || len(r.path) >= len(best.path) {
			best = r
		}
	}
	v := Violation{Kind: KindFilesystem, Target: path, Inferred: true, Reason: d.msg, Operation: d.op}
	readOnlyFS := strings.EqualFold(d.msg, "Read-only file system")
	if readOnlyFS {
		v.Operation = "write" // only a change is refused so
	}
	switch {
	case best != nil && best.hidden:
		if v.Operation == "" {
			v.Operation = "read"
		}
		v.Rule = best.why
	case best != nil && best.readOnly:
		if v.Operation == "read" {
			return v, false // a read-only rebind refuses no read
		}
		v.Operation, v.Rule = "write", best.why
	case best != nil:
		return v, false // under allowWrite: the denial is not the sandbox's
	case v.Operation == "read":
		return v, false // outside the masks no rule refuses a read
	case readOnlyFS || writable(path):
		// Outside every allowWrite root, where the host would have let
		// the user write.
		v.Operation, v.Reason = "write", "not under any allowWrite entry"
	default:
		return v, false
	}
	// An allowWrite entry the plan had to leave out, more specific than
	// the rule that denied, is the whole reason.
	if v.Operation == "write" && skip != nil && (best == nil || len(skip.path) > len(best.path)) {
		v.Rule, v.Reason = "", skip.why
	}
	return v, true
}

// resolveExisting resolves the symlinks of the longest part of p that
// exists, and keeps the rest as it is.
func resolveExisting(p string) string {
	for dir, rest := p, ""; dir != "." && filepath.Dir(dir) != dir; dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
	}
	return p
}
