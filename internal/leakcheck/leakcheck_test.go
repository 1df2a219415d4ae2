package leakcheck

import (
	"bytes"
	"strings"
	"testing"
)

var secrets = []string{"ghp_0123456789abcdefghijABCDEFGHIJ", `k/+=Q"<&>\ é~*'()` + "\x01", "Ab+/9x~Z"}

// The judge finds every form it makes, wherever it sits in what it is
// given, and nothing in text that does not hold the secret.
func TestFind(t *testing.T) {
	for _, s := range secrets {
		forms := Forms([]byte(s))
		if len(forms) < 10 {
			t.Errorf("%q: only %d forms", s, len(forms))
		}
		for _, f := range forms {
			for _, around := range [][2]string{{"", ""}, {"x=", "&y"}, {"ab", "cd"}, {`{"v":"`, `"}`}} {
				data := []byte(around[0] + string(f.Text) + around[1])
				if Find(data, s) == "" {
					t.Errorf("%q %s in %q: not found", s, f.Name, data)
				}
			}
			if got := Find(f.Text[:len(f.Text)-len(f.Text)/3], s); got != "" && !strings.Contains(f.Name, "JSON") {
				t.Errorf("%q %s: two thirds of it found as %s", s, f.Name, got)
			}
		}
		if got := Find([]byte(strings.Repeat("the quick brown fox 0123456789abcdef ", 20)), s); got != "" {
			t.Errorf("%q found (%s) where it is not", s, got)
		}
	}
}

// The WebSocket judge reads frames as a client does: masked, split
// across frames, in control frames.
func TestFindInWebSocket(t *testing.T) {
	s := secrets[0]
	frame := func(fin bool, op byte, key []byte, payload string) []byte {
		b := []byte{op, byte(len(payload))}
		if fin {
			b[0] |= 0x80
		}
		p := []byte(payload)
		if key != nil {
			b[1] |= 0x80
			b = append(b, key...)
			for i := range p {
				p[i] ^= key[i%4]
			}
		}
		return append(b, p...)
	}
	key := []byte{1, 2, 3, 4}
	for name, stream := range map[string][]byte{
		"masked":     frame(true, 1, key, "x"+s),
		"fragmented": append(frame(false, 1, nil, s[:10]), frame(true, 0, key, s[10:])...),
		"two pings":  append(frame(true, 9, nil, s[:5]), frame(true, 9, nil, s[5:])...),
		"two texts":  append(frame(true, 1, key, s[:5]), frame(true, 1, key, s[5:])...),
	} {
		if FindInWebSocket(stream, s) == "" {
			t.Errorf("%s: not found", name)
		}
		if bytes.Contains(stream, []byte(s)) {
			t.Errorf("%s: the test's stream holds the secret as it is", name)
		}
	}
	if got := FindInWebSocket(frame(true, 1, key, "nothing here"), s); got != "" {
		t.Errorf("found %s in a frame without it", got)
	}
}
