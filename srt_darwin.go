//go:build darwin

package srt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
	"github.com/srt-go/srt/seatbelt"

	"golang.org/x/sys/unix"
)

// The macOS backend (issue #21): each run is prepared by
// seatbelt_run_unix.go and started by a trampoline that applies its
// profile. It has never run on macOS, so it runs only when the user sets
// experimentalDarwin=1 to accept that.
const experimentalDarwin = "SRT_EXPERIMENTAL_DARWIN"

// MaybeRunInit runs the trampoline when this process was started as one,
// and never returns then; otherwise it returns at once.
func MaybeRunInit() {
	if len(os.Args) < 3 || os.Args[1] != trampolineRole {
		return
	}
	err := seatbelt.Trampoline(3, os.Args[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "srt: %v\n", err)
	os.Exit(125)
}

type darwinBackend struct {
	*Sandbox
	proxySession
	// session ends every run's profile tag.
	session string
	stopLog func()
}

func newBackend(s *Sandbox) backend { return &darwinBackend{Sandbox: s} }

// run is one command of the session.
type run struct {
	key, text string
	tag       string
	client    *proxy.Client
	cmd       *exec.Cmd
	dir       string
	mu        sync.Mutex
	listeners []net.Listener
}

// stop ends the run: its process group, its listeners, its directory.
func (r *run) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil && r.cmd.Process != nil {
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	}
	for _, l := range r.listeners {
		l.Close()
	}
	r.listeners = nil
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
}

func (s *darwinBackend) supported() error {
	if os.Getenv(experimentalDarwin) != "1" {
		return &UnsupportedError{Missing: "a macOS backend that has run on a Mac",
			Err: errors.New("srt's macOS backend is built and tested on Linux but has never run on macOS; set " + experimentalDarwin + "=1 to use it anyway")}
	}
	return nil
}

func (s *darwinBackend) start(settings *config.Settings) error {
	var b [6]byte
	rand.Read(b[:])
	s.session = hex.EncodeToString(b[:])
	if err := s.startProxies(s.Sandbox, settings, func(d proxy.Decision) {
		if r, ok := s.runOf(d.Client); ok {
			s.record(r, fromDecision(d))
		}
	}); err != nil {
		return err
	}
	// Denials inside the profiles, from the system log, by run tag. If
	// the log cannot be read, they go unreported (srt doctor says so).
	ctx, cancel := context.WithCancel(context.Background())
	s.stopLog = cancel
	if err := seatbelt.StreamDenials(ctx, s.session, s.denied); err != nil {
		s.debugf("The system log cannot be read (%v): denials inside the sandbox go unreported", err)
	}
	return nil
}

// denied records a denial the system log reported.
func (s *darwinBackend) denied(d seatbelt.Denial) {
	id, _, ok := seatbelt.ParseTag(d.Tag)
	if !ok {
		return
	}
	s.mu.Lock()
	var r *run
	for x := range s.runs {
		if x.tag == id {
			r = x
		}
	}
	s.mu.Unlock()
	if r != nil {
		s.record(r, Violation{Kind: KindSyscall, Operation: d.Operation, Target: d.Target, Reason: "Seatbelt: " + d.Process})
	}
}

func (s *darwinBackend) setNetwork(n config.Network, p *netfilter.Policy) error {
	return s.proxySession.setNetwork(s.Sandbox, n, p)
}

func (s *darwinBackend) stop() {
	if s.stopLog != nil {
		s.stopLog()
	}
	s.stopProxies()
}
func (s *darwinBackend) enforcement(*config.Settings) Enforcement { return darwinEnforcement() }
func (s *darwinBackend) hostWritable(path string) bool            { return writableOnHost(path) }
func (s *darwinBackend) settle(string)                            {}
func (s *darwinBackend) explainStart(err error) error             { return err }
func (s *darwinBackend) landlockABI() int                         { return 0 }

// startCommand starts a run's Cmd and, once its command has exited,
// ends the run: what it left running, its proxies, its directory.
func (s *darwinBackend) startCommand(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	s.mu.Lock()
	var r *run
	for x := range s.runs {
		if x.cmd == cmd {
			r = x
		}
	}
	s.mu.Unlock()
	if r != nil {
		go s.reap(r, cmd.Process.Pid)
	}
	return nil
}

// reap waits for pid's exit without reaping it (the caller's Wait does),
// then ends r.
func (s *darwinBackend) reap(r *run, pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		return // the session's Close ends it
	}
	defer unix.Close(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	out := make([]unix.Kevent_t, 1)
	for {
		if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, out, nil); err != unix.EINTR {
			break
		}
	}
	r.stop()
	s.mu.Lock()
	delete(s.runs, r)
	s.mu.Unlock()
}

func (s *darwinBackend) wrap(Run, []string) ([]string, error) {
	return nil, errors.New("srt: Wrap is not built for macOS yet; use Command")
}

func (s *darwinBackend) doctor() *Report {
	r := &Report{Enforcement: darwinEnforcement()}
	if err := s.supported(); err != nil {
		r.Enforcement = Enforcement{Level: None}
		r.Why = err.Error()
	}
	return r
}

func (s *darwinBackend) runOf(c *proxy.Client) (*run, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := range s.runs {
		if r.client == c {
			return r, true
		}
	}
	return nil, false
}

// command prepares one run (seatbeltRun) and keeps it for the session.
func (s *darwinBackend) command(ctx context.Context, o Run, argv []string) (*exec.Cmd, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	settings := s.settings
	s.mu.Unlock()
	if o.Terminal {
		return nil, errors.New("srt: Run.Terminal is not built for macOS yet")
	}
	sr, err := s.prepareSeatbelt(ctx, &s.proxySession, s.session, o, settings, argv)
	if err != nil {
		return nil, err
	}
	r := &run{key: sr.key, text: sr.text, tag: sr.tag, client: sr.client, cmd: sr.cmd, dir: sr.dir, listeners: sr.listeners}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		r.stop()
		return nil, ErrClosed
	}
	s.runs[r] = struct{}{}
	return sr.cmd, nil
}
