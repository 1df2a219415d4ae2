package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/srt-go/srt/internal/testenv"
)

// srtEnv holds the path of the srt binary built for the end-to-end tests;
// it is passed on to the unprivileged re-run.
const srtEnv = "SRT_TEST_BINARY"

// probeEnv makes the test binary, inside the sandbox, try a forbidden
// operation (see probe).
const probeEnv = "SRT_TEST_PROBE"

// noUsernsEnv makes the test binary a host without user namespaces (see
// noUsernsHarness).
const noUsernsEnv = "SRT_TEST_NO_USERNS"

// superviseEnv makes the test binary a stand-in supervisor (see
// superviseHelper).
const superviseEnv = "SRT_TEST_SUPERVISE"

// superviseLate, as superviseEnv's value, makes the stand-in's word of
// a stop come late (see superviseHelper).
const superviseLate = "late"

func TestMain(m *testing.M) {
	if os.Getenv(superviseEnv) != "" {
		superviseHelper()
		return
	}
	if mode, ok := os.LookupEnv(noUsernsEnv); ok {
		noUsernsHarness(mode)
	}
	if what := os.Getenv(probeEnv); what != "" {
		probe(what)
	}
	if os.Getenv(srtEnv) == "" {
		dir, err := os.MkdirTemp("", "srt-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		bin := filepath.Join(dir, "srt")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building srt: %v\n%s", err, out)
			os.Exit(1)
		}
		// Readable by the unprivileged re-run.
		if err := os.Chmod(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv(srtEnv, bin)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}

type result struct {
	stdout, stderr string
	code           int
}

// runSrt runs the built binary with HOME set to home (an empty temp dir
// unless given) and the working directory dir.
func runSrt(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(os.Getenv(srtEnv), args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	cmd.Dir = t.TempDir()
	out, errOut, code, err := testenv.Output(cmd)
	if err != nil {
		t.Fatalf("running srt %q: %v", args, err)
	}
	return result{out, errOut, code}
}

const baseSettings = `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`

const refusalFile = "srt: Refusing to run with the built-in defaults, which would drop this file's rules (its denyRead, allowRead and credential entries included).\n"

// Spec b.1 / a.4 through the CLI: every unusable settings file stops srt
// with exit 1, a message naming the file and the problem, and the command
// does not run.
func TestSettingsFileSemantics(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		dir := t.TempDir()
		write := func(name, content string, mode os.FileMode) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(content), mode); err != nil {
				t.Fatal(err)
			}
			return p
		}
		marker := filepath.Join(dir, "ran")
		cmd := []string{"--", "/bin/touch", marker}
		homeFile := write("homefile", "x", 0o644)
		cases := []struct {
			name   string
			env    []string
			args   []string
			stderr string
		}{
			{"missing --settings", nil, []string{"--settings", "/nonexistent.json"},
				"srt: /nonexistent.json does not exist.\nsrt: Refusing to run with the built-in defaults, which would drop the rules --settings asked for.\n"},
			{"empty file", nil, []string{"--settings", write("empty.json", "", 0o644)},
				"srt: " + filepath.Join(dir, "empty.json") + " is empty. Delete it, or put a config in it.\n" + refusalFile},
			{"whitespace file", nil, []string{"-s", write("blank.json", "  \n\t", 0o644)},
				"srt: " + filepath.Join(dir, "blank.json") + " is empty. Delete it, or put a config in it.\n" + refusalFile},
			{"invalid JSON", nil, []string{"--settings=" + write("bad.json", "{bad", 0o644)},
				"srt: " + filepath.Join(dir, "bad.json") + " is not valid JSON: invalid character 'b' (line 1, column 2)\n" + refusalFile},
			{"empty object", nil, []string{"--settings", write("obj.json", "{}", 0o644)},
				"srt: " + filepath.Join(dir, "obj.json") + " does not hold a valid config — network: Required; filesystem: Required\n" + refusalFile},
			{"empty network", nil, []string{"--settings", write("net.json", `{"network":{}}`, 0o644)},
				"srt: " + filepath.Join(dir, "net.json") + " does not hold a valid config — network.allowedDomains: Required; network.deniedDomains: Required; filesystem: Required\n" + refusalFile},
			{"bad domain", nil, []string{"--settings", write("dom.json", strings.Replace(baseSettings, `"allowedDomains":[]`, `"allowedDomains":["a.com","b.com","bad host.com"]`, 1), 0o644)},
				"srt: " + filepath.Join(dir, "dom.json") + ` does not hold a valid config — network.allowedDomains.2: invalid domain pattern "bad host.com": character ' ' is not allowed in a host name.`},
			{"directory", nil, []string{"--settings", dir},
				"srt: " + dir + " could not be read (EISDIR).\n" + refusalFile},
			{"default path, bad file", []string{"HOME=" + dir}, nil,
				"srt: " + filepath.Join(dir, ".srt-settings.json") + " is not valid JSON"},
			{"HOME is a file", []string{"HOME=" + homeFile}, nil,
				"srt: " + filepath.Join(homeFile, ".srt-settings.json") + " could not be read (ENOTDIR).\n" + refusalFile},
		}
		write(".srt-settings.json", "[1,", 0o644)
		if os.Geteuid() != 0 {
			cases = append(cases, struct {
				name   string
				env    []string
				args   []string
				stderr string
			}{"unreadable", nil, []string{"--settings", write("secret.json", baseSettings, 0)},
				"srt: " + filepath.Join(dir, "secret.json") + " could not be read (EACCES).\n" + refusalFile})
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := runSrt(t, tc.env, append(tc.args, cmd...)...)
				if r.code != 1 || !strings.HasPrefix(r.stderr, tc.stderr) || r.stdout != "" {
					t.Errorf("exit %d, stderr:\n%s\nwant exit 1, stderr starting:\n%s", r.code, r.stderr, tc.stderr)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Fatalf("the command ran")
				}
			})
		}
	})
}

// A valid file, the reference README's full example among them, is
// accepted; with the built-in defaults and BASE nothing is writable, so
// the command's write fails and leaves nothing on the host.
func TestValidSettingsAccepted(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		testenv.RequireUserNamespaces(t)
		ref, err := os.ReadFile(filepath.Join("testdata", "reference-full.json"))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		for name, content := range map[string]string{"base": baseSettings, "reference": string(ref)} {
			p := filepath.Join(dir, name+".json")
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if r := runSrt(t, nil, "--settings", p, "true"); r.code != 0 || r.stderr != "" {
				t.Errorf("%s settings: exit %d, stderr %q", name, r.code, r.stderr)
			}
		}
		marker := filepath.Join(dir, "ran")
		for _, args := range [][]string{
			{"--settings", filepath.Join(dir, "base.json"), "/bin/touch", marker},
			{"-c", "touch " + marker}, // built-in defaults
		} {
			r := runSrt(t, nil, args...)
			if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
				t.Errorf("srt %q: exit %d, stderr %q; want a read-only failure", args, r.code, r.stderr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("srt %q wrote outside every writable path", args)
			}
		}
	})
}

func TestUnknownKeysWarnOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	content := `{"netwrok":{},"network":{"allowedDomains":[],"deniedDomains":[],"bogus":1},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runSrt(t, nil, "--settings", p, "true")
	want := `srt: ignoring unknown settings keys "network.bogus", "netwrok" in ` + p + "\n"
	if !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "ignoring") != 1 {
		t.Errorf("stderr = %q, want it to start with %q", r.stderr, want)
	}
	one := strings.Replace(content, `"netwrok":{},`, "", 1)
	if err := os.WriteFile(p, []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runSrt(t, nil, "--settings", p, "true"); !strings.HasPrefix(r.stderr, `srt: ignoring unknown settings key "network.bogus" in `) {
		t.Errorf("stderr = %q", r.stderr)
	}
}

func TestControlFD(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		for _, v := range []string{"abc", "2", "0", "-1", "", "3x", "99999999999"} {
			r := runSrt(t, nil, "--control-fd", v, "true")
			want := fmt.Sprintf("srt: option --control-fd: %q is not a file descriptor number of 3 or more\n", v)
			if r.code != 1 || !strings.HasPrefix(r.stderr, want) {
				t.Errorf("--control-fd %q: exit %d, stderr %q", v, r.code, r.stderr)
			}
		}
		if r := runSrt(t, nil, "--control-fd"); r.code != 1 || !strings.Contains(r.stderr, "option --control-fd needs a value") {
			t.Errorf("missing value: exit %d, stderr %q", r.code, r.stderr)
		}
		// Closed, write-only, and readable descriptors.
		rd, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		defer wr.Close()
		for _, tc := range []struct {
			name  string
			file  *os.File
			fd    string
			want  string
			extra []*os.File
		}{
			{"closed", nil, "9", "srt: --control-fd 9 is not usable: it is not an open file descriptor. Refusing to run the command without the control channel it asks for.\n", nil},
			{"write-only", wr, "3", "srt: --control-fd 3 is not usable: it is open for writing only.", nil},
			{"readable", rd, "3", "", nil},
		} {
			if tc.want == "" {
				testenv.RequireUserNamespaces(t)
			}
			cmd := exec.Command(os.Getenv(srtEnv), "--control-fd", tc.fd, "true")
			cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
			if tc.file != nil {
				cmd.ExtraFiles = []*os.File{tc.file}
			}
			_, stderr, code, err := testenv.Output(cmd)
			if err != nil {
				t.Fatal(err)
			}
			wantCode := 1
			if tc.want == "" {
				wantCode = 0
			}
			if code != wantCode || !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("%s: exit %d, stderr %q, want prefix %q", tc.name, code, stderr, tc.want)
			}
		}
		// The settings file is checked first.
		if r := runSrt(t, nil, "--settings", "/nonexistent", "--control-fd", "9", "true"); !strings.Contains(r.stderr, "/nonexistent does not exist") {
			t.Errorf("settings should be reported before the control fd: %q", r.stderr)
		}
	})
}

func TestInfoOptions(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-V"}} {
		if r := runSrt(t, nil, args...); r.code != 0 || r.stdout != version+"\n" || r.stderr != "" {
			t.Errorf("srt %q = %+v", args, r)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}} {
		if r := runSrt(t, nil, args...); r.code != 0 || !strings.HasPrefix(r.stdout, "usage: srt [options] [--] command [args...]") {
			t.Errorf("srt %q = %+v", args, r)
		}
	}
	r := runSrt(t, nil, "schema")
	var s map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil || s["properties"] == nil {
		t.Errorf("srt schema: exit %d, %.200s", r.code, r.stdout)
	}
	if r := runSrt(t, nil, "schema", "x"); r.code != 1 {
		t.Errorf("srt schema x: exit %d", r.code)
	}
}

// windows-install and windows-uninstall say, off Windows, that they run
// there only (exit 1); the reference's options for machine-wide filters
// and profile grants are refused with what to use instead, on any host;
// an unknown argument is refused.
func TestWindowsInstallCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("makes a local account on Windows: not in a test")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"windows-install"}, "runs on Windows only"},
		{[]string{"windows-install", "--sandbox-user", "sbx", "--force"}, "runs on Windows only"},
		{[]string{"windows-uninstall"}, "runs on Windows only"},
		{[]string{"windows-install", "--proxy-port-range", "1-2"}, "windows.proxyPortRange"},
		{[]string{"windows-install", "--skip-profile-grant"}, "filesystem.allowRead"},
		{[]string{"windows-uninstall", "--force"}, "unknown argument"},
		{[]string{"windows-install", "--sandbox-user"}, "takes a name"},
	} {
		r := runSrt(t, nil, c.args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("srt %q = %+v, want exit 1 and %q", c.args, r, c.want)
		}
	}
}

func TestNoCommand(t *testing.T) {
	want := "srt: no command specified. Use -c <command> or provide command arguments.\n"
	if r := runSrt(t, nil); r.code != 1 || r.stderr != want {
		t.Errorf("srt = %+v", r)
	}
	// Settings are loaded first: with -d their debug lines come before.
	r := runSrt(t, nil, "-d")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "[SandboxDebug] No config found at ") || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("srt -d = %+v", r)
	}
	if strings.Contains(r.stderr, "Loaded config from") || !strings.Contains(r.stderr, "[SandboxDebug] Default config: 0 allowed") {
		t.Errorf("srt -d without a settings file says it loaded one: %q", r.stderr)
	}
	if r := runSrt(t, []string{"SRT_DEBUG=1"}, "-c", "echo test"); !strings.Contains(r.stderr, "[SandboxDebug] Command string mode (-c): echo test") {
		t.Errorf("SRT_DEBUG: %q", r.stderr)
	}
	if r := runSrt(t, nil, "echo", "test"); strings.Contains(r.stderr, "[SandboxDebug]") {
		t.Errorf("debug output without -d: %q", r.stderr)
	}
	if r := runSrt(t, nil, "--bogus", "echo", "hi"); r.code != 1 || !strings.HasPrefix(r.stderr, `srt: unknown option "--bogus"`) {
		t.Errorf("srt --bogus = %+v", r)
	}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		argv     []string
		settings string
		debug    bool
		fd       int
		sub      string
	}{
		{[]string{"echo", "hello"}, []string{"echo", "hello"}, "", false, -1, ""},
		{[]string{"grep", "-c", "x", "f"}, []string{"grep", "-c", "x", "f"}, "", false, -1, ""},
		{[]string{"echo", "-d", "hi"}, []string{"echo", "-d", "hi"}, "", false, -1, ""},
		{[]string{"ls", "--settings", "f.json"}, []string{"ls", "--settings", "f.json"}, "", false, -1, ""},
		{[]string{"--", "echo", "-d", "hi"}, []string{"echo", "-d", "hi"}, "", false, -1, ""},
		{[]string{"-d", "--", "--", "x"}, []string{"--", "x"}, "", true, -1, ""},
		{[]string{"-s", "a.json", "-d", "x"}, []string{"x"}, "a.json", true, -1, ""},
		{[]string{"--settings=a.json", "--debug", "x"}, []string{"x"}, "a.json", true, -1, ""},
		{[]string{"--control-fd", "3", "x"}, []string{"x"}, "", false, 3, ""},
		{[]string{"--control-fd=12", "x"}, []string{"x"}, "", false, 12, ""},
		{[]string{"-c", "echo fromc", "echo", "ignored"}, []string{"/bin/sh", "-c", "echo fromc", "echo", "ignored"}, "", false, -1, ""},
		{[]string{"-c", "", "echo", "pos"}, []string{"echo", "pos"}, "", false, -1, ""},
		{[]string{"-", "x"}, []string{"-", "x"}, "", false, -1, ""},
		{[]string{"schema"}, nil, "", false, -1, "schema"},
		{[]string{"--", "schema"}, []string{"schema"}, "", false, -1, ""},
		{[]string{"-d", "schema"}, []string{"schema"}, "", true, -1, ""},
		{[]string{"help"}, []string{"help"}, "", false, -1, ""},
	} {
		o, err := parseArgs(tc.args)
		if err != nil {
			t.Errorf("parseArgs(%q): %v", tc.args, err)
			continue
		}
		if !reflect.DeepEqual(o.argv(), tc.argv) && !(len(o.argv()) == 0 && len(tc.argv) == 0) ||
			o.settings != tc.settings || o.debug != tc.debug || o.controlFD != tc.fd || o.subcommand != tc.sub {
			t.Errorf("parseArgs(%q) = argv %q settings %q debug %v fd %d sub %q", tc.args, o.argv(), o.settings, o.debug, o.controlFD, o.subcommand)
		}
	}
	for _, args := range [][]string{
		{"--bogus", "x"}, {"-x"}, {"-dc", "x"}, {"--settings"}, {"-s", "a", "-s", "b", "x"}, {"--settings="},
		{"-c"}, {"-c", "a", "-c", "b"}, {"--debug=1", "x"}, {"--control-fd", "x"},
	} {
		if _, err := parseArgs(args); err == nil {
			t.Errorf("parseArgs(%q) accepted", args)
		}
	}
}

// Spec a.2: the command text re-parses into exactly the original words.
func TestShellQuote(t *testing.T) {
	words := []string{"echo", "$HOME", "a;b", "!x", "", "it's", "=cmd", "a=b", "x y", "tab\there", "new\nline", "-n", "/usr/bin:/x,y@z+w"}
	q := shellQuote(words)
	if !strings.HasPrefix(q, `echo '$HOME' 'a;b' '!x' '' 'it'"'"'s' '=cmd' a=b 'x y'`) {
		t.Errorf("shellQuote = %s", q)
	}
	out, err := exec.Command("/bin/sh", "-c", `for w in "$@"; do printf '[%s]' "$w"; done`, "sh").Output()
	_ = out
	if err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	got, err := exec.Command("/bin/sh", "-c", "set -- "+q+`; for w in "$@"; do printf '[%s]' "$w"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, w := range words {
		want += "[" + w + "]"
	}
	if string(got) != want {
		t.Errorf("sh split %s into %q, want %q", q, got, want)
	}
}

// The binary is one static file: no ELF interpreter, no shared libraries,
// so it runs in minimal containers.
func TestBinaryIsStatic(t *testing.T) {
	f, err := elf.Open(os.Getenv(srtEnv))
	if err != nil {
		t.Skipf("not an ELF binary on this platform: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("srt has an ELF interpreter: it is dynamically linked")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("srt needs shared libraries %q (%v)", libs, err)
	}
}

// testExe is this test binary's path: the probes run as it (probeEnv).
func testExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
