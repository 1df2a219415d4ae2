package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/srt-go/srt/internal/testenv"
	"golang.org/x/sys/unix"
)

// Attacks of issue #17: holes found by reading the code, each judged from
// outside the sandbox.

// unixTargets listens, at paths anyone may write to (as /dev/log and
// journald's sockets are), on a Unix datagram socket, a stream and a
// seqpacket one, and on an abstract datagram socket; it returns the
// datagram path, the abstract name, the stream and seqpacket paths, and
// a report of what each has received or accepted so far.
func unixTargets(t *testing.T) (dgram, abstract, stream, seqpacket string, received func() map[string]string) {
	t.Helper()
	// Short: a socket path must fit in sun_path's 108 bytes.
	dir, err := os.MkdirTemp("/tmp", "srt-dg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	dgram = filepath.Join(dir, "log.sock")
	abstract = fmt.Sprintf("@srt-test-dgram-%d-%d", os.Getpid(), time.Now().UnixNano())
	stream, seqpacket = filepath.Join(dir, "stream.sock"), filepath.Join(dir, "seqpacket.sock")
	var mu sync.Mutex
	got := map[string]string{}
	note := func(name, what string) {
		mu.Lock()
		got[name] += what + ";"
		mu.Unlock()
	}
	for _, name := range []string{dgram, abstract} {
		c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		go func() {
			buf := make([]byte, 512)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				note(name, string(buf[:n]))
			}
		}()
	}
	for name, network := range map[string]string{stream: "unix", seqpacket: "unixpacket"} {
		testenv.Serve(t, network, name, func(net.Conn) { note(name, "accepted") })
	}
	for _, p := range []string{dgram, stream, seqpacket} {
		os.Chmod(p, 0o666)
	}
	return dgram, abstract, stream, seqpacket, func() map[string]string {
		time.Sleep(100 * time.Millisecond) // what was sent is queued by now
		mu.Lock()
		defer mu.Unlock()
		out := map[string]string{}
		for k, v := range got {
			out[k] = v
		}
		return out
	}
}

// Item 1: a socket that socket() did not make — a socketpair — aimed by sendto, sendmsg's msg_name or connect at a host datagram
// socket (or a stream or seqpacket one), in every mode: nothing arrives, while stream and seqpacket
// pairs keep working.
func TestSandboxUnixDatagramsReachNothing(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		path, abstract, stream, seqpacket, received := unixTargets(t)
		probe := strings.Join([]string{probeEnv + "=unix-dgram", exe, path, abstract, stream, seqpacket}, " ")
		other := filepath.Join(filepath.Dir(path), "other")
		os.Mkdir(other, 0o755)
		net := func(extra string) string {
			return `{` + extra + `"network":{"allowedDomains":[],"deniedDomains":[]` + `},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`
		}
		byPath := `{"network":{"allowedDomains":[],"deniedDomains":[],"allowUnixSockets":[` + fmt.Sprintf("%q", other) + `]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`
		fallback := filepath.Join(filepath.Dir(b.W), "fallback.json")
		os.WriteFile(fallback, []byte(net(`"enableWeakerNestedSandbox":true,`)), 0o644)
		fallbackByPath := filepath.Join(filepath.Dir(b.W), "fallback-path.json")
		os.WriteFile(fallbackByPath, []byte(strings.Replace(byPath, "{", `{"enableWeakerNestedSandbox":true,`, 1)), 0o644)
		runs := map[string]func() result{
			"namespace sandbox":              func() result { return b.runJSON(net(""), probe) },
			"namespace sandbox, by path":     func() result { return b.runJSON(byPath, probe) },
			"fallback":                       func() result { return b.runNoUserns("", nil, "--settings", fallback, "-c", probe) },
			"fallback, by path":              func() result { return b.runNoUserns("", nil, "--settings", fallbackByPath, "-c", probe) },
			"namespace sandbox, with report": func() result { return b.exec(nil, []string{"NOSETTINGS"}, "--violations", "/dev/null", "-c", probe) },
		}
		for name, run := range runs {
			r := run()
			for _, want := range []string{"pair type 1: <nil>", "pair type 5: <nil>", path + " dgram-sendto: socketpair: operation not permitted"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("%s: output lacks %q: %+v", name, want, r)
				}
			}
			if got := received(); len(got) > 0 {
				t.Errorf("%s: host datagram sockets received %q\n%s", name, got, r.stdout)
			}
		}
	})
}

// Item 2: nothing under /proc but the processes' own directories can be
// written, also by root, whose uid the user namespace maps to itself:
// every file under every other top-level entry refuses to open for
// writing, and a write to /proc/irq/default_smp_affinity leaves the
// host's value as it was.
func TestSandboxProcReadOnly(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		const affinity = "/proc/irq/default_smp_affinity"
		before, err := os.ReadFile(affinity)
		if err != nil {
			t.Skipf("requires %s: %v", affinity, err)
		}
		// A different mask the kernel accepts: CPU 0 alone, or all but
		// CPU 0 when it already is CPU 0 alone.
		mask := "1"
		if strings.Trim(strings.TrimSpace(string(before)), "0,") == "1" {
			mask = "3"
		}
		t.Cleanup(func() {
			if now, _ := os.ReadFile(affinity); string(now) != string(before) && os.Geteuid() == 0 {
				os.WriteFile(affinity, before, 0)
			}
		})
		r := b.run(nil, probeEnv+"=proc-write "+exe+" "+mask)
		if !strings.Contains(r.stdout, "tried ") || strings.Contains(r.stdout, "tried 0\n") {
			t.Fatalf("the probe tried nothing: %+v", r)
		}
		if strings.Contains(r.stdout, "writable:") {
			t.Errorf("/proc entries writable inside:\n%s", r.stdout)
		}
		if now, _ := os.ReadFile(affinity); string(now) != string(before) {
			t.Errorf("the host's %s changed from %q to %q", affinity, before, now)
		}
		// The command's own process directory stays writable.
		r = b.run(nil, "echo 500 > /proc/self/oom_score_adj && cat /proc/self/oom_score_adj")
		if strings.TrimSpace(r.stdout) != "500" {
			t.Errorf("the command cannot write its own oom_score_adj: %+v", r)
		}
	})
}

// Item 3: every protected name as a symlink (a dotfile manager's links,
// a .git in a store, a symlinked .git/hooks): writes through the link,
// replacing the link, re-aiming a link on its way, and creating a
// dangling link's target all leave the host as it was, and the run
// starts normally.
func TestSandboxProtectedSymlinks(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		files := []string{".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".ripgreprc", ".mcp.json"}
		var script strings.Builder
		link := func(name, target string) {
			if err := os.Symlink(target, b.path(name)); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range files {
			for _, at := range []string{"", "sub/", "~/"} {
				b.write(at+"dotfiles/"+f, "ORIGINAL")
				b.write(at+"x", "")
				link(at+f, b.path(at+"dotfiles/"+f))
				p := b.path(at + f)
				fmt.Fprintf(&script, "echo MODIFIED > %q; echo MODIFIED >> %q; rm -f %q; echo NEW > %q; mv -f %q %q; ", p, p, p, p, b.path(at+"x"), p)
			}
		}
		// A chain: the link on the way is pinned too.
		b.write("dotfiles/real", "ORIGINAL")
		link("via", b.path("dotfiles/real"))
		os.Remove(b.path(".zshrc"))
		link(".zshrc", "via")
		b.write("evil", "EVIL")
		script.WriteString("rm -f via; ln -sf evil via; ")
		// A dangling link: its target must not come to exist.
		os.Remove(b.path(".zprofile"))
		link(".zprofile", b.path("dotfiles/zprofile-missing"))
		script.WriteString("echo MODIFIED > .zprofile; ")
		// Protected directories as links.
		for _, d := range []string{".vscode", ".idea"} {
			b.write("store/"+d+"/settings.json", "ORIGINAL")
			link(d, b.path("store/"+d))
			fmt.Fprintf(&script, "echo MODIFIED > %s/settings.json; echo NEW > %s/new.json; rm -f %s; mkdir %s; ", d, d, d, d)
		}
		b.write("store/claude/commands/c.md", "ORIGINAL")
		b.write("store/claude/agents/a.md", "ORIGINAL")
		link(".claude", b.path("store/claude"))
		script.WriteString("echo MODIFIED > .claude/commands/c.md; echo MODIFIED > .claude/agents/a.md; echo NEW > .claude/commands/new.md; echo ok > .claude/notes.md; ")
		// A .git in a store: its hooks and config are protected, the rest
		// is git's to write.
		b.write("store/repo.git/hooks/pre-commit", "ORIGINAL")
		b.write("store/repo.git/config", "ORIGINAL")
		b.write("store/repo.git/HEAD", "ORIGINAL")
		link(".git", b.path("store/repo.git"))
		script.WriteString("echo MODIFIED > .git/hooks/pre-commit; echo NEW > .git/hooks/post-checkout; echo MODIFIED >> .git/config; echo MODIFIED > .git/HEAD; mv .git .git2; rm -f .git; mkdir .git; ")
		// A symlinked .git/hooks inside a real .git.
		b.write("repo/.git/HEAD", "ORIGINAL")
		b.write("hookstore/pre-push", "ORIGINAL")
		link("repo/.git/hooks", b.path("hookstore"))
		script.WriteString("echo MODIFIED > repo/.git/hooks/pre-push; echo NEW > repo/.git/hooks/pre-commit; rm -f repo/.git/hooks; mkdir repo/.git/hooks; ")
		script.WriteString("echo RAN")

		r := b.run(fsMap{"allowWrite": []string{".", "~"}}, script.String())
		if !strings.HasSuffix(r.stdout, "RAN\n") {
			t.Fatalf("the command did not run to its end: %+v", r)
		}
		for _, f := range files {
			for _, at := range []string{"", "sub/", "~/"} {
				target := b.path(at + "dotfiles/" + f)
				if f == ".zshrc" && at == "" || f == ".zprofile" && at == "" {
					continue
				}
				if got := b.read(at + "dotfiles/" + f); got != "ORIGINAL" {
					t.Errorf("%s (the target of %s%s) = %q", target, at, f, got)
				}
				if l, err := os.Readlink(b.path(at + f)); err != nil || l != target {
					t.Errorf("%s%s: link %q, %v; want it to lead to %s", at, f, l, err, target)
				}
			}
		}
		if got := b.read("dotfiles/real"); got != "ORIGINAL" {
			t.Errorf("the chained target = %q", got)
		}
		if l, _ := os.Readlink(b.path("via")); l != b.path("dotfiles/real") {
			t.Errorf("the link on the way was re-aimed to %q", l)
		}
		if _, err := os.Lstat(b.path("dotfiles/zprofile-missing")); err == nil {
			t.Errorf("a dangling protected link's target was created")
		}
		for _, f := range []string{"store/.vscode/settings.json", "store/.idea/settings.json", "store/claude/commands/c.md", "store/claude/agents/a.md",
			"store/repo.git/hooks/pre-commit", "store/repo.git/config", "hookstore/pre-push"} {
			if got := b.read(f); got != "ORIGINAL" {
				t.Errorf("%s = %q", f, got)
			}
		}
		for _, f := range []string{"store/.vscode/new.json", "store/.idea/new.json", "store/claude/commands/new.md", "store/repo.git/hooks/post-checkout", "hookstore/pre-commit", ".git2"} {
			if _, err := os.Lstat(b.path(f)); err == nil {
				t.Errorf("%s was created", f)
			}
		}
		for _, l := range []string{".git", ".vscode", ".idea", ".claude", "repo/.git/hooks"} {
			if fi, err := os.Lstat(b.path(l)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("%s is no longer the symlink it was", l)
			}
		}
		// What is not protected stays writable.
		if b.read("store/repo.git/HEAD") != "MODIFIED\n" || b.read("store/claude/notes.md") != "ok\n" {
			t.Errorf("git's own files or .claude's others were not writable: HEAD %q notes %q (%+v)", b.read("store/repo.git/HEAD"), b.read("store/claude/notes.md"), r)
		}
	})
}

// Item 4: what a command leaves in its TMPDIR, however undeletable (a
// directory of mode 000, one without write permission), goes with the
// run; a command allowed to write TMPDIR's parent can neither make its
// run dir nor the directory of run dirs unremovable, nor touch another
// run's; and a stale run dir without a lock is removed by the next run.
func TestSandboxLeavesNoUndeletableTrace(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		tmp, err := os.MkdirTemp(filepath.Dir(b.W), "t")
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(tmp, fmt.Sprintf("srt-%d", os.Getuid()))
		runs := func() []string {
			m, _ := filepath.Glob(filepath.Join(base, "*"))
			return m
		}
		script := `mkdir -p "$TMPDIR/a/b" "$TMPDIR/c" && touch "$TMPDIR/a/b/f" && chmod 000 "$TMPDIR/a" && chmod 500 "$TMPDIR/c" && echo MADE`
		r := b.exec(nil, []string{"TMPDIR=" + tmp}, "-c", script)
		if !strings.Contains(r.stdout, "MADE") {
			t.Fatalf("%+v", r)
		}
		if left := runs(); len(left) != 0 {
			t.Errorf("left behind: %q", left)
		}
		// With TMPDIR's parent writable: the run dir and its base stay
		// as srt made them, and another run's dir cannot be touched.
		other := filepath.Join(base, "run-other")
		os.MkdirAll(filepath.Join(other, "tmp"), 0o700)
		hold, err := os.Open(other)
		if err != nil {
			t.Fatal(err)
		}
		unix.Flock(int(hold.Fd()), unix.LOCK_EX) // a live run's
		defer hold.Close()
		script = `chmod 000 "$TMPDIR/.."; chmod 000 "$TMPDIR/../.."; rm -rf "$TMPDIR/../../run-other"; touch "$TMPDIR/../../planted"; mkdir "$TMPDIR/x" && chmod 000 "$TMPDIR/x" && echo MADE`
		r = b.exec(fsMap{"allowWrite": []string{tmp}}, []string{"TMPDIR=" + tmp}, "-c", script)
		if !strings.Contains(r.stdout, "MADE") {
			t.Fatalf("%+v", r)
		}
		if fi, err := os.Stat(base); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("the base of run dirs: %v, %v", fi, err)
		}
		if _, err := os.Stat(filepath.Join(other, "tmp")); err != nil {
			t.Errorf("another run's dir was removed: %v", err)
		}
		if left := runs(); len(left) != 1 || left[0] != other {
			t.Errorf("left behind: %q", left)
		}
		// A stale run dir without any lock, with a mode-000 tree inside.
		hold.Close()
		os.MkdirAll(filepath.Join(other, "tmp", "d"), 0o755)
		os.Chmod(filepath.Join(other, "tmp", "d"), 0o000)
		os.Chmod(other, 0o000)
		r = b.exec(nil, []string{"TMPDIR=" + tmp}, "true")
		if left := runs(); len(left) != 0 {
			t.Errorf("a later run left stale dirs: %q (%+v)", left, r)
		}
	})
}

// Item 7: what the server of an allowed Unix socket sees as its peer, as
// README says: srt connects on the command's behalf (so no second thread
// or symlink swap can change the target after the check), so SO_PEERCRED
// names srt's own process, outside the sandbox, with the caller's uid and
// gid.
func TestSandboxUnixPeerIsSrt(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		dir, err := os.MkdirTemp("/tmp", "srt-peer-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.Chmod(dir, 0o755)
		sock := filepath.Join(dir, "agent.sock")
		seen := make(chan string, 1)
		testenv.Serve(t, "unix", sock, func(c net.Conn) {
			raw, _ := c.(*net.UnixConn).SyscallConn()
			var cred *unix.Ucred
			raw.Control(func(fd uintptr) { cred, _ = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
			if cred == nil {
				seen <- "no credentials"
				return
			}
			peerExe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", cred.Pid))
			seen <- fmt.Sprintf("uid=%d gid=%d exe=%s", cred.Uid, cred.Gid, peerExe)
			c.Write([]byte("hello"))
		})
		os.Chmod(sock, 0o666)
		doc := fmt.Sprintf(`{"network":{"allowedDomains":[],"deniedDomains":[],"allowUnixSockets":[%q]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, sock)
		r := b.runJSON(doc, probeEnv+"=unix-connect "+exe+" "+sock)
		if !strings.Contains(r.stdout, `read "hello"`) {
			t.Fatalf("the allowed socket was not reached: %+v", r)
		}
		want := fmt.Sprintf("uid=%d gid=%d exe=%s", os.Getuid(), os.Getgid(), os.Getenv(srtEnv))
		if got := <-seen; got != want {
			t.Errorf("the server saw %q, README says %q", got, want)
		}
	})
}

// fallbackConfig writes settings for the fallback sandbox: BASE with
// enableWeakerNestedSandbox, allowWrite ["."], and extra top-level JSON
// members (`"network": {...}` replaces BASE's network).
func (b *box) fallbackConfig(extra string) string {
	b.t.Helper()
	network := `"network":{"allowedDomains":[],"deniedDomains":[]}`
	if strings.Contains(extra, `"network"`) {
		network = ""
	} else if extra != "" {
		network += ","
	}
	doc := `{"enableWeakerNestedSandbox":true,` + network + extra + `,"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`
	cfg := filepath.Join(filepath.Dir(b.W), fmt.Sprintf("fallback-%d.json", time.Now().UnixNano()))
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		b.t.Fatal(err)
	}
	return cfg
}

// startNoUserns starts srt on a host that refuses user namespaces with
// the given stdio, and returns the running srt.
func (b *box) startNoUserns(stdio *os.File, args ...string) *exec.Cmd {
	b.t.Helper()
	exe := testExe(b.t)
	cmd := exec.Command(exe, append([]string{os.Getenv(srtEnv)}, args...)...)
	cmd.Env = []string{noUsernsEnv + "=", "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}
	cmd.Dir = b.W
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio, stdio, stdio
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// waitFor waits up to 10 s for path to exist.
func waitFor(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}

// Item 8: in the fallback the command holds no capability, has
// no_new_privs, and root inside can neither chown a file outside
// allowWrite nor read another process's environment.
func TestFallbackNoCapabilities(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		outside := filepath.Join(filepath.Dir(b.W), "owned")
		os.WriteFile(outside, []byte("x"), 0o644)
		victim := exec.Command("sleep", "60")
		victim.Env = []string{"SECRET=" + b.canary}
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { victim.Process.Kill(); victim.Wait() }()
		script := fmt.Sprintf(`grep -E '^(Cap|NoNewPrivs)' /proc/self/status; chown 1:1 %s; chown 1 .; cat /proc/%d/environ; echo END`, outside, victim.Process.Pid)
		r := b.runNoUserns("", nil, "--settings", b.fallbackConfig(""), "-c", script)
		b.noCanary(r)
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("%+v", r)
		}
		fields := map[string]string{}
		for _, line := range strings.Split(r.stdout, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				fields[k] = strings.TrimSpace(v)
			}
		}
		sets := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
		if os.Geteuid() == 0 {
			// Only with CAP_SETPCAP can the bounding set shrink; without
			// it, no_new_privs and an empty inheritable set grant nothing.
			sets = append(sets, "CapBnd")
		}
		for _, set := range sets {
			if fields[set] != "0000000000000000" {
				t.Errorf("%s inside = %q, want empty", set, fields[set])
			}
		}
		if fields["NoNewPrivs"] != "1" {
			t.Errorf("NoNewPrivs inside = %q", fields["NoNewPrivs"])
		}
		var st unix.Stat_t
		if err := unix.Stat(outside, &st); err != nil || int(st.Uid) != os.Getuid() {
			t.Errorf("a file outside allowWrite changed owner: %+v %v", st, err)
		}
		if err := unix.Stat(b.W, &st); err != nil || int(st.Uid) != os.Getuid() {
			t.Errorf("the work dir changed owner: %+v %v", st, err)
		}
	})
}

// running returns a process whose command line holds mark, or "".
func running(mark string) string {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		if data, err := os.ReadFile(c); err == nil && strings.Contains(string(data), mark) {
			return c + ": " + strings.ReplaceAll(string(data), "\x00", " ")
		}
	}
	return ""
}

// Item 14: in the fallback, srt is the reaper of the command's whole tree:
// what the command leaves running is killed when it ends (srt does not
// wait for it) and when srt is SIGKILLed; the command gets a pty of its
// own, never the caller's terminal, so nothing reads what the user types
// once srt is gone.
func TestFallbackProcessTree(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		cfg := b.fallbackConfig("")
		// Processes left running carry a mark in their command line, to
		// be found from outside.
		mark := fmt.Sprintf("srt-left-%d", time.Now().UnixNano())
		start := time.Now()
		r := b.runNoUserns("", nil, "--settings", cfg, "-c", `setsid sh -c 'sleep 60; echo LEFT > left1' `+mark+"-1 </dev/null >/dev/null 2>&1 & echo started")
		if !strings.Contains(r.stdout, "started") || time.Since(start) > 30*time.Second {
			t.Errorf("srt waited %v for what the command left running, or did not run it: %+v", time.Since(start), r)
		}
		if p := running(mark + "-1"); p != "" {
			t.Errorf("a process the command left running outlived it: %s", p)
		}

		// On the caller's terminal, then killed.
		master, slave, err := openPTY()
		if err != nil {
			t.Fatal(err)
		}
		defer master.Close()
		go func() {
			buf := make([]byte, 4096)
			for {
				if _, err := master.Read(buf); err != nil {
					return
				}
			}
		}()
		ttyName, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", slave.Fd()))
		srt := b.startNoUserns(slave, "--settings", cfg, "-c",
			`readlink /proc/self/fd/0 > tty.txt; setsid sh -c 'sleep 60; echo LEFT > left2' `+mark+`-2 </dev/null >/dev/null 2>&1 & setsid sh -c 'exec cat > stolen' & touch ready; sleep 30`)
		slave.Close()
		waitFor(t, b.path("ready"))
		if got := strings.TrimSpace(b.read("tty.txt")); got == ttyName || got == "" {
			t.Errorf("the command's stdin is the caller's terminal %s (%q)", ttyName, got)
		}
		srt.Process.Kill()
		srt.Wait()
		// The reaper learns of srt's death by its end of the link; give
		// it time to kill the tree.
		for deadline := time.Now().Add(10 * time.Second); running(mark+"-2") != "" && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
		if p := running(mark + "-2"); p != "" {
			t.Errorf("a process the command left running outlived the SIGKILLed srt: %s", p)
		}
		master.Write([]byte("TYPED-AFTER-SRT-DIED\n"))
		time.Sleep(500 * time.Millisecond)
		if strings.Contains(b.read("stolen"), "TYPED") {
			t.Error("a process of the sandbox read what was typed after srt was killed")
		}
		// A signal to srt reaches the command, through the reaper.
		null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		defer null.Close()
		term := b.startNoUserns(null, "--settings", cfg, "-c", "touch term-ready; exec sleep 30")
		waitFor(t, b.path("term-ready"))
		term.Process.Signal(syscall.SIGTERM)
		if err := term.Wait(); term.ProcessState.ExitCode() != 143 {
			t.Errorf("SIGTERM to srt: %v, exit %d, want 143", err, term.ProcessState.ExitCode())
		}
		// Nothing but this test holds the caller's terminal.
		entries, _ := filepath.Glob("/proc/[0-9]*/fd/*")
		for _, e := range entries {
			if l, err := os.Readlink(e); err == nil && l == ttyName && !strings.HasPrefix(e, fmt.Sprintf("/proc/%d/", os.Getpid())) {
				t.Errorf("%s still holds the caller's terminal %s", e, ttyName)
			}
		}
	})
}

// blockDevice returns a disk of this host, as /dev/NAME, or "".
func blockDevice() string {
	entries, _ := os.ReadDir("/sys/block")
	for _, e := range entries {
		if n := e.Name(); !strings.HasPrefix(n, "loop") && !strings.HasPrefix(n, "ram") && !strings.HasPrefix(n, "zram") {
			if _, err := os.Stat("/dev/" + n); err == nil {
				return "/dev/" + n
			}
		}
	}
	return ""
}

// Item 9: in the fallback, the host's /dev and /proc are not writable
// but for the harmless devices and the command's own terminal, and no
// block device can be read (root owns them, and keeps that ownership
// without capabilities): /dev/shm takes no file, the host's sysctls and
// raw disks are out of reach.
func TestFallbackDevAndProc(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		shm := fmt.Sprintf("/dev/shm/srt-test-%d", time.Now().UnixNano())
		const domain = "/proc/sys/kernel/domainname"
		before, _ := os.ReadFile(domain)
		t.Cleanup(func() {
			os.Remove(shm)
			if now, _ := os.ReadFile(domain); string(now) != string(before) && os.Geteuid() == 0 {
				os.WriteFile(domain, before, 0)
			}
		})
		disk := blockDevice()
		script := strings.Join([]string{
			"echo x > " + shm,
			"echo srt-attack > " + domain,
			"echo x > /proc/self/comm",
			"echo ok-null > /dev/null && echo null-ok",
			"head -c 4 /dev/urandom > /dev/null && echo urandom-ok",
			"echo to-stderr > /dev/stderr",
			"head -c 512 " + disk + " > /dev/null && echo DISK-READ",
			"echo END",
		}, "; ")
		r := b.runNoUserns("", nil, "--settings", b.fallbackConfig(""), "-c", script)
		for _, want := range []string{"null-ok", "urandom-ok", "END"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q: %+v", want, r)
			}
		}
		if !strings.Contains(r.stderr, "to-stderr") {
			t.Errorf("the command could not write /dev/stderr: %+v", r)
		}
		if _, err := os.Stat(shm); err == nil {
			t.Errorf("%s was created on the host", shm)
		}
		if now, _ := os.ReadFile(domain); string(now) != string(before) {
			t.Errorf("the host's %s changed to %q", domain, now)
		}
		if disk != "" && strings.Contains(r.stdout, "DISK-READ") {
			t.Errorf("the command read the raw disk %s", disk)
		}
		// No new pseudo-terminal (its slave would open among this user's
		// other terminals), and allowPty, which asks for them, is refused.
		exe := testExe(t)
		if r := b.runNoUserns("", nil, "--settings", b.fallbackConfig(""), "-c", probeEnv+"=ptmx "+exe); strings.TrimSpace(r.stdout) != "ptmx: permission denied" {
			t.Errorf("a pseudo-terminal was made: %+v", r)
		}
		r = b.runNoUserns("", nil, "--settings", b.fallbackConfig(`"allowPty":true`), "-c", "touch ran")
		if _, err := os.Stat(b.path("ran")); err == nil || r.code != 1 || !strings.Contains(r.stderr, "cannot honour allowPty") {
			t.Errorf("allowPty in the fallback: %+v", r)
		}
	})
}

// Item 10: a denyRead path inside an allowWrite tree cannot be hidden by
// Landlock, which can only grant: the fallback refuses those settings,
// naming both entries, and runs nothing.
func TestFallbackRefusesHiddenInWritable(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "secrets/key")
		doc := `{"enableWeakerNestedSandbox":true,"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["secrets"],"allowWrite":["."],"denyWrite":[]}}`
		cfg := filepath.Join(filepath.Dir(b.W), "hidden-in-writable.json")
		os.WriteFile(cfg, []byte(doc), 0o644)
		r := b.runNoUserns("", nil, "--settings", cfg, "-c", "cat secrets/key; touch ran")
		b.noCanary(r)
		if r.code != 1 || !strings.Contains(r.stderr, "cannot hide "+b.path("secrets")) || !strings.Contains(r.stderr, "filesystem.denyRead.0") || !strings.Contains(r.stderr, "filesystem.allowWrite.0") {
			t.Errorf("%+v", r)
		}
		if _, err := os.Stat(b.path("ran")); err == nil {
			t.Error("the command ran")
		}
	})
}

// Item 12: System V IPC and POSIX message queues, the host's in the
// fallback, are refused: another process's 0600 segment is neither read
// nor overwritten, and no segment or queue is made.
func TestFallbackHostIPC(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
		if err != nil {
			t.Skipf("requires System V shared memory: %v", err)
		}
		defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		mem, err := unix.SysvShmAttach(id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.SysvShmDetach(mem)
		copy(mem, b.canary)
		queue := fmt.Sprintf("srt-test-%d", time.Now().UnixNano()) // the syscalls take the name without its "/"
		r := b.runNoUserns("", nil, "--settings", b.fallbackConfig(""), "-c", fmt.Sprintf("%s=ipc %s %d %s", probeEnv, exe, id, queue))
		b.noCanary(r)
		for _, want := range []string{"shmat: operation not permitted", "shmget: operation not permitted", "mq_open: operation not permitted"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q: %+v", want, r)
			}
		}
		if !strings.HasPrefix(string(mem), b.canary) {
			t.Errorf("the segment was overwritten: %q", mem[:32])
		}
		name := append([]byte(queue), 0)
		if _, _, errno := unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(&name[0])), 0, 0); errno != unix.ENOENT {
			t.Errorf("the queue %s exists on the host (mq_unlink: %v)", queue, errno)
		}
	})
}

// Item 13: in the fallback, which shares the host's network, no socket
// of the command accepts connections from outside: listen() on an
// unbound socket (which would bind every address) or one bound to every
// address is refused, as is an abstract Unix listener; with
// allowLocalBinding, loopback listeners work and the command reaches
// them, and the other kinds stay refused.
func TestFallbackInbound(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		for _, local := range []bool{false, true} {
			ports, done := b.path(fmt.Sprintf("ports-%v", local)), b.path(fmt.Sprintf("done-%v", local))
			abstract := fmt.Sprintf("srt-test-listen-%d", time.Now().UnixNano())
			cfg := b.fallbackConfig(fmt.Sprintf(`"network":{"allowedDomains":[],"deniedDomains":[],"allowAllUnixSockets":true,"allowLocalBinding":%v}`, local))
			null, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			srt := b.startNoUserns(null, "--settings", cfg, "-c", fmt.Sprintf("%s=listen %s %s %s %s", probeEnv, exe, ports, done, abstract))
			null.Close()
			waitFor(t, ports)
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(b.read(fmt.Sprintf("ports-%v", local))), "\n") {
				f := strings.SplitN(line, " ", 3)
				if len(f) < 3 {
					continue
				}
				got[f[0]] = f[2]
				if port, _ := strconv.Atoi(f[1]); port != 0 {
					for _, host := range []string{"127.0.0.1", "::1"} {
						if c, err := net.DialTimeout("tcp", net.JoinHostPort(host, f[1]), time.Second); err == nil {
							c.Close()
							if !local || f[0] == "any4" || f[0] == "any6" {
								t.Errorf("allowLocalBinding %v: the host connected to the command's %s listener on port %d", local, f[0], port)
							}
						}
					}
				}
			}
			if c, err := net.Dial("unix", "@"+abstract); err == nil {
				c.Close()
				if !local {
					t.Errorf("the host connected to the command's abstract listener")
				}
			}
			os.WriteFile(done, nil, 0o644)
			srt.Wait()
			for _, what := range []string{"unbound4", "unbound6", "any4", "any6", "loopback4", "abstract"} {
				refused := got[what] != "<nil>"
				if want := !local || what == "any4" || what == "any6"; refused != want {
					t.Errorf("allowLocalBinding %v: %s listen: %q", local, what, got[what])
				}
			}
			if local && got["own"] != "<nil>" {
				t.Errorf("allowLocalBinding: the command cannot reach its own listener: %q", got["own"])
			}
		}
	})
}

// fileMeta is what the metadata attack could change about a file.
func fileMeta(t *testing.T, path string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	var attrs []string
	for _, name := range []string{"user.srt", "user.srt2", "user.srt3"} {
		buf := make([]byte, 16)
		if n, err := unix.Lgetxattr(path, name, buf); err == nil {
			attrs = append(attrs, name+"="+string(buf[:n]))
		}
	}
	flags := -1 // chattr's flags, where a file has them
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		if fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
			if f, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS); err == nil {
				flags = f
			}
			unix.Close(fd)
		}
	}
	return fmt.Sprintf("mode %o uid %d gid %d mtime %d xattrs %v flags %#x", st.Mode&0o7777, st.Uid, st.Gid, st.Mtim.Sec, attrs, flags)
}

// changedAll checks that the metadata probe's calls on path, a file the
// command may write, all worked (but those the kernel refuses anyway: a
// chown to another user, a user attribute on a symlink, fchmod of an
// O_PATH descriptor, which must say EBADF; and chattr's flags, which srt
// refuses), as out reports and the file shows.
func changedAll(t *testing.T, path, out string) {
	t.Helper()
	meta := fileMeta(t, path)
	if !strings.Contains(meta, "mode 4777") || !strings.Contains(meta, "mtime 1000000") || !strings.Contains(meta, "user.srt=x") || !strings.Contains(meta, "user.srt2=y") {
		t.Errorf("%s did not take the changes: %s\n%s", path, meta, out)
	}
	if !strings.Contains(out, path+" fchmod-opath: bad file descriptor") {
		t.Errorf("fchmod of an O_PATH descriptor of %s did not say EBADF:\n%s", path, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, path+" ") && !strings.HasSuffix(line, "<nil>") &&
			!strings.Contains(line, "chown-other") && !strings.Contains(line, "lsetxattr") &&
			!strings.Contains(line, "setflags") && !strings.Contains(line, "file_setattr") && !strings.Contains(line, "fchmod-opath") {
			t.Errorf("on %s: %s", path, line)
		}
	}
}

// Item 11: in the fallback, where Landlock has no right for them, a
// file's mode, owner, times and extended attributes cannot be changed
// outside allowWrite — by path, by descriptor, through a symlink, by
// /proc/self/fd — nor by racing a symlink swap, while inside allowWrite
// the same calls work.
func TestFallbackMetadata(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		outside := filepath.Join(filepath.Dir(b.W), "outside.txt")
		os.WriteFile(outside, []byte("x"), 0o644)
		b.write("inside.txt", "x")
		os.Symlink(outside, b.path("link-out"))
		before := fileMeta(t, outside)
		// One of the devices the command may write: the host's own, which
		// root owns (and so could change without a capability).
		var dev unix.Stat_t
		if err := unix.Stat("/dev/full", &dev); err != nil {
			t.Fatal(err)
		}
		devBefore := fileMeta(t, "/dev/full")
		t.Cleanup(func() {
			unix.Chmod("/dev/full", dev.Mode&0o7777)
			unix.UtimesNano("/dev/full", []unix.Timespec{dev.Atim, dev.Mtim})
		})
		r := b.runNoUserns("", nil, "--settings", b.fallbackConfig(""), "-c",
			fmt.Sprintf("%s=metadata %s %s %s %s /dev/full; %s=metadata-race %s %s %s %s", probeEnv, exe, outside, b.path("link-out"), b.path("inside.txt"),
				probeEnv, exe, b.path("race"), b.path("inside.txt"), outside))
		if after := fileMeta(t, "/dev/full"); after != devBefore {
			t.Errorf("the host's /dev/full changed: %s, was %s", after, devBefore)
		}
		if !strings.Contains(r.stdout, "race:") {
			t.Fatalf("%+v", r)
		}
		if after := fileMeta(t, outside); after != before {
			t.Errorf("a file outside allowWrite changed: %s, was %s\n%s", after, before, r.stdout)
		}
		changedAll(t, b.path("inside.txt"), r.stdout)
	})
}

// Item 15: each thing the fallback's enforcement report says does not
// hold there is shown to be so, and the report (under --debug) lists
// them all: another process's command line is visible (while a denyWrite
// entry and a protected name inside a writable tree, which the path guard
// keeps, take no write and are not removed), the names in a denyRead
// directory can be listed, a client that ignores
// the proxy variables or cannot send the credential gets nowhere, and no
// pseudo-terminal can be made.
func TestFallbackLacks(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "~/.ssh/id_rsa")
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("requires curl")
		}
		exe := testExe(t)
		b.write("dw.txt", "ORIGINAL")
		b.write("deep/sub/dw2.txt", "ORIGINAL")
		b.write(".bashrc", "ORIGINAL")
		port, requests := hostHTTPServer(t)
		other := exec.Command("sh", "-c", "sleep 60; :", b.canary+"-cmdline")
		if err := other.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { other.Process.Kill(); other.Wait() }()
		doc := fmt.Sprintf(`{"enableWeakerNestedSandbox":true,"network":{"allowedDomains":["127.0.0.1:%d"],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":["dw.txt","deep/sub/dw2.txt"]}}`, port)
		cfg := filepath.Join(filepath.Dir(b.W), "lacks.json")
		os.WriteFile(cfg, []byte(doc), 0o644)
		script := strings.Join([]string{
			fmt.Sprintf("tr '\\0' ' ' < /proc/%d/cmdline; echo", other.Process.Pid),
			"echo CHANGED > dw.txt; echo CHANGED > .bashrc; mv dw.txt moved.txt; ln dw.txt linked.txt; echo CHANGED >> linked.txt; rm .bashrc; rm dw.txt",
			// A directory above a denyWrite file, moved whole, would take
			// the file out from under its entry (rename says EXDEV).
			`python3 -c 'import os; os.rename("deep", "deep2")'; echo CHANGED >> deep2/sub/dw2.txt; chmod 666 deep2/sub/dw2.txt`,
			"ls " + b.path("~/.ssh") + "; cat " + b.path("~/.ssh/id_rsa"),
			fmt.Sprintf("curl -s --max-time 3 --noproxy '*' http://127.0.0.1:%d/direct; echo direct=$?", port),
			fmt.Sprintf(`curl -s -o /dev/null -w 'nocred=%%{http_code}\n' --noproxy '' -x "http://${HTTP_PROXY##*@}" http://127.0.0.1:%d/nocred`, port),
			fmt.Sprintf(`curl -s --noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:%d/cred; echo`, port),
			probeEnv + "=ptmx " + exe,
		}, "; ")
		r := b.runNoUserns("", []string{"SRT_DEBUG=1"}, "--settings", cfg, "-c", script)
		if !strings.Contains(r.stdout, b.canary+"-cmdline") {
			t.Errorf("another process's command line is not visible, as the report says: %+v", r)
		}
		if got := fileMeta(t, b.path("deep/sub/dw2.txt")); b.read("deep/sub/dw2.txt") != "ORIGINAL" || !strings.HasPrefix(got, "mode 644 ") {
			t.Errorf("a denyWrite file was moved with its directory, then written: %q, %s", b.read("deep/sub/dw2.txt"), got)
		}
		if b.read("dw.txt") != "ORIGINAL" {
			t.Errorf("a denyWrite entry inside a writable tree was written, moved, linked or removed: %q", b.read("dw.txt"))
		}
		if got := b.read(".bashrc"); got != "ORIGINAL" && !strings.Contains(got, "no such file") {
			// It may be removed (the host then runs nothing from it); it
			// may not be written.
			t.Errorf("a protected name inside a writable tree was written: %q", got)
		}
		if !strings.Contains(r.stdout, "id_rsa") || strings.Count(r.stdout, b.canary) != 1 {
			t.Errorf("the names of a denyRead dir are not listable, or its contents were read: %+v", r)
		}
		if !strings.Contains(r.stdout, "direct=7") && !strings.Contains(r.stdout, "direct=28") {
			t.Errorf("a client that ignores the proxy variables connected: %+v", r)
		}
		if !strings.Contains(r.stdout, "nocred=407") || !strings.Contains(r.stdout, "hello") {
			t.Errorf("the proxy took a request without its credential, or refused one with it: %+v", r)
		}
		if !strings.Contains(r.stdout, "ptmx: permission denied") {
			t.Errorf("a pseudo-terminal was made: %+v", r)
		}
		for _, req := range requests() {
			if strings.Contains(req, "/direct") || strings.Contains(req, "/nocred") {
				t.Errorf("the server saw %q", req)
			}
		}
		for _, lack := range []string{"visible in /proc", "names in a denyRead directory",
			"ignore the proxy variables", "per-run credential, such as Java's", "no new pseudo-terminal"} {
			if !strings.Contains(r.stderr, lack) {
				t.Errorf("the enforcement report does not list %q:\n%s", lack, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "can be removed") {
			t.Errorf("the enforcement report still says deny entries and protected names can be removed:\n%s", r.stderr)
		}
	})
}

// Item 3, the same class inside protected directories: a hook linked to a
// script kept in the project, an editor setting linked elsewhere, and a
// hook linked to a script that does not exist yet: writing the targets,
// or creating one through the link or by its own name, leaves the host
// as it was.
func TestSandboxLinksInsideProtectedDirs(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		b.write("scripts/pre-commit", "ORIGINAL")
		b.write("conf/vs.json", "ORIGINAL")
		b.write(".git/HEAD", "ORIGINAL")
		b.write(".git/hooks/", "")
		b.write(".vscode/", "")
		for link, target := range map[string]string{".git/hooks/pre-commit": "scripts/pre-commit", ".git/hooks/post-merge": "scripts/post-merge",
			".git/hooks/pre-push": "scripts/pre-push", ".vscode/settings.json": "conf/vs.json"} {
			if err := os.Symlink(b.path(target), b.path(link)); err != nil {
				t.Fatal(err)
			}
		}
		r := b.run(fsMap{"allowWrite": []string{"."}}, "echo EVIL > scripts/pre-commit; echo EVIL > .git/hooks/post-merge; echo EVIL > scripts/pre-push; echo EVIL > conf/vs.json; echo EVIL > scripts/other; echo END")
		if !strings.Contains(r.stdout, "END") || b.read("scripts/other") != "EVIL\n" {
			t.Fatalf("%+v", r)
		}
		for _, f := range []string{"scripts/pre-commit", "conf/vs.json"} {
			if got := b.read(f); got != "ORIGINAL" {
				t.Errorf("%s = %q", f, got)
			}
		}
		if _, err := os.Lstat(b.path("scripts/post-merge")); err == nil {
			t.Error("a hook's missing target was created through it")
		}
		if _, err := os.Lstat(b.path("scripts/pre-push")); err == nil {
			t.Error("a hook's missing target was created by its own name")
		}
	})
}
