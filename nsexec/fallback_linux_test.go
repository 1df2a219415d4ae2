package nsexec

import (
	"strings"
	"testing"
)

// What the fallback lacks depends on the Landlock ABI: each kernel
// feature missing adds the guarantee it would have given.
func TestFallbackEnforcementByABI(t *testing.T) {
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
		e := fallbackEnforcement(tc.abi)
		s := e.String()
		if e.Level != "partial" || len(e.Lacks) < len(fallbackLacks) {
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
}
