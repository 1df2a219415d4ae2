package nsexec

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/srt-go/srt/policy"
	"golang.org/x/sys/unix"
)

// readDir sees what os.ReadDir sees: every name, directories as
// directories, regular files as regular files, and a symlink (even to a
// directory) as a link.
func TestReadDirMatchesOS(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"sub", ".git", "Ünï côdé"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".bashrc", "file", strings.Repeat("n", 255)} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := dirReader.ReadDir(dir, func(name []byte, kind policy.Kind) {
		got = append(got, describe(string(name), kind))
	}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		want = append(want, describe(e.Name(), policy.KindOf(e.Type())))
	}
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("readDir:\n%s\nos.ReadDir:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := dirReader.ReadDir(filepath.Join(dir, "file"), func([]byte, policy.Kind) {}); err == nil {
		t.Error("readDir of a regular file: no error")
	}
}

func describe(name string, kind policy.Kind) string {
	switch kind {
	case policy.KindDir:
		return name + " dir"
	case policy.KindRegular:
		return name + " file"
	case policy.KindLink:
		return name + " link"
	}
	return name + " other"
}

// A record whose length is impossible ends the parse instead of looping
// or reading past the buffer.
func TestParseDirentsMalformed(t *testing.T) {
	record := func(ino uint64, reclen int, typ byte, name string) []byte {
		b := make([]byte, 19, reclen)
		binary.NativeEndian.PutUint64(b[0:8], ino)
		binary.NativeEndian.PutUint16(b[16:18], uint16(reclen))
		b[18] = typ
		b = append(b, name...)
		for len(b) < reclen {
			b = append(b, 0)
		}
		return b[:reclen]
	}
	good := record(1, 24, syscall.DT_REG, "a")
	for _, c := range []struct {
		name string
		buf  []byte
		want string
	}{
		{"well formed", append(append(append([]byte{}, good...), record(2, 24, syscall.DT_DIR, "..")...), record(3, 32, syscall.DT_DIR, "dir")...), "a,dir"},
		{"deleted entry", append(record(0, 24, syscall.DT_REG, "gone"), good...), "a"},
		{"zero length", append(append([]byte{}, good...), make([]byte, 24)...), "a"},
		{"longer than the buffer", append(append([]byte{}, good...), record(4, 24, syscall.DT_REG, "b")[:20]...), "a"},
		{"no NUL", record(5, 24, syscall.DT_REG, "abcde"), "abcde"},
		{"short", good[:10], ""},
	} {
		var names []string
		parseDirents(c.buf, func(name []byte, typ uint8) { names = append(names, string(name)) })
		if got := strings.Join(names, ","); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A file system that does not give d_type is asked with fstatat: the
// mode gives the d_type the kinds are read from.
func TestDirentTypeOfMode(t *testing.T) {
	for mode, typ := range map[uint32]uint8{
		unix.S_IFDIR: unix.DT_DIR, unix.S_IFREG: unix.DT_REG, unix.S_IFLNK: unix.DT_LNK,
		unix.S_IFIFO: unix.DT_FIFO, unix.S_IFSOCK: unix.DT_SOCK, unix.S_IFCHR: unix.DT_CHR, unix.S_IFBLK: unix.DT_BLK,
	} {
		if got := direntType(mode | 0o4755); got != typ {
			t.Errorf("mode %o: d_type %d, want %d", mode, got, typ)
		}
	}
}
