package nsexec

import "testing"

// mountinfo escapes a space, tab, newline and backslash in a path as
// octal; anything else passes as it is.
func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/a/b`:               "/a/b",
		`/a\040b`:            "/a b",
		`/a\011b\012c\134d`:  "/a\tb\nc\\d",
		`/end\`:              `/end\`,
		`/short\04`:          `/short\04`,
		`/not\999octal`:      `/not\999octal`,
		`/.vscode\040x/.git`: "/.vscode x/.git",
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// A mountinfo line splits at single spaces only: a vertical tab, a form
// feed or a no-break space in a path is the path's (the kernel escapes
// only a space, tab, newline and backslash).
func TestParseMountinfo(t *testing.T) {
	data := "240 226 0:40 /w/x\vy/.vscode /w/d3 rw,relatime - tmpfs tmpfs rw\n" +
		"241 226 0:40 /w/a\u00a0b/c /w/d\\040e rw - tmpfs tmpfs rw\n" +
		"242 226 8:1 / / rw - ext4 /dev/vda1 rw\n"
	got := parseMountinfo(data)
	want := map[uint64]mountEntry{
		240: {dev: "0:40", root: "/w/x\vy/.vscode", point: "/w/d3", fstype: "tmpfs"},
		241: {dev: "0:40", root: "/w/a\u00a0b/c", point: "/w/d e", fstype: "tmpfs"},
		242: {dev: "8:1", root: "/", point: "/", fstype: "ext4"},
	}
	if len(got) != len(want) {
		t.Fatalf("parseMountinfo = %v", got)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("mount %d = %+v, want %+v", id, got[id], w)
		}
	}
}
