//go:build linux

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/nsexec"
	"github.com/srt-go/srt/policy"
)

// settingsWith is a policy of n filesystem rules over directories of
// work: a third denyRead, a third allowWrite, a third denyWrite inside
// the writable ones.
func settingsWith(b *testing.B, work string, n int) *config.Settings {
	b.Helper()
	s := config.Default()
	for i := 0; i < n; i++ {
		var dir string
		switch i % 3 {
		case 0:
			dir = filepath.Join(work, fmt.Sprintf("secret%d", i))
			s.Filesystem.DenyRead = append(s.Filesystem.DenyRead, config.PathEntry{Path: dir})
		case 1:
			dir = filepath.Join(work, fmt.Sprintf("out%d", i))
			s.Filesystem.AllowWrite = append(s.Filesystem.AllowWrite, config.PathEntry{Path: dir})
		case 2:
			dir = filepath.Join(work, fmt.Sprintf("out%d", i-1), "ro")
			s.Filesystem.DenyWrite = append(s.Filesystem.DenyWrite, config.PathEntry{Path: dir})
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkPlan computes the mount plan (rules, the disk, the protected
// names) for 10 and 1,000 filesystem rules.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("rules-%d", n), func(b *testing.B) {
			work := b.TempDir()
			s := settingsWith(b, work, n)
			env := policy.Env{Home: b.TempDir(), Cwd: work}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := nsexec.Build(s, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProtectedWalk computes the plan with allowWrite ["."] in a
// working tree of 100,000 files in 10,000 directories, where the
// protected names are looked for down to mandatoryDenySearchDepth.
func BenchmarkProtectedWalk(b *testing.B) {
	work := b.TempDir()
	for d := 0; d < 10000; d++ {
		dir := filepath.Join(work, fmt.Sprintf("d%02d", d%100), fmt.Sprintf("e%03d", d/100))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 10; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	s := config.Default()
	s.Filesystem.AllowWrite = []config.PathEntry{{Path: "."}}
	env := policy.Env{Home: b.TempDir(), Cwd: work}
	b.ResetTimer()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := nsexec.Build(s, env); err != nil {
			b.Fatal(err)
		}
	}
}
