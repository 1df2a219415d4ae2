package nsexec

import (
	"encoding/binary"
	"io/fs"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/policy"
)

// direntBufs are the getdents buffers of readDir, one per reader at a time.
var direntBufs = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// getdents is the policy.DirReader of Linux: it reads with getdents64
// itself, where os.ReadDir would also register the directory with the
// poller, sort the entries and allocate for each, which in a tree of
// 100,000 files is most of the protected-name walk.
type getdents struct{}

// dirReader is the reader the plan's walk uses here.
var dirReader policy.DirReader = getdents{}

// ReadFile reads the file name, at most limit bytes, with read(2)
// itself (os.Open would also try to register it with the poller).
func (getdents) ReadFile(name string, limit int) ([]byte, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, min(limit, 4096))
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):min(cap(buf), limit)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	return buf, nil
}

// ReadDir calls fn for every entry of dir but "." and "..", with its name
// (valid only during the call) and its kind (a symlink is a link, whatever
// it points to).
func (getdents) ReadDir(dir string, fn func(name []byte, kind policy.Kind)) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	buf := direntBufs.Get().(*[32 << 10]byte)
	defer direntBufs.Put(buf)
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		parseDirents(buf[:n], func(name []byte, typ uint8) {
			if typ == unix.DT_UNKNOWN {
				// Some file systems do not say: ask, without following.
				var st unix.Stat_t
				if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					return
				}
				typ = direntType(st.Mode)
			}
			kind := policy.KindOther
			switch typ {
			case unix.DT_DIR:
				kind = policy.KindDir
			case unix.DT_REG:
				kind = policy.KindRegular
			case unix.DT_LNK:
				kind = policy.KindLink
			}
			fn(name, kind)
		})
	}
}

// direntType is the d_type of a file of this mode: its file type, shifted.
func direntType(mode uint32) uint8 { return uint8((mode & unix.S_IFMT) >> 12) }

// parseDirents calls fn for each linux_dirent64 record in b: d_ino (8
// bytes), d_off (8), d_reclen (2), d_type (1), then the name, ended by a
// NUL within the record. "." and ".." are left out; a malformed record ends
// the parse.
func parseDirents(b []byte, fn func(name []byte, typ uint8)) {
	const nameOff = 19
	for len(b) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameOff || reclen > len(b) {
			return
		}
		rec := b[:reclen]
		b = b[reclen:]
		if binary.NativeEndian.Uint64(rec[0:8]) == 0 {
			continue // a deleted entry
		}
		name := rec[nameOff:]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		fn(name, rec[18])
	}
}

// inodeOf reads a file's identity and link count from its Lstat.
func inodeOf(fi fs.FileInfo) (policy.FileID, uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return policy.FileID{}, 0, false
	}
	return policy.FileID{Dev: uint64(st.Dev), Ino: st.Ino}, uint64(st.Nlink), true
}
