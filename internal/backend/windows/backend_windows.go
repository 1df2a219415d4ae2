// Package windows is srt's Windows backend, an alpha: the glue between
// the facade's one backend interface (internal/backend) and package
// winsec. Today it is the one-time install of what Windows sandboxing
// needs; a session and its runs are refused, as on a system without a
// backend, until its launch is written (issue #35, point 2).
package windows

import (
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/winsec"
)

// New is the Windows backend of h's session.
func New(h backend.Host) backend.Backend { return windowsBackend{backend.Unsupported()} }

// windowsBackend installs; everything else it refuses.
type windowsBackend struct{ backend.Backend }

var _ backend.Installer = windowsBackend{}

// Install makes what Windows sandboxing needs once, from an elevated
// prompt: the sandbox account (account, or the default), its group, and
// its DPAPI-protected password. Run again it changes nothing; with force
// the account gets a new password.
func (windowsBackend) Install(account string, force bool) error {
	return winsec.InstallSandbox(winsec.InstallOptions{Account: account, Force: force})
}

// Uninstall removes what Install made.
func (windowsBackend) Uninstall() error { return winsec.UninstallSandbox() }
