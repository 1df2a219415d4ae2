package seccomp

import "runtime"

// Metadata calls: Landlock has no right for a file's mode, owner, times or
// extended attributes, and the launch's mounts protect only the files
// that exist at launch, so whenever the path guard runs (and always in
// the fallback) the filter sends every call that changes them to the
// supervisor, which judges the file as it would a write to it and makes
// the change itself. This file is the pure half: how each call names its
// file.

// MetaCall says where a metadata syscall's arguments are. Indexes are
// argument positions; -1 means the call has no such argument.
type MetaCall struct {
	Op     MetaOp
	Dir    int  // the dirfd the path is resolved from (none: the cwd)
	Path   int  // the path (none: the target is the descriptor in Fd)
	Fd     int  // the target descriptor of an f* call
	Flags  int  // AT_* flags
	Follow bool // a final symlink is followed unless the flags say not
	// Rest is where the operation's own arguments begin: the mode, the
	// owner, the times or the attribute's name.
	Rest int
}

// MetaOp is what a metadata call changes.
type MetaOp int

const (
	OpMode MetaOp = iota + 1
	OpOwner
	OpTimes       // struct timespec[2] (utimensat)
	OpTimeval     // struct timeval[2] (utimes, futimesat)
	OpUtimbuf     // struct utimbuf (utime)
	OpSetXattr    // name, value, size, flags
	OpRemoveXattr // name
	OpSetXattrAt  // name, struct xattr_args, size
)

// String names the operation as a violation's operation.
func (o MetaOp) String() string {
	switch o {
	case OpMode:
		return "chmod"
	case OpOwner:
		return "chown"
	case OpTimes, OpTimeval, OpUtimbuf:
		return "utimes"
	case OpSetXattr, OpSetXattrAt:
		return "setxattr"
	case OpRemoveXattr:
		return "removexattr"
	}
	return "metadata"
}

// metaCalls are the calls that change a file's metadata, by name. The
// filter sends each to the supervisor in the host mode and with the
// guard.
var metaCalls = map[string]MetaCall{
	"chmod":         {Op: OpMode, Dir: -1, Path: 0, Fd: -1, Flags: -1, Follow: true, Rest: 1},
	"fchmod":        {Op: OpMode, Dir: -1, Path: -1, Fd: 0, Flags: -1, Rest: 1},
	"fchmodat":      {Op: OpMode, Dir: 0, Path: 1, Fd: -1, Flags: -1, Follow: true, Rest: 2}, // the syscall has no flags
	"fchmodat2":     {Op: OpMode, Dir: 0, Path: 1, Fd: -1, Flags: 3, Follow: true, Rest: 2},
	"chown":         {Op: OpOwner, Dir: -1, Path: 0, Fd: -1, Flags: -1, Follow: true, Rest: 1},
	"lchown":        {Op: OpOwner, Dir: -1, Path: 0, Fd: -1, Flags: -1, Rest: 1},
	"fchown":        {Op: OpOwner, Dir: -1, Path: -1, Fd: 0, Flags: -1, Rest: 1},
	"fchownat":      {Op: OpOwner, Dir: 0, Path: 1, Fd: -1, Flags: 4, Follow: true, Rest: 2},
	"utime":         {Op: OpUtimbuf, Dir: -1, Path: 0, Fd: -1, Flags: -1, Follow: true, Rest: 1},
	"utimes":        {Op: OpTimeval, Dir: -1, Path: 0, Fd: -1, Flags: -1, Follow: true, Rest: 1},
	"futimesat":     {Op: OpTimeval, Dir: 0, Path: 1, Fd: -1, Flags: -1, Follow: true, Rest: 2},
	"utimensat":     {Op: OpTimes, Dir: 0, Path: 1, Fd: -1, Flags: 3, Follow: true, Rest: 2}, // a NULL path: the dirfd itself
	"setxattr":      {Op: OpSetXattr, Dir: -1, Path: 0, Fd: -1, Flags: -1, Follow: true, Rest: 1},
	"lsetxattr":     {Op: OpSetXattr, Dir: -1, Path: 0, Fd: -1, Flags: -1, Rest: 1},
	"fsetxattr":     {Op: OpSetXattr, Dir: -1, Path: -1, Fd: 0, Flags: -1, Rest: 1},
	"removexattr":   {Op: OpRemoveXattr, Dir: -1, Path: 0, Fd: -1, Flags: -1, Follow: true, Rest: 1},
	"lremovexattr":  {Op: OpRemoveXattr, Dir: -1, Path: 0, Fd: -1, Flags: -1, Rest: 1},
	"fremovexattr":  {Op: OpRemoveXattr, Dir: -1, Path: -1, Fd: 0, Flags: -1, Rest: 1},
	"setxattrat":    {Op: OpSetXattrAt, Dir: 0, Path: 1, Fd: -1, Flags: 2, Follow: true, Rest: 3},
	"removexattrat": {Op: OpRemoveXattr, Dir: 0, Path: 1, Fd: -1, Flags: 2, Follow: true, Rest: 3},
}

// metaCallsOf maps arch a's syscall numbers to the metadata calls it has.
func metaCallsOf(a Arch) map[uint32]MetaCall { return numbered(a, metaCalls) }

// numbered keys calls, by name, by their numbers on arch a (those a has).
func numbered[C any](a Arch, calls map[string]C) map[uint32]C {
	out := map[uint32]C{}
	for name, c := range calls {
		if nr, ok := a.Nr[name]; ok {
			out[nr] = c
		}
	}
	return out
}

// MetaCallOf says whether syscall nr of the running architecture is a
// metadata call, and where its arguments are.
func MetaCallOf(nr int32) (MetaCall, bool) {
	c, ok := metaByNr[uint32(nr)]
	return c, ok
}

var metaByNr = metaCallsOf(arches[runtime.GOARCH])
