package pathguard

import "encoding/binary"

// A change of a file's metadata: its mode, owner, times or extended
// attributes, judged as a write to it (Decider.Change).

// ChangeOp is what a metadata call changes.
type ChangeOp int

const (
	ChangeMode ChangeOp = iota + 1
	ChangeOwner
	ChangeTimes
	ChangeXattr
	RemoveXattr
)

// Change is a metadata change a call asks, as the backend read it.
type Change struct {
	Op   ChangeOp
	Mode uint32 // ChangeMode: the permission bits asked
	// ChangeOwner: the ids asked, as the backend numbers them (-1: left
	// as they are); Unmapped: one has no mapping in the caller's user
	// namespace.
	UID, GID int
	Unmapped bool
	Name     string // the attribute's name (ChangeXattr, RemoveXattr)
	Value    []byte // ChangeXattr
}

// IsACLName reports whether an extended attribute holds a POSIX ACL,
// whose ids the kernel reads in the caller's user namespace.
func IsACLName(name string) bool {
	return name == "system.posix_acl_access" || name == "system.posix_acl_default"
}

// KeepsSafe says whether ch leaves a file (its mode, uid and gid now), a
// repository's config or hooks directory (n), as safe as it was: its
// times, an owner it already has, a mode — or an ACL that says no more
// than one — that lets no one else write it, an ACL removed (git probes
// whether the filesystem keeps modes by flipping the config's execute
// bit; cp -a, tar and rsync set the hooks directory's mode, times, owner
// and ACL as they copy a repository). Other extended attributes (an ACL
// with named users could let others write it), and anything of a
// protected file (a hook's execute bit), stay as they are.
func (ch Change) KeepsSafe(n Name, mode, uid, gid uint32) bool {
	if n == Protected {
		return false
	}
	switch ch.Op {
	case ChangeTimes:
		return true
	case ChangeOwner:
		return !ch.Unmapped && (ch.UID == -1 || uint32(ch.UID) == uid) && (ch.GID == -1 || uint32(ch.GID) == gid)
	case ChangeMode:
		return ch.Mode&^(mode&0o7777)&0o022 == 0
	case ChangeXattr:
		// An ACL that says no more than a mode (cp -a copies one).
		granted, ok := MinimalACL(ch.Value)
		return IsACLName(ch.Name) && ok && granted&^mode&0o022 == 0
	case RemoveXattr:
		return IsACLName(ch.Name) // an ACL removed grants no one anything
	}
	return false
}

// MinimalACL returns the mode bits a POSIX ACL's value grants when it
// holds only the owner's, the group's and others' entries (an ACL that
// says no more than a mode); ok false for any other.
func MinimalACL(value []byte) (mode uint32, ok bool) {
	const header, entry = 4, 8
	if len(value) < header || (len(value)-header)%entry != 0 {
		return 0, false
	}
	le := binary.LittleEndian
	for off := header; off < len(value); off += entry {
		perm := uint32(le.Uint16(value[off+2:])) & 0o7
		switch le.Uint16(value[off:]) {
		case 0x01: // ACL_USER_OBJ
			mode |= perm << 6
		case 0x04: // ACL_GROUP_OBJ
			mode |= perm << 3
		case 0x20: // ACL_OTHER
			mode |= perm
		default:
			return 0, false
		}
	}
	return mode, true
}

// Change decides the metadata change ch of the file at full (its mode,
// uid and gid now), whose name the rules made n (rule): a protected file
// takes none, and a repository's config or hooks directory only one that
// keeps it as safe as it was — but a mode, which is set without write
// for the group and others (git init --shared asks it: another user
// could then put in what the host's git runs; ch.Mode is narrowed); and
// none where a deny entry applies (the kernel first, where the file is a
// read-only mount of the launch's).
func (d Decider) Change(full string, n Name, rule string, ch *Change, mode, uid, gid uint32) Verdict {
	if Blocked(n) && !ch.KeepsSafe(n, mode, uid, gid) {
		if ch.Op != ChangeMode || n == Protected {
			return Verdict{Errno: EROFS, Reason: d.Rules.Reason(rule, n)}
		}
		ch.Mode &^= 0o022 &^ mode
	}
	if d.Later != nil {
		if why, denied := d.Later(full); denied {
			return Verdict{Errno: EACCES, Reason: why, KernelFirst: true}
		}
	}
	return Verdict{}
}
