package config

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// The slash form: how every path of the filesystem policy is spelled, on
// every system — absolute, clean and '/'-separated, so that one set of
// rules (Under, globs, depth, ancestors) reads them all. Expand gives
// entries in it, and the policy converts only at its edge: what comes in
// (FromOS) and every disk access it makes (ToOS).
//
// On POSIX the slash form is the path itself; FromOS and ToOS return
// their argument unchanged. On Windows a path starts with its volume:
//
//	C:\Users\me          /C:/Users/me       (the drive letter upper-cased)
//	c:\                  /C:                (a volume's root)
//	\\srv\share\x        /UNC/srv/share/x   (a network share)
//	\\?\C:\x, \\.\C:\x   /C:/x              (the Win32 prefixes dropped)
//	\\?\UNC\srv\share    /UNC/srv/share
//
// and every other spelling is refused: a drive-relative (C:x) or rooted
// (\x) path, whose meaning depends on the process's current directories,
// and a device path (\\.\pipe\x, \\?\Volume{…}\), which names no file a
// rule is about. ".." is folded lexically, as Win32 does before it
// resolves anything.
//
// What is not normalised: Windows compares names ignoring case, the slash
// form as spelled, but for the drive letter (the reference's choice
// too). A path read from the disk (a rule's resolved path) has the case
// and the long names the disk gives it, so two spellings of one existing
// file meet there, and a question put to the policy about a path must
// spell it so too (resolved, as filepath.EvalSymlinks gives it). A path
// spelled in settings that does not exist yet keeps its spelling, and so
// do a share's server and share names; short (8.3) names, trailing dots
// and spaces, and alternate data streams ("file:stream") are kept as
// spelled until a resolution reads them. What Windows enforces is not
// affected: an ACE is set on the file a path opens, however spelled.

// windowsPaths says this system spells paths as Windows does.
const windowsPaths = filepath.Separator == '\\'

// FromOS returns the slash form of p, an absolute path as this system
// spells it; on POSIX, p itself.
func FromOS(p string) (string, error) { return fromOS(p, windowsPaths) }

// ToOS returns the slash-form path p as this system spells it; on POSIX,
// p itself. On Windows a path without a volume (not one FromOS or
// Expand made) is "", which names nothing on disk: never \x, which is
// the current drive's, nor \\x\y, which Windows would reach over SMB.
func ToOS(p string) string { return toOS(p, windowsPaths) }

// VolumeRoot returns the root of the volume slash-form p lies on: "/" on
// POSIX (for an absolute p), "/C:" or "/UNC/srv/share" on Windows; ""
// when p has none.
func VolumeRoot(p string) string { return volumeRoot(p, windowsPaths) }

// Dir is path.Dir for the slash form: a volume's root is its own parent,
// as filepath.Dir says of C:\.
func Dir(p string) string { return dirOf(p, windowsPaths) }

// Join joins the relative slash path rel (a symlink's target, a settings
// entry) to the slash-form directory dir, as path.Join does, except that
// on Windows ".." never climbs above dir's volume.
func Join(dir, rel string) string { return joinIn(dir, rel, windowsPaths) }

// Clean is path.Clean for the slash form: on Windows ".." never climbs
// above a path's volume.
func Clean(p string) string {
	if windowsPaths {
		if vol := volumeRoot(p, true); vol != "" {
			return cleanIn(vol, p[len(vol):])
		}
	}
	return path.Clean(p)
}

func fromOS(p string, windows bool) (string, error) {
	if !windows {
		return p, nil
	}
	s := strings.ReplaceAll(p, `\`, "/")
	vol, rest, err := windowsVolume(s)
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	return cleanIn(vol, rest), nil
}

// windowsVolume splits s (a Windows path, its separators made '/') into
// its volume in slash form and the rest.
func windowsVolume(s string) (vol, rest string, err error) {
	switch {
	case hasPrefixFold(s, "//?/UNC/"), hasPrefixFold(s, "//./UNC/"):
		s = "//" + s[len("//?/UNC/"):]
	case strings.HasPrefix(s, "//?/"), strings.HasPrefix(s, "//./"):
		if s = s[len("//?/"):]; !isDrive(s) {
			return "", "", fmt.Errorf("a device path: srt's policy reads drive letters and shares")
		}
	case strings.HasPrefix(s, "/??/"): // the NT namespace's spelling of \\?\
		if s = s[len("/??/"):]; !isDrive(s) {
			return "", "", fmt.Errorf("a device path: srt's policy reads drive letters and shares")
		}
	}
	switch {
	case isDrive(s) && (len(s) == 2 || s[2] != '/'):
		return "", "", fmt.Errorf("a drive-relative path (it depends on the drive's current directory); spell it from the drive's root, %s\\…", s[:2])
	case isDrive(s):
		return "/" + strings.ToUpper(s[:1]) + ":", s[2:], nil
	case strings.HasPrefix(s, "//"):
		parts := strings.SplitN(s[2:], "/", 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" || parts[0] == "." || parts[0] == "?" || parts[1] == "." || parts[1] == ".." {
			return "", "", fmt.Errorf("a network path without its server and share (\\\\server\\share\\…)")
		}
		rest := ""
		if len(parts) == 3 {
			rest = "/" + parts[2]
		}
		return "/UNC/" + parts[0] + "/" + parts[1], rest, nil
	case strings.HasPrefix(s, "/"):
		return "", "", fmt.Errorf("a path without a drive (it depends on the current drive); spell its drive, C:\\…")
	}
	return "", "", fmt.Errorf("not an absolute path")
}

func isDrive(s string) bool {
	return len(s) >= 2 && s[1] == ':' && ('a' <= s[0] && s[0] <= 'z' || 'A' <= s[0] && s[0] <= 'Z')
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// cleanIn is vol followed by rest, cleaned lexically within the volume:
// ".." at its root stays there.
func cleanIn(vol, rest string) string {
	return vol + strings.TrimSuffix(path.Clean("/"+rest), "/")
}

func toOS(p string, windows bool) string {
	if !windows {
		return p
	}
	vol := volumeRoot(p, true)
	if vol == "" {
		return ""
	}
	rest := strings.ReplaceAll(strings.TrimPrefix(p[len(vol):], "/"), "/", `\`)
	if strings.HasPrefix(vol, "/UNC/") {
		return `\\` + strings.ReplaceAll(vol[len("/UNC/"):], "/", `\`) + `\` + rest
	}
	return vol[1:] + `\` + rest
}

func volumeRoot(p string, windows bool) string {
	if !windows {
		if strings.HasPrefix(p, "/") {
			return "/"
		}
		return ""
	}
	// Only what fromOS makes: an upper-case letter, or UNC with a server
	// and a share.
	if len(p) >= 3 && p[0] == '/' && 'A' <= p[1] && p[1] <= 'Z' && p[2] == ':' && (len(p) == 3 || p[3] == '/') {
		return p[:3]
	}
	if rest, ok := strings.CutPrefix(p, "/UNC/"); ok {
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) >= 2 && parts[0] != "" && parts[1] != "" {
			return "/UNC/" + parts[0] + "/" + parts[1]
		}
	}
	return ""
}

func dirOf(p string, windows bool) string {
	if windows {
		if vol := volumeRoot(p, true); vol == p || vol == "" {
			return p
		}
	}
	return path.Dir(p)
}

func joinIn(dir, rel string, windows bool) string {
	if !windows {
		return path.Join(dir, rel)
	}
	vol := volumeRoot(dir, true)
	return cleanIn(vol, dir[len(vol):]+"/"+rel)
}
