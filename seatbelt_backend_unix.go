//go:build unix

package srt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
	"github.com/srt-go/srt/seatbelt"
)

// The macOS backend (issue #21), all but what touches macOS itself
// (srt_darwin.go: the trampoline's start, waiting for a process's exit,
// reading the system log), so that it is built and tested on Linux too.
// Each run is prepared by seatbelt_run_unix.go. It has never run on
// macOS, so it runs only when the user sets experimentalDarwin=1 to
// accept that.
const experimentalDarwin = "SRT_EXPERIMENTAL_DARWIN"

type seatbeltBackend struct {
	*Sandbox
	proxySession
	// session ends every run's profile tag.
	session string
	// streamLog follows the system log's denials of the session's
	// profiles (nil: none are reported); waitExit waits for a process's
	// exit without reaping it (nil: runs end with the session).
	streamLog func(ctx context.Context, session string, f func(seatbelt.Denial)) error
	waitExit  func(pid int)
	stopLog   func()

	mu   sync.Mutex
	runs map[*seatbeltCmd]struct{}
}

// seatbeltCmd is one command of the session.
type seatbeltCmd struct {
	*seatbeltRun
	mu sync.Mutex
}

// stop ends the run: its process group, its listeners, its directory.
func (r *seatbeltCmd) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil && r.cmd.Process != nil {
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	}
	r.close()
	r.listeners, r.dir = nil, ""
}

func (s *seatbeltBackend) supported() error {
	if os.Getenv(experimentalDarwin) != "1" {
		return &UnsupportedError{Missing: "a macOS backend that has run on a Mac",
			Err: errors.New("srt's macOS backend is built and tested on Linux but has never run on macOS; set " + experimentalDarwin + "=1 to use it anyway")}
	}
	return nil
}

func (s *seatbeltBackend) start(settings *config.Settings) error {
	var b [6]byte
	rand.Read(b[:])
	s.session = hex.EncodeToString(b[:])
	s.runs = map[*seatbeltCmd]struct{}{}
	if err := s.startProxies(s.Sandbox, settings, func(d proxy.Decision) {
		if r := s.find(func(r *seatbeltCmd) bool { return r.client == d.Client }); r != nil {
			s.recordFor(r.key, r.text, fromDecision(d))
		}
	}); err != nil {
		return err
	}
	if s.streamLog != nil {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopLog = cancel
		if err := s.streamLog(ctx, s.session, s.denied); err != nil {
			s.debugf("The system log cannot be read (%v): denials inside the sandbox go unreported", err)
		}
	}
	return nil
}

// find returns the run that match says is the one, or nil.
func (s *seatbeltBackend) find(match func(*seatbeltCmd) bool) *seatbeltCmd {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := range s.runs {
		if match(r) {
			return r
		}
	}
	return nil
}

// denied records a denial the system log reported, for the run whose
// tag it carries.
func (s *seatbeltBackend) denied(d seatbelt.Denial) {
	id, session, ok := seatbelt.ParseTag(d.Tag)
	if !ok || session != s.session {
		return
	}
	if r := s.find(func(r *seatbeltCmd) bool { return r.tag == id }); r != nil {
		s.recordFor(r.key, r.text, Violation{Kind: KindSyscall, Operation: d.Operation, Target: d.Target, Reason: "Seatbelt: " + d.Process})
	}
}

func (s *seatbeltBackend) setNetwork(n config.Network, p *netfilter.Policy) error {
	return s.proxySession.setNetwork(s.Sandbox, n, p)
}

// stop ends the session: its runs, the log, the proxies.
func (s *seatbeltBackend) stop() {
	s.mu.Lock()
	runs := s.runs
	s.runs = map[*seatbeltCmd]struct{}{}
	s.mu.Unlock()
	for r := range runs {
		r.stop()
	}
	if s.stopLog != nil {
		s.stopLog()
	}
	s.stopProxies()
}

func (s *seatbeltBackend) enforcement(*config.Settings) Enforcement { return darwinEnforcement() }
func (s *seatbeltBackend) hostWritable(path string) bool            { return writableOnHost(path) }
func (s *seatbeltBackend) settle(string)                            {}
func (s *seatbeltBackend) explainStart(err error) error             { return err }
func (s *seatbeltBackend) landlockABI() int                         { return 0 }

func (s *seatbeltBackend) wrap(Run, []string) ([]string, error) {
	return nil, errors.New("srt: Wrap is not built for macOS yet; use Command")
}

func (s *seatbeltBackend) doctor() *Report {
	r := &Report{Enforcement: darwinEnforcement(), Features: []Feature{
		{Name: "Seatbelt (sandbox_init, applied by srt's trampoline)", OK: true, Detail: "built and tested on Linux; not yet run on a Mac"},
		// Go's crypto/x509 (and gh, terraform, …) verifies certificates
		// through trustd on macOS, which the profile reaches only with
		// enableWeakerNetworkIsolation: without it their TLS fails.
		{Name: "trustd (TLS verification of Go programs: gh, terraform, …)", OK: false,
			Detail: "reachable only with enableWeakerNetworkIsolation; set it if such programs must verify TLS inside"},
	}}
	if err := s.supported(); err != nil {
		r.Enforcement = Enforcement{Level: None}
		r.Why = err.Error()
	}
	return r
}

// command prepares one run (prepareSeatbelt) and keeps it for the session.
func (s *seatbeltBackend) command(ctx context.Context, o Run, argv []string) (*exec.Cmd, error) {
	s.Sandbox.mu.Lock()
	if s.closed {
		s.Sandbox.mu.Unlock()
		return nil, ErrClosed
	}
	settings := s.settings
	s.Sandbox.mu.Unlock()
	if o.Terminal {
		return nil, errors.New("srt: Run.Terminal is not built for macOS yet")
	}
	sr, err := s.prepareSeatbelt(ctx, &s.proxySession, s.session, o, settings, argv)
	if err != nil {
		return nil, err
	}
	r := &seatbeltCmd{seatbeltRun: sr}
	s.mu.Lock()
	s.runs[r] = struct{}{}
	s.mu.Unlock()
	return sr.cmd, nil
}

// startCommand starts a run's Cmd and, once its command has exited,
// ends the run: what it left running, its proxies, its directory.
func (s *seatbeltBackend) startCommand(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	r := s.find(func(r *seatbeltCmd) bool { return r.cmd == cmd })
	if r != nil && s.waitExit != nil {
		go func() {
			s.waitExit(cmd.Process.Pid)
			r.stop()
			s.mu.Lock()
			delete(s.runs, r)
			s.mu.Unlock()
		}()
	}
	return nil
}
