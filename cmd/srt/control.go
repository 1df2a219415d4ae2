package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/srt-go/srt"
	"github.com/srt-go/srt/config"
)

// controlChannel reads settings updates from --control-fd (spec i): one
// complete settings object per line, applied to the session as it
// arrives; network rules take effect on the next connection.
type controlChannel struct {
	c       *cli
	fd      int
	mu      sync.Mutex
	process *os.Process
	applied int
	fatal   bool
}

// readControl starts reading fd. Lines written before are waiting in the
// pipe and are applied first.
func readControl(c *cli, sb *srt.Sandbox, fd int) *controlChannel {
	ch := &controlChannel{c: c, fd: fd}
	f := os.NewFile(uintptr(fd), "control")
	go func() {
		r := bufio.NewReaderSize(f, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				ch.apply(sb, line)
			}
			if err == nil {
				continue
			}
			if !errors.Is(err, io.EOF) {
				ch.readFailed(err)
			}
			c.debugf("control fd %d: end of the channel (%v)", fd, err)
			return
		}
	}()
	return ch
}

func (ch *controlChannel) apply(sb *srt.Sandbox, line []byte) {
	s, _, err := config.Parse(bytes.TrimSpace(line))
	parsed := err == nil
	if parsed {
		err = sb.Update(s)
	}
	if err != nil {
		ch.c.errorf("Invalid config on control fd %d: ignored, previous config still in force", ch.fd)
		// Not only under --debug: the sender asked for something srt
		// does not do, or cannot now, and must learn why.
		var re *config.RefusedError
		switch {
		case errors.As(err, &re):
			for _, r := range re.Refusals {
				ch.c.errorf("control fd %d: %s", ch.fd, r)
			}
		case parsed:
			ch.c.errorf("control fd %d: %v", ch.fd, err)
		}
		ch.c.debugf("control fd %d: %v: %q", ch.fd, err, line)
		return
	}
	ch.c.acceptedMeaningless(s)
	ch.mu.Lock()
	ch.applied++
	ch.mu.Unlock()
	ch.c.debugf("control fd %d: new settings applied: %d allowed and %d denied domains", ch.fd, len(s.Network.AllowedDomains), len(s.Network.DeniedDomains))
}

// readFailed: after an update, the command goes on under the last one;
// before any, srt refuses to go on without the channel it was asked for.
func (ch *controlChannel) readFailed(err error) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.applied > 0 {
		ch.c.errorf("Error reading control fd %d: %v. The control channel is closed; no further updates will be applied.", ch.fd, err)
		return
	}
	ch.c.errorf("control fd %d failed before delivering an update: %v. Refusing to run the command without the control channel it asks for.", ch.fd, err)
	ch.fatal = true
	ch.terminate()
}

// started is called with the command's process once it runs.
func (ch *controlChannel) started(p *os.Process) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.process = p
	if ch.fatal {
		ch.terminate()
	}
}

func (ch *controlChannel) terminate() {
	if p := ch.process; p != nil {
		p.Signal(syscall.SIGTERM)
		time.AfterFunc(2*time.Second, func() { p.Kill() })
	}
}

func (ch *controlChannel) failed() bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.fatal
}

// violationsOut is where --violations writes JSON lines; a nil one
// writes nothing.
type violationsOut struct {
	mu sync.Mutex
	f  *os.File
	w  io.Writer // f, no real value written (credential.Redacting)
}

// openViolations opens "FILE" (created or emptied, 0600: ownfile.Create) or "fd:N".
func openViolations(spec string) (*violationsOut, error) {
	if spec == "" {
		return nil, nil
	}
	if n, ok := strings.CutPrefix(spec, "fd:"); ok {
		fd, err := strconv.Atoi(n)
		if err != nil || fd < 1 || fd == 0 || strings.TrimLeft(n, "0123456789") != "" {
			return nil, fmt.Errorf("%q is not a descriptor number", n)
		}
		if err := checkWritableFD(fd); err != nil {
			return nil, err
		}
		f := os.NewFile(uintptr(fd), spec)
		return &violationsOut{f: f, w: srt.Redacting(f)}, nil
	}
	// Never through a name an earlier sandboxed run could plant there
	// (a symlink or hard link to ~/.bashrc).
	f, err := srt.CreateOutput(spec, 0o600)
	if err != nil {
		return nil, err
	}
	return &violationsOut{f: f, w: srt.Redacting(f)}, nil
}

func (o *violationsOut) write(v srt.Violation) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.Write(v.MarshalLine())
}

func (o *violationsOut) Close() error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.f.Close()
}
