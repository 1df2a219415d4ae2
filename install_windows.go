package srt

import "github.com/srt-go/srt/winsec"

// InstallWindows makes what Windows sandboxing needs once, from an
// elevated prompt: the sandbox account (account, or the default), its
// group, and its DPAPI-protected password. Run again it changes nothing;
// with force the account gets a new password.
func InstallWindows(account string, force bool) error {
	return winsec.InstallSandbox(winsec.InstallOptions{Account: account, Force: force})
}

// UninstallWindows removes what InstallWindows made.
func UninstallWindows() error { return winsec.UninstallSandbox() }
