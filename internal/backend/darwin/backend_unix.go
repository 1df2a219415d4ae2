//go:build unix

// Package darwin is srt's macOS backend: the glue between the facade's
// one backend interface (internal/backend) and package seatbelt, which
// makes each run's profile and keeper. All of it but what touches macOS
// itself (sys_darwin.go) is built and tested on Linux too.
package darwin

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/internal/rundir"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/proxy"
	"github.com/srt-go/srt/seatbelt"
	"golang.org/x/sys/unix"
)

// The macOS backend (issue #21), all but what touches macOS itself
// (sys_darwin.go: the keeper's and the wrap role's start with
// sandbox_init, the process table, the system log), so that it is built
// and tested on Linux too. Each run is prepared by run_unix.go. It has never run on
// macOS, so it runs only when the user sets experimentalDarwin=1 to
// accept that.
const experimentalDarwin = "SRT_EXPERIMENTAL_DARWIN"

type seatbeltBackend struct {
	host    backend.Host
	proxies backend.Proxies
	// session ends every run's profile tag.
	session string
	// streamLog follows the system log's denials of the session's
	// profiles (nil: none are reported).
	streamLog func(ctx context.Context, session string, f func(seatbelt.Denial)) error
	stopLog   func()
	// osVersion is the system's version, for srt doctor; probe checks
	// that a profile is enforced (nil: probeSeatbelt).
	osVersion func() string
	probe     func() error
	// procs lists the process table, for the runs' tree watches
	// (tree_unix.go; nil: none).
	procs func() ([]procEntry, error)

	mu   sync.Mutex
	runs map[*seatbeltCmd]struct{}
}

// seatbeltCmd is one command of the session.
type seatbeltCmd struct {
	*seatbeltRun
	onStop func(asked bool)
	// onTerminal is Run.OnTerminal: the keeper starts every command in
	// the foreground of its terminal, so it is told as the command starts.
	onTerminal func()
	procs      func() ([]procEntry, error)

	mu sync.Mutex
	// wrapLn takes a wrapped run's trampoline.
	wrapLn net.Listener
	// keeper is the keeper's pid, its session's id: srt's child's, or
	// what a wrapped run's trampoline (unconfined) says. pid is the
	// command's, its process group's, as the keeper says (0 until then);
	// ended: the keeper killed that group as it ended.
	keeper, pid int
	ended       bool
	// watch follows the tree under the keeper.
	watch *treeWatch
	// exited: the keeper is gone (its reports ended), its pid another's
	// to take; stopped: the run has ended.
	exited, stopped bool
}

// stop ends the run: the keeper's session and the command's group, its
// listeners, its directory. The keeper runs under the profile, with the
// command: what it says is believed only of a process in its own session,
// so that no report makes srt signal another process.
func (r *seatbeltCmd) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	if r.watch != nil {
		r.watch.kill()
	}
	if r.keeper > 0 {
		if sid, err := unix.Getsid(r.pid); r.pid > 0 && !r.ended && err == nil && sid == r.keeper {
			syscall.Kill(-r.pid, syscall.SIGKILL)
		}
		if !r.exited {
			syscall.Kill(-r.keeper, syscall.SIGKILL)
		}
	}
	if r.wrapLn != nil {
		r.wrapLn.Close()
	}
	r.close()
	r.listeners, r.dir = nil, ""
}

// setKeeper records the keeper's pid and starts watching its tree (mu
// held).
func (r *seatbeltCmd) setKeeper(pid int) {
	if r.stopped {
		return // the run has ended: its keeper ends as srt's pipe has
	}
	r.keeper = pid
	if r.procs != nil {
		r.watch = newTreeWatch(r.procs, pid)
		go r.watch.run()
	}
}

// follow reads the keeper's reports until it is gone, which ends the run.
func (r *seatbeltCmd) follow(end func()) {
	sc := bufio.NewScanner(r.reports)
	for sc.Scan() {
		kind, pid, _ := seatbelt.ParseReport(sc.Text())
		switch kind {
		case seatbelt.ReportStarted:
			r.mu.Lock()
			r.pid = pid
			r.mu.Unlock()
			if r.onTerminal != nil {
				r.onTerminal()
			}
		case seatbelt.ReportStopped, seatbelt.ReportAsked:
			if r.onStop != nil {
				r.onStop(kind == seatbelt.ReportAsked)
			}
		case seatbelt.ReportEnded:
			r.mu.Lock()
			r.ended = true
			r.mu.Unlock()
		}
	}
	r.mu.Lock()
	r.exited = true
	r.mu.Unlock()
	end()
}

func (s *seatbeltBackend) Supported() error {
	if os.Getenv(experimentalDarwin) != "1" {
		return &backend.UnsupportedError{Missing: "a macOS backend that has run on a Mac",
			Err: errors.New("srt's macOS backend is built and tested on Linux but has never run on macOS; set " + experimentalDarwin + "=1 to use it anyway")}
	}
	return nil
}

func (s *seatbeltBackend) Start(settings *config.Settings) error {
	var b [6]byte
	rand.Read(b[:])
	s.session = hex.EncodeToString(b[:])
	s.runs = map[*seatbeltCmd]struct{}{}
	if err := s.proxies.Start(s.host, settings, func(d proxy.Decision) {
		if r := s.find(func(r *seatbeltCmd) bool { return r.client == d.Client }); r != nil {
			s.host.Record(r.key, r.text, backend.FromDecision(d))
		}
	}); err != nil {
		return err
	}
	if s.streamLog != nil {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopLog = cancel
		if err := s.streamLog(ctx, s.session, s.denied); err != nil {
			s.host.Debugf("The system log cannot be read (%v): denials inside the sandbox go unreported", err)
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
		s.host.Record(r.key, r.text, backend.Violation{Kind: backend.KindSyscall, Operation: d.Operation, Target: d.Target, Reason: "Seatbelt: " + d.Process})
	}
}

func (s *seatbeltBackend) SetNetwork(n config.Network, p *netfilter.Policy) error {
	return s.proxies.SetNetwork(n, p)
}

// Stop ends the session: its runs, the log, the proxies.
func (s *seatbeltBackend) Stop() {
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
	s.proxies.Stop()
}

func (s *seatbeltBackend) Enforcement(*config.Settings) backend.Enforcement {
	return backend.DarwinEnforcement()
}
func (s *seatbeltBackend) HostWritable(path string) bool { return backend.WritableOnHost(path) }
func (s *seatbeltBackend) Settle(string)                 {}
func (s *seatbeltBackend) ExplainStart(err error) error  { return err }
func (s *seatbeltBackend) LandlockABI() int              { return 0 }

// Wrap prepares a run for a caller that starts it itself: the argv it
// returns starts srt in the wrap role (seatbelt/wrap.go), which takes the
// run from a socket in the run's directory, once.
func (s *seatbeltBackend) Wrap(o backend.Run, argv []string) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd, err := s.Command(context.Background(), o, argv)
	if err != nil {
		return nil, err
	}
	r := s.find(func(r *seatbeltCmd) bool { return r.cmd == cmd })
	sock := filepath.Join(r.dir, "wrap.sock")
	var ln net.Listener
	if len(sock) >= maxSunPath {
		err = fmt.Errorf("the run's socket %s is longer than a Unix socket's path may be (%d bytes): set TMPDIR to a shorter directory", sock, maxSunPath)
	} else {
		ln, err = net.Listen("unix", sock)
	}
	if err != nil {
		s.forget(r)
		return nil, err
	}
	r.mu.Lock()
	r.wrapLn = ln
	r.mu.Unlock()
	secret := seatbelt.NewSecret()
	// Each peer on its own: one that says nothing holds up no other, and
	// running out of descriptors does not end the wait for the
	// trampoline. (No command reaches the socket: the profile denies srt's
	// sockets to every command.)
	go func() {
		for {
			c, err := ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return // taken, or the run ended
			}
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			go func() {
				if r.handOverTo(c.(*net.UnixConn), secret) {
					ln.Close()
					r.follow(func() { s.forget(r) })
				}
			}()
		}
	}()
	return []string{self, seatbeltWrapRole, sock, secret}, nil
}

// maxSunPath is the longest Unix socket path macOS takes (sun_path's 104
// bytes with its NUL).
const maxSunPath = 104

// handOverTo sends the run to a wrap trampoline that knows its secret
// (seatbelt/wrap.go has the exchange); true once it holds the run. Every
// step has a deadline, and r.mu is held only while the descriptors go.
func (r *seatbeltCmd) handOverTo(c *net.UnixConn, secret string) bool {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if !seatbelt.SameSecret(seatbelt.ReadLine(c), secret) {
		return false
	}
	r.mu.Lock()
	if r.handed == nil {
		r.mu.Unlock()
		return false // stopped meanwhile
	}
	w := seatbelt.Wrapped{Args: r.cmd.Args, Env: r.cmd.Env, Dir: r.cmd.Dir}
	if seatbelt.SendFiles(c, r.cmd.ExtraFiles) != nil {
		r.mu.Unlock()
		return false
	}
	r.handOver()
	r.mu.Unlock()
	// From here the trampoline holds the run: if the rest fails, it
	// ends, and its reports with it.
	seatbelt.SendRun(c, w)
	// A keeper leads its own session; no other process is taken for it.
	if pid, err := strconv.Atoi(seatbelt.ReadLine(c)); err == nil && pid > 1 {
		if sid, err := unix.Getsid(pid); err == nil && sid == pid {
			r.mu.Lock()
			r.setKeeper(pid)
			r.mu.Unlock()
		}
	}
	return true
}

// Doctor says what this Mac offers: the system, whether a profile srt
// applies is enforced (a probe run through the keeper, as every run), the
// system log's reader, trustd.
func (s *seatbeltBackend) Doctor() *backend.Report {
	version := "unknown"
	if s.osVersion != nil {
		version = s.osVersion()
	}
	probe := backend.Feature{Name: "Seatbelt (sandbox_init, applied by srt's keeper)", OK: true,
		Detail: "a probe's profile denied it a file, as enforced; macOS " + version}
	run := s.probe
	if run == nil {
		run = probeSeatbelt
	}
	if err := run(); err != nil {
		probe.OK, probe.Detail = false, err.Error()+"; macOS "+version
	}
	logReader := backend.Feature{Name: "the system log's reader (" + seatbelt.LogCommand + ")", OK: true,
		Detail: "denials inside the profile are reported as violations"}
	if _, err := os.Stat(seatbelt.LogCommand); err != nil {
		logReader.OK, logReader.Detail = false, "not found: denials inside the profile go unreported"
	}
	r := &backend.Report{Enforcement: backend.DarwinEnforcement(), Features: []backend.Feature{probe, logReader,
		// Go's crypto/x509 (and gh, terraform, …) verifies certificates
		// through trustd on macOS, which the profile reaches only with
		// enableWeakerNetworkIsolation: without it their TLS fails.
		{Name: "trustd (TLS verification of Go programs: gh, terraform, …)", OK: false,
			Detail: "reachable only with enableWeakerNetworkIsolation; set it if such programs must verify TLS inside"},
		{Name: "this backend on a Mac", OK: false, Detail: "built and tested on Linux; not yet run on macOS by this project's CI"},
	}}
	if err := s.Supported(); err != nil {
		r.Enforcement = backend.Enforcement{Level: backend.None}
		r.Why = err.Error()
	} else if !probe.OK {
		r.Enforcement = backend.Enforcement{Level: backend.None}
		r.Why = "the Seatbelt probe failed: " + probe.Detail
	}
	return r
}

// probeSeatbelt runs cat on a file that a profile denies it, through the
// keeper as every run goes: nil when the file stayed unread.
func probeSeatbelt() error {
	dir, lock, err := rundir.New()
	if err != nil {
		return err
	}
	sr := &seatbeltRun{dir: dir, lock: lock}
	defer sr.close()
	var b [8]byte
	rand.Read(b[:])
	secret := "srt-probe-" + hex.EncodeToString(b[:])
	canary := filepath.Join(dir, "canary")
	if err := os.WriteFile(canary, []byte(secret), 0o600); err != nil {
		return err
	}
	if canary, err = filepath.EvalSymlinks(canary); err != nil {
		return err
	}
	p := seatbelt.Profile{Tag: "srt-probe", Rules: []seatbelt.Rule{
		{Action: seatbelt.Allow, Ops: []string{"default"}},
		{Action: seatbelt.Deny, Ops: []string{"file-read*"}, Filters: []seatbelt.Filter{{Kind: "literal", Value: canary}}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sr.keeper(ctx, p.String(), seatbelt.Launch{}, []string{"/bin/cat", canary}, []string{"PATH=/usr/bin:/bin"}, dir); err != nil {
		return err
	}
	var out bytes.Buffer
	sr.cmd.Stdout, sr.cmd.Stderr = &out, &out
	if err := sr.cmd.Start(); err != nil {
		return err
	}
	sr.handOver()
	go io.Copy(io.Discard, sr.reports)
	err = sr.cmd.Wait()
	switch code := sr.cmd.ProcessState.ExitCode(); {
	case strings.Contains(out.String(), secret) || err == nil:
		return errors.New("a profile was applied but not enforced: the probe read the file it denies")
	case code == 125:
		return fmt.Errorf("no profile can be applied: %s", strings.TrimSpace(out.String()))
	}
	return nil
}

// Command prepares one run (prepareSeatbelt) and keeps it for the session.
func (s *seatbeltBackend) Command(ctx context.Context, o backend.Run, argv []string) (*exec.Cmd, error) {
	settings, err := s.host.Settings()
	if err != nil {
		return nil, err
	}
	sr, err := prepareSeatbelt(ctx, s.host, &s.proxies, s.session, o, settings, argv)
	if err != nil {
		return nil, err
	}
	r := &seatbeltCmd{seatbeltRun: sr, onStop: o.OnStop, procs: s.procs}
	if o.Terminal {
		r.onTerminal = o.OnTerminal
	}
	s.mu.Lock()
	s.runs[r] = struct{}{}
	s.mu.Unlock()
	return sr.cmd, nil
}

// StartCommand starts a run's Cmd and, once its keeper has exited (its
// reports end), ends the run: what the command left running, its
// proxies, its directory.
func (s *seatbeltBackend) StartCommand(cmd *exec.Cmd) error {
	r := s.find(func(r *seatbeltCmd) bool { return r.cmd == cmd })
	if err := cmd.Start(); err != nil {
		if r != nil {
			s.forget(r)
		}
		return err
	}
	if r != nil {
		r.mu.Lock()
		r.setKeeper(cmd.Process.Pid)
		r.handOver()
		r.mu.Unlock()
		go r.follow(func() { s.forget(r) })
	}
	return nil
}

// forget ends a run and drops it from the session.
func (s *seatbeltBackend) forget(r *seatbeltCmd) {
	r.stop()
	s.mu.Lock()
	delete(s.runs, r)
	s.mu.Unlock()
}
