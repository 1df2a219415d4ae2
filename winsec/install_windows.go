package winsec

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// The one file that makes and removes the install: the local account
// and group (netapi32, called without cgo), the account's password kept
// DPAPI-protected (the installing user's scope) under a registry key only
// SYSTEM, Administrators and the installing user may read. The install
// must be run elevated by the user who then runs srt: elevated as
// another (an administrator's credentials over the shoulder), the record
// is that other user's to read.

var (
	netapi32                    = windows.NewLazySystemDLL("netapi32.dll")
	procNetUserAdd              = netapi32.NewProc("NetUserAdd")
	procNetUserSetInfo          = netapi32.NewProc("NetUserSetInfo")
	procNetUserDel              = netapi32.NewProc("NetUserDel")
	procNetLocalGroupAdd        = netapi32.NewProc("NetLocalGroupAdd")
	procNetLocalGroupAddMembers = netapi32.NewProc("NetLocalGroupAddMembers")
	procNetLocalGroupDel        = netapi32.NewProc("NetLocalGroupDel")
)

// netapi32 status codes and flags (lmerr.h, lmaccess.h, winerror.h).
const (
	nerrGroupNotFound  = 2220
	nerrUserNotFound   = 2221
	nerrGroupExists    = 2223
	nerrUserExists     = 2224
	errorNoSuchAlias   = 1376
	errorMemberInAlias = 1378
	errorAliasExists   = 1379

	userPrivUser        = 1
	ufScript            = 0x1
	ufPasswdCantChange  = 0x40
	ufDontExpirePasswd  = 0x10000
	cryptProtectNoUI    = 0x1
	registryKeyReadOnly = "D:P(A;OICI;KA;;;SY)(A;OICI;KA;;;BA)(A;OICI;KR;;;%s)"
)

type userInfo1 struct {
	name, password *uint16
	passwordAge    uint32
	priv           uint32
	homeDir        *uint16
	comment        *uint16
	flags          uint32
	scriptPath     *uint16
}

type userInfo1003 struct{ password *uint16 }

type localGroupInfo1 struct{ name, comment *uint16 }

type localGroupMembersInfo3 struct{ domainAndName *uint16 }

func netStatus(r uintptr) error {
	if r == 0 {
		return nil
	}
	return windows.Errno(r)
}

// InstallSandbox makes the account and group (elevated), or, with
// o.Force, gives an account that exists a new password; it records the
// install. Running it again changes nothing.
func InstallSandbox(o InstallOptions) error {
	account := o.Account
	if account == "" {
		account = DefaultAccount
	}
	if err := CheckAccountName(account); err != nil {
		return err
	}
	rec, _, recErr := LoadInstall()
	ours := recErr == nil && strings.EqualFold(rec.Account, account)
	if ours && rec.Fits(account) == nil && !o.Force {
		return nil
	}
	password, err := NewPassword(rand.Reader, 32)
	if err != nil {
		return err
	}
	name, _ := windows.UTF16PtrFromString(account)
	pw, _ := windows.UTF16PtrFromString(password)
	comment, _ := windows.UTF16PtrFromString("srt: runs sandboxed commands")
	info := userInfo1{name: name, password: pw, priv: userPrivUser, comment: comment, flags: ufScript | ufPasswdCantChange | ufDontExpirePasswd}
	r, _, _ := procNetUserAdd.Call(0, 1, uintptr(unsafe.Pointer(&info)), 0)
	if r == nerrUserExists {
		// Only an account this install recorded gets a new password: any
		// other of that name (an administrator's, the user's own) would
		// lose its DPAPI secrets and become the sandbox's identity.
		if !ours {
			return fmt.Errorf("an account named %s exists, and srt's install did not make it: choose another name (--sandbox-user)", account)
		}
		set := userInfo1003{password: pw}
		r, _, _ = procNetUserSetInfo.Call(0, uintptr(unsafe.Pointer(name)), 1003, uintptr(unsafe.Pointer(&set)), 0)
	}
	if err := netStatus(r); err != nil {
		return fmt.Errorf("making the account %s: %w", account, err)
	}
	group, _ := windows.UTF16PtrFromString(DefaultGroup)
	gi := localGroupInfo1{name: group, comment: comment}
	if r, _, _ := procNetLocalGroupAdd.Call(0, 1, uintptr(unsafe.Pointer(&gi)), 0); r != 0 && r != nerrGroupExists && r != errorAliasExists {
		return fmt.Errorf("making the group %s: %w", DefaultGroup, windows.Errno(r))
	}
	member := localGroupMembersInfo3{domainAndName: name}
	if r, _, _ := procNetLocalGroupAddMembers.Call(0, uintptr(unsafe.Pointer(group)), 3, uintptr(unsafe.Pointer(&member)), 1); r != 0 && r != errorMemberInAlias {
		return fmt.Errorf("putting %s in %s: %w", account, DefaultGroup, windows.Errno(r))
	}
	return record(Install{Version: SetupVersion, Account: account, Group: DefaultGroup}, password)
}

// UninstallSandbox removes the account, the group and the record; what
// is already gone is no error.
func UninstallSandbox() error {
	rec, _, _ := LoadInstall()
	account := rec.Account
	if account == "" {
		account = DefaultAccount
	}
	name, _ := windows.UTF16PtrFromString(account)
	if r, _, _ := procNetUserDel.Call(0, uintptr(unsafe.Pointer(name))); r != 0 && r != nerrUserNotFound {
		return fmt.Errorf("removing the account %s: %w", account, windows.Errno(r))
	}
	group, _ := windows.UTF16PtrFromString(DefaultGroup)
	if r, _, _ := procNetLocalGroupDel.Call(0, uintptr(unsafe.Pointer(group))); r != 0 && r != nerrGroupNotFound && r != errorNoSuchAlias {
		return fmt.Errorf("removing the group %s: %w", DefaultGroup, windows.Errno(r))
	}
	if err := registry.DeleteKey(registry.LOCAL_MACHINE, RegistryKey); err != nil && !errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		return fmt.Errorf("removing HKLM\\%s: %w", RegistryKey, err)
	}
	return nil
}

// record writes the install and the protected password, under a key
// that only SYSTEM, Administrators and this user may read.
func record(in Install, password string) error {
	blob, err := protect([]byte(password))
	if err != nil {
		return err
	}
	k, _, err := registry.CreateKey(registry.LOCAL_MACHINE, RegistryKey, registry.ALL_ACCESS)
	if err != nil {
		return fmt.Errorf("HKLM\\%s: %w", RegistryKey, err)
	}
	defer k.Close()
	if err := restrictKey(); err != nil {
		return err
	}
	for _, set := range []error{
		k.SetDWordValue("SetupVersion", uint32(in.Version)),
		k.SetStringValue("SandboxUser", in.Account),
		k.SetStringValue("Group", in.Group),
		k.SetBinaryValue("Password", blob),
	} {
		if set != nil {
			return fmt.Errorf("HKLM\\%s: %w", RegistryKey, set)
		}
	}
	return nil
}

// restrictKey gives the install's key a DACL of its own (inheritance
// off): SYSTEM and Administrators all, the installing user read.
func restrictKey() error {
	var token windows.Token
	if err := windows.OpenProcessToken(windows.CurrentProcess(), windows.TOKEN_QUERY, &token); err != nil {
		return err
	}
	defer token.Close()
	user, err := token.GetTokenUser()
	if err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString(fmt.Sprintf(registryKeyReadOnly, user.User.Sid.String()))
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	return windows.SetNamedSecurityInfo(`MACHINE\`+RegistryKey, windows.SE_REGISTRY_KEY,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
}

// LoadInstall reads the install and the account's password.
func LoadInstall() (Install, string, error) {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, RegistryKey, registry.QUERY_VALUE)
	if err != nil {
		return Install{}, "", err
	}
	defer k.Close()
	version, _, err := k.GetIntegerValue("SetupVersion")
	if err != nil {
		return Install{}, "", err
	}
	account, _, _ := k.GetStringValue("SandboxUser")
	group, _, _ := k.GetStringValue("Group")
	blob, _, err := k.GetBinaryValue("Password")
	if err != nil {
		return Install{}, "", err
	}
	password, err := unprotect(blob)
	if err != nil {
		return Install{}, "", fmt.Errorf("the sandbox account's password: %w", err)
	}
	return Install{Version: int(version), Account: account, Group: group}, string(password), nil
}

func protect(data []byte) ([]byte, error) {
	in := windows.DataBlob{Size: uint32(len(data)), Data: &data[0]}
	var out windows.DataBlob
	// The installing user's scope, not the machine's: a copy of the key
	// (a backup of the hive, a shadow copy) is of no use to anyone else.
	if err := windows.CryptProtectData(&in, nil, nil, 0, nil, cryptProtectNoUI, &out); err != nil {
		return nil, err
	}
	defer windows.LocalFree(windows.Handle(unsafe.Pointer(out.Data)))
	return append([]byte(nil), unsafe.Slice(out.Data, out.Size)...), nil
}

func unprotect(blob []byte) ([]byte, error) {
	if len(blob) == 0 {
		return nil, errors.New("empty")
	}
	in := windows.DataBlob{Size: uint32(len(blob)), Data: &blob[0]}
	var out windows.DataBlob
	if err := windows.CryptUnprotectData(&in, nil, nil, 0, nil, cryptProtectNoUI, &out); err != nil {
		return nil, err
	}
	defer windows.LocalFree(windows.Handle(unsafe.Pointer(out.Data)))
	return append([]byte(nil), unsafe.Slice(out.Data, out.Size)...), nil
}
