package nsexec

import (
	"testing"

	"github.com/srt-go/srt/config"
)

// The host's /proc is bound only in a run whose level says so: the
// setting alone, with a level of full, does not.
func TestHostProcOnlyWhenReported(t *testing.T) {
	for _, c := range []struct {
		weaker, reported, want bool
	}{{false, false, false}, {true, false, false}, {false, true, false}, {true, true, true}} {
		s := &config.Settings{EnableWeakerNestedSandbox: c.weaker}
		if got := hostProcAllowed(s, Options{HostProc: c.reported}); got != c.want {
			t.Errorf("enableWeakerNestedSandbox %v, reported partial %v: bind the host's /proc %v", c.weaker, c.reported, got)
		}
	}
}
