package srt_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/srt-go/srt"
	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/testenv"
)

// run runs script in sb with r's options and returns its stdout.
func runScript(t *testing.T, sb *srt.Sandbox, r srt.Run, script string) (string, string, int) {
	t.Helper()
	cmd := sb.CommandRun(context.Background(), r, "/bin/sh", "-c", script)
	out, errOut, code, err := testenv.Output(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return out, errOut, code
}

// The ask callback decides what no rule does, per connection; under
// strictAllowlist it is not asked.
func TestAskCallback(t *testing.T) { testenv.BothUsers(t, nil, askCallback) }

func askCallback(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	needCurl(t)
	local, hits := testenv.ServeOK(t)
	var mu sync.Mutex
	var asked []string
	ask := func(q srt.AskRequest) (bool, string, error) {
		mu.Lock()
		asked = append(asked, fmt.Sprintf("%s %s:%d", q.CommandID, q.Host, q.Port))
		mu.Unlock()
		return q.CommandID == "yes", "the user said no", nil
	}
	doc := func(strict bool) string {
		return fmt.Sprintf(`{"network":{"allowedDomains":[],"deniedDomains":[],"strictAllowlist":%v},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, strict)
	}
	sb, err := srt.New(context.Background(), settings(t, doc(false)), srt.WithAsk(ask))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	fetch := `curl --noproxy '' -s -o /dev/null -w '%{http_code}' http://` + local + `/`
	if out, _, _ := runScript(t, sb, srt.Run{ID: "yes"}, fetch); out != "200" {
		t.Errorf("allowed by the ask: %q", out)
	}
	if out, _, _ := runScript(t, sb, srt.Run{ID: "no"}, fetch); out != "403" {
		t.Errorf("refused by the ask: %q", out)
	}
	if v := fmt.Sprint(sb.Violations("no")); !strings.Contains(v, "deny network-outbound "+local+" (the user said no)") {
		t.Errorf("violations: %s", v)
	}
	if err := sb.Update(settings(t, doc(true))); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := runScript(t, sb, srt.Run{ID: "yes"}, fetch); out != "403" {
		t.Errorf("strictAllowlist: %q", out)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"yes " + local, "no " + local}
	if strings.Join(asked, ",") != strings.Join(want, ",") {
		t.Errorf("asked %q, want %q", asked, want)
	}
	if hits() != 1 {
		t.Errorf("the server saw %d requests, want 1", hits())
	}
}

// A request filter decides on the plain requests the command makes, and
// may change their headers only with allowPlaintextHeaderSet.
func TestRequestFilterLibrary(t *testing.T) { testenv.BothUsers(t, nil, requestFilterLibrary) }

func requestFilterLibrary(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	needCurl(t)
	local, hits := testenv.ServeOK(t)
	filter := func(r *http.Request, info srt.RequestInfo) srt.FilterDecision {
		if strings.HasPrefix(r.URL.Path, "/blocked") {
			return srt.FilterDecision{Deny: true, Status: 451, Reason: "not this path"}
		}
		if r.URL.Path == "/set" {
			return srt.FilterDecision{SetHeaders: [][2]string{{"X-Added", "1"}}}
		}
		return srt.FilterDecision{}
	}
	doc := func(headerSet bool) string {
		return fmt.Sprintf(`{"network":{"allowedDomains":["%s"],"deniedDomains":[],"allowPlaintextHeaderSet":%v},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, local, headerSet)
	}
	sb, err := srt.New(context.Background(), settings(t, doc(false)), srt.WithRequestFilter(filter))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	script := fmt.Sprintf(`for p in ok blocked set; do curl --noproxy '' -s -o /dev/null -w "$p=%%{http_code} " http://%s/$p; done`, local)
	if out, _, _ := runScript(t, sb, srt.Run{ID: "f"}, script); out != "ok=200 blocked=451 set=403 " {
		t.Errorf("with the filter: %q", out)
	}
	lines := fmt.Sprint(sb.Violations("f"))
	for _, want := range []string{"deny http-request GET http://" + local + "/blocked (not this path)", "deny http-request GET http://" + local + "/set (the allow decision sets headers"} {
		if !strings.Contains(lines, want) {
			t.Errorf("violations %s lack %q", lines, want)
		}
	}
	if err := sb.Update(settings(t, doc(true))); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := runScript(t, sb, srt.Run{ID: "f"}, script); out != "ok=200 blocked=451 set=200 " {
		t.Errorf("with allowPlaintextHeaderSet: %q", out)
	}
	if hits() != 3 {
		t.Errorf("the server saw %d requests, want 3", hits())
	}
}

// A command's own settings (Run.Config) replace the session's for it
// alone: its credentials and read rules; others keep the session's.
func TestRunConfig(t *testing.T) { testenv.BothUsers(t, nil, runConfig) }

func runConfig(t *testing.T) {
	testenv.RequireUserNamespaces(t)
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(secretFile, []byte("FILE-CANARY"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	env := append(os.Environ(), "RUN_TOKEN=ENV-CANARY")
	own := &srt.RunConfig{
		DenyRead:    []config.PathEntry{{Path: secretFile, Literal: true}},
		Credentials: &config.Credentials{EnvVars: []config.CredentialEnvVar{{Name: "RUN_TOKEN", CredentialRule: config.CredentialRule{Mode: "deny"}}}},
	}
	script := `echo "token=$RUN_TOKEN"; cat ` + secretFile + ` 2>/dev/null || echo unreadable`
	out, _, _ := runScript(t, sb, srt.Run{ID: "own", Env: env, Config: own}, script)
	if out != "token=\nunreadable\n" {
		t.Errorf("with its own settings: %q", out)
	}
	out, _, _ = runScript(t, sb, srt.Run{ID: "session", Env: env}, script)
	if out != "token=ENV-CANARY\nFILE-CANARY" {
		t.Errorf("with the session's: %q", out)
	}
	// A grant that would reopen what a credential rule hides: refused,
	// for a denied file and for a masked one, at it or beneath it.
	for _, grant := range []*srt.RunConfig{
		{AllowRead: []config.PathEntry{{Path: secretFile, Literal: true}}},
		{AllowWrite: []config.PathEntry{{Path: dir}, {Path: secretFile, Literal: true}}},
	} {
		grant.Credentials = &config.Credentials{Files: []config.CredentialFile{{Path: dir, CredentialRule: config.CredentialRule{Mode: "deny"}}}}
		err := sb.Start(sb.CommandRun(context.Background(), srt.Run{ID: "grant", Env: env, Config: grant}, "/bin/cat", secretFile))
		if err == nil || !strings.Contains(err.Error(), "never weakened") {
			t.Errorf("a grant beneath a denied credential: %v", err)
		}
	}
	// Own credentials the session's network cannot serve do not start.
	bad := &srt.RunConfig{Credentials: &config.Credentials{EnvVars: []config.CredentialEnvVar{{Name: "RUN_TOKEN", CredentialRule: config.CredentialRule{Mode: "mask"}}}}}
	if err := sb.Start(sb.CommandRun(context.Background(), srt.Run{ID: "bad", Env: env, Config: bad}, "/bin/true")); err == nil || !strings.Contains(err.Error(), "tlsTerminate") {
		t.Errorf("masking without tlsTerminate: %v", err)
	}
}
