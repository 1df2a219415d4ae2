package winsec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// The install: what an elevated `srt windows install` makes once, and
// what every session checks before it plans on it. Making the account
// is install_windows.go's; what the install is and when it fits a
// session's settings is here.

// RunDirs is where a Windows session keeps its runs' directories (each
// run's TEMP among them): a directory of this user's own under the
// system's temporary directory. The plan names the same place.
func RunDirs() string {
	name := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = filepath.Base(strings.ReplaceAll(u.Username, "\\", "/"))
	}
	return filepath.Join(os.TempDir(), "srt-"+name)
}

// SetupVersion is the version of what the install makes. A session
// refuses an install of another version: the account or filters it
// expects may not be there.
const SetupVersion = 1

// RegistryKey is where the install is recorded, under HKLM.
const RegistryKey = `SOFTWARE\sandbox-runtime`

// Install is what an install recorded.
type Install struct {
	Version int
	Account string
	Group   string
}

// InstallOptions are `srt windows install`'s options.
type InstallOptions struct {
	// Account is --sandbox-user; "" is DefaultAccount.
	Account string
	// Force makes the account again (a new password) where it exists.
	Force bool
}

// CheckAccountName refuses a name Windows would not take for a local
// account: 1 to 20 characters, none of "/\[]:;|=,+*?<>@" nor a control
// character, and not only dots and spaces.
func CheckAccountName(name string) error {
	if name == "" || len([]rune(name)) > 20 {
		return fmt.Errorf("account name %q: 1 to 20 characters", name)
	}
	if strings.Trim(name, ". ") == "" {
		return fmt.Errorf("account name %q: not only dots and spaces", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`"/\[]:;|=,+*?<>@`, r) {
			return fmt.Errorf("account name %q: %q is not allowed", name, r)
		}
	}
	return nil
}

// Fits says whether the recorded install serves a session that wants
// account: the same setup version and the same account.
func (in Install) Fits(account string) error {
	if account == "" {
		account = DefaultAccount
	}
	switch {
	case in.Version == 0:
		return errors.New("srt is not installed for Windows sandboxing: run `srt windows install` once, elevated")
	case in.Version != SetupVersion:
		return fmt.Errorf("the install is of setup version %d, this srt needs %d (reinstall required): run `srt windows install --force`, elevated", in.Version, SetupVersion)
	case !strings.EqualFold(in.Account, account):
		return fmt.Errorf("the install made the account %q, the settings want %q (windows.sandboxUser): install that one, or change the setting", in.Account, account)
	}
	return nil
}

// passwordAlphabets are the four kinds of character Windows' complexity
// rule counts; a password takes from each.
var passwordAlphabets = []string{"ABCDEFGHJKLMNPQRSTUVWXYZ", "abcdefghijkmnopqrstuvwxyz", "23456789", "!#%()*+-.:=?@^_{}~"}

// NewPassword is a random password of n characters (at least 16) from
// rand, holding every kind of character the complexity rule counts. The
// account's password is never typed: srt keeps it DPAPI-protected.
func NewPassword(rand io.Reader, n int) (string, error) {
	if n < 16 {
		n = 16
	}
	all := strings.Join(passwordAlphabets, "")
	out := make([]byte, n)
	for i := range out {
		alphabet := all
		if i < len(passwordAlphabets) {
			alphabet = passwordAlphabets[i]
		}
		c, err := pick(rand, len(alphabet))
		if err != nil {
			return "", err
		}
		out[i] = alphabet[c]
	}
	// The kinds were taken first; shuffle them into place.
	for i := len(out) - 1; i > 0; i-- {
		j, err := pick(rand, i+1)
		if err != nil {
			return "", err
		}
		out[i], out[j] = out[j], out[i]
	}
	return string(out), nil
}

// pick is a uniform choice in [0, n) from rand (n at most 256).
func pick(rand io.Reader, n int) (int, error) {
	limit := 256 - 256%n // refuse the bytes that would bias the choice
	var b [1]byte
	for {
		if _, err := io.ReadFull(rand, b[:]); err != nil {
			return 0, err
		}
		if int(b[0]) < limit {
			return int(b[0]) % n, nil
		}
	}
}
