package environ

import (
	"slices"
	"testing"
)

func TestSetLookup(t *testing.T) {
	env := []string{"A=1", "AB=2", "A=3", "B="}
	if v, ok := Lookup(env, "A"); !ok || v != "3" {
		t.Errorf("Lookup A = %q, %v", v, ok)
	}
	if v, ok := Lookup(env, "B"); !ok || v != "" {
		t.Errorf("Lookup B = %q, %v", v, ok)
	}
	if _, ok := Lookup(env, "C"); ok {
		t.Error("Lookup C found one")
	}
	got := Set(env, "A", "4")
	if want := []string{"AB=2", "B=", "A=4"}; !slices.Equal(got, want) {
		t.Errorf("Set = %q, want %q", got, want)
	}
	if env[0] != "A=1" || len(env) != 4 {
		t.Errorf("Set changed its argument: %q", env)
	}
}
