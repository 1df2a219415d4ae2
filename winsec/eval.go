package winsec

import (
	"path/filepath"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/policy"
)

// Decision is what a plan's ACEs say of an access.
type Decision int

const (
	// Unsaid: no ACE of the plan reaches the path; the host's own ACL
	// decides (for a read; a write of the write-restricted token, which
	// only the plan's ACEs grant, is refused).
	Unsaid Decision = iota
	Granted
	Denied
)

// Access evaluates the access mask to path for the plan's trustee as
// Windows does with the plan's ACEs in place: the entries on path itself
// first, then those inherited from its parent, its grandparent and on up;
// at each level denies before grants (the canonical order). The first
// entry that denies a wanted right decides; otherwise the access is
// granted once grants have covered every wanted right. The host's own
// entries, which name other trustees, are not the plan's to say.
func Access(aces []ACE, path string, mask uint32) Decision {
	left := mask
	for at, own := path, true; ; own = false {
		for _, deny := range []bool{true, false} {
			for _, a := range aces {
				if a.Path != at || a.Deny != deny || (!own && !a.Inherited) || a.Mask&left == 0 {
					continue
				}
				if deny {
					return Denied
				}
				left &^= a.Mask
				if left == 0 {
					return Granted
				}
			}
		}
		parent := filepath.Dir(at)
		if parent == at {
			break
		}
		at = parent
	}
	return Unsaid
}

// Writable says whether the write-restricted token may write path
// (its data, and make names in it when a directory): only a grant of the
// plan makes a write.
func Writable(aces []ACE, path string) bool {
	return Access(aces, path, fileWriteData|fileAppendData) == Granted
}

// Deletable says whether the token may delete path, or move it away:
// DELETE on it, or FILE_DELETE_CHILD on its parent.
func Deletable(aces []ACE, path string) bool {
	return Access(aces, path, deleteRight) == Granted || Access(aces, filepath.Dir(path), fileDeleteChild) == Granted
}

// Readable says what the plan says of reading path: Denied where it
// hides it, Granted where it grants reading, Unsaid where the host's own
// ACL decides.
func Readable(aces []ACE, path string) Decision {
	return Access(aces, path, fileReadData)
}

// Agrees says whether the plan's ACEs hold pol's view of path (as
// Windows spells it): written exactly where pol lets it be written,
// hidden where pol hides it, and readable wherever else (whether the
// host's ACL lets the account read a path no entry names is the host's
// to say).
func Agrees(aces []ACE, pol *policy.Policy, path string) bool {
	slash, err := config.FromOS(path)
	if err != nil {
		return false
	}
	v := pol.View(slash)
	if Writable(aces, path) != v.Writable {
		return false
	}
	// A read no entry of the plan decides is the host's to grant: only
	// where pol lets the command read.
	return (Readable(aces, path) == Denied) == !v.Readable
}
