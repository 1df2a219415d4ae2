package nsexec

import (
	"strconv"
	"strings"
)

// Enforcement is the level a run gets and what makes it up: "full" (the
// namespace sandbox), "partial" (the fallback, with the guarantees that do
// not hold), or "none" (srt refuses to run).
type Enforcement struct {
	Level  string   `json:"level"`
	Layers []string `json:"layers"`
	Lacks  []string `json:"lacks,omitempty"`
}

func (e Enforcement) String() string {
	s := e.Level
	if len(e.Layers) > 0 {
		s += " (" + strings.Join(e.Layers, "; ") + ")"
	}
	if len(e.Lacks) > 0 {
		s += "; does not hold: " + strings.Join(e.Lacks, "; ")
	}
	return s
}

// fullEnforcement describes the namespace sandbox with the given Landlock
// ABI (0: none) and why Landlock is off when it is.
func fullEnforcement(landlockABI int, landlockOff string) Enforcement {
	e := Enforcement{Level: "full", Layers: []string{
		"user, mount, PID, network, IPC, UTS and cgroup namespaces",
		"mount plan",
		"seccomp",
	}}
	switch {
	case landlockOff != "":
		e.Layers = append(e.Layers, "no Landlock: "+landlockOff)
	case landlockABI == 0:
		e.Layers = append(e.Layers, "no Landlock: not in this kernel")
	default:
		e.Layers = append(e.Layers, "Landlock ABI "+strconv.Itoa(landlockABI))
	}
	e.Layers = append(e.Layers, "network only through the policy proxies")
	return e
}
