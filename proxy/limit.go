package proxy

import (
	"fmt"
	"net"

	"github.com/srt-go/srt/netfilter"
)

// MaxConnsPerClient is the default for Server.MaxConnsPerClient: twice
// the reference's cap on tunnels (256), so that no tool that works under
// the reference is refused here, and far above what busy clients keep
// open (npm 15 sockets an origin; Chrome 32 to a proxy, 256 in all). One
// open connection costs srt two descriptors at rest (the command's
// socket and the upstream, on every path, the transparent one included),
// so a command at its cap holds about 1,000: with a descriptor limit of
// 20,000, ten commands at their caps still leave the session room.
const MaxConnsPerClient = 512

// admission is what becomes of an accepted connection.
type admission int

const (
	admitted admission = iota // served
	refused                   // answered with a refusal: its client is at its cap
	dropped                   // closed unanswered: its client is far past its cap
	shut                      // closed unanswered: the server is closed
)

// clientConns is what the server knows of one client's connections.
type clientConns struct {
	// open counts the client's connections from accept to close,
	// handshakes and refusals included: a command that opens thousands
	// of connections and never sends a request holds descriptors just
	// the same.
	open int
	// told: a refusal was reported, and open has not since fallen below
	// half the cap. A command that hammers its cap is reported once, not
	// once a connection.
	told bool
}

// refusalRoom is how many connections past its cap a client may have
// waiting for their refusal (each reads its request, to name the target
// in the answer and the violation, so each holds a descriptor for up to
// HandshakeTimeout). Past that, connections are closed as soon as they
// are accepted: however it floods, a client holds no more than cap+room
// connections open.
func refusalRoom(limit int) int { return max(limit/4, 16) }

// admit counts c against client's connections and says what to do with
// it. Every connection admitted (served or refused) must be given back
// with release.
func (s *Server) admit(c net.Conn, client *Client) admission {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return shut
	}
	cc := s.clients[client]
	if cc == nil {
		cc = &clientConns{}
		s.clients[client] = cc
	}
	limit := s.MaxConnsPerClient
	if limit > 0 && cc.open >= limit+refusalRoom(limit) {
		return dropped
	}
	cc.open++
	s.conns[c] = struct{}{}
	if limit > 0 && cc.open > limit {
		return refused
	}
	return admitted
}

// release gives back a connection that admit counted.
func (s *Server) release(c net.Conn, client *Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	s.forget(client)
}

// forget takes one connection off client's count (s.mu held).
func (s *Server) forget(client *Client) {
	cc := s.clients[client]
	cc.open--
	switch {
	case cc.open == 0:
		// Forgotten with its last connection: a session runs many
		// commands, and each would otherwise stay in the map.
		delete(s.clients, client)
	case cc.open < s.MaxConnsPerClient/2:
		cc.told = false
	}
}

// admitUpstream counts a connection srt opens for client (an upstream of
// a terminated tunnel, which carries many requests, each of which may
// want a connection of its own) against the client's cap: false when
// the client is at it. It is given back with releaseUpstream.
func (s *Server) admitUpstream(client *Client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	cc := s.clients[client]
	if cc == nil {
		cc = &clientConns{}
		s.clients[client] = cc
	}
	if s.MaxConnsPerClient > 0 && cc.open >= s.MaxConnsPerClient {
		return false
	}
	cc.open++
	return true
}

func (s *Server) releaseUpstream(client *Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget(client)
}

// refuse reports a connection refused for its client's cap, once until
// the client's count falls below half the cap again, and returns the
// reason to answer with.
func (s *Server) refuse(client *Client, protocol, host string, port uint16) string {
	reason := fmt.Sprintf("too many open connections from this sandbox, limit %d", s.MaxConnsPerClient)
	s.mu.Lock()
	cc := s.clients[client]
	tell := !cc.told
	cc.told = true
	s.mu.Unlock()
	if tell && s.OnDecision != nil {
		s.OnDecision(Decision{Protocol: protocol, Host: host, Port: port, Decision: netfilter.Decision{Reason: reason}, Client: client})
	}
	return reason
}
