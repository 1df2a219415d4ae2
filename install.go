package srt

import (
	"errors"
	"runtime"

	"github.com/srt-go/srt/internal/backend"
)

// InstallWindows makes what Windows sandboxing needs once, from an
// elevated prompt: the sandbox account (account, or the default), its
// group, and its DPAPI-protected password. Run again it changes nothing;
// with force the account gets a new password. Elsewhere there is nothing
// to make, and it says so.
func InstallWindows(account string, force bool) error {
	in, err := installer("windows-install")
	if err != nil {
		return err
	}
	return in.Install(account, force)
}

// UninstallWindows removes what InstallWindows made.
func UninstallWindows() error {
	in, err := installer("windows-uninstall")
	if err != nil {
		return err
	}
	return in.Uninstall()
}

// installer is this system's backend's install step (Windows's); on a
// system without one, why the subcommand name runs on Windows only.
func installer(name string) (backend.Installer, error) {
	if in, ok := newBackend(nil).(backend.Installer); ok {
		return in, nil
	}
	return nil, errors.New(name + " runs on Windows only (this is " + runtime.GOOS + ")")
}
