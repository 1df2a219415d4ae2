//go:build linux

package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/srt-go/srt/internal/testenv"
)

var (
	buildOnce sync.Once
	srtPath   string
	buildErr  error
)

// srtBinary builds cmd/srt once per benchmark run.
func srtBinary(b *testing.B) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "srt-bench-")
		if err != nil {
			buildErr = err
			return
		}
		srtPath = filepath.Join(dir, "srt")
		cmd := exec.Command("go", "build", "-o", srtPath, "../cmd/srt")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return srtPath
}

// settings20 writes a policy of 20 filesystem rules over a small tree.
func settings20(b *testing.B) (cfg, work string) {
	work = b.TempDir()
	var deny, allowW, denyW []string
	for i := 0; i < 5; i++ {
		for _, d := range []string{"secret", "out", "ro"} {
			os.MkdirAll(filepath.Join(work, fmt.Sprintf("%s%d", d, i)), 0o755)
		}
		deny = append(deny, fmt.Sprintf(`"secret%d"`, i))
		allowW = append(allowW, fmt.Sprintf(`"out%d"`, i), fmt.Sprintf(`"ro%d"`, i))
		denyW = append(denyW, fmt.Sprintf(`"ro%d"`, i))
	}
	cfg = filepath.Join(work, "settings.json")
	doc := fmt.Sprintf(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[%s],"allowWrite":[%s],"denyWrite":[%s]}}`,
		strings.Join(deny, ","), strings.Join(allowW, ","), strings.Join(denyW, ","))
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		b.Fatal(err)
	}
	return cfg, work
}

// BenchmarkLaunch compares "true" run bare with "srt true" under a policy
// of 20 rules, side by side in one run.
func BenchmarkLaunch(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("srt-20-rules", func(b *testing.B) {
		testenv.RequireUserNamespaces(b)
		srt := srtBinary(b)
		cfg, work := settings20(b)
		for b.Loop() {
			cmd := exec.Command(srt, "--settings", cfg, "/bin/true")
			cmd.Dir = work
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}
