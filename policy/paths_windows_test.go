package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/testtree"
)

// shortName is p's short (8.3) spelling, or a skip where the volume
// makes none.
func shortName(t *testing.T, p string) string {
	t.Helper()
	long, err := windows.UTF16PtrFromString(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetShortPathName(long, &buf[0], uint32(len(buf)))
	if err != nil || n == 0 {
		t.Skipf("no short name for %s: %v", p, err)
	}
	short := windows.UTF16ToString(buf[:n])
	if strings.EqualFold(short, p) {
		t.Skipf("%s has no short name of its own", p)
	}
	return short
}

// lowerDrive is p with its drive letter in lower case, as a user may
// spell it.
func lowerDrive(p string) string { return strings.ToLower(p[:1]) + p[1:] }

// A path spelled in each way Windows reads it — the profile's variable,
// "~\", another case, another drive letter's case, the \\?\ prefix,
// rooted without a drive, '/' separators, a short (8.3) name — names
// what the disk's spelling names: the deny holds at the path the disk
// gives, and every rule's path is on a volume and there on disk.
func TestWindowsSpellingsMeet(t *testing.T) {
	w := testtree.Tree(t, "home/SecretDir/key", "home/a long directory name/k2", "home/pub/p", "proj/src/a.go", "proj/Secret/s.txt")
	home, proj := filepath.Join(w, "home"), filepath.Join(w, "proj")
	env := Env{Home: lowerDrive(home), Cwd: lowerDrive(proj)}
	key, k2 := filepath.Join(home, "SecretDir", "key"), filepath.Join(home, "a long directory name", "k2")
	short := shortName(t, filepath.Join(home, "a long directory name"))
	for _, tc := range []struct{ entry, hidden string }{
		{`%USERPROFILE%\SECRETDIR`, key},
		{`%userprofile%/secretdir/**`, key},
		{`~\secretdir`, key},
		{strings.ToUpper(home) + `\SECRETDIR`, key},
		{lowerDrive(home) + `\SecretDir`, key},
		{`\\?\` + home + `\SecretDir`, key},
		{home[2:] + `\SecretDir`, key},
		{filepath.ToSlash(home) + "/SecretDir/", key},
		{home + `\pub\..\SecretDir`, key},
		{short, k2},
		{strings.ToUpper(short), k2},
	} {
		p, err := Build(testtree.FSRules{DenyRead: []string{tc.entry}}.Settings(), env)
		if err != nil {
			t.Fatalf("%s: %v", tc.entry, err)
		}
		if p.View(slash(t, tc.hidden)).Readable || p.Readable(slash(t, tc.hidden)) {
			t.Errorf("%s: %s stays readable; reads %+v", tc.entry, tc.hidden, p.Reads)
		}
		if !p.View(slash(t, filepath.Join(home, "pub", "p"))).Readable {
			t.Errorf("%s hides its sibling: %+v", tc.entry, p.Reads)
		}
		for _, r := range append(append([]Rule(nil), p.Reads...), p.Writes...) {
			if config.VolumeRoot(r.Path) == "" {
				t.Errorf("%s: rule %+v is on no volume", tc.entry, r)
			} else if _, err := os.Lstat(config.ToOS(r.Path)); err != nil {
				t.Errorf("%s: rule %+v: %v", tc.entry, r, err)
			}
		}
		for _, r := range p.Later {
			if r.Path != "" && r.Path != slash(t, filepath.Dir(tc.hidden)) {
				t.Errorf("%s: kept for later as %q, not as the disk spells it", tc.entry, r.Path)
			}
		}
	}
	// A denyWrite spelled in another case, or by its short name, inside
	// an allowWrite spelled in another: read-only, and the rest writable.
	secret := filepath.Join(proj, "Secret")
	for _, deny := range []string{"SECRET", shortName(t, secret), `\\?\` + strings.ToUpper(secret)} {
		p, err := Build(testtree.FSRules{AllowWrite: []string{strings.ToUpper(proj)}, DenyWrite: []string{deny}}.Settings(), env)
		if err != nil {
			t.Fatal(err)
		}
		if p.View(slash(t, filepath.Join(secret, "s.txt"))).Writable || !p.View(slash(t, filepath.Join(proj, "src", "a.go"))).Writable {
			t.Errorf("denyWrite %s: writes %+v", deny, p.Writes)
		}
	}
}

// A deny of the root is one of the working directory's volume, C:\ (or
// "/", which names it): one rule per entry of that root, never a rule
// without a volume, and an allowRead beneath re-opens its tree.
func TestWindowsRootDeny(t *testing.T) {
	w := testtree.Tree(t, "proj/a.txt", "other/b.txt")
	proj := filepath.Join(w, "proj")
	root := filepath.VolumeName(w) + `\`
	for _, deny := range []string{"/", `\`, "**", lowerDrive(root), root + "**"} {
		p, err := Build(testtree.FSRules{DenyRead: []string{deny}, AllowRead: []string{"."}}.Settings(), Env{Cwd: proj})
		if err != nil {
			t.Fatal(err)
		}
		denies := 0
		for _, r := range p.Reads {
			if r.Allow {
				continue
			}
			denies++
			if config.Dir(r.Path) != slash(t, root) || r.Path == slash(t, root) {
				t.Errorf("%s: deny %q is not an entry of %s", deny, r.Path, root)
			}
		}
		if denies == 0 {
			t.Errorf("%s: no deny rule: %+v", deny, p.Reads)
		}
		if !p.Readable(slash(t, filepath.Join(proj, "a.txt"))) || p.Readable(slash(t, filepath.Join(w, "other", "b.txt"))) {
			t.Errorf("%s: reads %+v", deny, p.Reads)
		}
	}
}

// The paths Env gives are read as Windows spells them, and one whose
// meaning depends on the process's current directories is refused, not
// misread.
func TestWindowsEnvPaths(t *testing.T) {
	w := testtree.Tree(t, "proj/")
	for _, cwd := range []string{`C:proj`, `\proj`, `\\.\pipe\x`} {
		if _, err := Build(testtree.FSRules{}.Settings(), Env{Cwd: cwd}); err == nil {
			t.Errorf("Cwd %q: no error", cwd)
		}
	}
	p, err := Build(testtree.FSRules{AllowWrite: []string{"."}}.Settings(), Env{Cwd: lowerDrive(filepath.Join(w, "proj")), Writable: []string{lowerDrive(filepath.Join(w, "tmp"))}})
	if err != nil {
		t.Fatal(err)
	}
	if want := slash(t, filepath.Join(w, "tmp")); len(p.Writable) != 1 || p.Writable[0] != want || !strings.HasPrefix(want, "/"+strings.ToUpper(w[:1])+":/") {
		t.Errorf("writable %q, want [%q]", p.Writable, want)
	}
}
