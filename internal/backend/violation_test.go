package backend

import (
	"io"
	"net"
	"testing"

	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
)

// A command refused for its connection cap reads, in the exit summary
// and the violations block, as what it tried and why it was refused.
func TestConnectionCapViolation(t *testing.T) {
	policy, err := netfilter.NewPolicy([]string{"example.com"}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := proxy.New(policy)
	p.MaxConnsPerClient = 1
	decided := make(chan proxy.Decision, 1)
	p.OnDecision = func(d proxy.Decision) { decided <- d }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go p.ServeHTTP(ln, &proxy.Client{ID: "cmd"})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 2 { // the cap's one connection, then the one refused
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	io.WriteString(held[1], "CONNECT example.com:443 HTTP/1.1\r\n\r\n")
	v := FromDecision(<-decided)
	if got, want := v.Summary(), "blocked: connect example.com:443 (too many open connections from this sandbox, limit 1)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got, want := v.String(), "deny network-outbound example.com:443 (too many open connections from this sandbox, limit 1)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}
