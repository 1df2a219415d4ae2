package policy

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/srt-go/srt/config"
)

// The policy's paths are in config's slash form on every system (see
// config.FromOS): /C:/Users/me on Windows, the path itself on POSIX. This
// file is where they meet the disk: every read the policy makes goes
// through one of the functions below, which spell the path as the system
// does (config.ToOS), and every path read back (a symlink's target, a
// resolved path, a walk's names) is made slash form again. On POSIX each
// is the os or filepath call it wraps.

// windowsPaths says this system spells paths as Windows does.
const windowsPaths = filepath.Separator == '\\'

func lstat(p string) (fs.FileInfo, error) {
	fi, err := os.Lstat(config.ToOS(p))
	if windowsPaths && err == nil && isJunction(config.ToOS(p), fi.Mode()) {
		return junctionInfo{fi}, nil
	}
	return fi, err
}

func stat(p string) (fs.FileInfo, error) { return os.Stat(config.ToOS(p)) }

// isJunction says whether the entry at p (as the system spells it) of
// mode m is a Windows junction (a mount point), which Go reports as an
// irregular file rather than a symlink since 1.23: the policy treats it
// as one, since Windows follows it as one. A junction the command planted
// in a writable tree must be no more a way to a grant than a symlink is
// (plantableLink), and a protected name that is one leads to what the
// host runs.
func isJunction(p string, m fs.FileMode) bool {
	if !windowsPaths || m&fs.ModeIrregular == 0 {
		return false
	}
	_, err := os.Readlink(p)
	return err == nil
}

// junctionInfo is a junction's FileInfo, its mode a symlink's.
type junctionInfo struct{ fs.FileInfo }

func (j junctionInfo) Mode() fs.FileMode {
	return j.FileInfo.Mode()&^(fs.ModeIrregular|fs.ModeDir) | fs.ModeSymlink
}

// readlink returns the target of the symlink at p in the slash form: an
// absolute one on its volume, or a relative one ('/'-separated). On
// Windows an absolute target is C:\x, a relative one ..\x, and one rooted
// without a drive (\x) is on the link's own volume.
func readlink(p string) (string, error) {
	t, err := os.Readlink(config.ToOS(p))
	if err != nil || !windowsPaths {
		return t, err
	}
	if filepath.IsAbs(t) || filepath.VolumeName(t) != "" || strings.HasPrefix(t, `\\`) {
		// Absolute, or a spelling config.FromOS refuses with its reason:
		// C:x (a drive's current directory, which is no link's), a
		// device path (\\?\Volume{…}\, a volume mounted in a folder).
		return config.FromOS(t)
	}
	t = filepath.ToSlash(t)
	if strings.HasPrefix(t, "/") {
		return config.VolumeRoot(p) + t, nil
	}
	return t, nil
}

// evalSymlinks is filepath.EvalSymlinks for the slash form. On Windows it
// follows junctions too (resolveChain), which filepath.EvalSymlinks
// reads as files it cannot pass through, then has filepath.EvalSymlinks
// spell the link-free result as the disk does: its case, its long names.
// Two spellings of one existing path resolve alike, so neither escapes a
// rule the other names.
func evalSymlinks(p string) (string, error) {
	if !windowsPaths {
		return filepath.EvalSymlinks(p)
	}
	real, _, err := resolveChain(p)
	if err != nil {
		return "", err
	}
	spelled, err := filepath.EvalSymlinks(config.ToOS(real))
	if err != nil {
		return "", err
	}
	return config.FromOS(spelled)
}

// walkDir is filepath.WalkDir for the slash form: fn gets slash-form
// paths. A path the walk reports that has no slash form is passed to fn
// as it is, with its error (none does: the walk joins names to root).
func walkDir(root string, fn fs.WalkDirFunc) error {
	if !windowsPaths {
		return filepath.WalkDir(root, fn)
	}
	return filepath.WalkDir(config.ToOS(root), func(p string, d fs.DirEntry, err error) error {
		s, serr := config.FromOS(p)
		if serr != nil {
			return fn(p, d, serr)
		}
		return fn(s, d, err)
	})
}

// readDir is os.ReadDir for the slash form.
func readDir(p string) ([]fs.DirEntry, error) { return os.ReadDir(config.ToOS(p)) }

// osDirs hands a DirReader the paths as the system spells them: Env.Dirs
// reads the disk, and is given what the disk reads (only on Windows does
// that differ from the slash form).
type osDirs struct{ dirs DirReader }

func (o osDirs) ReadDir(dir string, fn func(name []byte, kind Kind)) error {
	return o.dirs.ReadDir(config.ToOS(dir), fn)
}

func (o osDirs) ReadFile(name string, limit int) ([]byte, error) {
	return o.dirs.ReadFile(config.ToOS(name), limit)
}

// volume is the root of the volume p lies on: "/" on POSIX.
func volume(p string) string {
	if !windowsPaths {
		return "/"
	}
	return config.VolumeRoot(p)
}
