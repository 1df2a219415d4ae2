package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
