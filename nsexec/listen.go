package nsexec

import (
	"context"
	"net"
)

// Listen is net.Listen without Multipath TCP, which Go asks for by default
// on Linux: the proxies' and the transparent path's listeners are on
// loopback, where a second path cannot exist, and Go would probe with a
// throwaway socket and create an MPTCP socket and its subflow for each.
func Listen(network, address string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), network, address)
}
