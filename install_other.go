//go:build !windows

package srt

import (
	"errors"
	"runtime"
)

// InstallWindows makes what Windows sandboxing needs; there is nothing
// to make elsewhere.
func InstallWindows(string, bool) error {
	return errors.New("windows-install runs on Windows only (this is " + runtime.GOOS + ")")
}

// UninstallWindows removes what InstallWindows made.
func UninstallWindows() error {
	return errors.New("windows-uninstall runs on Windows only (this is " + runtime.GOOS + ")")
}
