//go:build !linux

package nsexec

// MaybeRun does nothing off Linux: there is no sandbox init to run.
func MaybeRun() {}
