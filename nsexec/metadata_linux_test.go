package nsexec

import (
	"path/filepath"
	"strconv"
	"testing"
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
