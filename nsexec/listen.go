package nsexec

import (
	"context"
	"net"
)

// Listen is net.Listen without Multipath TCP, which Go asks for by default
// on Linux: the proxies' and the transparent path's listeners are on
// loopback, where a second path cannot exist, and every accepted
// connection would pay for MPTCP's layer over TCP (at setup and per byte).
func Listen(network, address string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), network, address)
}
