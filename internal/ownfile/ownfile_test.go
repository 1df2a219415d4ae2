//go:build unix

package ownfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// What a sandboxed run could plant at a name srt writes: none is written
// through, each is left as it was; srt's own file is emptied and written.
func TestCreateRefusesPlantedNames(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "bashrc")
	if err := os.WriteFile(victim, []byte("VICTIM"), 0o644); err != nil {
		t.Fatal(err)
	}
	plant := map[string]func(p string) error{
		"a symlink":            func(p string) error { return os.Symlink(victim, p) },
		"a dangling symlink":   func(p string) error { return os.Symlink(filepath.Join(dir, "made-through"), p) },
		"a hard link":          func(p string) error { return os.Link(victim, p) },
		"a FIFO":               func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"a directory":          func(p string) error { return os.Mkdir(p, 0o700) },
		"a symlink to the dir": func(p string) error { return os.Symlink(dir, p) },
	}
	for what, make := range plant {
		p := filepath.Join(dir, "out-"+filepath.Base(t.Name())+what)
		if err := make(p); err != nil {
			t.Fatal(err)
		}
		f, err := Create(p, 0o600)
		if err == nil {
			f.Write([]byte("WRITTEN"))
			f.Close()
			t.Errorf("%s: opened for writing", what)
		} else if what != "a directory" && !errors.Is(err, ErrPlanted) {
			t.Errorf("%s: %v, want ErrPlanted", what, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "VICTIM" {
		t.Errorf("the file a planted name leads to was changed: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "made-through")); err == nil {
		t.Error("a file was made where a dangling symlink leads")
	}
	// srt's own file from an earlier run: emptied, then written.
	own := filepath.Join(dir, "violations.jsonl")
	os.WriteFile(own, []byte("an earlier run's lines\n"), 0o600)
	f, err := Create(own, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new\n"))
	f.Close()
	if b, _ := os.ReadFile(own); string(b) != "new\n" {
		t.Errorf("own file holds %q", b)
	}
	// A missing one is made with the mode asked.
	fresh := filepath.Join(dir, "fresh")
	if f, err = Create(fresh, 0o600); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm()&^0o600 != 0 {
		t.Errorf("made %v %v", fi.Mode(), err)
	}
}

// A file srt makes in a directory of its own is made, never found: a
// name already there, a symlink included, fails and is not written
// through.
func TestWriteNewMakesOnly(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("VICTIM"), 0o644)
	link := filepath.Join(dir, "bundle.crt")
	os.Symlink(victim, link)
	if err := WriteNew(link, []byte("x"), 0o444); !errors.Is(err, os.ErrExist) {
		t.Errorf("through a symlink: %v", err)
	}
	dangling := filepath.Join(dir, "profile.sb")
	os.Symlink(filepath.Join(dir, "elsewhere"), dangling)
	if err := WriteNew(dangling, []byte("x"), 0o600); err == nil {
		t.Error("made through a dangling symlink")
	}
	if b, _ := os.ReadFile(victim); string(b) != "VICTIM" {
		t.Errorf("victim changed: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere")); err == nil {
		t.Error("a file was made where a dangling symlink leads")
	}
	p := filepath.Join(dir, "new")
	if err := WriteNew(p, []byte("data"), 0o444); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "data" {
		t.Errorf("wrote %q", b)
	}
}

// What a user names that no sandbox can plant: /dev/null, and the
// caller's own descriptors by name.
func TestCreateDevicesAndOwnDescriptors(t *testing.T) {
	for _, p := range []string{"/dev/null", "/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"} {
		f, err := Create(p, 0o600)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		f.Close()
	}
	if _, err := Create("/dev/fd/x", 0o600); err == nil {
		t.Error("/dev/fd/x opened")
	}
}
