package winsec

import (
	"bytes"
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
	// A protected DACL (inheriting nothing) stays protected.
	if sd, err := windows.GetNamedSecurityInfo(file, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION); err != nil {
		t.Fatal(err)
	} else if c, _, _ := sd.Control(); c&windows.SE_DACL_PROTECTED != 0 {
		t.Error("the file's DACL became protected")
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

// A DACL that inherits nothing (protected) keeps inheriting nothing
// while srt's entry is on it and after: srt's grant on its parent never
// reaches it, and the undo leaves it as it was.
func TestApplyACEsKeepsProtection(t *testing.T) {
	if underWine() {
		t.Skip("wine keeps no DACL set on a file: this test needs a real Windows")
	}
	dir := t.TempDir()
	private := filepath.Join(dir, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	sd, err := windows.GetNamedSecurityInfo(private, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, _ := sd.DACL()
	if err := windows.SetNamedSecurityInfo(private, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatal(err)
	}
	before := sddl(t, private)
	const sid = "S-1-5-21-1111-2222-3333-1001"
	done, err := ApplyACEs([]ACE{{Path: dir, Mask: Modify, Inherited: true, Why: "grant"},
		{Path: private, Deny: true, Mask: AllAccess, Inherited: true, Why: "hide"}}, sid)
	if err != nil {
		t.Fatal(err)
	}
	sidBytes, _ := SIDBytes(sid)
	granted := false
	editDACL(private, func(aces []rawACE) ([]rawACE, bool) {
		for _, a := range aces {
			granted = granted || (a.simple() && a.kind() == aceAllowed && bytes.Equal(a.sid(), sidBytes))
		}
		return aces, false
	})
	if granted {
		t.Error("the parent's grant reached a protected DACL")
	}
	if sd, _ := windows.GetNamedSecurityInfo(private, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION); sd != nil {
		if c, _, _ := sd.Control(); c&windows.SE_DACL_PROTECTED == 0 {
			t.Error("the DACL is no longer protected")
		}
	}
	if err := UndoACEs(done); err != nil {
		t.Fatal(err)
	}
	if got := sddl(t, private); got != before {
		t.Errorf("after undo %s, before %s", got, before)
	}
}
