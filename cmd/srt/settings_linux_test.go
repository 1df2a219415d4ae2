package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/internal/testenv"
)

// A settings file that asks for a key srt refuses on Linux stops srt with
// exit 1 and a line per key saying why, and the command does not run; a
// file that spells out the same keys' defaults runs it; --debug lists the
// keys that have no meaning here.
func TestSettingsKeyRules(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		dir := t.TempDir()
		canary := filepath.Join(dir, "ran")
		// write makes a settings file with more network keys and more
		// top-level keys (each "" or starting with a comma).
		write := func(name, network, top string) string {
			p := filepath.Join(dir, name)
			doc := `{"network":{"allowedDomains":[],"deniedDomains":[]` + network + `},"filesystem":{"denyRead":[],"allowWrite":["` + dir + `"],"denyWrite":[]}` + top + `}`
			if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		credentials := write("credentials.json", "", `,"credentials":{"envVars":[{"name":"SECRET_TOKEN","mode":"deny"}]}`)
		tls := write("tls.json", `,"tlsTerminate":{},"requireHostMatch":true`, "")
		for _, tc := range []struct {
			name, path, stderr string
		}{
			{"credentials deny", credentials,
				"srt: credentials is not supported on linux yet (denying and masking credentials arrives with issue #20)\n" +
					"srt: Refusing to run without what " + credentials + " asks for; remove the key above from it to run.\n"},
			{"tlsTerminate and requireHostMatch", tls,
				"srt: network.tlsTerminate is not supported on linux yet (TLS termination arrives with issue #20)\n" +
					"srt: network.requireHostMatch is not supported on linux yet (matching Host and TLS server name against the CONNECT target arrives with issue #20)\n" +
					"srt: Refusing to run without what " + tls + " asks for; remove the keys above from it to run.\n"},
		} {
			r := runSrt(t, []string{"SECRET_TOKEN=s3cret"}, "--settings", tc.path, "/bin/sh", "-c", `echo "$SECRET_TOKEN" > `+canary)
			if r.code != 1 || r.stderr != tc.stderr || r.stdout != "" {
				t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1, stderr:\n%s", tc.name, r.code, r.stderr, tc.stderr)
			}
			if _, err := os.Stat(canary); err == nil {
				t.Fatalf("%s: the command ran", tc.name)
			}
		}

		testenv.RequireUserNamespaces(t)
		spelled := write("spelled.json", `,"strictAllowlist":false,"requireHostMatch":false`, `,"credentials":{"envVars":[]},"git":{},"allowPty":true,"bwrapPath":"/usr/bin/bwrap"`)
		r := runSrt(t, nil, "--debug", "--settings", spelled, "/bin/touch", canary)
		if r.code != 0 {
			t.Fatalf("defaults spelled out: exit %d, stderr %q", r.code, r.stderr)
		}
		if _, err := os.Stat(canary); err != nil {
			t.Fatalf("defaults spelled out: the command did not run: %v", err)
		}
		for _, want := range []string{
			"[SandboxDebug] bwrapPath has no meaning on linux (srt-go needs no bubblewrap): accepted, nothing to apply\n",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("--debug does not list %q:\n%s", want, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "credentials") || strings.Contains(r.stderr, "git.") {
			t.Errorf("keys that ask for nothing were listed: %s", r.stderr)
		}
	})
}

// A --control-fd line that asks for a refused key is refused with the
// same reasons, and the previous settings stay: the loopback server the
// line would have allowed stays out of reach.
func TestControlFDRefusedKey(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		testenv.RequireUserNamespaces(t)
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("requires curl")
		}
		local, hits := testenv.ServeOK(t)
		var line map[string]any
		if err := json.Unmarshal([]byte(settingsDoc(local)), &line); err != nil {
			t.Fatal(err)
		}
		line["credentials"] = map[string]any{"envVars": []any{map[string]any{"name": "SECRET_TOKEN", "mode": "deny"}}}
		data, _ := json.Marshal(line)
		cmd, ctlW := controlCmd(t, `sleep 0.5; curl --noproxy '' -s -o /dev/null -w '%{http_code}' http://`+local+`/`)
		io.WriteString(ctlW, string(data)+"\n")
		ctlW.Close()
		out, errOut, code, err := testenv.Output(cmd)
		if err != nil || code != 0 || out != "403" {
			t.Errorf("after a refused update: %q, exit %d, %v, stderr %q", out, code, err, errOut)
		}
		want := "srt: Invalid config on control fd 3: ignored, previous config still in force\n" +
			"srt: control fd 3: credentials is not supported on linux yet (denying and masking credentials arrives with issue #20)\n"
		if !strings.HasPrefix(errOut, want) {
			t.Errorf("stderr:\n%s\nwant it to start with:\n%s", errOut, want)
		}
		if hits() != 0 {
			t.Errorf("the server saw %d requests: the refused update was applied", hits())
		}
	})
}
