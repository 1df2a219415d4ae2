//go:build unix

package darwin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/internal/environ"
	"github.com/srt-go/srt/internal/ownfile"
	"github.com/srt-go/srt/internal/rundir"
	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/proxy"
	"github.com/srt-go/srt/seatbelt"
)

// A run of the macOS backend, prepared: its proxies on loopback asking a
// per-run credential, its private directory (temp dir, trust bundle,
// profile), and the command that starts the trampoline, the run's keeper
// (seatbelt/trampoline.go), which applies the profile and starts the
// command under it. Nothing here is macOS's own, so
// it is built, and tested, on Linux too; sys_darwin.go runs it.

// trampolineRole is the argument that makes this binary the trampoline,
// seatbeltWrapRole the one that makes it a wrapped run's.
const (
	trampolineRole   = "__srt_seatbelt"
	seatbeltWrapRole = "__srt_seatbelt_wrap"
)

// seatbeltRole runs this process as the macOS backend's keeper or wrap
// trampoline when it was started as one, with apply putting the profile
// on it, and never returns then; otherwise it returns at once.
func seatbeltRole(apply func(profile string) error) {
	if len(os.Args) < 3 {
		return
	}
	var err error
	switch os.Args[1] {
	case trampolineRole:
		err = seatbelt.Trampoline(apply, os.Args[2:])
	case seatbeltWrapRole:
		self, serr := os.Executable()
		switch {
		case serr != nil:
			err = serr
		case len(os.Args) != 4:
			err = fmt.Errorf("usage: %s SOCKET SECRET", seatbeltWrapRole)
		default:
			err = seatbelt.RunWrapped(self, os.Args[2], os.Args[3])
		}
	default:
		return
	}
	fmt.Fprintf(os.Stderr, "srt: %v\n", err)
	os.Exit(125)
}

// seatbeltRun is a prepared run.
type seatbeltRun struct {
	key, text string
	// tag is the run's id in its profile's tag.
	tag    string
	client *proxy.Client
	cmd    *exec.Cmd
	// dir is the run's directory, live while lock is held (by srt, and by
	// the keeper it hands the lock to).
	dir       string
	lock      *os.File
	listeners []net.Listener
	profile   *seatbelt.Profile
	// reports carries the keeper's reports (seatbelt.ReportStarted, …);
	// srtEnd is srt's end of the pipe whose end tells the keeper srt is
	// gone. handed are the keeper's descriptors, srt's copies closed once
	// it has started.
	reports, srtEnd *os.File
	handed          []*os.File
}

// close undoes a run: what it listens on, its directory, its pipes.
func (sr *seatbeltRun) close() {
	for _, l := range sr.listeners {
		l.Close()
	}
	sr.handOver()
	if sr.dir != "" {
		rundir.RemoveTree(sr.dir)
	}
	for _, f := range []*os.File{sr.lock, sr.reports, sr.srtEnd} {
		if f != nil {
			f.Close()
		}
	}
}

// handOver closes srt's copies of the keeper's descriptors.
func (sr *seatbeltRun) handOver() {
	for _, f := range sr.handed {
		f.Close()
	}
	sr.handed = nil
}

// prepareSeatbelt prepares a run of argv under settings for the session
// of h, with its proxies ps; session ends the profile's tag.
func prepareSeatbelt(ctx context.Context, h backend.Host, ps *backend.Proxies, session string, o backend.Run, settings *config.Settings, argv []string) (sr *seatbeltRun, err error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command")
	}
	in, err := backend.RunInputs(h, o, settings, argv)
	if err != nil {
		return nil, err
	}
	sr = &seatbeltRun{key: in.Key, text: in.Text, client: in.Client}
	defer func() {
		if err != nil {
			sr.close()
		}
	}()
	settings, env, cwd, home := in.Settings, in.Env, in.Cwd, in.Home
	// The run's directory: private, holding its temp dir, the trust
	// bundle and the profile.
	if sr.dir, sr.lock, err = rundir.New(); err != nil {
		return nil, err
	}
	base := filepath.Dir(sr.dir)
	tmp := filepath.Join(sr.dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, err
	}
	if !settings.Filesystem.Disabled {
		env = environ.Set(env, "TMPDIR", tmp)
	}
	if bundle := ps.TrustBundle(); bundle != nil {
		path := filepath.Join(sr.dir, "trust-bundle.crt")
		if err := ownfile.WriteNew(path, bundle, 0o444); err != nil {
			return nil, err
		}
		for _, k := range backend.TrustVars {
			env = environ.Set(env, k, path)
		}
	}
	// The proxies, on loopback, asking the run's credential; or the
	// user's own, when the settings name them.
	cred, err := proxy.NewCredential()
	if err != nil {
		return nil, err
	}
	sr.client.Credential = cred
	serveHTTP := func(ln net.Listener) { ps.Server.ServeHTTP(ln, sr.client) }
	serveSOCKS := func(ln net.Listener) { ps.Server.ServeSOCKS(ln, sr.client) }
	if p := settings.Network.HTTPProxyPort; p != nil {
		serveHTTP = backend.ForwardTo(*p)
	}
	if p := settings.Network.SOCKSProxyPort; p != nil {
		serveSOCKS = backend.ForwardTo(*p)
	}
	var ports []int
	for _, serve := range []func(net.Listener){serveHTTP, serveSOCKS} {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("listening for the proxy: %w", err)
		}
		sr.listeners = append(sr.listeners, ln)
		go serve(ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	inherited, _ := environ.Lookup(env, "JAVA_TOOL_OPTIONS")
	for _, kv := range proxy.EnvWithCredential(ports[0], ports[1], cred, backend.JavaToolOptions(settings.JavaAgentJarPath, inherited)) {
		k, v, _ := strings.Cut(kv, "=")
		env = environ.Set(env, k, v)
	}
	// The profile, in a file of the private directory: never argv.
	pol, err := policy.Build(settings, policy.Env{Home: home, Cwd: cwd, Writable: []string{tmp}, Private: base})
	if err != nil {
		return nil, err
	}
	if err := backend.CredentialConflicts(pol, in.Creds, home, cwd); err != nil {
		return nil, err
	}
	var id [4]byte
	rand.Read(id[:])
	sr.tag = hex.EncodeToString(id[:])
	if sr.profile, err = seatbelt.Build(pol, seatbelt.SettingsFor(settings, home, cwd, seatbelt.NewTag(session, sr.tag), ports)); err != nil {
		return nil, err
	}
	sr.profile.Rules = append(sr.profile.Rules, seatbelt.RunDirRules(base, tmp, settings.Network.AllowAllUnixSockets)...)
	h.Debugf("Seatbelt profile:\n%s", sr.profile)
	if err := sr.keeper(ctx, sr.profile.String(), seatbelt.Launch{Terminal: o.Terminal, NullFDs: o.NullFDs}, argv, env, cwd); err != nil {
		return nil, err
	}
	return sr, nil
}

// keeper makes the Cmd that starts the run's keeper: the profile text in
// a file of the run's directory, which the keeper reads through a
// descriptor (never argv: long deny lists would overflow ARG_MAX), the
// run's lock, and the keeper's pipes.
func (sr *seatbeltRun) keeper(ctx context.Context, text string, launch seatbelt.Launch, argv, env []string, cwd string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	file := filepath.Join(sr.dir, "profile.sb")
	if err := ownfile.WriteNew(file, []byte(text), 0o600); err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	// Its reports, and the pipe whose end tells it srt is gone.
	reports, reportsW, err := os.Pipe()
	if err != nil {
		f.Close()
		return err
	}
	srtR, srtW, err := os.Pipe()
	if err != nil {
		f.Close()
		reports.Close()
		reportsW.Close()
		return err
	}
	sr.reports, sr.srtEnd = reports, srtW
	sr.handed = []*os.File{f, reportsW, srtR}
	cmd := exec.CommandContext(ctx, self, append([]string{trampolineRole, launch.String()}, argv...)...)
	cmd.Args[0] = argv[0]
	cmd.Env, cmd.Dir = env, cwd
	cmd.ExtraFiles = make([]*os.File, seatbelt.FDSrt-2)
	cmd.ExtraFiles[seatbelt.FDProfile-3], cmd.ExtraFiles[seatbelt.FDLock-3] = f, sr.lock
	cmd.ExtraFiles[seatbelt.FDReport-3], cmd.ExtraFiles[seatbelt.FDSrt-3] = reportsW, srtR
	// A session of its own: no controlling terminal to push keystrokes
	// into (TIOCSTI) but the pty made for it (Run.Terminal).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	sr.cmd = cmd
	return nil
}
