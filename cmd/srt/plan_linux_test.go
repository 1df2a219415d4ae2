package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

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
		// macOS's plan is its profile, printed on any host; Windows has
		// no backend to plan for.
		if r := b.exec(nil, []string{"NOSETTINGS"}, "plan", "--os", "darwin", "-s", cfg); r.code != 0 || !strings.Contains(r.stdout, "(version 1)") {
			t.Errorf("plan --os darwin: %+v", r)
		}
		r := b.exec(nil, []string{"NOSETTINGS"}, "plan", "--os", "windows", "-s", cfg)
		if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "no sandbox backend for windows") {
			t.Errorf("plan --os windows: %+v", r)
		}
	})
}
