package proxy

import (
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// spliceMax is the most one splice(2) asks to move: a pipe's default
// capacity (16 pages), which it never holds more than.
const spliceMax = 64 << 10

// spliceFlags: SPLICE_F_NONBLOCK makes the pipe side non-blocking, so
// that a full socket is waited for in Go's poller, not in the kernel
// with a thread held; SPLICE_F_MOVE is a hint that costs nothing.
const spliceFlags = unix.SPLICE_F_NONBLOCK | unix.SPLICE_F_MOVE

// spliceCopy moves bytes from src to dst with splice(2) until src ends
// (nil error), either side fails, or src's read deadline passes; it
// returns how many bytes reached dst. handled is false when the rest of
// the stream is the caller's to copy: the two connections are not both
// TCP or Unix stream sockets, the kernel refuses to splice them, or no
// pipe can be made (srt is out of descriptors, and a buffered copy needs
// none).
//
// The bytes pass through a pipe this call owns. io.Copy splices too, but
// through the net package's pool of pipes, which closes them only when
// the garbage collector gets to them: 3,500 idle tunnels cost srt 14,000
// descriptors that stayed open after the tunnels closed, and the next
// connections found none. Here the pipe exists only while bytes are in
// flight: it is made when src has bytes to read, and closed as soon as
// it is empty and src has nothing more, so an idle tunnel holds no pipe,
// and a closed one none at all.
func spliceCopy(dst, src net.Conn) (written int64, handled bool, err error) {
	rs, ok := rawStream(src)
	if !ok {
		return 0, false, nil
	}
	rd, ok := rawStream(dst)
	if !ok {
		return 0, false, nil
	}
	p := pipe{r: -1, w: -1}
	defer p.close()
	for {
		// Drain: from src into the (empty) pipe.
		var n int64
		var serr error
		noPipe := false
		rerr := rs.Read(func(fd uintptr) bool {
			for {
				if p.r < 0 {
					// Make a pipe only for bytes that are there: ask
					// without taking them.
					var b [1]byte
					k, _, e := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
					switch {
					case e == unix.EINTR:
						continue
					case e == unix.EAGAIN:
						return false // wait until src is readable
					case e != nil:
						n, serr = 0, e
						return true
					case k == 0:
						n, serr = 0, nil // EOF
						return true
					}
					if p.open() != nil {
						noPipe = true
						return true
					}
				}
				n, serr = unix.Splice(int(fd), nil, p.w, nil, spliceMax, spliceFlags)
				switch serr {
				case unix.EINTR:
					continue
				case unix.EAGAIN:
					// The pipe is empty here: give its descriptors
					// back for as long as src stays quiet.
					p.close()
					return false
				}
				return true
			}
		})
		if rerr != nil {
			return written, true, rerr // a deadline, or a closed connection
		}
		if noPipe || serr == unix.EINVAL {
			return written, false, nil // nothing taken from src this round
		}
		if serr != nil {
			return written, true, os.NewSyscallError("splice", serr)
		}
		if n == 0 {
			return written, true, nil // EOF
		}
		// Pump: from the pipe into dst, all of it.
		for n > 0 {
			var m int64
			werr := rd.Write(func(fd uintptr) bool {
				for {
					m, serr = unix.Splice(p.r, nil, int(fd), nil, int(n), spliceFlags)
					if serr == unix.EINTR {
						continue
					}
					return serr != unix.EAGAIN
				}
			})
			if werr != nil {
				return written, true, werr
			}
			if serr != nil {
				return written, true, os.NewSyscallError("splice", serr)
			}
			n -= m
			written += m
		}
	}
}

// rawStream returns the raw connection of a TCP or Unix stream socket,
// the kinds splice(2) moves bytes between.
func rawStream(c net.Conn) (syscall.RawConn, bool) {
	var rc syscall.RawConn
	var err error
	switch c := c.(type) {
	case *net.TCPConn:
		rc, err = c.SyscallConn()
	case *net.UnixConn:
		if a, ok := c.LocalAddr().(*net.UnixAddr); !ok || a.Net != "unix" {
			return nil, false
		}
		rc, err = c.SyscallConn()
	default:
		return nil, false
	}
	return rc, err == nil
}

// pipe is the pair of descriptors of one pipe; -1 when closed.
type pipe struct{ r, w int }

func (p *pipe) open() error {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return err
	}
	p.r, p.w = fds[0], fds[1]
	return nil
}

func (p *pipe) close() {
	if p.r >= 0 {
		unix.Close(p.r)
		unix.Close(p.w)
		p.r, p.w = -1, -1
	}
}
