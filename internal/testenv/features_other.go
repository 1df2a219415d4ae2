//go:build !linux

package testenv

import (
	"runtime"
	"testing"
)

// RequireUserNamespaces skips t: only Linux has them.
func RequireUserNamespaces(t testing.TB) {
	t.Helper()
	t.Skipf("requires Linux user namespaces (this is %s)", runtime.GOOS)
}
