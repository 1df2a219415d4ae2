package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/srt-go/srt"
	"github.com/srt-go/srt/internal/testenv"
)

// srt plan --os linux --json prints what a run does: the same mounts,
// seccomp filter, Landlock layer and level that --debug logs the run
// building, for settings with rules of every kind; a system with no
// backend gets one line and exit 1.
func TestPlanMatchesRun(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "~/.ssh/id_rsa", "secrets/k", "src/a.go")
		b.write(".bashrc", "x")
		b.write(".git/hooks/pre-commit", "x")
		doc := `{"network":{"allowedDomains":["example.com"],"deniedDomains":[],"allowUnixSockets":["/tmp/none.sock"]},` +
			`"filesystem":{"denyRead":["~/.ssh"],"allowWrite":[".","~/out"],"denyWrite":["secrets"]}}`
		cfg := filepath.Join(filepath.Dir(b.W), "plan.json")
		b.write("../plan.json", doc)
		plan := b.exec(nil, []string{"NOSETTINGS"}, "plan", "--os", "linux", "--json", "-s", cfg)
		if plan.code != 0 {
			t.Fatalf("srt plan: %+v", plan)
		}
		run := b.exec(nil, []string{"NOSETTINGS"}, "-d", "-s", cfg, "true")
		var logged string
		for _, line := range strings.Split(run.stderr, "\n") {
			if rest, ok := strings.CutPrefix(line, "[SandboxDebug] Plan: "); ok {
				logged = rest
			}
		}
		if logged == "" || run.code != 0 {
			t.Fatalf("the run logged no plan: %+v", run)
		}
		// The run dir's name is the run's own; the plan writes run-PLAN.
		runDir := regexp.MustCompile(`run-[A-Za-z0-9]+`)
		// The Landlock layer lists the siblings of the directories on the
		// way to the box: in the temp directory, other tests' come and go
		// between the plan and the run (a second copy of the suite).
		others := func(p string) bool {
			dir := filepath.Dir(p)
			return (dir == os.TempDir() || dir == "/tmp") && !strings.HasPrefix(b.W, p+"/")
		}
		decode := func(s string) any {
			var v any
			if err := json.Unmarshal([]byte(runDir.ReplaceAllString(s, "run-PLAN")), &v); err != nil {
				t.Fatalf("%v: %s", err, s)
			}
			if ll, ok := v.(map[string]any)["linux"].(map[string]any)["landlock"].(map[string]any); ok {
				for _, key := range []string{"read", "readFile"} {
					list, _ := ll[key].([]any)
					kept := []any{}
					for _, e := range list {
						if p, _ := e.(string); !others(p) {
							kept = append(kept, e)
						}
					}
					ll[key] = kept
				}
			}
			return v
		}
		if got, want := decode(plan.stdout), decode(logged); !reflect.DeepEqual(got, want) {
			t.Errorf("srt plan:\n%s\nthe run:\n%s", plan.stdout, logged)
		}
		for _, want := range []string{`"bind-rw"`, `"mask-dir"`, `"bind-ro"`, `"seccompProgram"`, `"landlock"`, `"level": "full"`} {
			if !strings.Contains(plan.stdout, want) {
				t.Errorf("the plan lacks %s:\n%s", want, plan.stdout)
			}
		}
		// macOS's plan is its profile, printed on any host; a system
		// srt-go knows nothing of gets one line.
		if r := b.exec(nil, []string{"NOSETTINGS"}, "plan", "--os", "darwin", "-s", cfg); r.code != 0 || !strings.Contains(r.stdout, "(version 1)") {
			t.Errorf("plan --os darwin: %+v", r)
		}
		r := b.exec(nil, []string{"NOSETTINGS"}, "plan", "--os", "plan9", "-s", cfg)
		if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "plan9") {
			t.Errorf("plan --os plan9: %+v", r)
		}
	})
}

// srt plan --os windows --json prints, on any host, the Windows plan of
// a settings file with allowWrite, denyWrite, denyRead, allowRead and
// allowedDomains: the sandbox account and its write-restricted token;
// an ACE for each entry (modify for allowWrite, read for allowRead, all
// denied for denyRead with its parent's FILE_DELETE_CHILD denied, every
// write denied for denyWrite and for the protected names that exist);
// WFP filters that let the account reach only the proxies' ports on
// loopback, over IPv4 and IPv6; the job's limits; the proxy variables.
func TestPlanWindows(t *testing.T) {
	b := newBox(t, "~/.ssh/id_rsa", "~/.ssh/known_hosts", "~/out/x", "secrets/k", "src/a.go")
	b.write(".bashrc", "x")
	b.write(".git/hooks/pre-commit", "x")
	doc := `{"network":{"allowedDomains":["example.com"],"deniedDomains":[]},` +
		`"filesystem":{"denyRead":["~/.ssh"],"allowRead":["~/.ssh/known_hosts"],"allowWrite":[".","~/out"],"denyWrite":["secrets"]},` +
		`"windows":{"sandboxUser":"sbx-user","proxyPortRange":[61000,61009]}}`
	cfg := filepath.Join(filepath.Dir(b.W), "plan.json")
	b.write("../plan.json", doc)
	r := b.exec(nil, []string{"NOSETTINGS"}, "plan", "--os", "windows", "--json", "-s", cfg)
	if r.code != 0 {
		t.Fatalf("srt plan: %+v", r)
	}
	var p srt.RunPlan
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || p.Windows == nil || p.OS != "windows" {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	w := p.Windows
	if w.Identity.Account != "sbx-user" || !strings.Contains(w.Identity.Token, "write-restricted") || p.Enforcement.Level != srt.Partial {
		t.Errorf("identity %+v, level %s", w.Identity, p.Enforcement.Level)
	}
	type ace struct {
		path   string
		deny   bool
		rights string
	}
	const modify, read, all, write = "FILE_READ_DATA|FILE_WRITE_DATA|FILE_APPEND_DATA|FILE_READ_EA|FILE_WRITE_EA|FILE_EXECUTE|FILE_READ_ATTRIBUTES|FILE_WRITE_ATTRIBUTES|DELETE|READ_CONTROL|SYNCHRONIZE",
		"FILE_READ_DATA|FILE_READ_EA|FILE_EXECUTE|FILE_READ_ATTRIBUTES|READ_CONTROL|SYNCHRONIZE",
		"FILE_READ_DATA|FILE_WRITE_DATA|FILE_APPEND_DATA|FILE_READ_EA|FILE_WRITE_EA|FILE_EXECUTE|FILE_DELETE_CHILD|FILE_READ_ATTRIBUTES|FILE_WRITE_ATTRIBUTES|DELETE|READ_CONTROL|WRITE_DAC|WRITE_OWNER",
		"FILE_WRITE_DATA|FILE_APPEND_DATA|FILE_WRITE_EA|FILE_DELETE_CHILD|FILE_WRITE_ATTRIBUTES|DELETE|WRITE_DAC|WRITE_OWNER"
	got := map[ace]bool{}
	for _, a := range w.ACEs {
		got[ace{a.Path, a.Deny, a.Rights}] = true
		if a.Trustee != "sbx-user" || a.Undo == "" {
			t.Errorf("ACE %+v", a)
		}
	}
	for _, want := range []ace{{b.W, false, modify}, {b.path("~/out"), false, modify}, {b.path("~/.ssh"), true, all},
		{b.H, true, "FILE_DELETE_CHILD"}, {b.path("~/.ssh/known_hosts"), false, read}, {b.path("secrets"), true, write},
		{b.path(".bashrc"), true, write}, {b.path(".git/hooks"), true, write}} {
		if !got[want] {
			t.Errorf("no ACE %+v", want)
		}
	}
	if d := w.Network.AllowedDomains; len(d) != 1 || d[0] != "example.com" {
		t.Errorf("allowed domains %v", d)
	}
	for _, suffix := range []string{"V4", "V6"} {
		permit, blockAll := false, false
		for _, f := range w.Network.Filters {
			conds := fmt.Sprint(f.Conditions)
			switch {
			case f.Layer == "ALE_AUTH_CONNECT_"+suffix && f.Action == "permit" && strings.Contains(conds, "sbx-user") && strings.Contains(conds, "61000-61009"):
				permit = true
			case f.Layer == "ALE_AUTH_CONNECT_"+suffix && f.Action == "block" && len(f.Conditions) == 1 && strings.Contains(conds, "sbx-user"):
				blockAll = true
			}
		}
		if !permit || !blockAll {
			t.Errorf("%s filters: the proxies permitted %v, the rest blocked %v: %+v", suffix, permit, blockAll, w.Network.Filters)
		}
	}
	if j := w.Job; !j.KillOnClose || j.Breakaway || j.ActiveProcesses == 0 {
		t.Errorf("job %+v", j)
	}
	if !strings.Contains(fmt.Sprint(w.Env), "http_proxy") {
		t.Errorf("environment %+v", w.Env)
	}
}
