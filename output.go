package srt

import (
	"io"
	"os"

	"github.com/srt-go/srt/credential"
	"github.com/srt-go/srt/internal/ownfile"
)

// What a program prints about its runs, and the files it writes for
// the user, as srt's own CLI does.

// Redacting returns a writer to w that writes every real credential
// value a run of this process masks as its sentinel, even split across
// writes: for what a program prints about its runs (errors, debug
// lines, violations), which the command's caller may read. The library
// puts the same redactor around the standard log package's output.
func Redacting(w io.Writer) io.Writer { return credential.Redacting(w) }

// CreateOutput opens path for a program's own output on the user's
// behalf (a violations file), emptied, and made with perm where it is
// missing, but never through a name an earlier sandboxed run could have
// planted there: a symlink, a hard link to a file elsewhere, a FIFO or
// another user's file is refused and left as it is.
func CreateOutput(path string, perm os.FileMode) (*os.File, error) { return ownfile.Create(path, perm) }
