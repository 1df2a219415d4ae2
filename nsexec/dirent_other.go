//go:build !linux

package nsexec

import "os"

// readDir calls fn for every entry of dir, with its name and kind.
func readDir(dir string, fn func(name []byte, kind entryKind)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		fn([]byte(e.Name()), kindOf(e.Type()))
	}
	return nil
}
