package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// object is a JSON object that remembers the order of its keys, so that
// issues and warnings come out in the order of the file.
type object struct {
	keys []string
	vals map[string]any
}

// decodeJSON reads exactly one JSON value. Numbers stay json.Number so
// that integers can be told from fractions; a key given twice in one
// object is an error, because which copy wins differs between readers and
// a reviewer of the file may be looking at the other one.
func decodeJSON(data []byte) (any, error) {
	// encoding/json would turn invalid UTF-8 into U+FFFD, and a path
	// rewritten that way names a file that does not exist: a deny rule on
	// it would protect nothing.
	if !utf8.Valid(data) {
		bad := 0
		for bad < len(data) {
			r, n := utf8.DecodeRune(data[bad:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			bad += n
		}
		return nil, fmt.Errorf("invalid UTF-8 at byte %d", bad)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, positioned(data, d, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, positioned(data, d, errors.New("unexpected data after the top-level value"))
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string) // the decoder only yields strings in key position
				if _, dup := o.vals[k]; dup {
					return nil, fmt.Errorf("key %q appears twice in one object", k)
				}
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				o.keys = append(o.keys, k)
				o.vals[k] = v
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := d.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %q", t)
	default:
		return t, nil // string, json.Number, bool or nil
	}
}

// positioned adds "line L, column C" to a decoding error.
func positioned(data []byte, d *json.Decoder, err error) error {
	off := d.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = errors.New("unexpected end of input")
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, c := range data[:min(int(off), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("%v (line %d, column %d)", err, line, col)
}
