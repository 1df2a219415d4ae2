package credential

import (
	"bytes"
	"io"
)

// Replacing sentinels by real values in a stream: at each step the
// earliest match of any pair wins (the first pair on a tie), and scanning
// goes on after what was put in, which is never scanned again. A match
// may straddle the reads of the stream: the last bytes of a read are held
// back until the next shows whether they start one.

// pair is one replacement.
type pair struct{ old, new []byte }

// replacer replaces pairs in strings and streams.
type replacer struct {
	pairs  []pair
	maxOld int
}

func newReplacer(pairs []pair) *replacer {
	r := &replacer{pairs: pairs}
	for _, p := range pairs {
		r.maxOld = max(r.maxOld, len(p.old))
	}
	return r
}

// next finds the earliest match in b at or before limit: its start and
// pair, or -1.
func (r *replacer) next(b []byte, limit int) (int, *pair) {
	best, bp := -1, (*pair)(nil)
	for i := range r.pairs {
		p := &r.pairs[i]
		end := min(len(b), limit+len(p.old))
		if end < len(p.old) {
			continue
		}
		j := bytes.Index(b[:end], p.old)
		if j >= 0 && (best < 0 || j < best) {
			best, bp = j, p
		}
	}
	return best, bp
}

// replace returns b with every match replaced.
func (r *replacer) replace(b []byte) []byte {
	var out []byte
	for {
		i, p := r.next(b, len(b))
		if i < 0 {
			if out == nil {
				return b
			}
			return append(out, b...)
		}
		out = append(append(out, b[:i]...), p.new...)
		b = b[i+len(p.old):]
	}
}

// replaceString is replace for text.
func (r *replacer) replaceString(s string) string {
	for _, p := range r.pairs {
		if bytes.Contains([]byte(s), p.old) {
			return string(r.replace([]byte(s)))
		}
	}
	return s
}

// reader replaces as it reads src.
func (r *replacer) reader(src io.Reader) io.Reader {
	if r.maxOld == 0 {
		return src
	}
	return &replaceReader{r: r, src: src, buf: make([]byte, 0, 32<<10+r.maxOld)}
}

type replaceReader struct {
	r   *replacer
	src io.Reader
	// buf holds, from its start, what was read from src and not yet
	// handed out: out (decided, aliasing buf when nothing in it was
	// replaced) and then the undecided tail, buf[tail:].
	buf  []byte
	tail int
	out  []byte
	// outBuf holds a scan's output when it replaced something.
	outBuf []byte
	err    error // src's, once it ended
}

func (rr *replaceReader) Read(p []byte) (int, error) {
	for len(rr.out) == 0 {
		// What was handed out goes; the undecided tail moves to the
		// front, and more is read after it.
		rr.buf = rr.buf[:copy(rr.buf[:cap(rr.buf)], rr.buf[rr.tail:])]
		rr.tail = 0
		if rr.err != nil && len(rr.buf) == 0 {
			return 0, rr.err
		}
		if rr.err == nil {
			if len(rr.buf) == cap(rr.buf) {
				rr.buf = append(rr.buf, make([]byte, cap(rr.buf))...)[:len(rr.buf)]
			}
			n, err := rr.src.Read(rr.buf[len(rr.buf):cap(rr.buf)])
			rr.buf = rr.buf[:len(rr.buf)+n]
			if err != nil {
				rr.err = err
			}
		}
		rr.scan()
	}
	n := copy(p, rr.out)
	rr.out = rr.out[n:]
	return n, nil
}

// scan decides what it can of buf: every byte at which no match can
// start that bytes still to come could complete. The rest is the tail.
func (rr *replaceReader) scan() {
	in := rr.buf
	// A match starting at or before limit fits in what was read.
	limit := len(in) - rr.r.maxOld
	if rr.err != nil {
		limit = len(in)
	}
	keep := 0
	if rr.err == nil {
		keep = min(len(in), rr.r.maxOld-1)
	}
	i, p := -1, (*pair)(nil)
	if limit >= 0 {
		i, p = rr.r.next(in, limit)
	}
	if i < 0 {
		// Nothing to replace (the common case): handed out in place.
		rr.out, rr.tail = in[:len(in)-keep], len(in)-keep
		return
	}
	out := rr.outBuf[:0]
	for i >= 0 {
		out = append(append(out, in[:i]...), p.new...)
		in = in[i+len(p.old):]
		limit -= i + len(p.old)
		if limit < 0 {
			break
		}
		i, p = rr.r.next(in, limit)
	}
	keep = 0
	if rr.err == nil {
		keep = min(len(in), rr.r.maxOld-1)
	}
	out = append(out, in[:len(in)-keep]...)
	rr.out, rr.outBuf = out, out
	rr.tail = len(rr.buf) - keep
}
