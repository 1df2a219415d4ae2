package config

import (
	"strings"
	"testing"
)

// Windows paths and their slash form, on every system: the volume first
// (the drive letter upper-cased, a share under /UNC), the Win32 prefixes
// dropped, ".." folded within the volume, and every spelling whose
// meaning depends on the process's current directories refused.
func TestWindowsSlashForm(t *testing.T) {
	for _, tc := range []struct{ os, slash, back string }{
		{`C:\Users\me\proj`, "/C:/Users/me/proj", ""},
		{`c:\users\ME`, "/C:/users/ME", `C:\users\ME`}, // only the letter's case changes
		{`C:\`, "/C:", ""},
		{`C:/Users//me/./x/`, "/C:/Users/me/x", `C:\Users\me\x`},
		{`C:\a\..\..\..\b`, "/C:/b", `C:\b`}, // ".." stops at the volume's root
		{`\\?\c:\x`, "/C:/x", `C:\x`},
		{`\\.\C:\x`, "/C:/x", `C:\x`},
		{`\\srv\share\dir\f`, "/UNC/srv/share/dir/f", ""},
		{`\\srv\share`, "/UNC/srv/share", `\\srv\share\`},
		{`\\srv\share\..\..\x`, "/UNC/srv/share/x", `\\srv\share\x`},
		{`\\?\UNC\srv\share\x`, "/UNC/srv/share/x", `\\srv\share\x`},
		{`C:\x\file:stream`, "/C:/x/file:stream", ""},
	} {
		got, err := fromOS(tc.os, true)
		if err != nil || got != tc.slash {
			t.Errorf("fromOS(%q) = %q, %v; want %q", tc.os, got, err, tc.slash)
			continue
		}
		back := tc.back
		if back == "" {
			back = tc.os
		}
		if got := toOS(tc.slash, true); got != back {
			t.Errorf("toOS(%q) = %q, want %q", tc.slash, got, back)
		}
		// The slash form of the OS form is itself.
		if again, err := fromOS(toOS(tc.slash, true), true); again != tc.slash || err != nil {
			t.Errorf("fromOS(toOS(%q)) = %q, %v", tc.slash, again, err)
		}
	}
	for _, p := range []string{`C:x`, `C:`, `\x`, `/x`, `x\y`, ``, `\\.\pipe\x`, `\\?\Volume{1234}\x`, `\\srv`, `\\srv\`, `\\?\`, `\\.\UNC\srv`} {
		if got, err := fromOS(p, true); err == nil {
			t.Errorf("fromOS(%q) = %q, want an error", p, got)
		}
	}
	// A path without a volume names nothing on disk: never the current
	// drive's.
	for _, p := range []string{"/", "/x", "/c:/x", "/UNC/srv", "C:/x", ""} {
		if got := toOS(p, true); got != "" {
			t.Errorf("toOS(%q) = %q, want \"\"", p, got)
		}
	}
}

// The slash form's parents, roots and joins: a volume's root is its own
// parent, and ".." never leaves a volume.
func TestWindowsSlashPaths(t *testing.T) {
	for _, tc := range []struct{ p, root, dir string }{
		{"/C:/a/b", "/C:", "/C:/a"},
		{"/C:/a", "/C:", "/C:"},
		{"/C:", "/C:", "/C:"},
		{"/UNC/srv/share/a", "/UNC/srv/share", "/UNC/srv/share"},
		{"/UNC/srv/share", "/UNC/srv/share", "/UNC/srv/share"},
		{"/C:x/a", "", "/C:x/a"},
		{"/", "", "/"},
	} {
		if got := volumeRoot(tc.p, true); got != tc.root {
			t.Errorf("volumeRoot(%q) = %q, want %q", tc.p, got, tc.root)
		}
		if got := dirOf(tc.p, true); got != tc.dir {
			t.Errorf("dirOf(%q) = %q, want %q", tc.p, got, tc.dir)
		}
	}
	for _, tc := range []struct{ dir, rel, want string }{
		{"/C:/a/b", "../x", "/C:/a/x"},
		{"/C:/a", "../../../x", "/C:/x"},
		{"/C:", "..", "/C:"},
		{"/UNC/srv/share/a", "../../x", "/UNC/srv/share/x"},
		{"/D:/a", "b/./c/", "/D:/a/b/c"},
	} {
		if got := joinIn(tc.dir, tc.rel, true); got != tc.want {
			t.Errorf("joinIn(%q, %q) = %q, want %q", tc.dir, tc.rel, got, tc.want)
		}
	}
}

// On POSIX the slash form is the path itself, whatever it holds.
func TestPOSIXSlashForm(t *testing.T) {
	for _, p := range []string{"/home/u", "/a/../b", "/C:/x", `/a\b`, "rel", ""} {
		if got, err := fromOS(p, false); got != p || err != nil {
			t.Errorf("fromOS(%q) = %q, %v", p, got, err)
		}
		if got := toOS(p, false); got != p {
			t.Errorf("toOS(%q) = %q", p, got)
		}
	}
	if volumeRoot("/C:/x", false) != "/" || dirOf("/C:", false) != "/" || joinIn("/a", "../../x", false) != "/x" {
		t.Error("a POSIX path read as a Windows one")
	}
}

// Windows entries (spec c.2), on every system: the profile's variables
// in any case, '\' a separator, "~\x", the \\?\ prefix, the drive letter
// upper-cased, a rooted entry on the working directory's drive, ".."
// folded; a pattern keeps its syntax.
func TestExpandWindows(t *testing.T) {
	const home, cwd = `C:\Users\me`, `c:\work\repo`
	for _, tc := range []struct {
		in   PathEntry
		want string
		glob bool
	}{
		{PathEntry{Path: "~"}, "/C:/Users/me", false},
		{PathEntry{Path: `~\.ssh`}, "/C:/Users/me/.ssh", false},
		{PathEntry{Path: "~/.ssh"}, "/C:/Users/me/.ssh", false},
		{PathEntry{Path: `%USERPROFILE%\.aws`}, "/C:/Users/me/.aws", false},
		{PathEntry{Path: `%userprofile%\.aws`}, "/C:/Users/me/.aws", false},
		{PathEntry{Path: `%HOMEDRIVE%%HomePath%\x`}, "/C:/Users/me/x", false},
		{PathEntry{Path: `%HOMEDRIVE%\x`}, "/C:/x", false},
		{PathEntry{Path: `%APPDATA%\x`}, "/C:/work/repo/%APPDATA%/x", false}, // only the three
		{PathEntry{Path: `d:\Data\x\`}, "/D:/Data/x", false},
		{PathEntry{Path: `\\?\d:\Data`}, "/D:/Data", false},
		{PathEntry{Path: `\\srv\share\x`}, "/UNC/srv/share/x", false},
		{PathEntry{Path: `\x\y`}, "/C:/x/y", false},
		{PathEntry{Path: "/"}, "/C:", false},
		{PathEntry{Path: "**"}, "/C:", false},
		{PathEntry{Path: `D:\**`}, "/D:", false},
		{PathEntry{Path: "."}, "/C:/work/repo", false},
		{PathEntry{Path: `src\**`}, "/C:/work/repo/src", false},
		{PathEntry{Path: `..\..\..\..\x`}, "/C:/x", false},
		{PathEntry{Path: `C:\a\..\b`}, "/C:/b", false},
		{PathEntry{Path: `~user\x`}, "/C:/work/repo/~user/x", false},
		{PathEntry{Path: `**\*.pem`}, "/C:/work/repo/**/*.pem", true},
		{PathEntry{Path: `~\*.pem`}, "/C:/Users/me/*.pem", true},
		{PathEntry{Path: `C:\keys\**`, Literal: true}, "/C:/keys/**", false},
	} {
		p, ok, err := expand(tc.in, home, cwd, true)
		if err != nil || !ok || p.Path != tc.want || (p.Glob != nil) != tc.glob {
			t.Errorf("expand(%+v) = %+v, %v, %v; want %q glob=%v", tc.in, p, ok, err, tc.want, tc.glob)
		}
		if p.Glob != nil && !strings.HasPrefix(p.Glob.Root(), "/C:") {
			t.Errorf("%q: the pattern's directory %q is not on a volume", tc.in.Path, p.Glob.Root())
		}
	}
	// A share's home gives a share's drive.
	if p, _, err := expand(PathEntry{Path: `%HOMEDRIVE%\x`}, `\\srv\home\me`, cwd, true); err != nil || p.Path != "/UNC/srv/home/x" {
		t.Errorf("%%HOMEDRIVE%% of a share: %q, %v", p.Path, err)
	}
	// No home: every entry that names it names nothing, never a root.
	for _, e := range []string{"~", `~\x`, `%USERPROFILE%`, `%HOMEPATH%\x`, `x\%homedrive%`} {
		if p, ok, err := expand(PathEntry{Path: e}, "", cwd, true); ok || err != nil {
			t.Errorf("expand(%q) with no home = %q, %v, %v; want dropped", e, p.Path, ok, err)
		}
	}
	// A spelling that depends on the process's current directories, or
	// names a device, is refused with the entry's reason.
	for _, e := range []string{`C:x`, `C:`, `\\.\pipe\x`, `\\srv`} {
		if p, ok, err := expand(PathEntry{Path: e}, home, cwd, true); err == nil {
			t.Errorf("expand(%q) = %q, %v; want an error", e, p.Path, ok)
		}
	}
}
