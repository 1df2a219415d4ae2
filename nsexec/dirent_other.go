//go:build !linux

package nsexec

import "os"

// readDir calls fn for every entry of dir, with its name and whether it
// is a directory or a regular file (a symlink is neither).
func readDir(dir string, fn func(name []byte, isDir, isRegular bool)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		fn([]byte(e.Name()), e.IsDir(), e.Type().IsRegular())
	}
	return nil
}
