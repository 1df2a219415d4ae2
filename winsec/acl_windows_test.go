package winsec

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// sddl is path's DACL in SDDL.
func sddl(t *testing.T, path string) string {
	t.Helper()
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	return sd.String()
}

// The plan's entries go on the paths (a grant inherited beneath a
// directory, a deny on a file, a deny on a directory alone), an entry a
// DACL already holds is not added again, and the undo leaves each DACL
// as it was. Checked by reading the DACLs back: whether Windows then
// enforces them is not this test's (wine stores DACLs, and does not
// enforce them).
func TestApplyACEs(t *testing.T) {
	if underWine() {
		t.Skip("wine keeps no DACL set on a file (SetNamedSecurityInfo succeeds and changes nothing): this test needs a real Windows")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	const sid = "S-1-5-21-1111-2222-3333-1001"
	beforeDir, beforeFile := sddl(t, dir), sddl(t, file)
	aces := []ACE{
		{Path: dir, Mask: Modify, Inherited: true, Why: "grant"},
		{Path: file, Deny: true, Mask: WriteRights, Inherited: true, Why: "deny a file"},
		{Path: dir, Deny: true, Mask: DeleteChild, Why: "deny the directory alone"},
	}
	done, err := ApplyACEs(aces, sid)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 3 {
		t.Fatalf("%d added", len(done))
	}
	sidBytes, _ := SIDBytes(sid)
	for _, c := range []struct {
		path string
		e    rawACE
	}{
		{dir, newACE(aceAllowed, objectInherit|containerInherit, Modify, sidBytes)},
		{file, newACE(aceDenied, 0, WriteRights, sidBytes)},
		{dir, newACE(aceDenied, 0, DeleteChild, sidBytes)},
	} {
		if !holdsOnDisk(t, c.path, c.e) {
			t.Errorf("%s: no entry % x: %s", c.path, []byte(c.e), sddl(t, c.path))
		}
	}
	again, err := ApplyACEs(aces, sid)
	if err != nil || len(again) != 0 {
		t.Errorf("applied again: %d added, %v", len(again), err)
	}
	if err := UndoACEs(done); err != nil {
		t.Fatal(err)
	}
	if got := sddl(t, dir); got != beforeDir {
		t.Errorf("directory after undo %s, before %s", got, beforeDir)
	}
	if got := sddl(t, file); got != beforeFile {
		t.Errorf("file after undo %s, before %s", got, beforeFile)
	}
}

func holdsOnDisk(t *testing.T, path string, e rawACE) bool {
	held := false
	if err := editDACL(path, func(aces []rawACE) ([]rawACE, bool) { held = holds(aces, e); return aces, false }); err != nil {
		t.Fatal(err)
	}
	return held
}

// underWine says whether the test runs under wine, whose ntdll exports
// wine_get_version.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
