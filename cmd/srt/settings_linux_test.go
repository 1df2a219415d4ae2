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

// Linux applies every key a settings file can hold: the inspecting
// proxy's and the credentials' run (a denied variable does not reach the
// command); a file that spells out defaults runs; --debug lists the keys
// that have no meaning here.
func TestSettingsKeyRules(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		testenv.RequireUserNamespaces(t)
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
		tls := write("tls.json", `,"tlsTerminate":{},"requireHostMatch":true,"refuseOpaqueTunnels":true,"stripResponseHeaders":["Set-Cookie"]`, "")
		for _, path := range []string{credentials, tls} {
			os.Remove(canary)
			r := runSrt(t, []string{"SECRET_TOKEN=s3cret"}, "--settings", path, "/bin/sh", "-c", `echo "token=$SECRET_TOKEN" > `+canary)
			data, _ := os.ReadFile(canary)
			want := "token=s3cret\n"
			if path == credentials {
				want = "token=\n"
			}
			if r.code != 0 || string(data) != want {
				t.Errorf("%s: exit %d, the command wrote %q (want %q); stderr:\n%s", filepath.Base(path), r.code, data, want, r.stderr)
			}
		}

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

// A --control-fd line that cannot be put in force (a CA that cannot be
// read) is refused with why, and the previous settings stay: the loopback
// server the line would have allowed stays out of reach.
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
		line["network"].(map[string]any)["tlsTerminate"] = map[string]any{"caCertPath": "/nonexistent/ca.pem", "caKeyPath": "/nonexistent/ca.key"}
		data, _ := json.Marshal(line)
		cmd, ctlW := controlCmd(t, `sleep 0.5; curl --noproxy '' -s -o /dev/null -w '%{http_code}' http://`+local+`/`)
		io.WriteString(ctlW, string(data)+"\n")
		ctlW.Close()
		out, errOut, code, err := testenv.Output(cmd)
		if err != nil || code != 0 || out != "403" {
			t.Errorf("after a refused update: %q, exit %d, %v, stderr %q", out, code, err, errOut)
		}
		want := "srt: Invalid config on control fd 3: ignored, previous config still in force\n" +
			"srt: control fd 3: network.tlsTerminate.caCertPath: open /nonexistent/ca.pem: no such file or directory\n"
		if !strings.HasPrefix(errOut, want) {
			t.Errorf("stderr:\n%s\nwant it to start with:\n%s", errOut, want)
		}
		if hits() != 0 {
			t.Errorf("the server saw %d requests: the refused update was applied", hits())
		}
	})
}
