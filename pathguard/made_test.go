package pathguard

import "testing"

// A directory the command made is its own wherever it moves, until it
// goes; a path where the launch's directory was never becomes the
// command's; a made directory may not be moved onto the launch's.
func TestMadeTrees(t *testing.T) {
	m := NewMadeTrees()
	clone, launch, other := ID{Dev: 1, Ino: 10}, ID{Dev: 1, Ino: 20}, ID{Dev: 1, Ino: 30, Born: [2]int64{5, 0}}
	if m.Any() || m.Anchor("/w/clone", clone, true) {
		t.Fatal("a fresh record knows a made directory")
	}
	m.Made(clone)
	if !m.Any() || !m.IsMade(clone) || !m.Anchor("/w/clone", clone, true) {
		t.Error("a made directory is not the command's")
	}
	if m.Anchor("/w/clone", clone, false) || m.Anchor("/w/x", launch, true) {
		t.Error("an unreadable or launch directory is taken for the command's")
	}
	// An inode number used again, with another birth: not the same.
	if m.IsMade(ID{Dev: 1, Ino: 10, Born: [2]int64{9, 9}}) {
		t.Error("a directory with the same inode and another birth is taken for the made one")
	}
	// The launch's directory moved away: its path is never the
	// command's, also beneath, even for a directory it made.
	m.MovedAway(launch, "/w/proj")
	m.Made(other)
	if m.Anchor("/w/proj", other, true) || m.Anchor("/w/proj/sub", other, true) {
		t.Error("a made directory at a path of the launch's is the command's")
	}
	if !m.Anchor("/w/projects", other, true) {
		t.Error("a sibling of a gone path is taken for it")
	}
	// The command's own moves keep their identity.
	m.MovedAway(clone, "/w/clone")
	if !m.Anchor("/w/moved", clone, true) || m.launchWasAt("/w/clone") {
		t.Error("a made directory moved lost its identity, or left a launch path behind")
	}
	// Removed: forgotten; the launch's removed: remembered once.
	m.Gone(clone, "/w/moved")
	if m.IsMade(clone) {
		t.Error("a removed made directory is remembered")
	}
	m.Gone(launch, "/w/proj/deep")
	m.Gone(ID{Ino: 99}, "/w/elsewhere")
	if len(m.gone) != 2 {
		t.Errorf("gone paths: %v", m.gone)
	}
	// Moving a made directory: onto a launch directory (replacing it),
	// or onto where one was, is refused; onto a made one or anywhere
	// new, not; a launch directory moves as it likes.
	for _, c := range []struct {
		from     ID
		fromOK   bool
		to       string
		replaced bool
		there    ID
		thereOK  bool
		want     bool
	}{
		{other, true, "/w/new", false, ID{}, false, false},
		{other, true, "/w/proj", false, ID{}, false, true},
		{other, true, "/w/proj/x", false, ID{}, false, true},
		{other, true, "/w/docs", true, launch, true, true},
		{other, true, "/w/docs", true, other, true, false},
		{other, true, "/w/docs", true, ID{}, false, false},
		{launch, true, "/w/proj", false, ID{}, false, false},
		{other, false, "/w/proj", false, ID{}, false, false},
	} {
		if got := m.OntoLaunch(c.from, c.fromOK, c.to, c.replaced, c.there, c.thereOK); got != c.want {
			t.Errorf("OntoLaunch(%v → %s, replaced %v there %v) = %v", c.from, c.to, c.replaced, c.there, got)
		}
	}
}

// The record stops growing at its bound (failing safe: a directory past
// it is taken for the launch's).
func TestMadeTreesBound(t *testing.T) {
	m := NewMadeTrees()
	for i := range MaxMadeDirs + 10 {
		m.Made(ID{Ino: uint64(i)})
	}
	if len(m.made) != MaxMadeDirs || m.IsMade(ID{Ino: MaxMadeDirs + 1}) {
		t.Errorf("%d remembered", len(m.made))
	}
}

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		p, base string
		want    bool
	}{{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/a", "/", true}, {"/", "/a", false}} {
		if Under(c.p, c.base) != c.want {
			t.Errorf("Under(%s, %s)", c.p, c.base)
		}
	}
}
