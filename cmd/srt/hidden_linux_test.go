package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/internal/testenv"
	"github.com/srt-go/srt/landlock"
)

// What README's Known limits says of files created, while the command
// runs, beside a hidden tree (~/.ssh under denyRead): in ~ made writable
// by allowWrite, a file created later, inside or from outside, can be
// read back; in a read-only ~ one created from outside is listed but
// cannot be read under Landlock (which lists the hidden tree's siblings
// when the command starts), and can be read without it.
func TestFilesCreatedBesideHiddenTree(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		for _, tc := range []struct {
			name       string
			allowWrite []string
			nested     bool // allowNestedUserNamespaces: no Landlock layer
			want       string
		}{
			{"writable home", []string{"~"}, false, "listed\nin\nout\n"},
			{"read-only home", nil, false, "listed\nPermission denied\n"},
			{"read-only home without Landlock", nil, true, "listed\nout\n"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if !tc.nested && tc.allowWrite == nil && landlock.ABI() == 0 {
					t.Skip("requires Landlock")
				}
				b := newBox(t, "~/.ssh/id_rsa")
				doc, _ := json.Marshal(map[string]any{
					"network":                   map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}},
					"filesystem":                map[string]any{"denyRead": []string{"~/.ssh"}, "allowWrite": append([]string{}, tc.allowWrite...), "denyWrite": []string{}},
					"allowNestedUserNamespaces": tc.nested,
				})
				cfg := filepath.Join(filepath.Dir(b.W), "settings.json")
				if err := os.WriteFile(cfg, doc, 0o644); err != nil {
					t.Fatal(err)
				}
				// The command makes ~/in.txt if it may, says it runs,
				// waits until it lists ~/out.txt, made from outside, and
				// reads both.
				script := `echo in > ~/in.txt 2>/dev/null; echo ready
i=0; while ! ls ~ | grep -qx out.txt && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
ls ~ | grep -qx out.txt && echo listed
cat ~/in.txt 2>/dev/null; cat ~/out.txt 2>&1 | sed 's/^cat: .*: //'`
				cmd := exec.Command(os.Getenv(srtEnv), "--settings", cfg, "-c", script)
				cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.H}
				cmd.Dir = b.W
				var stderr strings.Builder
				cmd.Stderr = &stderr
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				lines := bufio.NewReader(stdout)
				if l, err := lines.ReadString('\n'); l != "ready\n" {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("%q %v; stderr %q", l, err, stderr.String())
				}
				b.write("~/out.txt", "out\n")
				var got strings.Builder
				for {
					l, err := lines.ReadString('\n')
					got.WriteString(l)
					if err != nil {
						break
					}
				}
				if err := cmd.Wait(); err != nil {
					t.Fatalf("%v; stderr %q", err, stderr.String())
				}
				if got.String() != tc.want {
					t.Errorf("read back %q, want %q; stderr %q", got.String(), tc.want, stderr.String())
				}
			})
		}
	})
}
