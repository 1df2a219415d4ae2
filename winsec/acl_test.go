package winsec

import (
	"bytes"
	"testing"
)

func mustSID(t testing.TB, s string) []byte {
	t.Helper()
	b, err := SIDBytes(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A SID's text and bytes go back and forth; malformed text is refused.
func TestSIDBytes(t *testing.T) {
	for _, s := range []string{"S-1-5-21-1111-2222-3333-1001", "S-1-1-0", "S-1-5-32-545", "S-1-16-12288"} {
		b := mustSID(t, s)
		if got, err := SIDString(b); err != nil || got != s {
			t.Errorf("%s: back as %q, %v", s, got, err)
		}
	}
	// Everyone: S-1-1-0, as Windows lays it out.
	if b := mustSID(t, "S-1-1-0"); !bytes.Equal(b, []byte{1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}) {
		t.Errorf("S-1-1-0: % x", b)
	}
	for _, s := range []string{"", "S-1", "S-2-5-1", "X-1-5-1", "S-1-x-1", "S-1-5-4294967296", "S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16"} {
		if _, err := SIDBytes(s); err == nil {
			t.Errorf("%q taken", s)
		}
	}
}

// Adding puts an entry where Windows' canonical order wants it (a deny
// after the explicit denies, a grant after the explicit grants, both
// before the inherited entries); removing takes out exactly that entry;
// an entry the list already holds (same trustee, type and flags, every
// right) is recognised; entries of other types pass through untouched;
// and the bytes read back as they were written.
func TestACLEdits(t *testing.T) {
	me, other := mustSID(t, "S-1-5-21-1-2-3-1001"), mustSID(t, "S-1-5-32-545")
	opaque := rawACE{0x05, 0, 12, 0, 1, 2, 3, 4, 5, 6, 7, 8} // an object entry, kept as is
	start := []rawACE{
		newACE(aceDenied, 0, WriteRights, other),
		newACE(aceAllowed, 0, ReadExecute, other),
		opaque,
		newACE(aceAllowed, objectInherit|containerInherit|inheritedACE, AllAccess, other),
	}
	acl := encodeACL(2, start)
	got, err := parseACL(acl)
	if err != nil || len(got) != len(start) {
		t.Fatalf("parse: %v %v", got, err)
	}
	for i := range got {
		if !bytes.Equal(got[i], start[i]) {
			t.Fatalf("entry %d: % x, want % x", i, got[i], start[i])
		}
	}
	deny := newACE(aceDenied, objectInherit|containerInherit, WriteRights, me)
	grant := newACE(aceAllowed, objectInherit|containerInherit, Modify, me)
	edited := withACE(withACE(got, grant), deny)
	want := []rawACE{start[0], deny, start[1], opaque, grant, start[3]}
	// The opaque entry is explicit and not a deny: the grant goes after
	// it, before the inherited one.
	if len(edited) != len(want) {
		t.Fatalf("%d entries", len(edited))
	}
	for i := range want {
		if !bytes.Equal(edited[i], want[i]) {
			t.Errorf("entry %d: % x, want % x", i, edited[i], want[i])
		}
	}
	if !holds(edited, grant) || !holds(edited, newACE(aceAllowed, objectInherit|containerInherit, ReadExecute, me)) ||
		holds(edited, newACE(aceAllowed, 0, Modify, me)) || holds(start, grant) {
		t.Error("holds is wrong")
	}
	// The inherited entry for other is not an explicit one.
	if holds(edited, newACE(aceAllowed, objectInherit|containerInherit, AllAccess, other)) {
		t.Error("an inherited entry counts as held")
	}
	back, ok := withoutACE(edited, grant)
	back, ok2 := withoutACE(back, deny)
	if !ok || !ok2 || !bytes.Equal(encodeACL(2, back), acl) {
		t.Errorf("removed: % x\nwant % x", encodeACL(2, back), acl)
	}
	if _, ok := withoutACE(back, grant); ok {
		t.Error("removed an entry that is not there")
	}
	for _, bad := range [][]byte{nil, {2, 0, 4, 0, 0, 0, 0, 0}, {2, 0, 8, 0, 1, 0, 0, 0}, append(encodeACL(2, start)[:20:20], 0)} {
		if _, err := parseACL(bad); err == nil {
			t.Errorf("% x parsed", bad)
		}
	}
}

// Whatever bytes the OS hands over, parsing never panics, and what it
// reads writes back to the same entries.
func FuzzParseACL(f *testing.F) {
	f.Add(encodeACL(2, []rawACE{newACE(aceAllowed, 3, Modify, []byte{1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0})}))
	f.Add([]byte{2, 0, 8, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		aces, err := parseACL(b)
		if err != nil {
			return
		}
		again, err := parseACL(encodeACL(b[0], aces))
		if err != nil || len(again) != len(aces) {
			t.Fatalf("re-read: %v, %d of %d", err, len(again), len(aces))
		}
		for i := range aces {
			if !bytes.Equal(again[i], aces[i]) {
				t.Fatalf("entry %d changed", i)
			}
			if aces[i].simple() {
				_ = aces[i].mask()
				_ = aces[i].sid()
			}
		}
	})
}

// Whatever text names a SID, reading it never panics, and what it takes
// writes back the same.
func FuzzSIDBytes(f *testing.F) {
	for _, s := range []string{"S-1-5-21-1-2-3-1001", "S-1-1-0", "S-1-281474976710655-4294967295"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := SIDBytes(s)
		if err != nil {
			return
		}
		back, err := SIDString(b)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if again, _ := SIDBytes(back); !bytes.Equal(again, b) {
			t.Fatalf("%q: %q reads back otherwise", s, back)
		}
	})
}

// A plan's entry is inherited beneath a directory only, and keeps its
// type and mask.
func TestEntryOf(t *testing.T) {
	sid := mustSID(t, "S-1-5-21-1-2-3-1001")
	a := ACE{Deny: true, Mask: WriteRights, Inherited: true}
	if e := entryOf(a, sid, true); e.kind() != aceDenied || e.flags() != objectInherit|containerInherit || e.mask() != WriteRights || !bytes.Equal(e.sid(), sid) {
		t.Errorf("directory: % x", []byte(e))
	}
	if e := entryOf(a, sid, false); e.flags() != 0 {
		t.Errorf("file: flags %x", e.flags())
	}
	if e := entryOf(ACE{Mask: Modify}, sid, true); e.kind() != aceAllowed || e.flags() != 0 {
		t.Errorf("a grant on the directory alone: % x", []byte(e))
	}
}
