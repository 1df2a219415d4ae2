package proxy

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// Bounds of the wait after a failed accept, as net/http's.
const (
	acceptDelayFirst = 5 * time.Millisecond
	acceptDelayMax   = time.Second
)

// Accept returns the next connection on ln. A failure that passes is
// waited out — 5 ms, doubling up to 1 s between tries, as net/http does
// — instead of being returned: when a command has used up srt's
// descriptors, accept fails with EMFILE until its connections close, and
// a serving loop that ended on that error would leave the proxy deaf for
// every command of the session afterwards. It returns the error that
// does not pass: the listener closed, or one it cannot serve.
func Accept(ln net.Listener) (net.Conn, error) {
	delay := time.Duration(0)
	for {
		c, err := ln.Accept()
		if err == nil || !acceptPasses(err) {
			return c, err
		}
		delay = min(max(2*delay, acceptDelayFirst), acceptDelayMax)
		time.Sleep(delay)
	}
}

// acceptPassing are the errors of accept(2) that say nothing about the
// listener: out of descriptors or memory, and the errors of a connection
// that failed before it was taken (Linux returns those from accept, and
// its manual asks to retry on them).
var acceptPassing = []error{
	syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
	syscall.EINTR, syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EPERM,
	syscall.EPROTO, syscall.ENOPROTOOPT, syscall.EOPNOTSUPP,
	syscall.ENETDOWN, syscall.ENETUNREACH, syscall.EHOSTDOWN, syscall.EHOSTUNREACH,
}

func acceptPasses(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range acceptPassing {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
