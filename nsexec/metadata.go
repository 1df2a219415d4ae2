package nsexec

// Metadata calls: in the fallback, Landlock has no right for a file's
// mode, owner, times or extended attributes, so the filter sends every
// call that changes them to the supervisor, which judges the file against
// the plan and makes the change itself. This file is the pure half: how
// each call names its file.

// metaCall says where a metadata syscall's arguments are. Indexes are
// argument positions; -1 means the call has no such argument.
type metaCall struct {
	op     metaOp
	dir    int  // the dirfd the path is resolved from (none: the cwd)
	path   int  // the path (none: the target is the descriptor in fd)
	fd     int  // the target descriptor of an f* call
	flags  int  // AT_* flags
	follow bool // a final symlink is followed unless the flags say not
	// rest is where the operation's own arguments begin: the mode, the
	// owner, the times or the attribute's name.
	rest int
}

// metaOp is what a metadata call changes.
type metaOp int

const (
	opMode metaOp = iota + 1
	opOwner
	opTimes       // struct timespec[2] (utimensat)
	opTimeval     // struct timeval[2] (utimes, futimesat)
	opUtimbuf     // struct utimbuf (utime)
	opSetXattr    // name, value, size, flags
	opRemoveXattr // name
	opSetXattrAt  // name, struct xattr_args, size
)

func (o metaOp) String() string {
	switch o {
	case opMode:
		return "chmod"
	case opOwner:
		return "chown"
	case opTimes, opTimeval, opUtimbuf:
		return "utimes"
	case opSetXattr, opSetXattrAt:
		return "setxattr"
	case opRemoveXattr:
		return "removexattr"
	}
	return "metadata"
}

// metaCalls are the calls that change a file's metadata, by name.
var metaCalls = map[string]metaCall{
	"chmod":         {op: opMode, dir: -1, path: 0, fd: -1, flags: -1, follow: true, rest: 1},
	"fchmod":        {op: opMode, dir: -1, path: -1, fd: 0, flags: -1, rest: 1},
	"fchmodat":      {op: opMode, dir: 0, path: 1, fd: -1, flags: -1, follow: true, rest: 2}, // the syscall has no flags
	"fchmodat2":     {op: opMode, dir: 0, path: 1, fd: -1, flags: 3, follow: true, rest: 2},
	"chown":         {op: opOwner, dir: -1, path: 0, fd: -1, flags: -1, follow: true, rest: 1},
	"lchown":        {op: opOwner, dir: -1, path: 0, fd: -1, flags: -1, rest: 1},
	"fchown":        {op: opOwner, dir: -1, path: -1, fd: 0, flags: -1, rest: 1},
	"fchownat":      {op: opOwner, dir: 0, path: 1, fd: -1, flags: 4, follow: true, rest: 2},
	"utime":         {op: opUtimbuf, dir: -1, path: 0, fd: -1, flags: -1, follow: true, rest: 1},
	"utimes":        {op: opTimeval, dir: -1, path: 0, fd: -1, flags: -1, follow: true, rest: 1},
	"futimesat":     {op: opTimeval, dir: 0, path: 1, fd: -1, flags: -1, follow: true, rest: 2},
	"utimensat":     {op: opTimes, dir: 0, path: 1, fd: -1, flags: 3, follow: true, rest: 2}, // a NULL path: the dirfd itself
	"setxattr":      {op: opSetXattr, dir: -1, path: 0, fd: -1, flags: -1, follow: true, rest: 1},
	"lsetxattr":     {op: opSetXattr, dir: -1, path: 0, fd: -1, flags: -1, rest: 1},
	"fsetxattr":     {op: opSetXattr, dir: -1, path: -1, fd: 0, flags: -1, rest: 1},
	"removexattr":   {op: opRemoveXattr, dir: -1, path: 0, fd: -1, flags: -1, follow: true, rest: 1},
	"lremovexattr":  {op: opRemoveXattr, dir: -1, path: 0, fd: -1, flags: -1, rest: 1},
	"fremovexattr":  {op: opRemoveXattr, dir: -1, path: -1, fd: 0, flags: -1, rest: 1},
	"setxattrat":    {op: opSetXattrAt, dir: 0, path: 1, fd: -1, flags: 2, follow: true, rest: 3},
	"removexattrat": {op: opRemoveXattr, dir: 0, path: 1, fd: -1, flags: 2, follow: true, rest: 3},
}

// metaCallsOf maps arch a's syscall numbers to the metadata calls it has.
func metaCallsOf(a Arch) map[uint32]metaCall {
	out := map[uint32]metaCall{}
	for name, c := range metaCalls {
		if nr, ok := a.Nr[name]; ok {
			out[nr] = c
		}
	}
	return out
}
