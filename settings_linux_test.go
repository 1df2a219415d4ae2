package srt_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt"
	"github.com/srt-go/srt/internal/testenv"
)

// baseDoc is the smallest settings file, open at its end for more keys.
const baseDoc = `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}`

// withNetwork is baseDoc with the network section given, open at its end.
func withNetwork(network string) string {
	return `{"network":{"allowedDomains":[],"deniedDomains":[]` + network + `},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}`
}

// The inspecting proxy's keys and credentials are taken by New and by
// Update; an Update whose CA cannot be loaded is refused and the previous
// settings stay.
func TestInspectionSettings(t *testing.T) {
	taken := settings(t, withNetwork(`,"requireHostMatch":true`)+`,"credentials":{"envVars":[{"name":"SECRET_TOKEN","mode":"deny"}]}}`)
	sb, err := srt.New(context.Background(), taken)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer sb.Close()
	if err := sb.Update(settings(t, withNetwork(`,"tlsTerminate":{}`)+`}`)); err != nil {
		t.Errorf("Update with tlsTerminate: %v", err)
	}
	prev := sb.Settings()
	bad := settings(t, withNetwork(`,"tlsTerminate":{"caCertPath":"/nonexistent/ca.pem","caKeyPath":"/nonexistent/ca.key"}`)+`}`)
	if err := sb.Update(bad); err == nil || !strings.Contains(err.Error(), "caCertPath") {
		t.Errorf("Update with a CA that is not there = %v", err)
	}
	if sb.Settings() != prev {
		t.Error("a refused Update replaced the settings")
	}
	spelled := settings(t, withNetwork(`,"strictAllowlist":false,"requireHostMatch":false`)+`,"credentials":{},"git":{}}`)
	if err := sb.Update(spelled); err != nil || sb.Settings() != spelled {
		t.Errorf("Update with defaults spelled out: %v", err)
	}
}

// javaAgentJarPath and git.safeDirectories reach the command's
// environment as the reference sets them (spec d.4), on top of what the
// command inherits; git inside reads the safe directories.
func TestSettingsEnvironment(t *testing.T) { testenv.BothUsers(t, nil, settingsEnvironment) }

func settingsEnvironment(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	sb, err := srt.New(context.Background(), settings(t, baseDoc+`,"javaAgentJarPath":"/opt/srt/proxy agent.jar","git":{"safeDirectories":["/work/repo/"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	home := t.TempDir()
	inherited := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "JAVA_TOOL_OPTIONS=-Xmx64m",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_VALUE_0=cat"}
	out, err := sb.CommandRun(context.Background(), srt.Run{Env: inherited}, "env").Output()
	if err != nil {
		t.Fatalf("env inside: %v", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	if j := env["JAVA_TOOL_OPTIONS"]; !strings.HasPrefix(j, `"-javaagent:/opt/srt/proxy agent.jar" -Xmx64m -Dhttp.proxyHost=localhost `) {
		t.Errorf("JAVA_TOOL_OPTIONS = %q", j)
	}
	for k, want := range map[string]string{
		"GIT_CONFIG_COUNT": "3", "GIT_CONFIG_KEY_0": "core.pager", "GIT_CONFIG_VALUE_0": "cat",
		"GIT_CONFIG_KEY_1": "safe.directory", "GIT_CONFIG_VALUE_1": "/work/repo",
		"GIT_CONFIG_KEY_2": "safe.directory", "GIT_CONFIG_VALUE_2": "/work/repo/*",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	got, err := sb.CommandRun(context.Background(), srt.Run{Env: inherited}, "git", "config", "--get-all", "safe.directory").Output()
	if err != nil || string(got) != "/work/repo\n/work/repo/*\n" {
		t.Errorf("git config --get-all safe.directory inside: %q %v", got, err)
	}
	// GIT_CONFIG_COUNT=0 inherited: no configuration from the environment.
	optOut := append(inherited[:3:3], "GIT_CONFIG_COUNT=0")
	got, err = sb.CommandRun(context.Background(), srt.Run{Env: optOut}, "git", "config", "--get-all", "safe.directory").Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || len(got) != 0 {
		t.Errorf("with GIT_CONFIG_COUNT=0, git inside found safe directories: %q %v", got, err)
	}
}

// Under strictAllowlist only network.allowedDomains allows: a command
// with allowed domains of its own does not start, and a command that got
// them before strictAllowlist came in by Update loses them on its next
// connection.
func TestStrictAllowlist(t *testing.T) { testenv.BothUsers(t, nil, strictAllowlist) }

func strictAllowlist(t *testing.T) {
	dir := t.TempDir()
	canary := filepath.Join(dir, "ran")
	strict := settings(t, `{"network":{"allowedDomains":[],"deniedDomains":[],"strictAllowlist":true},"filesystem":{"denyRead":[],"allowWrite":["`+dir+`"],"denyWrite":[]}}`)
	sb, err := srt.New(context.Background(), strict)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	own := srt.Run{AllowedDomains: []string{"example.com"}}
	if err := sb.CommandRun(context.Background(), own, "/bin/touch", canary).Run(); err == nil || !strings.Contains(err.Error(), "network.strictAllowlist is set") {
		t.Errorf("a command with its own allowed domains under strictAllowlist: %v", err)
	}
	if _, _, err := sb.Wrap(own, "/bin/touch", canary); err == nil || !strings.Contains(err.Error(), "network.strictAllowlist is set") {
		t.Errorf("Wrap with its own allowed domains under strictAllowlist: %v", err)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the refused command ran")
	}
	testenv.RequireUserNamespaces(t)
	if err := sb.Command(context.Background(), "/bin/touch", canary).Run(); err != nil {
		t.Fatalf("without allowed domains of its own, the command should run: %v", err)
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("the command that may run did not: %v", err)
	}

	needCurl(t)
	local, hits := testenv.ServeOK(t)
	loose := settings(t, `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`)
	if err := sb.Update(loose); err != nil {
		t.Fatal(err)
	}
	got := fetchTwice(t, sb, srt.Run{AllowedDomains: []string{local}}, local, func() {
		if err := sb.Update(strict); err != nil {
			t.Fatal(err)
		}
	})
	if got != "200 403" {
		t.Errorf("the command's own allowance before and after strictAllowlist: %q, want \"200 403\"", got)
	}
	if hits() != 1 {
		t.Errorf("the server saw %d connections, want 1 (before strictAllowlist)", hits())
	}
}
