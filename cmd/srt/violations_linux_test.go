package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/testenv"
)

// settingsFile writes a settings document for allowed domains and returns
// its path and the one-line form a control fd takes.
func settingsDoc(allowed ...string) string {
	data, _ := json.Marshal(map[string]any{
		"network":    map[string]any{"allowedDomains": append([]string{}, allowed...), "deniedDomains": []string{"github.com:22"}, "deniedDomainReasons": map[string]string{"github.com:22": "SSH pushes are blocked; use https"}},
		"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{"."}, "denyWrite": []string{}},
	})
	return string(data)
}

// controlCmd is srt running script under the deny-all settings with the
// read end of a new pipe as --control-fd 3; it returns the command (not
// started; srt's copy of the read end is closed once it starts) and the
// pipe's write end.
func controlCmd(t *testing.T, script string) (*exec.Cmd, *os.File) {
	t.Helper()
	dir := testenv.SharedTempDir(t)
	cfg := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(cfg, []byte(settingsDoc()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctlR.Close(); ctlW.Close() })
	cmd := exec.Command(os.Getenv(srtEnv), "--settings", cfg, "--control-fd", "3", "-c", script)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{ctlR}
	return cmd, ctlW
}

// --control-fd: while the command loops on curl to a loopback server,
// an allow line lets it through from the next request on, a line that
// is no settings object changes nothing (one line on stderr), a deny
// line closes it again; the command finds /dev/null in the fd's slot.
func TestControlFDLive(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		testenv.RequireUserNamespaces(t)
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("requires curl")
		}
		local, hits := testenv.ServeOK(t)
		// Each request's status on its own line; the script ends when
		// it has seen 200 and then 403 again.
		script := fmt.Sprintf(`readlink /proc/self/fd/3; cat <&3 && echo fd3-empty
seen=0
for i in $(seq 1 400); do
  code=$(curl --noproxy '' -s -o /dev/null -w '%%{http_code}' http://%s/)
  echo "$code"
  [ "$code" = 200 ] && seen=1
  [ "$seen" = 1 ] && [ "$code" = 403 ] && exit 0
  sleep 0.05
done
exit 3`, local)
		cmd, ctlW := controlCmd(t, script)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmd.ExtraFiles[0].Close()
		lines := bufio.NewScanner(stdout)
		next := func() string {
			if !lines.Scan() {
				t.Fatalf("the command's output ended; stderr %q", stderr.String())
			}
			return lines.Text()
		}
		if got := next(); got != "/dev/null" {
			t.Errorf("fd 3 inside is %q, want /dev/null", got)
		}
		if got := next(); got != "fd3-empty" {
			t.Errorf("reading fd 3 inside: %q", got)
		}
		if got := next(); got != "403" {
			t.Fatalf("before any update: %q", got)
		}
		io.WriteString(ctlW, "not json\n\n")
		io.WriteString(ctlW, settingsDoc(local)+"\n")
		var codes []string
		for code := next(); ; code = next() {
			codes = append(codes, code)
			if code == "200" {
				break
			}
			if len(codes) > 100 {
				t.Fatalf("the allow never took effect: %q", codes)
			}
		}
		io.WriteString(ctlW, settingsDoc()+"\n")
		for code := next(); code != "403"; code = next() {
			codes = append(codes, code)
			if len(codes) > 200 {
				t.Fatalf("the deny never took effect: %q", codes)
			}
		}
		io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%v; stderr %q", err, stderr.String())
		}
		if n := strings.Count(stderr.String(), "Invalid config on control fd 3: ignored, previous config still in force"); n != 1 {
			t.Errorf("%d invalid-config lines on stderr, want 1 (blank lines are silent): %q", n, stderr.String())
		}
		if hits() == 0 {
			t.Error("the server saw no request after the allow")
		}
	})
}

// A line written before srt starts reading is applied, not lost.
func TestControlFDEarlyLine(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		testenv.RequireUserNamespaces(t)
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("requires curl")
		}
		local, _ := testenv.ServeOK(t)
		cmd, ctlW := controlCmd(t, fmt.Sprintf(`sleep 0.5; curl --noproxy '' -s -o /dev/null -w '%%{http_code}' http://%s/`, local))
		io.WriteString(ctlW, settingsDoc(local)+"\n")
		ctlW.Close() // and EOF is no error
		out, errOut, code, err := testenv.Output(cmd)
		if err != nil || code != 0 || out != "200" {
			t.Errorf("early line: %q, exit %d, %v, stderr %q", out, code, err, errOut)
		}
	})
}

// --violations writes every denial as a JSON line with its fields: a
// denied domain (with its rule and reason), a refused Unix socket
// creation (the host's listener gets nothing) and a write to a protected
// file (the file keeps its content); the failed command ends with a
// summary on stderr, which --quiet leaves out.
func TestViolationsOutput(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		testenv.RequireUserNamespaces(t)
		for _, tool := range []string{"curl", "python3"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("requires %s", tool)
			}
		}
		dir := testenv.SharedTempDir(t)
		cfg := filepath.Join(dir, "settings.json")
		os.WriteFile(cfg, []byte(settingsDoc()), 0o644)
		work := filepath.Join(dir, "work")
		os.Mkdir(work, 0o777)
		rc := filepath.Join(work, ".bashrc")
		os.WriteFile(rc, []byte("original\n"), 0o666)
		os.Chmod(rc, 0o666)
		sock := filepath.Join(testenv.ShortTempDir(t, "srt-vo-"), "host.sock")
		connected := testenv.ListenUnix(t, sock)
		script := fmt.Sprintf(`curl -s -o /dev/null https://github.com:22/
python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect("%s")' 2>/dev/null
echo evil >> .bashrc
exit 1`, sock)
		out := filepath.Join(dir, "violations.jsonl")
		run := func(extra ...string) (string, int) {
			args := append([]string{"--settings", cfg, "--violations", out}, extra...)
			cmd := exec.Command(os.Getenv(srtEnv), append(args, "-c", script)...)
			cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
			cmd.Dir = work
			_, errOut, code, err := testenv.Output(cmd)
			if err != nil {
				t.Fatal(err)
			}
			return errOut, code
		}
		stderr, code := run()
		if code != 1 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if connected() {
			t.Error("the host's Unix socket got a connection from the sandbox")
		}
		if data, _ := os.ReadFile(rc); string(data) != "original\n" {
			t.Errorf(".bashrc changed: %q", data)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		type record struct {
			Time                                              time.Time
			CommandID, Command, Kind, Target, Operation, Rule string
			Reason                                            string
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r record
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("not a JSON line: %q", line)
			}
			if r.Time.IsZero() || r.CommandID == "" || !strings.Contains(r.Command, "curl -s") {
				t.Errorf("incomplete record %q", line)
			}
			got = append(got, fmt.Sprintf("%s %s %s | %s | %s", r.Kind, r.Operation, strings.TrimPrefix(r.Target, dir), r.Rule, r.Reason))
		}
		// Libraries may try a Unix socket before the script's own does:
		// the order of the socket record is not fixed.
		sort.Strings(got)
		want := []string{
			`network connect github.com:22 | deniedDomains "github.com:22" | SSH pushes are blocked; use https`,
			`unix-socket socket AF_UNIX |  | Unix-domain sockets are not allowed (allowUnixSockets)`,
		}
		if len(got) != 3 || !strings.HasPrefix(got[0], "filesystem write /work/.bashrc | ") || got[1] != want[0] || got[2] != want[1] {
			t.Errorf("violations:\n%s\nwant filesystem write /work/.bashrc and\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, w := range []string{
			`srt: blocked: connect github.com:22 (deniedDomains "github.com:22": SSH pushes are blocked; use https)`,
			"srt: blocked: write " + rc,
		} {
			if !strings.Contains(stderr, w) {
				t.Errorf("summary lacks %q: %q", w, stderr)
			}
		}
		if strings.Contains(stderr, "blocked: socket") {
			t.Errorf("the summary names the refused socket(AF_UNIX), a library probe as often as not: %q", stderr)
		}
		if stderr, _ := run("--quiet"); strings.Contains(stderr, "srt: blocked") {
			t.Errorf("--quiet printed a summary: %q", stderr)
		}
	})
}

// A control channel that fails before delivering any update stops the
// command (srt exits 1 whatever its status); here fd 3 is a directory,
// readable for fcntl but not for read(2).
func TestControlFDFailsFirst(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		testenv.RequireUserNamespaces(t)
		dir := testenv.SharedTempDir(t)
		d, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		marker := filepath.Join(dir, "finished")
		cmd := exec.Command(os.Getenv(srtEnv), "--control-fd", "3", "-c", "sleep 5; touch "+marker)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
		cmd.Dir = dir
		cmd.ExtraFiles = []*os.File{d}
		_, stderr, code, err := testenv.Output(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if code != 1 || !strings.Contains(stderr, "control fd 3 failed before delivering an update") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the command ran to its end")
		}
	})
}

// The exit summary of file denials read from the command's stderr: a Go
// program's lower-case error is read; a write into a denyRead tree is a
// write; a write where an allowWrite entry pointed that did not exist
// when the command started says so; what the kernel refuses in the
// sandbox's own /proc ("unshare -Ur" as root, without CAP_SETFCAP) is no
// violation. Each denied path stays as it was on the host.
func TestInferredSummary(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "~/.ssh/id_rsa")
		exe := testExe(t)
		_, haveUnshare := exec.LookPath("unshare")
		for _, tc := range []struct {
			name   string
			doc    map[string]any // the filesystem keys, and the top-level ones
			script string
			want   string // a line of the summary; "" for none at all
		}{
			{"go error", map[string]any{"denyRead": []string{"~/.ssh"}},
				probeEnv + "=go-mkdir " + exe + " " + b.path("~/go"),
				"srt: blocked: write " + b.path("~/go") + " (not under any allowWrite entry)"},
			{"write into denyRead", map[string]any{"denyRead": []string{"~/.ssh"}},
				"echo x > ~/.ssh/new; exit 1",
				"srt: blocked: write " + b.path("~/.ssh/new") + ` (filesystem.denyRead.0 "~/.ssh": `},
			{"skipped allowWrite", map[string]any{"allowWrite": []string{"./build"}},
				"mkdir build; exit 1",
				"srt: blocked: write " + b.path("build") + ` (allowWrite entry "./build" did not exist when the command started)`},
			{"unshare -Ur", map[string]any{"allowNestedUserNamespaces": true},
				"unshare -Ur true; exit 1", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.name == "unshare -Ur" && haveUnshare != nil {
					t.Skip("requires unshare(1)")
				}
				fs := map[string]any{"denyRead": []string{}, "allowWrite": []string{}, "denyWrite": []string{}}
				doc := map[string]any{"network": map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}}, "filesystem": fs}
				for k, v := range tc.doc {
					if k == "allowNestedUserNamespaces" {
						doc[k] = v
					} else {
						fs[k] = v
					}
				}
				data, _ := json.Marshal(doc)
				r := b.runJSON(string(data), tc.script)
				if r.code != 1 {
					t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
				}
				var summary []string
				for _, l := range strings.Split(r.stderr, "\n") {
					if strings.HasPrefix(l, "srt: blocked: ") {
						summary = append(summary, l)
					}
				}
				switch {
				case tc.want == "" && len(summary) > 0:
					t.Errorf("summary %q, want none; stderr %q", summary, r.stderr)
				case tc.want != "" && (len(summary) != 1 || !strings.HasPrefix(summary[0], tc.want)):
					t.Errorf("summary %q, want one line starting %q; stderr %q", summary, tc.want, r.stderr)
				}
			})
		}
		for _, p := range []string{"~/go", "~/.ssh/new", "build"} {
			if _, err := os.Lstat(b.path(p)); err == nil {
				t.Errorf("%s was made on the host", b.path(p))
			}
		}
		if got := b.read("~/.ssh/id_rsa"); got != b.canary {
			t.Errorf("~/.ssh/id_rsa changed: %q", got)
		}
	})
}
