package winsec

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
)

// A session runs only on an install of its setup version made for the
// account it wants, and says what to run otherwise.
func TestInstallFits(t *testing.T) {
	ok := Install{Version: SetupVersion, Account: DefaultAccount, Group: DefaultGroup}
	if err := ok.Fits(""); err != nil {
		t.Errorf("the default account: %v", err)
	}
	if err := ok.Fits("SRT-SANDBOX"); err != nil {
		t.Errorf("account names ignore case: %v", err)
	}
	for _, c := range []struct {
		in      Install
		account string
		want    string
	}{
		{Install{}, "", "srt windows install"},
		{Install{Version: SetupVersion + 1, Account: DefaultAccount}, "", "reinstall required"},
		{ok, "other", "windows.sandboxUser"},
	} {
		if err := c.in.Fits(c.account); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v for %q: %v, want %q", c.in, c.account, err, c.want)
		}
	}
}

// Account names Windows would refuse are refused first.
func TestCheckAccountName(t *testing.T) {
	for _, good := range []string{"srt-sandbox", "a", "sandbox.user 2", strings.Repeat("x", 20)} {
		if err := CheckAccountName(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", 21), "...", "a/b", `a\b`, "a@b", "a\tb", "a*", "a:b"} {
		if CheckAccountName(bad) == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

// A password has the length asked (16 at least) and every kind of
// character; two are not the same; a failing source of randomness is an
// error, never a weak password.
func TestNewPassword(t *testing.T) {
	a, err := NewPassword(rand.Reader, 24)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewPassword(rand.Reader, 24)
	if len(a) != 24 || a == b {
		t.Errorf("%q, %q", a, b)
	}
	for _, alphabet := range passwordAlphabets {
		if !strings.ContainsAny(a, alphabet) {
			t.Errorf("%q has none of %q", a, alphabet)
		}
	}
	if p, _ := NewPassword(rand.Reader, 3); len(p) != 16 {
		t.Errorf("short: %q", p)
	}
	if _, err := NewPassword(bytes.NewReader(make([]byte, 5)), 24); err == nil {
		t.Error("a source that ran dry gave a password")
	}
}
