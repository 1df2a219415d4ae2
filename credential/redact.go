package credential

import (
	"bytes"
	"io"
	"sync"
)

// What srt prints — its own messages, --debug, --violations, and the log
// lines of every library it links (net/http's Transport logs the bytes an
// upstream sends on an idle connection; its HTTP/2 side logs frames) — is
// read by the command's caller, often the agent whose command it is. A
// real value an upstream echoes there would reach it around every
// search of responses. So each real value a plan masks is kept, for the
// life of the process, as one that no printed line may hold, and
// Redacting writes every line with it as its sentinel.

// printed holds the forms of the real values no printed line may hold.
var printed struct {
	sync.RWMutex
	seen    map[string]bool
	needles []needle
	s       *scanner
}

// keepOutOfPrint adds the plan's real values, in every form the search
// of responses knows (forms.go), to those no printed line may hold.
func (p *Plan) keepOutOfPrint() {
	printed.Lock()
	defer printed.Unlock()
	if printed.seen == nil {
		printed.seen = map[string]bool{}
	}
	added := false
	for _, s := range p.Secrets {
		// As short as the search of responses goes: a shorter value
		// would rewrite ordinary words of ordinary lines.
		if len(s.Real) >= minScrubbed && !printed.seen[s.Real] {
			printed.seen[s.Real] = true
			printed.needles = append(printed.needles, needles(s)...)
			added = true
		}
	}
	if added {
		printed.s = newScanner(printed.needles)
	}
}

// Redacting returns a writer that writes to w what it is given, every
// real value a plan of this process masks written as its sentinel, and
// every encoded form of one (base64, hex, percent, JSON escapes) as a
// note naming the form and the variable. A write that ends where a value
// might be starting holds those bytes back until the next shows whether
// it does (a line's end never does).
func Redacting(w io.Writer) io.Writer {
	if r, ok := w.(*redactor); ok {
		return r
	}
	return &redactor{w: w}
}

type redactor struct {
	mu   sync.Mutex
	w    io.Writer
	held []byte
}

func (rd *redactor) Write(b []byte) (int, error) {
	printed.RLock()
	s := printed.s
	printed.RUnlock()
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if s == nil && len(rd.held) == 0 {
		return rd.w.Write(b)
	}
	buf := append(rd.held, b...)
	rd.held = nil
	if s != nil {
		buf, rd.held = redact(s, buf)
	}
	if _, err := rd.w.Write(buf); err != nil {
		return 0, err
	}
	return len(b), nil
}

// redact returns b with every form of a value s searches for replaced,
// and the end held back that may begin one (none after a line's end).
func redact(s *scanner, b []byte) (out, held []byte) {
	from := 0
	for {
		i, n := s.find(b, from)
		if i < 0 {
			break
		}
		nd := &s.needles[n]
		start := i - nd.leadBefore(b, from, i)
		out = append(out, b[from:start]...)
		if nd.form == "" {
			out = append(out, nd.replace...)
		} else {
			out = append(out, "[srt: a "+nd.form+" form of "+nd.secret+"'s real value]"...)
		}
		from = i + len(nd.text)
	}
	end := len(b)
	if end > from && b[end-1] != '\n' {
		end = max(from, s.holdFrom(b, from))
	}
	out = append(out, b[from:end]...)
	if end < len(b) {
		held = bytes.Clone(b[end:])
	}
	return out, held
}
