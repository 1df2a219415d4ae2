package nsexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestSetupError(t *testing.T) {
	err := setupError(StepProc, &os.PathError{Op: "mounting proc", Path: "/proc", Err: syscall.EPERM})
	if err.Path != "/proc" || err.Errno != syscall.EPERM || !strings.Contains(err.Fix, "enableWeakerNestedSandbox") {
		t.Errorf("%#v", err)
	}
	if !errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOENT) {
		t.Error("Unwrap is not the errno")
	}
	if msg := err.Error(); !strings.Contains(msg, StepProc) || !strings.Contains(msg, "operation not permitted") || !strings.Contains(msg, err.Fix) {
		t.Errorf("Error() = %q", msg)
	}
	// A wrapped SetupError keeps its own step and path.
	if again := setupError(StepRoot, fmt.Errorf("outer: %w", err)); again != err {
		t.Errorf("rewrapped: %#v", again)
	}
	// Not the kernel's: no errno, no fix, nothing to unwrap.
	plain := setupError(StepSpec, errors.New("bad spec"))
	if plain.Errno != 0 || plain.Fix != "" || plain.Unwrap() != nil || plain.Path != "" {
		t.Errorf("%#v", plain)
	}
	if setupError(StepSpec, nil) != nil {
		t.Error("no error made one")
	}
	// It crosses the link as JSON, whole.
	data, jerr := json.Marshal(err)
	if jerr != nil {
		t.Fatal(jerr)
	}
	var back SetupError
	if jerr := json.Unmarshal(data, &back); jerr != nil || back != *err {
		t.Errorf("round trip: %s -> %#v (%v)", data, back, jerr)
	}
	// The errno's own fixes.
	for _, c := range []struct {
		step  string
		errno syscall.Errno
		fix   string
	}{
		{StepWorkingDir, syscall.ENOENT, "denyRead"},
		{StepWorkingDir, syscall.EACCES, "denyRead"},
		{StepLandlock, syscall.E2BIG, "Landlock"},
		{StepProc, syscall.EBUSY, ""},
		{StepRoot, syscall.EPERM, ""},
	} {
		got := setupError(c.step, &os.PathError{Op: "x", Path: "/p", Err: c.errno})
		if (c.fix == "") != (got.Fix == "") || !strings.Contains(got.Fix, c.fix) {
			t.Errorf("%s, %v: fix %q", c.step, c.errno, got.Fix)
		}
	}
}
