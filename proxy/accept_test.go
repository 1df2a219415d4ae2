package proxy

import (
	"net"
	"os"
	"syscall"
	"testing"
)

// fakeListener fails with errs, in order, then returns conn.
type fakeListener struct {
	net.Listener
	errs  []error
	conn  net.Conn
	tries int
}

func (l *fakeListener) Accept() (net.Conn, error) {
	l.tries++
	if len(l.errs) > 0 {
		err := l.errs[0]
		l.errs = l.errs[1:]
		return nil, err
	}
	return l.conn, nil
}

// Accept waits out what passes (out of descriptors, a connection reset
// before it was taken) and returns what does not (a closed listener).
func TestAcceptWaitsOutPassingErrors(t *testing.T) {
	accept := func(errno syscall.Errno) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
	}
	want, _ := net.Pipe()
	defer want.Close()
	l := &fakeListener{errs: []error{accept(syscall.EMFILE), accept(syscall.EMFILE), accept(syscall.ENFILE), accept(syscall.ECONNABORTED)}, conn: want}
	if c, err := Accept(l); c != want || err != nil || l.tries != 5 {
		t.Errorf("after four passing errors: %v, %v after %d tries; want the connection after 5", c, err, l.tries)
	}
	for _, err := range []error{net.ErrClosed, &net.OpError{Op: "accept", Err: net.ErrClosed}, accept(syscall.EBADF), accept(syscall.EINVAL)} {
		l := &fakeListener{errs: []error{err}, conn: want}
		if c, got := Accept(l); c != nil || got != err || l.tries != 1 {
			t.Errorf("%v: got %v, %v after %d tries; want the error at once", err, c, got, l.tries)
		}
	}
}
