package pathguard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// A repository's index lists the paths git checks out: the host's git
// checkout -- . or git restore . writes every entry where its path says,
// trusting the file, so an index the command crafted byte by byte could
// name .git/hooks/post-checkout (written, then run) or ../x (outside the
// work tree). The guard takes an index (git writes index.lock and renames
// it over index, as for a config) only when every path in it is one git
// itself would let into an index (read-cache.c's verify_path, stricter).

// GitIndexName and SharedIndexPrefix name the files git reads entries
// from in a git directory: the index, and a split index's shared part.
const (
	GitIndexName      = "index"
	SharedIndexPrefix = "sharedindex."
)

// IsIndexName reports whether name (lower case) is one git reads index
// entries from, in a git directory.
func IsIndexName(name string) bool {
	return name == GitIndexName || strings.HasPrefix(name, SharedIndexPrefix)
}

// maxGitIndex bounds the index the guard reads and copies.
const maxGitIndex = 512 << 20

// errIndexFormat is an index the guard does not read as git would.
var errIndexFormat = errors.New("not an index the guard reads as git does")

// GitIndexSafe reports whether every path an index (or a shared index)
// holds is safe to check out, read as git reads it with the repository's
// hash size (HashSizeOf its config: 20 or 32). One the guard cannot read
// is refused. (A config that changes the hash size is judged against the
// indexes it would make git read otherwise: see the guard.)
//
// It must also be safe read with the other hash size, where it reads as
// an index there at all: the format git reads an index with is the
// repository's config's, or its common directory's, at the time git
// reads it, which a later config, commondir or worktree may change; an
// index crafted to read one way with 20-byte ids and another with 32
// must not land.
func GitIndexSafe(content []byte, hashSize int) error {
	if len(content) > maxGitIndex {
		return fmt.Errorf("an index of %d bytes is more than the guard reads", len(content))
	}
	if err := indexPaths(content, hashSize); err != nil {
		return err
	}
	other := 20
	if hashSize == 20 {
		other = 32
	}
	if err := indexPaths(content, other); err != nil && !errors.Is(err, errIndexFormat) {
		return fmt.Errorf("read with %d-byte object ids, as git would in a repository of the other object format: %v", other, err)
	}
	return nil
}

// HashSizeOf is the object id size of a repository whose config is
// content: 32 with extensions.objectFormat = sha256, else 20. A config
// the guard takes holds that key at most once, spelled plainly
// (GitConfigSafe), which is what this reads.
func HashSizeOf(config []byte) int {
	section := ""
	for _, line := range strings.Split(string(config), "\n") {
		t := strings.ToLower(strings.TrimSpace(line))
		if strings.HasPrefix(t, "[") {
			end := strings.IndexByte(t, ']')
			if end < 0 {
				continue
			}
			section, t = strings.TrimSpace(t[1:end]), strings.TrimSpace(t[end+1:])
		}
		key, value, ok := strings.Cut(t, "=")
		if ok && section == "extensions" && strings.TrimSpace(key) == "objectformat" && strings.Trim(strings.TrimSpace(value), `"`) == "sha256" {
			return 32
		}
	}
	return 20
}

// indexPaths reads an index as git's do_read_index does (entries of
// version 2, 3 or 4, then the extensions) and judges each path: those of
// the entries and of the resolve-undo extension (REUC), which git
// checkout -m puts back.
func indexPaths(b []byte, hashSize int) error {
	if len(b) < 12+hashSize || string(b[:4]) != "DIRC" {
		return errIndexFormat
	}
	version := binary.BigEndian.Uint32(b[4:])
	if version < 2 || version > 4 {
		return errIndexFormat
	}
	count := binary.BigEndian.Uint32(b[8:])
	end := len(b) - hashSize // the trailing checksum
	off := 12
	prev := ""
	type entry struct {
		name string
		mode uint32
		at   int  // where it starts
		kept bool // version 4: it keeps part of the name before it
	}
	var entries []entry
	for i := uint32(0); i < count; i++ {
		start := off
		head := 40 + hashSize + 2 // stat data, mode, object id, flags
		if off+head > end {
			return errIndexFormat
		}
		mode := binary.BigEndian.Uint32(b[off+24:])
		flags := binary.BigEndian.Uint16(b[off+40+hashSize:])
		off += head
		if flags&0x4000 != 0 { // extended flags
			if version < 3 || off+2 > end {
				return errIndexFormat
			}
			off += 2
			head += 2
		}
		var name string
		kept := false
		if version == 4 {
			// As create_from_disk: the name's length is the flags'
			// (the whole name's, kept prefix included), the suffix its
			// rest, whatever bytes it holds, and one more byte.
			strip, n := gitVarint(b[off:end])
			if n == 0 || strip > uint64(len(prev)) {
				return errIndexFormat
			}
			off += n
			keep := len(prev) - int(strip)
			length := int(flags & 0xfff)
			if length == 0xfff {
				nul := bytes.IndexByte(b[off:end], 0)
				if nul < 0 {
					return errIndexFormat
				}
				length = nul + keep
			}
			if length < keep || off+length-keep+1 > end || b[off+length-keep] != 0 {
				return errIndexFormat
			}
			name = prev[:keep] + string(b[off:off+length-keep])
			off += length - keep + 1
			kept = keep > 0
		} else {
			length := int(flags & 0xfff)
			if length == 0xfff {
				nul := bytes.IndexByte(b[off:end], 0)
				if nul < 0 {
					return errIndexFormat
				}
				length = nul
			}
			// git copies the name and one more byte, which C string
			// functions then read as part of it unless it is a NUL.
			if off+length >= end || b[off+length] != 0 {
				return errIndexFormat
			}
			name = string(b[off : off+length])
			off = start + (head+length+8)&^7
			if off > end {
				return errIndexFormat
			}
		}
		entries = append(entries, entry{name, mode, start, kept})
		prev = name
	}
	extensions := off
	var ieot []byte
	split := false
	seen := map[string]bool{}
	for off+8 <= end {
		sig := string(b[off : off+4])
		size := int(binary.BigEndian.Uint32(b[off+4:]))
		off += 8
		if size < 0 || off+size > end {
			return errIndexFormat
		}
		// git writes each once; reading, it takes the first of some
		// (IEOT) and the last of others: a second is refused.
		if seen[sig] {
			return errIndexFormat
		}
		seen[sig] = true
		switch sig {
		case "REUC":
			if err := resolveUndoPaths(b[off:off+size], hashSize); err != nil {
				return err
			}
		case "link":
			// Names come from a shared index only when one is named.
			split = size >= hashSize && bytes.Count(b[off:off+hashSize], []byte{0}) != hashSize
		case "IEOT":
			ieot = b[off : off+size]
		}
		off += size
	}
	if off != end {
		return errIndexFormat
	}
	// git reading with threads (index.threads) takes the extensions from
	// where an EOIE at the end says, and the entries in the blocks an
	// IEOT there lists, each block with no name before it: both must be
	// what was read above.
	for _, size := range []int{4 + 20, 4 + 32} {
		at := end - 8 - size
		if at >= 12 && string(b[at:at+4]) == "EOIE" && int(binary.BigEndian.Uint32(b[at+4:])) == size &&
			int(binary.BigEndian.Uint32(b[at+8:])) != extensions {
			return errIndexFormat
		}
	}
	if len(ieot) >= 4 && binary.BigEndian.Uint32(ieot) == 1 {
		next := 0
		for rest := ieot[4:]; len(rest) >= 8; rest = rest[8:] {
			at, nr := int(binary.BigEndian.Uint32(rest)), int(binary.BigEndian.Uint32(rest[4:]))
			if next >= len(entries) || entries[next].at != at || entries[next].kept || nr < 0 || nr > len(entries)-next {
				return errIndexFormat
			}
			next += nr
		}
		if next != len(entries) {
			return errIndexFormat
		}
	}
	for _, e := range entries {
		// A split index's entry that replaces one of its shared index
		// has no name: the shared index's, judged on its own, is kept
		// (not as a symlink).
		if e.name == "" && split {
			if e.mode&0o170000 == 0o120000 {
				// As a symlink, the shared entry's name would go
				// unjudged as one (.gitmodules).
				return errors.New("a split index's replacement as a symlink")
			}
			continue
		}
		if err := checkoutPath(e.name, e.mode); err != nil {
			return fmt.Errorf("entry %q: %v", e.name, err)
		}
	}
	return nil
}

// resolveUndoPaths judges the paths of a REUC extension: each a path,
// three octal modes, and an object id for each mode not zero.
func resolveUndoPaths(b []byte, hashSize int) error {
	for len(b) > 0 {
		nul := bytes.IndexByte(b, 0)
		if nul < 0 {
			return errIndexFormat
		}
		name := string(b[:nul])
		b = b[nul+1:]
		ids := 0
		for range 3 {
			nul := bytes.IndexByte(b, 0)
			if nul < 0 {
				return errIndexFormat
			}
			// git reads the mode with strtoul: only octal digits are
			// read the same by both (a "-0" is a zero to git).
			mode := string(b[:nul])
			if mode == "" || strings.Trim(mode, "01234567") != "" {
				return errIndexFormat
			}
			if strings.Trim(mode, "0") != "" {
				ids++
			}
			b = b[nul+1:]
		}
		if len(b) < ids*hashSize {
			return errIndexFormat
		}
		b = b[ids*hashSize:]
		if err := checkoutPath(name, 0o100644); err != nil {
			return fmt.Errorf("resolve-undo entry %q: %v", name, err)
		}
	}
	return nil
}

// gitVarint decodes git's offset varint (varint.c), returning its value
// and length (0 when b ends first or it overflows).
func gitVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := uint64(c & 127)
	n := 1
	for c&128 != 0 {
		if n >= len(b) || n > 9 {
			return 0, 0
		}
		val++
		c = b[n]
		n++
		val = val<<7 | uint64(c&127)
	}
	return val, n
}

// checkoutPath judges one path of an index, as verify_path would with
// core.protectNTFS and core.protectHFS on, whatever the host's config:
// relative, no empty, "." or ".." component, none that is .git in any
// spelling a filesystem may fold to it (case, trailing dots and spaces,
// an NTFS stream, the 8.3 short name), and no symlink named as one of git's own files.
// A sparse directory entry (mode 040000) ends with its slash.
func checkoutPath(name string, mode uint32) error {
	const sparseDir = 0o040000
	if mode&0o170000 == sparseDir {
		var ok bool
		if name, ok = strings.CutSuffix(name, "/"); !ok {
			return errors.New("a directory entry without its slash")
		}
	}
	if name == "" || name[0] == '/' {
		return errors.New("not a relative path")
	}
	parts := strings.Split(name, "/")
	for _, c := range parts {
		lower := strings.ToLower(c)
		switch {
		case c == "" || c == "." || c == "..":
			return errors.New("an empty, . or .. component")
		case strings.TrimRight(lower, " .") == ".git", strings.HasPrefix(lower, ".git:"), strings.HasPrefix(lower, "git~"):
			return errors.New("a component git keeps its repository in")
		case strings.ContainsRune(c, 0):
			return errors.New("a NUL byte")
		}
	}
	if mode&0o170000 == 0o120000 {
		switch strings.TrimRight(strings.ToLower(parts[len(parts)-1]), " .") {
		case ".gitmodules", ".gitattributes", ".gitignore", ".mailmap":
			return errors.New("a symlink named as one of git's own files")
		}
	}
	return nil
}
