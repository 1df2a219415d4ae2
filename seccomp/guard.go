package seccomp

import "runtime"

// The path guard: every call that makes a name (a file, directory, node,
// symlink or hard link), moves one (rename), removes one (unlink, rmdir),
// or opens or truncates a file for writing goes to srt's supervisor, which judges the name it would
// make or write (policy.Guard) and performs the call itself. Plain reads
// never leave the kernel: the filter tells an open for reading by its
// flags. openat2, whose flags are in memory where the filter cannot read
// them and where another thread could change them after any check, is
// answered ENOSYS: C libraries and Go never call it, and the programs
// that do fall back to openat. This file is the pure half: which calls,
// and where their arguments are.

// FileOp is what a guarded call does.
type FileOp int

const (
	FileOpen     FileOp = iota + 1 // open, creat, openat
	FileMkdir                      // mkdir, mkdirat
	FileMknod                      // mknod, mknodat
	FileRename                     // rename, renameat, renameat2
	FileLink                       // link, linkat
	FileSymlink                    // symlink, symlinkat
	FileTruncate                   // truncate
	FileBind                       // bind: a Unix socket's path is a name
	FileRemove                     // unlink, unlinkat, rmdir
)

// String names the operation as a violation's operation.
func (o FileOp) String() string {
	switch o {
	case FileOpen, FileTruncate:
		return "write"
	case FileMkdir:
		return "mkdir"
	case FileMknod:
		return "mknod"
	case FileRename:
		return "rename"
	case FileLink:
		return "link"
	case FileSymlink:
		return "symlink"
	case FileBind:
		return "bind"
	case FileRemove:
		return "unlink"
	}
	return "write"
}

// FileCall says where a guarded call's arguments are; -1 means none.
type FileCall struct {
	Op    FileOp
	Dir   int // dirfd of Path (none: the cwd)
	Path  int // the path the call makes, opens or moves from
	Dir2  int // dirfd of Path2
	Path2 int // the new name of a rename or link, or a symlink's own name
	Flags int // open flags, or the AT_*/RENAME_* flags
	Mode  int // the mode of a new file, directory or node
	// Creat: flags O_CREAT|O_WRONLY|O_TRUNC whatever the arguments.
	Creat bool
	// RemoveDir: flags AT_REMOVEDIR whatever the arguments (rmdir).
	RemoveDir bool
}

// Open flags the filter reads (the same on x86-64 and arm64).
const (
	oWronly = 0x1
	oRdwr   = 0x2
	oCreat  = 0x40
	oTrunc  = 0x200
	oPath   = 0x200000
	// OpenWrites are the open flags that make an open the guard's.
	OpenWrites = oWronly | oRdwr | oCreat | oTrunc
)

var fileCalls = map[string]FileCall{
	"open":      {Op: FileOpen, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: 1, Mode: 2},
	"creat":     {Op: FileOpen, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, Mode: 1, Creat: true},
	"openat":    {Op: FileOpen, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: 2, Mode: 3},
	"mkdir":     {Op: FileMkdir, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, Mode: 1},
	"mkdirat":   {Op: FileMkdir, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: -1, Mode: 2},
	"mknod":     {Op: FileMknod, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, Mode: 1},
	"mknodat":   {Op: FileMknod, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: -1, Mode: 2},
	"rename":    {Op: FileRename, Dir: -1, Path: 0, Dir2: -1, Path2: 1, Flags: -1, Mode: -1},
	"renameat":  {Op: FileRename, Dir: 0, Path: 1, Dir2: 2, Path2: 3, Flags: -1, Mode: -1},
	"renameat2": {Op: FileRename, Dir: 0, Path: 1, Dir2: 2, Path2: 3, Flags: 4, Mode: -1},
	"link":      {Op: FileLink, Dir: -1, Path: 0, Dir2: -1, Path2: 1, Flags: -1, Mode: -1},
	"linkat":    {Op: FileLink, Dir: 0, Path: 1, Dir2: 2, Path2: 3, Flags: 4, Mode: -1},
	// A symlink's Path is its target, a string the call stores and never
	// resolves.
	"symlink":   {Op: FileSymlink, Dir: -1, Path: 0, Dir2: -1, Path2: 1, Flags: -1, Mode: -1},
	"symlinkat": {Op: FileSymlink, Dir: -1, Path: 0, Dir2: 1, Path2: 2, Flags: -1, Mode: -1},
	"truncate":  {Op: FileTruncate, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, Mode: -1},
	"unlink":    {Op: FileRemove, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, Mode: -1},
	"unlinkat":  {Op: FileRemove, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: 2, Mode: -1},
	"rmdir":     {Op: FileRemove, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, Mode: -1, RemoveDir: true},
	// bind's address is a struct in memory, not a path: the guard reads
	// it whole (a Unix socket with a path, one from a stream socketpair
	// included, makes a name; any other is bound as read).
	"bind": {Op: FileBind, Dir: -1, Path: -1, Dir2: -1, Path2: -1, Flags: -1, Mode: -1},
}

var fileByNr = numbered(arches[runtime.GOARCH], fileCalls)

// FileCallOf says whether syscall nr of the running architecture is a
// guarded call, and where its arguments are.
func FileCallOf(nr int32) (FileCall, bool) {
	c, ok := fileByNr[uint32(nr)]
	return c, ok
}
