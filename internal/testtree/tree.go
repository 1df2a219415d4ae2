// Package testtree makes the file trees and rule sets that tests of the
// filesystem policy run over.
package testtree

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
)

// Tree creates, under a temp dir of t, files (with content "ORIGINAL"),
// directories (a trailing "/") and symlinks ("name -> target", a relative
// target taken under the dir), and returns the dir's real path. A test
// whose tree has a symlink is skipped where none can be made (wine makes
// none, and says it did).
func Tree(t testing.TB, entries ...string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(TempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name, target, ok := strings.Cut(e, " -> "); ok {
			p := filepath.Join(dir, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if !filepath.IsAbs(target) {
				target = filepath.Join(dir, target)
			}
			Symlink(t, target, p)
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

// Symlink makes a symlink at name leading to target, or skips t where
// this system makes none: wine's CreateSymbolicLink reports success and
// makes nothing.
func Symlink(t testing.TB, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(name); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Skipf("this system makes no symlinks (os.Symlink(%q) said it did; Lstat: %v): the test needs a real Windows", name, err)
	}
}

// TempDir is t.TempDir, except on Windows, where it is removed entry by
// entry if os.RemoveAll fails: under wine 8 Go 1.26's RemoveAll does
// ("unlinkat ...: Invalid function"), which fails every test that made
// a temp dir.
func TempDir(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "windows" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "srt-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.RemoveAll(dir) == nil {
			return
		}
		if err := removeEach(dir); err != nil {
			t.Errorf("TempDir cleanup: %v", err)
		}
	})
	return dir
}

// removeEach removes dir and what it holds, one os.Remove per entry,
// deepest first, never following a symlink.
func removeEach(dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Remove(paths[i]); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
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
