package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/testenv"
)

// box is one end-to-end fixture: a work dir W (srt's cwd) and a home H,
// with files, and settings.
type box struct {
	t      *testing.T
	W, H   string
	canary string
}

func newBox(t *testing.T, files ...string) *box {
	t.Helper()
	testenv.RequireUserNamespaces(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &box{t: t, W: filepath.Join(root, "w"), H: filepath.Join(root, "h"), canary: fmt.Sprintf("CANARY-%d", time.Now().UnixNano())}
	for _, d := range []string{b.W, b.H} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		b.write(f, b.canary)
	}
	return b
}

// write creates W/rel (or H/rel for "~/rel"); a trailing "/" makes a dir.
func (b *box) path(rel string) string {
	if r, ok := strings.CutPrefix(rel, "~/"); ok {
		return filepath.Join(b.H, r)
	}
	return filepath.Join(b.W, rel)
}

func (b *box) write(rel, content string) {
	p := b.path(rel)
	if strings.HasSuffix(rel, "/") {
		os.MkdirAll(p, 0o755)
		return
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func (b *box) read(rel string) string {
	data, err := os.ReadFile(b.path(rel))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

// run runs a shell command in the sandbox with the given filesystem rules
// (BASE otherwise).
func (b *box) run(fs map[string]any, script string) result {
	b.t.Helper()
	return b.exec(fs, nil, "-c", script)
}

// exec runs srt with args after --settings (a file holding BASE with the
// filesystem keys of fs; with fs == nil and env holding "NOSETTINGS",
// no --settings at all, so the built-in defaults apply).
func (b *box) exec(fs map[string]any, env []string, args ...string) result {
	b.t.Helper()
	var pre []string
	if len(env) == 0 || env[0] != "NOSETTINGS" {
		pre = []string{"--settings", b.settingsFile(fs)}
	} else {
		env = env[1:]
	}
	cmd := exec.Command(os.Getenv(srtEnv), append(pre, args...)...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}, env...)
	cmd.Dir = b.W
	out, errOut, code, err := testenv.Output(cmd)
	if err != nil {
		b.t.Fatal(err)
	}
	return result{out, errOut, code}
}

// settingsFile writes BASE with the filesystem keys of fs and returns
// its path.
func (b *box) settingsFile(fs map[string]any) string {
	settings := map[string]any{
		"network":    map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}},
		"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
	}
	for k, v := range fs {
		settings["filesystem"].(map[string]any)[k] = v
	}
	data, _ := json.Marshal(settings)
	cfg := filepath.Join(filepath.Dir(b.W), "settings.json")
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return cfg
}

// runJSON runs a shell command with a whole settings document.
func (b *box) runJSON(settings, script string) result {
	b.t.Helper()
	cfg := filepath.Join(filepath.Dir(b.W), "settings-doc.json")
	if err := os.WriteFile(cfg, []byte(settings), 0o644); err != nil {
		b.t.Fatal(err)
	}
	return b.exec(nil, []string{"NOSETTINGS"}, "--settings", cfg, "-c", script)
}

func (b *box) noCanary(r result) {
	b.t.Helper()
	if strings.Contains(r.stdout+r.stderr, b.canary) {
		b.t.Errorf("the canary leaked:\nstdout %q\nstderr %q", r.stdout, r.stderr)
	}
}

type fsMap = map[string]any

func TestSandboxReads(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "~/.ssh/id_rsa", ".env", "sub/a.pem", "sub/deep/b.pem", "h1/priv/s.txt", "allow/deny.txt")
		b.write("readme.txt", "README")
		b.write("h1/pub/p.txt", "PUBLIC")
		b.write("allow/ok.txt", "OK")

		r := b.run(fsMap{"denyRead": []string{"~/.ssh"}}, "cat ~/.ssh/id_rsa; ls -A ~/.ssh; echo x > ~/.ssh/new")
		b.noCanary(r)
		if !strings.Contains(r.stderr, "No such file or directory") || strings.TrimSpace(r.stdout) != "" || !strings.Contains(r.stderr, "Read-only file system") {
			t.Errorf("denied dir: %+v", r)
		}
		r = b.run(fsMap{"denyRead": []string{".env", "**/*.pem"}, "allowRead": []string{"."}}, "cat .env sub/a.pem sub/deep/b.pem; cat readme.txt")
		b.noCanary(r)
		if !strings.Contains(r.stderr, "Permission denied") || !strings.Contains(r.stdout, "README") {
			t.Errorf("specific deny beats broader allow: %+v", r)
		}
		r = b.run(fsMap{"denyRead": []string{"h1"}, "allowRead": []string{"h1/pub"}}, "cat h1/pub/p.txt; cat h1/priv/s.txt; ls -A h1")
		b.noCanary(r)
		if r.stdout != "PUBLICpub\n" {
			t.Errorf("allowRead inside denyRead: %+v", r)
		}
		// The reference leaks a denied file inside an allowRead directory.
		r = b.run(fsMap{"denyRead": []string{b.W, "allow/deny.txt"}, "allowRead": []string{"allow"}}, "cat allow/deny.txt; cat allow/ok.txt")
		b.noCanary(r)
		if r.stdout != "OK" {
			t.Errorf("denied file in an allowed dir: %+v", r)
		}
		// The same content by other names: /proc/self/root, a symlink, a hard link.
		r = b.run(fsMap{"denyRead": []string{"~/.ssh", ".env"}, "allowWrite": []string{"."}},
			"cat /proc/self/root"+b.H+"/.ssh/id_rsa; cat /proc/self/cwd/.env; ln -s ~/.ssh/id_rsa l && cat l; ln .env hl; ln ~/.ssh/id_rsa hl2; cat /proc/1/root"+b.W+"/.env")
		b.noCanary(r)
	})
}

func TestSandboxWrites(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		outside := filepath.Join(filepath.Dir(b.W), "outside-target")
		for _, f := range []string{"secrets/s.txt", "w2/sub/t.txt", "w2/top.txt", "keep.txt"} {
			b.write(f, "ORIGINAL")
		}
		r := b.run(fsMap{"allowWrite": []string{"."}, "denyWrite": []string{"secrets"}},
			"echo new > allowed.txt; echo x > secrets/s.txt; echo y > secrets/new; echo z > ../escape.txt; ln -s "+outside+" lnk; echo x > lnk; ln /etc/passwd hl")
		if b.read("allowed.txt") != "new\n" {
			t.Errorf("a write inside allowWrite did not persist: %q (%+v)", b.read("allowed.txt"), r)
		}
		if b.read("secrets/s.txt") != "ORIGINAL" || !strings.Contains(b.read("secrets/new"), "no such file") {
			t.Errorf("denyWrite: %q %q", b.read("secrets/s.txt"), b.read("secrets/new"))
		}
		for _, p := range []string{filepath.Join(filepath.Dir(b.W), "escape.txt"), outside} {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s was created on the host", p)
			}
		}
		if _, err := os.Lstat(b.path("hl")); err == nil {
			t.Errorf("a hard link to /etc/passwd was made")
		}
		r = b.run(fsMap{"allowWrite": []string{"w2", "w2/sub"}, "denyWrite": []string{"w2"}}, "echo x > w2/sub/t.txt; echo x > w2/top.txt")
		if b.read("w2/sub/t.txt") != "ORIGINAL" || b.read("w2/top.txt") != "ORIGINAL" || r.code == 0 {
			t.Errorf("denyWrite above allowWrite: %+v", r)
		}
		// Default config: nothing writable, /dev/null is.
		r = b.run(nil, "echo x > f.txt; echo x > /dev/null && echo ok")
		if r.stdout != "ok\n" || !strings.Contains(r.stderr, "Read-only file system") {
			t.Errorf("default config: %+v", r)
		}
	})
}

func TestSandboxProtectedNames(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		protected := []string{".bashrc", ".bash_profile", ".gitconfig", ".gitmodules", ".zshrc", ".zprofile", ".profile", ".ripgreprc", ".mcp.json",
			".git/config", ".git/hooks/pre-commit", ".vscode/settings.json", ".idea/workspace.xml", ".claude/commands/test.md", ".claude/agents/test-agent.md",
			".claude/settings.json", ".claude/settings.local.json", "a/.claude/settings.json",
			"a/.bashrc", "a/b/.bashrc", "a/.vscode/x", "~/.bashrc", "~/.profile",
			// Deeper than mandatoryDenySearchDepth: the guard judges them.
			"a/b/c/.bashrc", "a/b/c/d/e/.vscode/x", "a/b/c/d/.git/hooks/pre-commit",
			// Written only by git's rename of a valid index (TestGuardIndexPaths).
			".git/index"}
		safe := []string{"safe-file.txt", ".git/objects/test-obj", ".git/refs/heads/main", ".claude/some-other-file.txt"}
		for _, f := range append(append([]string{".git/HEAD"}, protected...), safe...) {
			b.write(f, "ORIGINAL")
		}
		var script strings.Builder
		for _, f := range append(protected, safe...) {
			fmt.Fprintf(&script, "echo MODIFIED > '%s'; ", b.path(f))
		}
		// Moving a protected file's parent aside must not work either.
		script.WriteString("mv .git .git2; mv .vscode .v2; rm -rf .git/hooks; mkdir -p .git/hooks2")
		r := b.run(fsMap{"allowWrite": []string{".", "~"}}, script.String())
		for _, f := range protected {
			if got := b.read(f); got != "ORIGINAL" {
				t.Errorf("%s = %q, want it unchanged", f, got)
			}
		}
		for _, f := range safe {
			if got := b.read(f); got != "MODIFIED\n" {
				t.Errorf("%s = %q, want it writable", f, got)
			}
		}
		if _, err := os.Stat(b.path(".git2")); err == nil {
			t.Errorf(".git was renamed: %+v", r)
		}
		r = b.run(fsMap{"allowWrite": []string{"."}, "allowGitConfig": true}, "echo more >> .git/config; echo x > .git/hooks/x")
		if b.read(".git/config") != "ORIGINALmore\n" || !strings.Contains(b.read(".git/hooks/x"), "no such file") {
			t.Errorf("allowGitConfig: config %q, hooks/x %q (%+v)", b.read(".git/config"), b.read(".git/hooks/x"), r)
		}
	})
}

// The command sees no process outside its own tree, can signal none, and
// nothing it starts survives it.
func TestSandboxProcesses(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		r := b.run(nil, fmt.Sprintf("ls /proc | grep -c '^[0-9]'; kill -0 %d && echo SIGNALLED", os.Getpid()))
		if strings.Contains(r.stdout, "SIGNALLED") {
			t.Errorf("the command could signal the test process: %+v", r)
		}
		var n int
		fmt.Sscan(r.stdout, &n)
		if n == 0 || n > 4 {
			t.Errorf("the command sees %d processes: %+v", n, r)
		}
		tag := fmt.Sprintf("%d", time.Now().UnixNano()%100000+100000)
		b.run(nil, "sleep "+tag+" & sleep "+tag+" & exit 0")
		time.Sleep(100 * time.Millisecond)
		if out, _ := exec.Command("pgrep", "-f", "sleep "+tag).Output(); len(out) > 0 {
			exec.Command("pkill", "-f", "sleep "+tag).Run()
			t.Errorf("a background process outlived the sandbox: %s", out)
		}
		for _, tc := range []struct {
			script string
			code   int
		}{{"exit 7", 7}, {"kill -TERM $$", 143}, {"kill -KILL $$", 137}, {"kill -INT $$", 130}, {"/nonexistent/cmd", 127}} {
			if r := b.run(nil, tc.script); r.code != tc.code {
				t.Errorf("%q: exit %d, want %d (%+v)", tc.script, r.code, tc.code, r)
			}
		}
	})
}

// The network is cut: a listener on the host's loopback gets nothing.
func TestSandboxNoNetwork(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		got := make(chan struct{}, 1)
		go func() {
			if c, err := ln.Accept(); err == nil {
				c.Close()
				got <- struct{}{}
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		if _, err := exec.LookPath("bash"); err != nil {
			t.Skip("requires bash for /dev/tcp")
		}
		r := b.run(nil, fmt.Sprintf("bash -c 'echo hi > /dev/tcp/127.0.0.1/%d' && echo CONNECTED", port))
		if strings.Contains(r.stdout, "CONNECTED") {
			t.Errorf("the command reached the host's loopback: %+v", r)
		}
		select {
		case <-got:
			t.Error("the host listener got a connection")
		case <-time.After(200 * time.Millisecond):
		}
	})
}

// No fd that srt inherited reaches the command; nothing is left behind.
func TestSandboxLeavesNothing(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "secret.txt")
		before, _ := os.ReadFile("/proc/self/mountinfo")
		f, err := os.Open(b.path("secret.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		settings := filepath.Join(filepath.Dir(b.W), "s.json")
		os.WriteFile(settings, []byte(strings.Replace(baseSettings, `"denyRead":[]`, `"denyRead":["secret.txt"]`, 1)), 0o644)
		cmd := exec.Command(os.Getenv(srtEnv), "--settings", settings, "-c", "ls /proc/self/fd; cat <&3; cat /proc/self/fd/3")
		// A TMPDIR of its own: other runs of srt on this machine keep
		// their run dirs in the shared one.
		tmp, err := os.MkdirTemp(filepath.Dir(b.W), "tmp")
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H, "TMPDIR=" + tmp}
		cmd.Dir = b.W
		cmd.ExtraFiles = []*os.File{f}
		out, errOut, _, err := testenv.Output(cmd)
		if err != nil {
			t.Fatal(err)
		}
		b.noCanary(result{out, errOut, 0})
		if fds := strings.Fields(out); len(fds) > 4 {
			t.Errorf("the command has fds %q", fds)
		}
		after, _ := os.ReadFile("/proc/self/mountinfo")
		if string(before) != string(after) {
			t.Errorf("the host's mounts changed:\n%s\n---\n%s", before, after)
		}
		runs, _ := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("srt-%d", os.Getuid()), "run-*"))
		if len(runs) > 0 {
			t.Errorf("runtime dirs left: %q", runs)
		}
		entries, _ := os.ReadDir(b.W)
		if len(entries) != 1 {
			t.Errorf("the work dir holds %d entries, want only secret.txt", len(entries))
		}
	})
}

// Unix-domain and vsock sockets and io_uring are refused inside; inet
// sockets (for loopback) and socketpair are not.
func TestSandboxSeccomp(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		r := b.run(nil, probeEnv+"=unix-socket "+exe)
		want := []string{"unix-socket: fd=-1 err=operation not permitted", "unix-dgram: fd=-1 err=operation not permitted",
			"vsock: fd=-1 err=operation not permitted", "socketpair: fd=", "inet-socket: fd=", "io_uring_setup: r=-1 err=operation not permitted"}
		for _, w := range want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("probe output %q lacks %q (stderr %q)", r.stdout, w, r.stderr)
			}
		}
		if strings.Contains(r.stdout, "inet-socket: fd=-1") || strings.Contains(r.stdout, "socketpair: fd=-1") {
			t.Errorf("inet sockets or socketpair refused: %q", r.stdout)
		}
		// network.allowAllUnixSockets lifts the AF_UNIX rule only.
		r = b.runJSON(`{"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`,
			probeEnv+"=unix-socket "+exe)
		if strings.Contains(r.stdout, "unix-socket: fd=-1") || strings.Contains(r.stdout, "unix-dgram: fd=-1") ||
			!strings.Contains(r.stdout, "io_uring_setup: r=-1 err=operation not permitted") || !strings.Contains(r.stdout, "vsock: fd=-1 err=operation not permitted") {
			t.Errorf("with allowAllUnixSockets: %q (stderr %q)", r.stdout, r.stderr)
		}
	})
}

// Every call the filter refuses fails with EPERM inside; outside, the same
// probe gets the kernel's own answers, so the EPERM is the filter's.
func TestSandboxSeccompRefusals(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		outside := exec.Command(exe)
		outside.Env = []string{probeEnv + "=syscalls"}
		host, _, _, err := testenv.Output(outside)
		if err != nil {
			t.Fatal(err)
		}
		r := b.run(nil, probeEnv+"=syscalls "+exe+" </dev/null")
		got := map[string]string{}
		for _, line := range strings.Split(r.stdout, "\n") {
			if name, res, ok := strings.Cut(line, ": "); ok {
				got[name] = res
			}
		}
		for _, name := range []string{"TIOCSTI", "TIOCLINUX", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
			"userfaultfd", "kexec_load", "init_module", "finit_module", "delete_module", "open_by_handle_at",
			"mount", "umount2", "pivot_root", "fsopen", "open_tree", "setns"} {
			if got[name] != "r=-1 err=operation not permitted" {
				t.Errorf("%s inside: %q, want EPERM (outside: %s)", name, got[name], host)
			}
		}
		// Not everything is EPERM: the terminal's ordinary ioctls pass.
		if got["TCGETS"] == "r=-1 err=operation not permitted" || got["TCGETS"] == "" {
			t.Errorf("TCGETS inside: %q", got["TCGETS"])
		}
		// The filter made the difference for these at least.
		for _, name := range []string{"TIOCSTI", "keyctl"} {
			if strings.Contains(host, name+": r=-1 err=operation not permitted") {
				t.Errorf("%s is refused outside the sandbox too; the test proves nothing: %s", name, host)
			}
		}
	})
}

// New user and mount namespaces are refused inside unless
// allowNestedUserNamespaces; with it, the mounts the sandbox inherited
// stay locked: a nested namespace cannot unmask a denied tree.
func TestSandboxNestedNamespaces(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("requires unshare(1)")
		}
		b := newBox(t, "~/.ssh/id_rsa")
		r := b.run(nil, "unshare -U true && echo CREATED; unshare -m true && echo CREATED")
		if strings.Contains(r.stdout, "CREATED") || !strings.Contains(r.stderr, "Operation not permitted") {
			t.Errorf("namespaces created without allowNestedUserNamespaces: %+v", r)
		}
		ssh := b.path("~/.ssh")
		doc := `{"allowNestedUserNamespaces":true,"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"allowWrite":[],"denyWrite":[]}}`
		r = b.runJSON(doc, "unshare -U true && echo CREATED; unshare -U sh -c 'umount -l "+ssh+"; cat "+ssh+"/id_rsa'")
		if !strings.Contains(r.stdout, "CREATED") {
			t.Errorf("allowNestedUserNamespaces: no user namespace: %+v", r)
		}
		b.noCanary(r)
		if os.Getuid() != 0 {
			// Mapping one's own uid needs no privilege, except for uid 0,
			// where the kernel asks for CAP_SETFCAP, which the command
			// never has.
			r = b.runJSON(doc, "unshare -rm sh -c 'umount -l "+ssh+"; cat "+ssh+"/id_rsa; mount -t tmpfs x "+ssh+" && echo MOUNTED'")
			if !strings.Contains(r.stdout, "MOUNTED") {
				t.Errorf("allowNestedUserNamespaces: no mount in a nested namespace: %+v", r)
			}
			b.noCanary(r)
		} else {
			// The map is opened for the command by the sandbox's init
			// (the path guard), with no capability: mapping the host's
			// uid 0 still needs CAP_SETFCAP, which no one there holds.
			r = b.runJSON(doc, `unshare -U sh -c 'echo 0 0 1 > /proc/self/uid_map && echo MAPPED-ROOT'`)
			if strings.Contains(r.stdout, "MAPPED-ROOT") {
				t.Errorf("a nested namespace mapped the host's uid 0: %+v", r)
			}
		}
	})
}

// allowUnixSockets opens exactly the listed sockets (and those under a
// listed directory): another socket, a symlink to it, or a path that
// leaves the listed directory reaches nothing, and its listener, watched
// from outside, sees no connection.
func TestSandboxUnixSocketsByPath(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		// Short: a socket path must fit in sun_path's 108 bytes.
		dir, err := os.MkdirTemp("/tmp", "srt-us-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.MkdirAll(filepath.Join(dir, "ok"), 0o755)
		os.MkdirAll(filepath.Join(dir, "no"), 0o755)
		var mu sync.Mutex
		accepted := map[string]int{}
		listen := func(p string) {
			ln, err := net.Listen("unix", p)
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, 0o777)
			t.Cleanup(func() { ln.Close() })
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					mu.Lock()
					accepted[p]++
					mu.Unlock()
					fmt.Fprintf(c, "hello from %s", filepath.Base(p))
					c.Close()
				}
			}()
		}
		agent, other, docker := filepath.Join(dir, "ok", "agent.sock"), filepath.Join(dir, "no", "other.sock"), filepath.Join(dir, "docker.sock")
		listen(agent)
		listen(other)
		listen(docker)
		os.Symlink(docker, filepath.Join(dir, "ok", "link.sock"))
		doc := fmt.Sprintf(`{"network":{"allowedDomains":[],"deniedDomains":[],"allowUnixSockets":[%q]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, filepath.Join(dir, "ok"))
		r := b.runJSON(doc, "cd "+dir+" && "+probeEnv+"=unix-connect "+exe+" "+strings.Join([]string{
			agent, "ok/agent.sock", other, docker, filepath.Join(dir, "ok", "link.sock"), filepath.Join(dir, "ok", "..", "docker.sock")}, " "))
		for _, want := range []string{agent + `: read "hello from agent.sock"`, `ok/agent.sock: read "hello from agent.sock"`} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q: %+v", want, r)
			}
		}
		if strings.Count(r.stdout, "permission denied") != 4 {
			t.Errorf("want 4 refusals: %+v", r)
		}
		mu.Lock()
		defer mu.Unlock()
		if accepted[other] != 0 || accepted[docker] != 0 || accepted[agent] != 2 {
			t.Errorf("connections seen outside: %v", accepted)
		}
	})
}

// Where namespaces cannot be created, the command does not run, and the
// error says why and how to fix it. The test makes such a host: a user
// namespace (made with unshare(1)) whose user.max_user_namespaces is 0.
func TestSandboxFailsClosed(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("requires unshare(1) to build a host without user namespaces")
		}
		marker := filepath.Join(b.W, "ran")
		cmd := exec.Command("unshare", "-Ur", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -- /bin/touch "$1"`, os.Getenv(srtEnv), marker)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H, "TMPDIR=" + filepath.Dir(b.W)}
		_, stderr, code, err := testenv.Output(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if code != 1 || !strings.Contains(stderr, "srt: cannot create the sandbox's user namespace") || !strings.Contains(stderr, "user.max_user_namespaces=0") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the command ran without a sandbox")
		}
		// srt doctor says the same, and fails.
		cmd = exec.Command("unshare", "-Ur", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" doctor`, os.Getenv(srtEnv))
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H, "TMPDIR=" + filepath.Dir(b.W)}
		stdout, _, code, err := testenv.Output(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if code != 1 || !strings.Contains(stdout, "-- user namespaces") || !strings.Contains(stdout, "enforcement: none") {
			t.Errorf("doctor on a host without namespaces: exit %d:\n%s", code, stdout)
		}
		if r := runSrt(t, nil, "doctor"); r.code != 0 || !strings.Contains(r.stdout, "ok user namespaces") || !strings.Contains(r.stdout, "enforcement: full") {
			t.Errorf("doctor: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
}

// Signals sent to srt travel through the init to the
// command; SIGKILL to srt takes the whole sandbox down.
func TestSandboxSignals(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		for _, tc := range []struct {
			sig  syscall.Signal
			trap string
			want int
		}{{syscall.SIGTERM, "TERM", 42}, {syscall.SIGINT, "INT", 42}, {syscall.SIGHUP, "HUP", 42}, {syscall.SIGKILL, "", 137}} {
			tag := fmt.Sprintf("%d", time.Now().UnixNano()%100000+200000)
			script := "echo ready; while :; do sleep 0." + tag + "; done"
			if tc.trap != "" {
				script = "trap 'exit 42' " + tc.trap + "; " + script
			}
			cmd := exec.Command(os.Getenv(srtEnv), "-c", script)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H}
			cmd.Dir = b.W
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line := make([]byte, 6)
			if _, err := io.ReadFull(out, line); err != nil || string(line) != "ready\n" {
				t.Fatalf("no ready line: %q %v", line, err)
			}
			cmd.Process.Signal(tc.sig)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); tc.sig != syscall.SIGKILL && code != tc.want {
				t.Errorf("%v: exit %d, want %d", tc.sig, code, tc.want)
			}
			time.Sleep(100 * time.Millisecond)
			if found, _ := exec.Command("pgrep", "-f", "sleep 0."+tag).Output(); len(found) > 0 {
				exec.Command("pkill", "-f", "sleep 0."+tag).Run()
				t.Errorf("%v: the command outlived srt", tc.sig)
			}
		}
	})
}

// A SIGKILLed srt cannot remove its runtime dir; the next run does, and
// leaves the directories of live runs alone.
func TestSandboxRemovesStaleRuntimeDirs(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		tmp := filepath.Dir(b.W)
		env := []string{"PATH=/usr/bin:/bin", "HOME=" + b.H, "TMPDIR=" + tmp}
		live := exec.Command(os.Getenv(srtEnv), "-c", "echo ready; sleep 30")
		live.Env, live.Dir = env, b.W
		out, _ := live.StdoutPipe()
		if err := live.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { live.Process.Kill(); live.Wait() }()
		line := make([]byte, 6)
		io.ReadFull(out, line)
		killed := exec.Command(os.Getenv(srtEnv), "-c", "echo ready; sleep 30")
		killed.Env, killed.Dir = env, b.W
		out2, _ := killed.StdoutPipe()
		if err := killed.Start(); err != nil {
			t.Fatal(err)
		}
		io.ReadFull(out2, line)
		killed.Process.Kill()
		killed.Wait()
		pattern := filepath.Join(tmp, fmt.Sprintf("srt-%d", os.Getuid()), "run-*")
		if runs, _ := filepath.Glob(pattern); len(runs) != 2 {
			t.Fatalf("runtime dirs before: %q, want the live and the killed run's", runs)
		}
		cmd := exec.Command(os.Getenv(srtEnv), "true")
		cmd.Env, cmd.Dir = env, b.W
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		if runs, _ := filepath.Glob(pattern); len(runs) != 1 {
			t.Errorf("runtime dirs after: %q, want only the live run's", runs)
		}
	})
}

// A nested user namespace gets the command no way around the mounts.
func TestSandboxNestedNamespaceAttack(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "~/.ssh/id_rsa")
		b.write(".bashrc", "ORIGINAL")
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("requires unshare(1)")
		}
		ssh := b.path("~/.ssh")
		r := b.run(fsMap{"denyRead": []string{"~/.ssh"}, "allowWrite": []string{"."}}, strings.Join([]string{
			"unshare -rm sh -c 'umount -l " + ssh + "; cat " + ssh + "/id_rsa; mount -o remount,rw,bind " + b.path(".bashrc") + "; echo X > " + b.path(".bashrc") + "'",
			"unshare -m sh -c 'umount -l " + ssh + "; cat " + ssh + "/id_rsa'",
			"unshare -rUm --map-root-user sh -c 'cat " + ssh + "/id_rsa'",
			"cat " + ssh + "/id_rsa; echo X > .bashrc",
		}, "; "))
		b.noCanary(r)
		if b.read(".bashrc") != "ORIGINAL" {
			t.Errorf(".bashrc changed: %q (%+v)", b.read(".bashrc"), r)
		}
	})
}

// With the runtime dir inside a writable area (allowWrite: ["/tmp"] in the
// reference's own example), the staging area of the masks must not be
// reachable: a hidden directory is never a writable scratch area.
func TestSandboxStagingUnreachable(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "hidden/secret")
		tmp := filepath.Dir(b.W)
		r := b.exec(fsMap{"allowWrite": []string{tmp}, "denyRead": []string{"hidden"}}, []string{"TMPDIR=" + tmp},
			"-c", `base="$TMPDIR/../base"; ls -A "$base"; for d in "$base"/stage/*; do echo x > "$d/planted"; done; ls -A hidden; echo END`)
		b.noCanary(r)
		if !strings.HasSuffix(r.stdout, "END\n") || strings.Contains(r.stdout, "planted") || strings.Contains(r.stdout, "stage") {
			t.Errorf("the staging area is reachable:\n%s\n%s", r.stdout, r.stderr)
		}
	})
}

// Through the sandbox's proxy ports, the policy proxies let out exactly what
// the settings allow; a loopback server on the host sees only the allowed
// requests.
func TestSandboxNetworkProxy(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("requires curl")
		}
		port, requests := hostHTTPServer(t)
		script := fmt.Sprintf(`P='--noproxy "" -x '$HTTP_PROXY
echo "env=$HTTPS_PROXY"
curl -s $P http://127.0.0.1:%[1]d/allowed; echo
curl -s --noproxy "" --socks5-hostname localhost:1080 http://127.0.0.1:%[1]d/socks; echo
curl -s -o /dev/null -w "%%{http_code}" $P http://127.0.0.1:%[2]d/otherport; echo
curl -s -o /dev/null -w "%%{http_code}" $P http://127.0.0.2:%[1]d/denied; echo
curl -s -o /dev/null -w "%%{http_code}" $P http://example.com/; echo
curl -s --noproxy "" --socks5-hostname localhost:1080 http://127.0.0.2:%[1]d/socksdenied; echo "rc=$?"
curl -s $P http://2130706433:%[1]d/numeric; echo
curl -s -o /dev/null -w "%%{http_code}" $P http://0x7f.0.0.2:%[1]d/hexdenied; echo`, port, port+1)
		r := b.runJSON(fmt.Sprintf(`{"network":{"allowedDomains":["127.0.0.1:%d","127.0.0.2"],"deniedDomains":["127.0.0.2"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, port), script)
		out, errOut, code := r.stdout, r.stderr, r.code
		// 127.0.0.2 is in both lists: the deny wins; numeric spellings are
		// the addresses they spell.
		want := "env=http://localhost:3128\nhello\nhello\n403\n403\n403\nrc=97\nhello\n403\n"
		if out != want || code != 0 {
			t.Errorf("exit %d, output:\n%s\nwant:\n%s\nstderr: %s", code, out, want, errOut)
		}
		got := requests()
		if all := strings.Join(got, " "); len(got) != 3 || !strings.Contains(all, "/allowed") || !strings.Contains(all, "/socks") || !strings.Contains(all, "/numeric") {
			t.Errorf("the host server saw %q, want only the three allowed requests", got)
		}
	})
}

// Programs that ignore the proxy variables go through the policy too: the
// DNS stub answers only names the policy may allow (and forwards nothing),
// connections to any address are caught and decided by the name they
// carry, and UDP other than DNS has no way out.
func TestSandboxTransparent(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		for _, tool := range []string{"curl", "bash", "getent"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("requires %s", tool)
			}
		}
		port, requests := hostHTTPServer(t)
		udp, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer udp.Close()
		gotUDP := make(chan struct{}, 10)
		go func() {
			buf := make([]byte, 512)
			for {
				if _, _, err := udp.ReadFrom(buf); err != nil {
					return
				}
				gotUDP <- struct{}{}
			}
		}()
		uport := udp.LocalAddr().(*net.UDPAddr).Port
		// Over IPv6 too, where the kernel has it: the redirect's IPv6
		// rule, listener and original destination.
		v6, hello6, paths := "", "", "/transparent"
		if _, err := os.Stat("/proc/net/if_inet6"); err == nil {
			v6 = fmt.Sprintf(`curl -s --noproxy '*' -g -H "Host: localhost:%[1]d" "http://[2001:db8::9]:%[1]d/transparent6"; echo`+"\n", port)
			hello6, paths = "hello\n", "/transparent /transparent6"
		}
		script := fmt.Sprintf(`getent hosts allowed.test | cut -d' ' -f1 | cut -d. -f1-2
getent hosts evil.test || echo NX
getent hosts unlisted.test || echo NX2
curl -s --noproxy '*' -H "Host: localhost:%[1]d" http://198.51.100.9:%[1]d/transparent; echo
%[3]scurl -s --noproxy '*' -o /dev/null -w "%%{http_code}" -H "Host: evil.test:%[1]d" http://198.51.100.9:%[1]d/denied; echo
curl -s --noproxy '*' -o /dev/null -w "%%{http_code}" http://198.51.100.9:%[1]d/ip-only; echo
bash -c 'echo x > /dev/udp/127.0.0.1/%[2]d; echo x > /dev/udp/198.51.100.9/%[2]d' 2>/dev/null; echo done`, port, uport, v6)
		r := b.runJSON(`{"network":{"allowedDomains":["localhost","allowed.test"],"deniedDomains":["evil.test"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, script)
		out, errOut, _ := r.stdout, r.stderr, r.code
		want := "198.18\nNX\nNX2\nhello\n" + hello6 + "000\n000\ndone\n"
		if out != want {
			t.Errorf("output:\n%s\nwant:\n%s\nstderr: %s", out, want, errOut)
		}
		var seen []string
		for _, line := range requests() {
			if f := strings.Fields(line); len(f) > 1 {
				line = f[1]
			}
			seen = append(seen, line)
		}
		if strings.Join(seen, " ") != paths {
			t.Errorf("the host server saw %q, want only %s", requests(), paths)
		}
		select {
		case <-gotUDP:
			t.Error("UDP reached the host's loopback")
		default:
		}
	})
}

// ssh's ProxyCommand inside is srt itself: "srt ssh-proxy HOST PORT"
// reaches an allowed host through the policy and is refused elsewhere.
func TestSandboxSSHProxy(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		port := testenv.ServeTCP(t, func(c net.Conn) {
			io.WriteString(c, "SSH-2.0-test\r\n")
			data, _ := io.ReadAll(c)
			c.Write(data)
		})
		settings := filepath.Join(filepath.Dir(b.W), "net.json")
		os.WriteFile(settings, []byte(`{"network":{"allowedDomains":["localhost"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`), 0o644)
		srtBin := os.Getenv(srtEnv)
		script := fmt.Sprintf(`case "$GIT_SSH_COMMAND" in *"ssh-proxy %%h %%p"*) echo env-ok;; esac
echo ping | %[1]s ssh-proxy localhost %[2]d
%[1]s ssh-proxy denied.test 22 </dev/null; echo "rc=$?"`, srtBin, port)
		cmd := exec.Command(srtBin, "--settings", settings, "-c", script)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H}
		cmd.Dir = b.W
		out, errOut, _, err := testenv.Output(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if out != "env-ok\nSSH-2.0-test\r\nping\nrc=1\n" || !strings.Contains(errOut, "refused by the sandbox's network policy") {
			t.Errorf("output %q, stderr %q", out, errOut)
		}
	})
}

// httpProxyPort hands the sandbox's HTTP proxy traffic to the user's own
// proxy on the host's loopback.
func TestSandboxExternalProxyPort(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("requires curl")
		}
		port := testenv.ServeTCP(t, func(c net.Conn) {
			buf := make([]byte, 4096)
			n, _ := c.Read(buf)
			line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
			body := "user proxy saw: " + line
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		})
		r := b.runJSON(fmt.Sprintf(`{"network":{"allowedDomains":[],"deniedDomains":[],"httpProxyPort":%d},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, port), `curl -s --noproxy "" -x "$HTTP_PROXY" http://anything.test/x`)
		out, errOut, _ := r.stdout, r.stderr, r.code
		if out != "user proxy saw: GET http://anything.test/x HTTP/1.1" {
			t.Errorf("output %q, stderr %q", out, errOut)
		}
	})
}

// HTTPS through the proxy (CONNECT) and through the transparent path,
// decided by the TLS server name.
func TestSandboxHTTPS(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("requires curl")
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "tls-hello %s", r.URL.Path)
		}))
		srv.StartTLS()
		defer srv.Close()
		port := srv.Listener.Addr().(*net.TCPAddr).Port
		script := fmt.Sprintf(`curl -sk --noproxy "" -x "$HTTPS_PROXY" https://localhost:%[1]d/connect; echo
curl -sk --noproxy '*' --resolve localhost:%[1]d:198.51.100.9 https://localhost:%[1]d/sni; echo
curl -sk --noproxy '*' -o /dev/null -w "%%{http_code}" --resolve evil.test:%[1]d:198.51.100.9 https://evil.test:%[1]d/; echo
curl -sk --noproxy "" -x "$HTTPS_PROXY" -o /dev/null -w "%%{http_code}" https://evil.test:%[1]d/; echo`, port)
		r := b.runJSON(`{"network":{"allowedDomains":["localhost"],"deniedDomains":["evil.test"]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, script)
		out, errOut, _ := r.stdout, r.stderr, r.code
		if want := "tls-hello /connect\ntls-hello /sni\n000\n000\n"; out != want {
			t.Errorf("output:\n%s\nwant:\n%s\nstderr %s", out, want, errOut)
		}
	})
}

// srt opens no TCP port on the host: the proxies, the transparent path
// included, accept on sockets of the sandbox's network namespace.
func TestSandboxOpensNoHostPort(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		settings := filepath.Join(filepath.Dir(b.W), "net.json")
		os.WriteFile(settings, []byte(`{"network":{"allowedDomains":["example.com"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`), 0o644)
		// The command waits for the test (its stdin closing), however
		// slowly a busy machine looks at srt's sockets.
		cmd := exec.Command(os.Getenv(srtEnv), "--settings", settings, "-c", "echo ready; read _")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H}
		cmd.Dir = b.W
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line := make([]byte, 6)
		if _, err := io.ReadFull(out, line); err != nil || string(line) != "ready\n" {
			cmd.Wait()
			t.Fatalf("the command did not start: %q %v; stderr %q", line, err, stderr.String())
		}
		// The sockets srt holds, by inode, against the host's TCP listeners.
		mine := map[string]bool{}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", cmd.Process.Pid, fd.Name())); err == nil && strings.HasPrefix(l, "socket:[") {
				mine[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
		if len(mine) < 2 {
			t.Errorf("srt holds %d sockets; want at least its two proxy listeners", len(mine))
		}
		for addr, inode := range listeningPorts(t) {
			if mine[inode] {
				t.Errorf("srt listens on the host's TCP %s", addr)
			}
		}
		in.Close()
		cmd.Wait()
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("srt-%d", os.Getuid()))
		if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v", dir, fi.Mode().Perm())
		}
	})
}

// listeningPorts maps the host's listening TCP sockets (local address
// fields of /proc/net/tcp and tcp6 in state 0A) to their inodes.
func listeningPorts(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(l)
			if len(fields) > 9 && fields[3] == "0A" {
				out[fields[1]] = fields[9]
			}
		}
	}
	return out
}

// hostHTTPServer is an HTTP server on the host's loopback answering
// "hello"; requests returns the request lines it has seen so far.
func hostHTTPServer(t *testing.T) (port int, requests func() []string) {
	var mu sync.Mutex
	var seen []string
	port = testenv.ServeTCP(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		n, _ := c.Read(buf)
		line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
		mu.Lock()
		seen = append(seen, line)
		mu.Unlock()
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
	})
	return port, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// A launch whose setup is long (1,000 filesystem rules: a big spec, many
// mounts, a big Landlock ruleset) still sees its command end: the init
// waits for its children rather than for a signal it could miss. The hang
// this guards against was intermittent (about one launch in 50 of the
// side-by-side benchmark); TestRelayedSignals in nsexec pins its cause.
func TestSandboxLongSetupEnds(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		var deny, allow []string
		for i := 0; i < 1000; i++ {
			d := b.path(fmt.Sprintf("r%d/", i))
			b.write(fmt.Sprintf("r%d/", i), "")
			if i%2 == 0 {
				deny = append(deny, d)
			} else {
				allow = append(allow, d)
			}
		}
		for i := 0; i < 5; i++ {
			done := make(chan result, 1)
			go func() { done <- b.run(map[string]any{"denyRead": deny, "allowWrite": allow}, "exit 7") }()
			select {
			case r := <-done:
				if r.code != 7 {
					t.Fatalf("run %d: exit %d, want 7\n%s", i, r.code, r.stderr)
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("run %d: the sandbox did not end within 60 s", i)
			}
		}
	})
}

// The init is PID 1 of the command's PID namespace and keeps privileges
// in the sandbox's user namespace: the command can neither trace it, nor
// read its memory, nor reach its descriptors (the link to srt) through
// /proc.
func TestSandboxInitUnreachable(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		script := `for f in maps environ mem; do if head -c1 /proc/1/$f >/dev/null 2>&1; then echo "read $f"; fi; done
for fd in 0 1 2 3 4 5; do if readlink /proc/1/fd/$fd >/dev/null 2>&1; then echo "link $fd"; fi; done
if command -v python3 >/dev/null; then python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, 1, 0, 0) == 0: print("traced")
'; fi
echo END`
		r := b.run(nil, script)
		if r.stdout != "END\n" {
			t.Errorf("the command reached the init:\n%s\n%s", r.stdout, r.stderr)
		}
	})
}

// A lease on a host file the command may only read would make every host
// process that opens it for writing wait for the command (up to
// lease-break-time, 45 s): F_SETLEASE is refused inside, while outside the
// same call on the same file succeeds. Run as both users.
func TestSandboxNoLeases(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3")
	}
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "~/notes.txt")
		lease := `python3 -c 'import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK); print("LEASED")
except OSError as e:
    print("REFUSED", e.errno)' ` + b.path("~/notes.txt")
		out, err := exec.Command("sh", "-c", lease).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "LEASED") {
			t.Skipf("this filesystem gives no leases outside the sandbox either: %s %v", out, err)
		}
		r := b.run(fsMap{"allowWrite": []string{"."}}, lease)
		if !strings.Contains(r.stdout, "REFUSED 1") {
			t.Errorf("a lease on a host file was taken inside: %+v", r)
		}
	})
}
