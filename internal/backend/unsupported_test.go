package backend

import (
	"context"
	"errors"
	"testing"

	"github.com/srt-go/srt/config"
)

// A system without a backend refuses the session and every run, naming
// the system, and reports no sandbox: nothing runs unconfined.
func TestRefusesEverything(t *testing.T) {
	b := Unsupported()
	for name, err := range map[string]error{
		"Supported": b.Supported(),
		"Start":     b.Start(config.Default()),
	} {
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
	if cmd, err := b.Command(context.Background(), Run{}, []string{"true"}); cmd != nil || !errors.Is(err, ErrUnsupported) {
		t.Errorf("Command: %v, %v", cmd, err)
	}
	if argv, err := b.Wrap(Run{}, []string{"true"}); argv != nil || !errors.Is(err, ErrUnsupported) {
		t.Errorf("Wrap: %q, %v", argv, err)
	}
	if e := b.Enforcement(config.Default()); e.Level != None {
		t.Errorf("Enforcement: %s", e)
	}
	if r := b.Doctor(); r.Enforcement.Level != None || r.Why == "" {
		t.Errorf("Doctor: %+v", r)
	}
}
