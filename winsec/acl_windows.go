package winsec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The one file that puts the plan's ACEs on paths and takes them off:
// it moves a path's DACL in and out as bytes; what is added where, and
// what is taken out, is acl.go's.

// Applied is one entry ApplyACEs added, for UndoACEs to take out.
type Applied struct {
	Path  string
	entry rawACE
}

// ApplyACEs adds the plan's aces for the trustee sid (its "S-1-…" form),
// in order, each where the path's DACL does not already hold it, and
// returns what it added. On an error, what it added is taken out again.
func ApplyACEs(aces []ACE, sid string) ([]Applied, error) {
	sidBytes, err := SIDBytes(sid)
	if err != nil {
		return nil, err
	}
	var done []Applied
	for _, a := range aces {
		fi, err := os.Stat(a.Path)
		if err != nil {
			UndoACEs(done)
			return nil, fmt.Errorf("%s (%s): %w", a.Path, a.Why, err)
		}
		e := entryOf(a, sidBytes, fi.IsDir())
		added, err := addEntry(a.Path, e)
		if err != nil {
			UndoACEs(done)
			return nil, fmt.Errorf("%s (%s): %w", a.Path, a.Why, err)
		}
		if added {
			done = append(done, Applied{Path: a.Path, entry: e})
		}
	}
	return done, nil
}

// UndoACEs takes out what ApplyACEs added, in reverse order. It goes on
// past a failure and returns the first.
func UndoACEs(done []Applied) error {
	var first error
	for i := len(done) - 1; i >= 0; i-- {
		d := done[i]
		if err := editDACL(d.Path, func(aces []rawACE) ([]rawACE, bool) { return withoutACE(aces, d.entry) }); err != nil && first == nil {
			first = fmt.Errorf("%s: %w", d.Path, err)
		}
	}
	return first
}

// addEntry adds e to path's DACL unless it already holds it.
func addEntry(path string, e rawACE) (added bool, err error) {
	err = editDACL(path, func(aces []rawACE) ([]rawACE, bool) {
		if holds(aces, e) {
			return aces, false
		}
		added = true
		return withACE(aces, e), true
	})
	return added, err
}

// editDACL reads path's DACL, lets edit change its entries, and writes
// the DACL back when edit says it changed. A null DACL (every access
// granted to everyone) is refused: one entry in its place would take
// every other trustee's access away.
func editDACL(path string, edit func([]rawACE) ([]rawACE, bool)) error {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	if dacl == nil {
		return errors.New("a null DACL (everyone may do anything): srt will not replace it")
	}
	header := unsafe.Slice((*byte)(unsafe.Pointer(dacl)), aclHeaderSize)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(dacl)), binary.LittleEndian.Uint16(header[2:4]))
	aces, err := parseACL(raw)
	if err != nil {
		return err
	}
	edited, changed := edit(aces)
	if !changed {
		return nil
	}
	// The DACL keeps its protection as it was: a path whose DACL
	// inherits nothing (a ~/.ssh made private) must not start to inherit
	// its parent's grants because srt added an entry, nor the reverse.
	control, _, err := sd.Control()
	if err != nil {
		return err
	}
	info := windows.SECURITY_INFORMATION(windows.DACL_SECURITY_INFORMATION | windows.UNPROTECTED_DACL_SECURITY_INFORMATION)
	if control&windows.SE_DACL_PROTECTED != 0 {
		info = windows.DACL_SECURITY_INFORMATION | windows.PROTECTED_DACL_SECURITY_INFORMATION
	}
	b := encodeACL(raw[0], edited)
	return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, info, nil, nil, (*windows.ACL)(unsafe.Pointer(&b[0])), nil)
}
