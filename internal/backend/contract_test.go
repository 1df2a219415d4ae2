package backend

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// What the fallback lacks depends on the Landlock ABI: each kernel
// feature missing adds the guarantee it would have given; the namespace
// sandbox names its Landlock layer or why it has none.
func TestLinuxEnforcement(t *testing.T) {
	for _, tc := range []struct {
		abi  int
		want []string
		not  []string
	}{
		{1, []string{"truncate(2)", "no TCP rules", "cannot scope signals"}, nil},
		{3, []string{"no TCP rules", "cannot scope signals"}, []string{"truncate(2)"}},
		{5, []string{"cannot scope signals"}, []string{"truncate(2)", "no TCP rules"}},
		{6, nil, []string{"truncate(2)", "no TCP rules", "cannot scope signals"}},
	} {
		e := LinuxEnforcement(true, "", tc.abi)
		s := e.String()
		if e.Level != Partial || len(e.Lacks) < len(fallbackLacks) {
			t.Errorf("ABI %d: %s", tc.abi, s)
		}
		for _, w := range tc.want {
			if !strings.Contains(s, w) {
				t.Errorf("ABI %d: lacks no %q: %s", tc.abi, w, s)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(s, w) {
				t.Errorf("ABI %d: lists %q: %s", tc.abi, w, s)
			}
		}
	}
	for _, tc := range []struct {
		noLandlock string
		abi        int
		want       string
	}{
		{"", 6, "Landlock ABI 6"},
		{"", 0, "no Landlock: not in this kernel"},
		{"allowNestedUserNamespaces needs mounts", 6, "no Landlock: allowNestedUserNamespaces needs mounts"},
	} {
		e := LinuxEnforcement(false, tc.noLandlock, tc.abi)
		if e.Level != Full || len(e.Lacks) != 0 || !strings.Contains(e.String(), tc.want) {
			t.Errorf("%+v: %s", tc, e)
		}
	}
}

// An UnsupportedError matches ErrUnsupported, also wrapped, and says the
// host's words.
func TestUnsupportedError(t *testing.T) {
	err := fmt.Errorf("starting: %w", &UnsupportedError{Missing: "user namespaces", Err: errors.New("cannot create the sandbox's user namespace: do this")})
	var ue *UnsupportedError
	if !errors.Is(err, ErrUnsupported) || !errors.As(err, &ue) || ue.Missing != "user namespaces" || !strings.HasSuffix(err.Error(), "do this") {
		t.Errorf("%v", err)
	}
	if got := (&UnsupportedError{Missing: "user namespaces"}).Error(); got != "no user namespaces" {
		t.Errorf("without the host's words: %q", got)
	}
}
