package pathguard

import "strings"

// The trees the command made in this run. A shell's startup files and an
// agent's or IDE's configuration are protected where the host would run
// them: in the directories that existed when the command started (home,
// the user's projects). In a tree the command made during the run — a
// clone, an unpacked tarball, a copy — they are that project's content
// (Rules.JudgeMade). The guard makes every directory the command makes,
// so it knows them by identity: a directory keeps it when renamed, and
// another directory cannot take it. A path where a directory of the
// launch was removed or moved away is never taken for the command's, even
// once a directory it made lies there: what the host would run from the
// old one must not come back there.

// ID names a directory for as long as it exists, and after: its inode
// with its birth time, where the filesystem keeps one (an inode number
// is used again). The backend reads it.
type ID struct {
	Dev, Ino uint64
	Born     [2]int64 // seconds, nanoseconds
}

// MaxMadeDirs bounds the directories remembered per sandbox; past it, the
// command's new ones are taken for the launch's (their project names
// protected), which fails safe.
const MaxMadeDirs = 1 << 20

// MadeTrees is what the guard knows of the directories the command made.
// Not safe for concurrent use: the guard judges one call at a time.
type MadeTrees struct {
	made map[ID]bool
	gone []string // paths where a directory of the launch was
}

// NewMadeTrees returns an empty record.
func NewMadeTrees() *MadeTrees { return &MadeTrees{made: map[ID]bool{}} }

// Made records a directory the command made.
func (m *MadeTrees) Made(id ID) {
	if len(m.made) < MaxMadeDirs {
		m.made[id] = true
	}
}

// IsMade reports whether the command made the directory id.
func (m *MadeTrees) IsMade(id ID) bool { return m.made[id] }

// Any reports whether the command made any directory yet.
func (m *MadeTrees) Any() bool { return len(m.made) > 0 }

// Gone is told of the directory id at full before it is removed, or has
// another moved onto it: the command's own is forgotten; where one of
// the launch was, the path is remembered.
func (m *MadeTrees) Gone(id ID, full string) {
	if m.made[id] {
		delete(m.made, id)
		return
	}
	m.remember(full)
}

// MovedAway is told of the directory id at full before it is renamed:
// one of the launch leaves its path, which is remembered; the command's
// own keeps its identity where it goes.
func (m *MadeTrees) MovedAway(id ID, full string) {
	if !m.made[id] {
		m.remember(full)
	}
}

func (m *MadeTrees) remember(full string) {
	if m.launchWasAt(full) {
		return
	}
	m.gone = append(m.gone, full)
}

// launchWasAt reports whether p lies where a directory of the launch was.
func (m *MadeTrees) launchWasAt(p string) bool {
	for _, g := range m.gone {
		if Under(p, g) {
			return true
		}
	}
	return false
}

// Anchor reports whether a name anchored at anchor (an absolute path,
// as Rules.JudgeWhere gives it), whose directory there is id (ok false
// where none is, or it cannot be read), lies in a tree the command made:
// the directory is one it made, at no path where the launch's was.
func (m *MadeTrees) Anchor(anchor string, id ID, ok bool) bool {
	return ok && len(m.made) > 0 && !m.launchWasAt(anchor) && m.made[id]
}

// OntoLaunch reports whether moving the directory from (its identity;
// fromOK false where it is none) to to would put a directory the
// command made where a directory of the launch is (there, when replaced
// says a directory is replaced at to) or was: the project's names it
// holds would land where the host runs them.
func (m *MadeTrees) OntoLaunch(from ID, fromOK bool, to string, replaced bool, there ID, thereOK bool) bool {
	if !fromOK || !m.made[from] {
		return false // not a directory of the command's
	}
	if m.launchWasAt(to) {
		return true
	}
	return replaced && thereOK && !m.made[there]
}

// Under reports whether path is base or lies beneath it (both absolute
// and clean).
func Under(path, base string) bool {
	// Without building base+"/": this runs for every directory of a walk
	// against every rule.
	return path == base || base == "/" || len(path) > len(base) && path[len(base)] == '/' && strings.HasPrefix(path, base)
}
