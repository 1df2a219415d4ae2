// Package testtree makes the file trees and rule sets that tests of the
// filesystem policy run over.
package testtree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
)

// Tree creates, under a temp dir of t, files (with content "ORIGINAL"),
// directories (a trailing "/") and symlinks ("name -> target", a relative
// target taken under the dir), and returns the dir's real path.
func Tree(t testing.TB, entries ...string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name, target, ok := strings.Cut(e, " -> "); ok {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if !strings.HasPrefix(target, "/") {
				target = filepath.Join(dir, target)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(dir, e)
		if strings.HasSuffix(e, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("ORIGINAL"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// FSRules are the four filesystem lists of a settings document.
type FSRules struct{ DenyRead, AllowRead, AllowWrite, DenyWrite []string }

// Settings is config.Default() with r's lists.
func (r FSRules) Settings() *config.Settings {
	s := config.Default()
	s.Filesystem.DenyRead = entries(r.DenyRead...)
	s.Filesystem.AllowRead = entries(r.AllowRead...)
	s.Filesystem.AllowWrite = entries(r.AllowWrite...)
	s.Filesystem.DenyWrite = entries(r.DenyWrite...)
	return s
}

func entries(paths ...string) []config.PathEntry {
	out := make([]config.PathEntry, len(paths))
	for i, p := range paths {
		out[i] = config.PathEntry{Path: p}
	}
	return out
}
