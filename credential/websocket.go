package credential

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A WebSocket's server frames, searched as bodies are (RFC 6455). A host
// that stored a real value can send it back through a WebSocket the
// command opened with no sentinel in its handshake; the upgraded stream
// is read here, frame by frame, and handed to the command as frames srt
// writes itself:
//
//   - Payloads are unmasked (a server must not mask, but one that did
//     would show the command bytes srt never searched), and the data
//     frames' payloads are searched as one stream, across fragments and
//     across messages, the control frames' as another.
//   - A fragment of a message goes out as soon as what it holds is
//     decided; what may begin a value waits for the next fragment, and
//     the end of a message hands out all of it. So the frames the
//     command gets are fragmented their own way (an intermediary may do
//     that when no extension is in use), and never deliver a value.
//   - The value as it is becomes its sentinel; an encoded form, or a
//     value that began in a message already handed out, closes the
//     WebSocket (1008) and is reported.
//   - What srt cannot read is refused: srt lets no extension be agreed
//     (permessage-deflate would compress the payloads), so a frame with a
//     reserved bit, an unknown opcode or a malformed length closes it.
//
// What the command sends goes to the server as it is.

// WebSocket opcodes.
const (
	wsContinuation = 0x0
	wsText         = 0x1
	wsBinary       = 0x2
	wsClose        = 0x8
	wsPing         = 0x9
	wsPong         = 0xa
	// wsMaxControl is the longest payload of a control frame.
	wsMaxControl = 125
)

// wsFilter reads a server's frames from src and hands out frames for the
// command.
type wsFilter struct {
	src io.Reader
	// in holds what was read from src and not yet taken.
	in      []byte
	inStart int
	srcErr  error
	// The frame being read: its opcode, FIN, mask key and how much of
	// its payload is still to come (and how much came, for the mask).
	inFrame bool
	op      byte
	fin     bool
	masked  bool
	key     [4]byte
	left    uint64
	seen    uint64
	// The message being read: its opcode, and whether a frame of it went
	// out (the next ones are continuations).
	inMessage bool
	msgOp     byte
	started   bool
	data      stream
	control   stream
	out       []byte
	// failed is the error that ends the stream once out is handed out.
	failed  error
	refused func(reason string) error
}

func newWSFilter(s *scanner, src io.Reader, refused func(reason string) error) *wsFilter {
	return &wsFilter{src: src, refused: refused,
		data: stream{s: s, history: true}, control: stream{s: s, history: true}}
}

func (w *wsFilter) Read(p []byte) (int, error) {
	for len(w.out) == 0 {
		if w.failed != nil {
			return 0, w.failed
		}
		w.step()
	}
	n := copy(p, w.out)
	w.out = w.out[n:]
	return n, nil
}

// fill makes at least n bytes of src available in w.in (false: src ended
// first; w.srcErr says how).
func (w *wsFilter) fill(n int) bool {
	for len(w.in)-w.inStart < n {
		if w.srcErr != nil {
			return false
		}
		if w.inStart > 0 {
			w.in = w.in[:copy(w.in, w.in[w.inStart:])]
			w.inStart = 0
		}
		if cap(w.in)-len(w.in) < readSize {
			// What is left is less than a frame's head or a control
			// frame.
			w.in = append(make([]byte, 0, readSize+2*wsMaxControl), w.in...)
		}
		k, err := w.src.Read(w.in[len(w.in):cap(w.in)])
		w.in = w.in[:len(w.in)+k]
		if err != nil {
			w.srcErr = err
		}
	}
	return true
}

// step reads and hands out what it can: a frame's head, a control frame,
// or some of a data frame's payload.
func (w *wsFilter) step() {
	if !w.inFrame {
		w.head()
		return
	}
	if w.op >= wsClose {
		// A control frame comes whole (at most 125 bytes).
		if !w.fill(int(w.left)) {
			w.end()
			return
		}
		payload := w.take(int(w.left))
		w.control.feed(payload)
		out, cut := w.control.decide(true)
		if cut != nil {
			w.fail(w.cutReason(cut, "a control frame"))
			return
		}
		if len(out) > wsMaxControl {
			w.fail("a control frame with a real value in it is too long with its sentinel")
			return
		}
		w.out = appendFrame(w.out, true, w.op, out)
		w.inFrame = false
		return
	}
	if w.left > 0 && !w.fill(1) {
		w.end()
		return
	}
	payload := w.take(int(min(w.left, uint64(len(w.in)-w.inStart))))
	last := w.left == 0 && w.fin
	w.data.feed(payload)
	out, cut := w.data.decide(last)
	if cut != nil {
		// What was decided before it goes out, and then the close.
		if len(out) > 0 {
			w.out = appendFrame(w.out, false, w.fragmentOp(), out)
		}
		w.fail(w.cutReason(cut, "a message"))
		return
	}
	if len(out) > 0 || last {
		w.out = appendFrame(w.out, last, w.fragmentOp(), out)
	}
	if w.left == 0 {
		w.inFrame = false
		if w.fin {
			w.inMessage = false
		}
	}
}

// fragmentOp is the opcode of the message's next frame out.
func (w *wsFilter) fragmentOp() byte {
	if w.started {
		return wsContinuation
	}
	w.started = true
	return w.msgOp
}

// take takes n bytes of the frame's payload from w.in, unmasked.
func (w *wsFilter) take(n int) []byte {
	b := w.in[w.inStart : w.inStart+n]
	w.inStart += n
	if w.masked {
		for i := range b {
			b[i] ^= w.key[(w.seen+uint64(i))&3]
		}
	}
	w.seen += uint64(n)
	w.left -= uint64(n)
	return b
}

// head reads a frame's head, and refuses what srt cannot read.
func (w *wsFilter) head() {
	if !w.fill(2) {
		w.end()
		return
	}
	b0, b1 := w.in[w.inStart], w.in[w.inStart+1]
	size, n := uint64(b1&0x7f), 2
	switch size {
	case 126:
		n = 4
	case 127:
		n = 10
	}
	if b1&0x80 != 0 {
		n += 4
	}
	if !w.fill(n) {
		w.end()
		return
	}
	h := w.in[w.inStart : w.inStart+n]
	switch size {
	case 126:
		size = uint64(binary.BigEndian.Uint16(h[2:]))
	case 127:
		size = binary.BigEndian.Uint64(h[2:])
	}
	w.fin, w.op, w.masked = b0&0x80 != 0, b0&0x0f, b1&0x80 != 0
	if w.masked {
		copy(w.key[:], h[n-4:])
	}
	w.inStart += n
	w.left, w.seen, w.inFrame = size, 0, true
	switch {
	case b0&0x70 != 0:
		w.fail("the server sent a frame with a reserved bit set (an extension srt did not let it agree on, such as compression): srt cannot search it")
	case size>>63 != 0:
		w.fail("the server sent a frame of a malformed length")
	case w.op >= wsClose && w.op <= wsPong:
		if !w.fin || size > wsMaxControl {
			w.fail("the server sent a malformed control frame")
		}
	case w.op == wsContinuation:
		if !w.inMessage {
			w.fail("the server sent a continuation frame outside a message")
		}
	case w.op == wsText || w.op == wsBinary:
		if w.inMessage {
			w.fail("the server began a message inside another")
		}
		w.inMessage, w.msgOp, w.started = true, w.op, false
	default:
		w.fail(fmt.Sprintf("the server sent a frame of unknown opcode %d", w.op))
	}
}

// end is the server's stream ending: cleanly between frames (what a
// message held back is dropped with it).
func (w *wsFilter) end() {
	w.failed = w.srcErr
	if errors.Is(w.srcErr, io.EOF) && (w.inFrame || w.inMessage || len(w.in) > w.inStart) {
		w.failed = io.ErrUnexpectedEOF
	}
}

// fail closes the command's WebSocket: a close frame (1008, policy
// violation) after what was decided, then the refusal.
func (w *wsFilter) fail(reason string) {
	w.out = appendFrame(w.out, true, wsClose, append([]byte{0x03, 0xf0}, "srt: refused, see its violations"...))
	w.failed = w.refused("WebSocket: " + reason)
	w.inFrame = false
}

func (w *wsFilter) cutReason(n *needle, where string) string {
	switch {
	case n.form != "":
		return fmt.Sprintf("the server sent the real value of %s %s in %s; srt closed the WebSocket", n.secret, n.form, where)
	default:
		return fmt.Sprintf("the server sent the real value of %s split across the end of %s, which was handed out already; srt closed the WebSocket", n.secret, where)
	}
}

// appendFrame appends a server frame (unmasked) to b.
func appendFrame(b []byte, fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b = append(b, b0, byte(n))
	case n < 1<<16:
		b = binary.BigEndian.AppendUint16(append(b, b0, 126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, b0, 127), uint64(n))
	}
	return append(b, payload...)
}

// wsConn is an upgraded connection with its server's side searched.
type wsConn struct {
	r io.Reader
	io.WriteCloser
}

func (c wsConn) Read(p []byte) (int, error) { return c.r.Read(p) }
