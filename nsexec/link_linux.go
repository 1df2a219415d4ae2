package nsexec

import (
	"encoding/json"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// sendLink sends one message to srt over the link, with descriptors.
func sendLink(link *os.File, msg *linkMessage, fds []int) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return unix.Sendmsg(int(link.Fd()), data, unix.UnixRights(fds...), nil, 0)
}

// sendFd passes fd over the Unix socket c.
func sendFd(c *os.File, fd int) error {
	return unix.Sendmsg(int(c.Fd()), []byte{0}, unix.UnixRights(fd), nil, 0)
}

// receiveFdOn takes one descriptor from the Unix socket sock.
func receiveFdOn(sock int) (int, error) {
	buf := make([]byte, 1)
	// Room for the credentials too, which a socket with SO_PASSCRED gets.
	oob := make([]byte, unix.CmsgSpace(4)+unix.CmsgSpace(unix.SizeofUcred))
	n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, err
	}
	if n == 0 && oobn == 0 {
		return -1, io.EOF
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return -1, errors.New("no descriptor received")
	}
	for i := range msgs {
		if fds, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			for _, fd := range fds[1:] {
				unix.Close(fd)
			}
			if len(fds) > 0 {
				return fds[0], nil
			}
		}
	}
	return -1, errors.New("no descriptor received")
}
