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
