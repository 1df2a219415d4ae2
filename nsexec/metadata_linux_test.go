package nsexec

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// selfAlias takes as a descriptor, from a path the command passed, only a
// spelling of its own descriptor table: /proc/self/fd/N,
// /proc/thread-self/fd/N, /proc/<its pid>/fd/N or /dev/fd/N, however
// cleaned, with N a number, or /dev/stdin, /dev/stdout, /dev/stderr for
// 0, 1, 2.
func FuzzSelfFD(f *testing.F) {
	for _, s := range []string{"/proc/self/fd/3", "/proc/thread-self/fd/0", "/proc/42/fd/7", "/proc/43/fd/7",
		"/proc/self/fd/../fd/3", "/proc/self/fd/-1", "/proc/self/fd/3/x", "proc/self/fd/3", "/proc/self/fdx/3", "/proc/self/fd/+0", "/proc/self/fd/03", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		fd, rest, _, ok := selfAlias(name, func(n int) bool { return n == 42 })
		if !ok || fd < 0 || rest != "" {
			return
		}
		clean := filepath.Clean(name)
		if std := map[string]int{"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}; std[clean] == fd && (fd > 0 || clean == "/dev/stdin") {
			return
		}
		for _, dir := range []string{"/proc/self/fd/", "/proc/thread-self/fd/", "/proc/42/fd/", "/dev/fd/"} {
			if clean == dir+strconv.Itoa(fd) {
				return
			}
		}
		t.Fatalf("%q taken as descriptor %d", name, fd)
	})
}

// A user namespace's maps take ids from inside to srt's namespace line
// by line; -1 stays; an id no line maps is EINVAL.
func TestIDMap(t *testing.T) {
	m, err := parseIDMap("         0       1000          1\n         1     100000      65536\n")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[int]int{0: 1000, 1: 100000, 65536: 165535, -1: -1} {
		if got, e := m.toHost(in); e != 0 || got != want {
			t.Errorf("%d -> %d, %v; want %d", in, got, e, want)
		}
	}
	if _, e := m.toHost(65537); e != unix.EINVAL {
		t.Errorf("an unmapped id: %v, want EINVAL", e)
	}
	for _, bad := range []string{"0 1000", "0 x 1", "0 1000 1 2"} {
		if _, err := parseIDMap(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// An ACL's named users and groups are mapped by their own maps; the
// owner's, the mask's and others' entries carry no id and stay; an id
// with no mapping is EINVAL.
func TestACLMapped(t *testing.T) {
	uid, _ := parseIDMap("0 1000 1")
	gid, _ := parseIDMap("0 2000 1\n5 3000 1")
	maps := &idMaps{uid: uid, gid: gid}
	entry := func(tag uint16, perm uint16, id uint32) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint16(b, tag)
		binary.LittleEndian.PutUint16(b[2:], perm)
		binary.LittleEndian.PutUint32(b[4:], id)
		return b
	}
	acl := func(entries ...[]byte) []byte {
		return slices.Concat(append([][]byte{{2, 0, 0, 0}}, entries...)...)
	}
	const userObj, user, group, other = 0x01, 0x02, 0x08, 0x20
	in := acl(entry(userObj, 6, ^uint32(0)), entry(user, 4, 0), entry(group, 2, 5), entry(other, 4, ^uint32(0)))
	got, e := maps.acl(in)
	want := acl(entry(userObj, 6, ^uint32(0)), entry(user, 4, 1000), entry(group, 2, 3000), entry(other, 4, ^uint32(0)))
	if e != 0 || !bytes.Equal(got, want) {
		t.Errorf("mapped %x, %v; want %x", got, e, want)
	}
	if _, e := maps.acl(acl(entry(user, 4, 7))); e != unix.EINVAL {
		t.Errorf("an unmapped user: %v, want EINVAL", e)
	}
	if got, e := maps.acl([]byte{2, 0, 0}); e != 0 || len(got) != 3 {
		t.Errorf("a short value is for the kernel to refuse: %x, %v", got, e)
	}
}
