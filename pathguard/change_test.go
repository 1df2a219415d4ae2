package pathguard

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// A repository's config or hooks directory takes only changes that leave
// it as safe as it was; a protected file takes none.
func TestKeepsSafe(t *testing.T) {

	minimal := func(user, group, other uint16) []byte {
		b := []byte{2, 0, 0, 0}
		for _, e := range [][2]uint16{{0x01, user}, {0x04, group}, {0x20, other}} {
			b = binary.LittleEndian.AppendUint16(b, e[0])
			b = binary.LittleEndian.AppendUint16(b, e[1])
			b = binary.LittleEndian.AppendUint32(b, ^uint32(0))
		}
		return b
	}
	named := slices.Concat(minimal(7, 5, 5), []byte{2, 0, 7, 0, 0xe9, 3, 0, 0})
	for _, tc := range []struct {
		what string
		ch   Change
		n    Name
		want bool
	}{
		{"times", Change{Op: ChangeTimes}, HooksDir, true},
		{"the same owner", Change{Op: ChangeOwner, UID: 1000, GID: -1}, GitConfig, true},
		{"another owner", Change{Op: ChangeOwner, UID: 1001, GID: -1}, GitConfig, false},
		{"an unmapped owner", Change{Op: ChangeOwner, UID: -1, GID: -1, Unmapped: true}, HooksDir, false},
		{"owner execute flipped", Change{Op: ChangeMode, Mode: 0o655}, GitConfig, true},
		{"group write", Change{Op: ChangeMode, Mode: 0o775}, HooksDir, false},
		{"others write", Change{Op: ChangeMode, Mode: 0o757}, GitConfig, false},
		{"a minimal ACL", Change{Op: ChangeXattr, Name: "system.posix_acl_access", Value: minimal(7, 5, 5)}, HooksDir, true},
		{"a minimal ACL with group write", Change{Op: ChangeXattr, Name: "system.posix_acl_access", Value: minimal(7, 7, 5)}, HooksDir, false},
		{"an ACL naming a user", Change{Op: ChangeXattr, Name: "system.posix_acl_access", Value: named}, HooksDir, false},
		{"a user attribute", Change{Op: ChangeXattr, Name: "user.x", Value: minimal(7, 5, 5)}, HooksDir, false},
		{"an ACL removed", Change{Op: RemoveXattr, Name: "system.posix_acl_default"}, HooksDir, true},
		{"a protected file's times", Change{Op: ChangeTimes}, Protected, false},
		{"a protected file's mode, unchanged", Change{Op: ChangeMode, Mode: 0o755}, Protected, false},
	} {
		if got := tc.ch.KeepsSafe(tc.n, 0o755, 1000, 1000); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.what, got, tc.want)
		}
	}
}

// A metadata change, decided: a protected file takes none (refused as
// read-only), a repository's config or hooks directory a mode narrowed
// to no write for its group and others, nothing where a deny entry
// applies.
func TestDecideChange(t *testing.T) {
	d := Decider{Later: func(full string) (string, bool) { return "denyWrite", strings.HasSuffix(full, ".pem") }}
	ch := Change{Op: ChangeMode, Mode: 0o777}
	if v := d.Change("/w/.git/hooks", HooksDir, "/w/.git/hooks", &ch, 0o755, 0, 0); v.Refused() || ch.Mode != 0o755 {
		t.Errorf("a hooks directory's mode: %+v, narrowed to %o", v, ch.Mode)
	}
	ch = Change{Op: ChangeMode, Mode: 0o777}
	if v := d.Change("/w/.git/config", GitConfig, "/w/.git/config", &ch, 0o664, 0, 0); v.Refused() || ch.Mode != 0o775 {
		t.Errorf("a config already group-writable keeps that: %+v, %o", v, ch.Mode)
	}
	ch = Change{Op: ChangeOwner, UID: 5, GID: -1}
	if v := d.Change("/w/.git/config", GitConfig, "/w/.git/config", &ch, 0o644, 0, 0); v.Errno != EROFS || !strings.Contains(v.Reason, "config") {
		t.Errorf("a config given away: %+v", v)
	}
	ch = Change{Op: ChangeTimes}
	if v := d.Change("/w/.bashrc", Protected, "/w/.bashrc", &ch, 0o644, 0, 0); v.Errno != EROFS {
		t.Errorf("a protected file's times: %+v", v)
	}
	if v := d.Change("/w/k.pem", Free, "", &ch, 0o644, 0, 0); v.Errno != EACCES || !v.KernelFirst {
		t.Errorf("a deny entry's file: %+v", v)
	}
	if v := d.Change("/w/a.go", Free, "", &ch, 0o644, 0, 0); v.Refused() {
		t.Errorf("a free file: %+v", v)
	}
	if _, ok := MinimalACL([]byte{2, 0, 0}); ok {
		t.Error("a short ACL is taken for a minimal one")
	}
}
