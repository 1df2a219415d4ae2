package main

import (
	"bytes"
	"io"
)

// maxLine bounds a line handed to a line writer's function; a longer one
// is cut.
const maxLine = 4096

// lineWriter calls fn with every complete line written to it (without
// the newline); nil fn discards.
func lineWriter(fn func(string)) io.Writer {
	if fn == nil {
		return io.Discard
	}
	return &lines{fn: fn}
}

type lines struct {
	fn  func(string)
	buf []byte
}

func (l *lines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxLine - len(l.buf)
			if len(p) > room {
				p = p[:max(room, 0)]
			}
			l.buf = append(l.buf, p...)
			break
		}
		l.buf = append(l.buf, p[:min(i, max(maxLine-len(l.buf), 0))]...)
		l.fn(string(bytes.TrimSuffix(l.buf, []byte("\r"))))
		l.buf = l.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}
