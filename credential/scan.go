package credential

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
)

// Searching responses for every form of every real value at once, as
// they stream, in bounded memory.
//
// Every needle is at least minScrubbed bytes long. The search looks at one
// 4-byte gram every stride bytes (stride: the shortest needle less 3, at
// most 64), so that any needle wholly in the buffer covers one of them at
// one of its first stride offsets; the gram, ASCII letters folded to
// lower case, is tested in a bitmap of the grams at those offsets of
// every needle, and only a hit is looked up in the map that says which
// needles hold that gram and where, to compare those in full. Text that
// holds none of the needles' grams costs a load, a multiply and a bit test
// per stride bytes, however many needles there are; the index holds at
// most stride grams of a needle, however long.
//
// A stream holds back only what may begin a match that bytes still to
// come would complete: a suffix that is a needle's prefix, with the
// base64 characters before it that may carry bits of the value, and up to
// 3 base64 characters at its very end (the lead of a form that may start
// in the next read). An event of a Server-Sent Events stream, which ends
// with a blank line, is handed out whole as soon as it comes. Held back is
// never more than the window: the longest needle and the longest lead.

const gram = 4

// scanner is a set of needles, compiled; it is never changed, and is
// shared by every response of a plan.
type scanner struct {
	needles []needle
	stride  int
	maxLen  int // the longest needle
	window  int // the most a stream holds back: the longest needle and the longest lead
	maxLead int
	shift   uint
	bits    []uint64
	grams   map[uint32][]gramAt
	// low are the needles in lower case, for a header's name.
	low [][]byte
	// first are the needles by their first byte (both cases of a folded
	// needle's letter), for what a stream's end may begin.
	first [256][]int32
}

// gramAt says that needle holds a gram at off.
type gramAt struct{ needle, off int32 }

const (
	gramMul   = 0x9e3779b1
	maxStride = 64
)

func foldGram(b []byte) uint32 { return binary.LittleEndian.Uint32(b) | 0x20202020 }

// newScanner compiles ns, every one at least gram bytes long; the first
// needle wins a tie.
func newScanner(ns []needle) *scanner {
	s := &scanner{needles: ns, grams: map[uint32][]gramAt{}, stride: maxStride}
	for _, n := range ns {
		s.stride = min(s.stride, len(n.text)-gram+1)
		s.maxLen = max(s.maxLen, len(n.text))
		s.maxLead = max(s.maxLead, n.lead)
		s.low = append(s.low, bytes.ToLower(n.text))
	}
	count := 0
	for i, n := range ns {
		// The first gram looked at in a match is at one of these.
		for off := range s.stride {
			g := foldGram(n.text[off:])
			s.grams[g] = append(s.grams[g], gramAt{int32(i), int32(off)})
			count++
		}
		c := n.text[0]
		s.first[c] = append(s.first[c], int32(i))
		if n.fold && lower(c) != c {
			s.first[lower(c)] = append(s.first[lower(c)], int32(i))
		} else if n.fold && 'a' <= c && c <= 'z' {
			s.first[c-'a'+'A'] = append(s.first[c-'a'+'A'], int32(i))
		}
	}
	s.window = s.maxLen + s.maxLead
	// About 1 bit in 256 set: a gram of text hits by chance that often.
	logBits := min(max(bits.Len(uint(count*256)), 12), 22)
	s.shift = uint(32 - logBits)
	s.bits = make([]uint64, 1<<logBits/64)
	for g := range s.grams {
		h := g * gramMul >> s.shift
		s.bits[h>>6] |= 1 << (h & 63)
	}
	return s
}

// at reports whether n is at b[i:].
func (n *needle) at(b []byte, i int) bool {
	if i < 0 || i+len(n.text) > len(b) {
		return false
	}
	if n.fold {
		return asciiEqualFold(b[i:i+len(n.text)], n.text)
	}
	return bytes.Equal(b[i:i+len(n.text)], n.text)
}

// begins reports whether rest, shorter than n, is how n begins.
func (n *needle) begins(rest []byte) bool {
	if len(rest) >= len(n.text) {
		return false
	}
	if n.fold {
		return asciiEqualFold(rest, n.text[:len(rest)])
	}
	return bytes.Equal(rest, n.text[:len(rest)])
}

// leadBefore is how many base64 characters, up to n's lead, come right
// before i in b, not before from.
func (n *needle) leadBefore(b []byte, from, i int) int { return base64Run(b, from, i, n.lead) }

// base64Run is how many base64 characters, up to most, come right before
// i in b, not before from.
func base64Run(b []byte, from, i, most int) int {
	k := 0
	for k < most && i-k-1 >= from && isBase64Char(b[i-k-1]) {
		k++
	}
	return k
}

func isBase64Char(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// find returns the earliest match in b that starts at or after from: its
// start and needle (the first needle on a tie), or -1, -1.
func (s *scanner) find(b []byte, from int) (int, int) {
	best, bn := -1, -1
	last := len(b) - gram
	for p := from; p <= last; p += s.stride {
		if best >= 0 && p-s.stride+1 > best {
			break // no later gram is the first of a match that starts before best
		}
		g := foldGram(b[p:])
		h := g * gramMul >> s.shift
		if s.bits[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, at := range s.grams[g] {
			i := p - int(at.off)
			if i < from || best >= 0 && (i > best || i == best && int(at.needle) > bn) {
				continue
			}
			if s.needles[at.needle].at(b, i) {
				best, bn = i, int(at.needle)
			}
		}
	}
	return best, bn
}

// holdFrom returns where the part of b that may begin a match which bytes
// still to come would complete starts (not before from): a suffix that
// is a needle's prefix, with the base64 characters before it that may
// carry the value's bits (as many as any needle's lead: another needle
// may match there in the end), and any base64 characters at the very end
// (the lead of a form that starts in the next bytes). len(b): none.
func (s *scanner) holdFrom(b []byte, from int) int {
	h := len(b) - base64Run(b, from, len(b), s.maxLead)
	// The first suffix that is a needle's prefix holds back the most
	// (what it holds back grows with where it starts).
	for j := max(from, len(b)-s.maxLen+1); j < len(b); j++ {
		for _, i := range s.first[b[j]] {
			if s.needles[i].begins(b[j:]) {
				return min(h, j-base64Run(b, from, j, s.maxLead))
			}
		}
	}
	return h
}

// inName returns a needle that name holds, ignoring ASCII case (Go has
// canonicalized a header's name), or nil.
func (s *scanner) inName(name string) *needle {
	low := bytes.ToLower([]byte(name))
	for i := range s.needles {
		if bytes.Contains(low, s.low[i]) {
			return &s.needles[i]
		}
	}
	return nil
}

// readSize is how much a stream reads at once.
const readSize = 32 << 10

// stream searches one stream of bytes as they come.
type stream struct {
	s *scanner
	// buf holds what was handed out and is kept (history), buf[:done];
	// then what is undecided; then what was read since.
	buf  []byte
	done int
	// rest and clean are where the last decision left buf: what was
	// handed out ends at rest, and from clean on it was handed out as it
	// came (no replacement after it).
	rest, clean int
	// history: keep what was handed out, up to the window, so that a
	// match that began in it and ends after a flush is found (and, as it
	// cannot be taken back, cuts the stream off).
	history bool
	scratch []byte
}

// compact drops what no decision needs any more: what was handed out,
// but for the history.
func (st *stream) compact() {
	keep := st.rest
	if st.history {
		keep = max(st.clean, st.rest-(st.s.window-1), 0)
	}
	st.buf = st.buf[:copy(st.buf, st.buf[keep:])]
	st.done = st.rest - keep
	st.rest, st.clean = st.done, 0
}

// read reads once from src after what the stream holds.
func (st *stream) read(src io.Reader) error {
	st.compact()
	if cap(st.buf)-len(st.buf) < readSize {
		// Room for what is kept, at most two windows, and a read.
		st.buf = append(make([]byte, 0, 2*st.s.window+readSize), st.buf...)
	}
	n, err := src.Read(st.buf[len(st.buf):cap(st.buf)])
	st.buf = st.buf[:len(st.buf)+n]
	return err
}

// feed adds p after what the stream holds.
func (st *stream) feed(p []byte) {
	st.compact()
	st.buf = append(st.buf, p...)
}

// decide decides what it can of what the stream holds: what may be
// handed out (it may alias the stream's buffer until the next read or
// feed), and the needle that cuts the stream off there, if one does.
// final: no byte comes after these (the end of a body, of a WebSocket
// message), so nothing is held back.
func (st *stream) decide(final bool) ([]byte, *needle) {
	s, b := st.s, st.buf
	pos, from, clean := st.done, 0, 0
	var out []byte
	replaced := false
	emit := func(end int) {
		if replaced {
			out = append(out, b[pos:end]...)
		} else {
			out = b[st.done:end]
		}
	}
	for {
		h := len(b)
		if !final {
			h = max(pos, s.holdFrom(b, from))
		}
		i, ni := s.find(b, from)
		if ni >= 0 && i >= h {
			// Decided later, when no longer needle may match there; its
			// lead waits with it.
			h = min(h, i-base64Run(b, pos, i, s.maxLead))
		}
		if ni < 0 || i >= h {
			emit(h)
			st.rest, st.clean = h, clean
			return out, nil
		}
		n := &s.needles[ni]
		if i < pos || n.replace == nil {
			// What began in what was handed out, or an encoded form: no
			// sentinel can take its place.
			emit(max(pos, i-n.leadBefore(b, pos, i)))
			st.rest, st.clean = len(b), len(b)
			return out, n
		}
		if !replaced {
			out = append(st.scratch[:0], b[st.done:pos]...)
			replaced = true
		}
		out = append(append(out, b[pos:i]...), n.replace...)
		pos = i + len(n.text)
		from, clean = pos, pos
		st.scratch = out
	}
}

// scrubReader hands out a body searched: each real value as it is
// becomes its sentinel; an encoded form ends the body with refused(n).
type scrubReader struct {
	st       stream
	src      io.Reader
	out      []byte
	srcErr   error
	cut      *needle
	refused  func(n *needle) error
	finished bool
}

func (r *scrubReader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		switch {
		case r.cut != nil:
			return 0, r.refused(r.cut)
		case r.finished:
			return 0, r.srcErr
		}
		if err := r.st.read(r.src); err != nil {
			r.srcErr, r.finished = err, true
		}
		r.out, r.cut = r.st.decide(r.finished)
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// scrub searches a whole text (a header's value): the text with each
// real value as it is replaced, or the needle of an encoded form in it.
func (s *scanner) scrub(text string) (string, *needle) {
	st := stream{s: s, buf: []byte(text)}
	out, cut := st.decide(true)
	if cut != nil {
		return "", cut
	}
	return string(out), nil
}
