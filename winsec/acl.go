package winsec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A DACL as Windows lays it out in memory, read and written here as
// bytes so that adding and removing the plan's entries is pure code,
// tested on any host: the one Windows file only moves the bytes in and
// out of a path's security descriptor.
//
// An ACL is an 8-byte header (revision, a zero byte, the size and the
// entry count as little-endian uint16, two zero bytes) and its entries,
// each a header (type, flags, size), then for the allowed and denied
// types the access mask and the trustee's SID. Entries of other types
// are kept as they are.

// Entry types and flags (winnt.h).
const (
	aceAllowed       = 0x0
	aceDenied        = 0x1
	objectInherit    = 0x1
	containerInherit = 0x2
	inheritedACE     = 0x10
	aclRevision      = 2
	aclHeaderSize    = 8
)

// rawACE is one entry, as it was read or is to be written.
type rawACE []byte

func (a rawACE) kind() uint8  { return a[0] }
func (a rawACE) flags() uint8 { return a[1] }

// simple says whether the entry is an allowed or denied one, whose mask
// and SID this file reads.
func (a rawACE) simple() bool {
	return (a.kind() == aceAllowed || a.kind() == aceDenied) && len(a) >= 8
}

func (a rawACE) mask() uint32 { return binary.LittleEndian.Uint32(a[4:8]) }
func (a rawACE) sid() []byte  { return a[8:] }

// newACE is an allowed or denied entry of mask for sid.
func newACE(kind, flags uint8, mask uint32, sid []byte) rawACE {
	size := 8 + len(sid)
	size += (4 - size%4) % 4 // entries are DWORD-aligned
	a := make(rawACE, size)
	a[0], a[1] = kind, flags
	binary.LittleEndian.PutUint16(a[2:4], uint16(size))
	binary.LittleEndian.PutUint32(a[4:8], mask)
	copy(a[8:], sid)
	return a
}

// parseACL reads an ACL's entries.
func parseACL(b []byte) ([]rawACE, error) {
	if len(b) < aclHeaderSize {
		return nil, errors.New("ACL shorter than its header")
	}
	size, count := int(binary.LittleEndian.Uint16(b[2:4])), int(binary.LittleEndian.Uint16(b[4:6]))
	if size < aclHeaderSize || size > len(b) {
		return nil, fmt.Errorf("ACL size %d of %d bytes", size, len(b))
	}
	var out []rawACE
	at := aclHeaderSize
	for i := 0; i < count; i++ {
		if at+4 > size {
			return nil, fmt.Errorf("entry %d beyond the ACL", i)
		}
		n := int(binary.LittleEndian.Uint16(b[at+2 : at+4]))
		if n < 4 || at+n > size {
			return nil, fmt.Errorf("entry %d of size %d beyond the ACL", i, n)
		}
		out = append(out, rawACE(bytes.Clone(b[at:at+n])))
		at += n
	}
	return out, nil
}

// encodeACL writes entries as an ACL (revision rev, or the lowest that
// holds them).
func encodeACL(rev byte, aces []rawACE) []byte {
	size := aclHeaderSize
	for _, a := range aces {
		size += len(a)
	}
	b := make([]byte, aclHeaderSize, size)
	b[0] = max(rev, aclRevision)
	binary.LittleEndian.PutUint16(b[2:4], uint16(size))
	binary.LittleEndian.PutUint16(b[4:6], uint16(len(aces)))
	for _, a := range aces {
		b = append(b, a...)
	}
	return b
}

// holds says whether an explicit entry of aces already gives what e
// does: the same type, flags and trustee, and every right of its mask.
func holds(aces []rawACE, e rawACE) bool {
	return indexOf(aces, e, func(a rawACE) bool { return a.mask()&e.mask() == e.mask() }) >= 0
}

// indexOf is the first explicit simple entry of e's type, flags and
// trustee for which also holds, or -1.
func indexOf(aces []rawACE, e rawACE, also func(rawACE) bool) int {
	for i, a := range aces {
		if a.simple() && a.flags()&inheritedACE == 0 && a.kind() == e.kind() && a.flags() == e.flags() &&
			bytes.Equal(a.sid(), e.sid()) && also(a) {
			return i
		}
	}
	return -1
}

// withACE adds e where Windows' canonical order puts it: a deny after
// the explicit denies, a grant after the explicit grants, both before
// every inherited entry.
func withACE(aces []rawACE, e rawACE) []rawACE {
	at := len(aces)
	for i, a := range aces {
		inherited := a.flags()&inheritedACE != 0
		if inherited || (e.kind() == aceDenied && a.kind() != aceDenied) {
			at = i
			break
		}
	}
	out := append(append(append([]rawACE(nil), aces[:at]...), e), aces[at:]...)
	return out
}

// withoutACE removes the first explicit entry equal to e (type, flags,
// mask and trustee), if any: the one withACE added.
func withoutACE(aces []rawACE, e rawACE) ([]rawACE, bool) {
	i := indexOf(aces, e, func(a rawACE) bool { return a.mask() == e.mask() })
	if i < 0 {
		return aces, false
	}
	return append(append([]rawACE(nil), aces[:i]...), aces[i+1:]...), true
}

// SIDBytes is the binary form of a SID written "S-1-5-21-…".
func SIDBytes(s string) ([]byte, error) {
	parts := strings.Split(s, "-")
	if len(parts) < 3 || parts[0] != "S" || parts[1] != "1" || len(parts) > 3+15 {
		return nil, fmt.Errorf("SID %q: want S-1-<authority>-<sub-authority>…, at most 15 of those", s)
	}
	auth, err := strconv.ParseUint(parts[2], 10, 48)
	if err != nil {
		return nil, fmt.Errorf("SID %q: authority: %w", s, err)
	}
	b := make([]byte, 8, 8+4*(len(parts)-3))
	b[0], b[1] = 1, byte(len(parts)-3)
	for i := 0; i < 6; i++ {
		b[2+i] = byte(auth >> (8 * (5 - i)))
	}
	for _, p := range parts[3:] {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("SID %q: sub-authority: %w", s, err)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b, nil
}

// SIDString is the "S-1-…" form of a SID's bytes.
func SIDString(b []byte) (string, error) {
	if len(b) < 8 || b[0] != 1 || len(b) != 8+4*int(b[1]) {
		return "", fmt.Errorf("not a SID: % x", b)
	}
	var auth uint64
	for i := 0; i < 6; i++ {
		auth = auth<<8 | uint64(b[2+i])
	}
	s := "S-1-" + strconv.FormatUint(auth, 10)
	for i := 8; i < len(b); i += 4 {
		s += "-" + strconv.FormatUint(uint64(binary.LittleEndian.Uint32(b[i:i+4])), 10)
	}
	return s, nil
}

// entryOf is the raw entry of a plan's ACE for the trustee sid, on a
// directory (dir) or a file: on a directory an inherited ACE is
// inherited by all beneath it.
func entryOf(a ACE, sid []byte, dir bool) rawACE {
	kind, flags := uint8(aceAllowed), uint8(0)
	if a.Deny {
		kind = aceDenied
	}
	if a.Inherited && dir {
		flags = objectInherit | containerInherit
	}
	return newACE(kind, flags, a.Mask, sid)
}
