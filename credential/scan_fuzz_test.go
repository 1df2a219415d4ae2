package credential

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/srt-go/srt/internal/leakcheck"
)

// fuzzSecret is a secret with a fixed sentinel (so that a run repeats).
func fuzzSecret(real string) Secret {
	return Secret{Name: "env:FUZZ", Real: real, Sentinel: "fake_value_00000000-0000-4000-8000-000000000000"}
}

// The streaming search, whatever the reads' sizes, decides as the search
// of the whole does (the same bytes out, cut off at the same place);
// never holds back more than its window; and hands out no form of the
// value it searches for. The body gets one of the value's forms put in
// at a place the fuzzer picks, so that matches are found, not just
// missed.
func FuzzScrubStream(f *testing.F) {
	f.Add([]byte("stored=&x"), "ghp_0123456789abcdef", uint16(7), uint8(3), uint8(2))
	f.Add([]byte("data: \n\n"), `k/+=Q"<&>\ é~`, uint16(6), uint8(1), uint8(5))
	f.Add([]byte("YWJjZGVmZ2hpams="), "abcdefghijk", uint16(0), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, real string, at uint16, form, chunk uint8) {
		if len(real) < minScrubbed || len(real) > 128 || len(body) > 4096 {
			return
		}
		s := fuzzSecret(real)
		ns := needles(s)
		n := ns[int(form)%len(ns)]
		i := int(at) % (len(body) + 1)
		body = append(append(append([]byte{}, body[:i]...), n.text...), body[i:]...)
		sc := newScanner(ns)

		whole := stream{s: sc, buf: bytes.Clone(body)}
		wantOut, wantCut := whole.decide(true)
		wantOut = bytes.Clone(wantOut)

		st := stream{s: sc}
		var src io.Reader = chunkReader(string(body), int(chunk)%23+1)
		if chunk%2 == 1 {
			src = iotest.HalfReader(src)
		}
		var got []byte
		var cut *needle
		for final := false; !final && cut == nil; {
			if err := st.read(src); err != nil {
				final = true
			}
			var out []byte
			out, cut = st.decide(final)
			got = append(got, out...)
			if held := len(st.buf) - st.rest; !final && cut == nil && held > sc.window {
				t.Fatalf("held back %d bytes, more than the window of %d", held, sc.window)
			}
		}
		if !bytes.Equal(got, wantOut) || (cut == nil) != (wantCut == nil) || cut != nil && cut.form != wantCut.form {
			t.Fatalf("streamed %q (cut %v), whole %q (cut %v)", got, cut, wantOut, wantCut)
		}
		// What is handed out as it came lies between the sentinels put
		// in: no form of the value is there.
		for _, piece := range bytes.Split(got, []byte(s.Sentinel)) {
			for _, n := range ns {
				if n.in(piece) {
					t.Fatalf("handed out %s %q in %q", n.form, n.text, got)
				}
			}
		}
	})
}

// in reports whether b holds n anywhere.
func (n *needle) in(b []byte) bool {
	for i := 0; i+len(n.text) <= len(b); i++ {
		if n.at(b, i) {
			return true
		}
	}
	return false
}

// A WebSocket server's bytes, whatever they are and however they come,
// give the command well-formed frames, none masked or with a reserved
// bit, and none of them, alone or joined as a client may join them,
// holds a token-like value as it is.
func FuzzWebSocketFilter(f *testing.F) {
	f.Add(wsFrame(true, 0, 1, nil, []byte(`{"stored":"ghp_0123456789abcdef"}`)), "ghp_0123456789abcdef", uint8(3))
	f.Add(append(wsFrame(false, 0, 1, []byte{1, 2, 3, 4}, []byte("ghp_0123")), wsFrame(true, 0, 0, nil, []byte("456789abcdef"))...), "ghp_0123456789abcdef", uint8(1))
	f.Add(append(wsFrame(true, 0, 9, nil, []byte("ghp_0123")), wsFrame(true, 0, 9, nil, []byte("456789abcdef"))...), "ghp_0123456789abcdef", uint8(0))
	f.Fuzz(func(t *testing.T, server []byte, real string, chunk uint8) {
		if len(real) < minScrubbed || len(real) > 64 {
			return
		}
		for _, c := range []byte(real) {
			if !isBase64Char(c) {
				return // a frame's head cannot be part of such a value
			}
		}
		var src io.Reader = chunkReader(string(server), int(chunk)%19+1)
		w := newWSFilter(newScanner(needles(fuzzSecret(real))), src, refusal)
		out, _ := io.ReadAll(w)
		frames, rest := leakcheck.Frames(out)
		if len(rest) > 0 {
			t.Fatalf("a broken frame handed out: %q", rest)
		}
		var data, control []byte
		for _, fr := range frames {
			if fr.Masked || fr.RSV != 0 || fr.Opcode >= wsClose && len(fr.Payload) > wsMaxControl {
				t.Fatalf("a frame the command must not get: %+v", fr)
			}
			if fr.Opcode < wsClose {
				data = append(data, fr.Payload...)
			} else {
				control = append(control, fr.Payload...)
			}
		}
		// Between the sentinels put in, the value is nowhere.
		for _, b := range [][]byte{out, data, control} {
			for _, piece := range bytes.Split(b, []byte(fuzzSecret(real).Sentinel)) {
				if bytes.Contains(piece, []byte(real)) {
					t.Fatalf("the value was handed out: %q", out)
				}
			}
		}
	})
}
