// Package ownfile opens the files srt itself writes, on the user's
// behalf, so that no name planted there can send the write elsewhere.
//
// A sandboxed run may write where a later run's output goes (a
// --violations file in the project, a run directory under a writable
// /tmp): it can plant a symlink, or a second name of a file it cannot
// write itself, at that name, and have the next srt — outside the
// sandbox — truncate and write ~/.bashrc through it. So a file srt
// writes is never reached through a symlink at its last name, never one
// with another name, never anything but a regular file of the user's;
// and a file srt makes in a directory of its own is made there, never
// found there.
package ownfile

import (
	"errors"
	"fmt"
	"os"
)

// ErrPlanted says a name srt writes holds what srt did not make there.
var ErrPlanted = errors.New("not a file srt may write there")

// WriteNew makes the file path, which must not exist, with data: for the
// files srt makes in a directory of its own (a run's trust bundle, its
// profile). A name already there, a symlink included, fails (EEXIST).
func WriteNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Create opens path for appending srt's own output (a --violations
// file), emptied, and made with perm where it is missing. What is there
// must be a regular file of this user's with no other name: a symlink at
// path, a hard link to a file elsewhere, a FIFO, a socket or another
// user's file is refused (ErrPlanted), and left as it is. A character
// device (/dev/null, a terminal) is written, never emptied, and so are
// the caller's own descriptors by name (/dev/stderr, /dev/fd/N). The
// directories on the way are followed as the user spelled them.
func Create(path string, perm os.FileMode) (*os.File, error) {
	f, err := create(path, perm)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}

// planted describes what was found in place of a file srt may write.
func planted(what string) error { return fmt.Errorf("%w: %s", ErrPlanted, what) }
