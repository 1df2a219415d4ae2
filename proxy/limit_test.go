package proxy

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// One command's open connections are capped across all its listeners,
// handshakes included: past the cap, its requests are refused with a
// status that says why, and reported once; another command is served
// all along; the first is served again when its connections close, and
// reported again only after it has fallen below half its cap.
func TestConnectionCapPerClient(t *testing.T) {
	port, _ := upstream(t)
	target := fmt.Sprintf("127.0.0.1:%d", port)
	s := New(policy(t, []string{target}, nil, nil))
	const limit = 8
	s.MaxConnsPerClient = limit
	var mu sync.Mutex
	var refusals []Decision
	s.OnDecision = func(d Decision) {
		if !d.Allowed {
			mu.Lock()
			refusals = append(refusals, d)
			mu.Unlock()
		}
	}
	a, b := &Client{ID: "a"}, &Client{ID: "b"}
	ha, sa := startFor(t, s, a)
	hb, _ := startFor(t, s, b)

	var held []net.Conn
	closeHeld := func() {
		for _, c := range held {
			c.Close()
		}
		held = nil
	}
	defer closeHeld()
	// Half the cap in handshakes that never send a request, the other
	// half in tunnels through both of a's proxies.
	for range limit / 2 {
		c, err := net.Dial("tcp", ha)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for i := range limit / 2 {
		if i%2 == 0 {
			head, c := connectHTTP(t, ha, target)
			if c == nil {
				t.Fatalf("tunnel %d of %d: %q", i+1, limit, head)
			}
			held = append(held, c)
		} else {
			code, c := socksConnect(t, sa, 1, []byte{127, 0, 0, 1}, port)
			if code != socksSucceeded {
				t.Fatalf("tunnel %d of %d: SOCKS reply %d", i+1, limit, code)
			}
			held = append(held, c)
		}
	}

	// Past the cap, through either proxy.
	for range 3 {
		head, c := connectHTTP(t, ha, target)
		if c != nil {
			c.Close()
			t.Fatalf("a connection past the cap was served: %q", head)
		}
		for _, want := range []string{"HTTP/1.1 503 Service Unavailable\r\n", "X-Proxy-Error: too-many-connections\r\n",
			"\r\n\r\nsrt: too many open connections from this sandbox, limit 8\n"} {
			if !strings.Contains(head, want) {
				t.Errorf("refusal %q lacks %q", head, want)
			}
		}
		code, c := socksConnect(t, sa, 1, []byte{127, 0, 0, 1}, port)
		if c != nil {
			c.Close()
		}
		if code != socksGeneralFailure {
			t.Errorf("SOCKS past the cap: reply %d, want %d (general failure)", code, socksGeneralFailure)
		}
	}
	// Another command is served while this one is at its cap.
	if head, c := connectHTTP(t, hb, target); c == nil || !echoes(t, c) {
		t.Errorf("client b, while a is at its cap: %q", head)
	}
	mu.Lock()
	if len(refusals) != 1 {
		t.Errorf("%d refusals reported, want 1 for 6 refused connections: %+v", len(refusals), refusals)
	} else if d := refusals[0]; d.Client != a || d.Protocol != "connect" || d.Host != "127.0.0.1" || d.Port != port ||
		d.Reason != "too many open connections from this sandbox, limit 8" {
		t.Errorf("refusal reported as %+v", d)
	}
	mu.Unlock()

	// Its connections closed, the command is served again.
	closeHeld()
	deadline := time.Now().Add(5 * time.Second)
	for {
		head, c := connectHTTP(t, ha, target)
		if c != nil {
			if !echoes(t, c) {
				t.Error("the tunnel after the cap freed does not work")
			}
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("client a, its connections closed, still refused: %q", head)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Back from below half its cap (from none: once every connection of
	// a's has been given back, the probes above included), it is reported
	// again.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		gone := s.clients[a] == nil
		s.mu.Unlock()
		if gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("client a's closed connections are still counted")
		}
	}
	mu.Lock()
	before := len(refusals)
	mu.Unlock()
	for range limit {
		head, c := connectHTTP(t, ha, target)
		if c == nil {
			t.Fatalf("refilling: %q", head)
		}
		held = append(held, c)
	}
	if head, c := connectHTTP(t, ha, target); c != nil || !strings.HasPrefix(head, "HTTP/1.1 503") {
		t.Errorf("past the cap again: %q", head)
	}
	mu.Lock()
	if len(refusals) != before+1 {
		t.Errorf("past the cap again: %d refusals reported, want 1", len(refusals)-before)
	}
	mu.Unlock()
}

// A flood of connections far past the cap is closed at once, unanswered:
// a command that connects and never sends a request holds at most the
// cap plus the refusals' room in srt's descriptors.
func TestConnectionFloodIsDropped(t *testing.T) {
	s := New(policy(t, nil, nil, nil))
	const limit = 4
	s.MaxConnsPerClient = limit
	h, _ := startFor(t, s, &Client{ID: "a"})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", h)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		return c
	}
	// The cap and the room for refusals, all waiting in their handshake.
	for range limit + refusalRoom(limit) {
		dial()
	}
	// Each waits for its request: nothing comes back.
	probe := held[len(held)-1]
	probe.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := probe.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("a connection within the room: read %d, %v; want it waiting for its request", n, err)
	}
	// The next is closed before the handshake timeout could have closed it.
	c := dial()
	c.SetReadDeadline(time.Now().Add(HandshakeTimeout / 2))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || err == nil || isTimeout(err) {
		t.Errorf("a connection past the room: read %d, %v; want it closed at once", n, err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
