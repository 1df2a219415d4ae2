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

// printed holds the real values no printed line may hold, as
// replacements by their sentinels.
var printed struct {
	sync.RWMutex
	seen map[string]bool
	r    *replacer
}

// keepOutOfPrint adds the plan's real values to those no printed line
// may hold.
func (p *Plan) keepOutOfPrint() {
	printed.Lock()
	defer printed.Unlock()
	if printed.seen == nil {
		printed.seen = map[string]bool{}
	}
	var pairs []pair
	if printed.r != nil {
		pairs = printed.r.pairs
	}
	added := false
	for _, s := range p.Secrets {
		// As short as the search of responses goes: a shorter value
		// would rewrite ordinary words of ordinary lines.
		if len(s.Real) >= minScrubbed && !printed.seen[s.Real] {
			printed.seen[s.Real] = true
			pairs = append(pairs, pair{old: []byte(s.Real), new: []byte(s.Sentinel)})
			added = true
		}
	}
	if added {
		printed.r = newReplacer(pairs)
	}
}

// Redacting returns a writer that writes to w what it is given, every
// real value a plan of this process masks written as its sentinel. A
// write that ends where a value might be starting holds those bytes
// back until the next shows whether it does (a line's end never does).
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
	r := printed.r
	printed.RUnlock()
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if r == nil && len(rd.held) == 0 {
		return rd.w.Write(b)
	}
	buf := append(rd.held, b...)
	rd.held = nil
	if r != nil {
		buf = r.replace(buf)
		if k := partialTail(buf, r); k > 0 {
			rd.held = bytes.Clone(buf[len(buf)-k:])
			buf = buf[:len(buf)-k]
		}
	}
	if _, err := rd.w.Write(buf); err != nil {
		return 0, err
	}
	return len(b), nil
}

// partialTail is the length of the longest end of b that begins a value
// of r but is not all of it; none after a line's end.
func partialTail(b []byte, r *replacer) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 0
	}
	longest := 0
	for _, p := range r.pairs {
		for k := min(len(b), len(p.old)-1); k > longest; k-- {
			if bytes.Equal(b[len(b)-k:], p.old[:k]) {
				longest = k
				break
			}
		}
	}
	return longest
}
