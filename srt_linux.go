package srt

import (
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/internal/backend/linux"
)

// MaybeRunInit runs the sandbox's init when this process was started as
// one, and never returns then; otherwise it returns at once.
func MaybeRunInit() { linux.MaybeRunInit() }

// newBackend is the Linux backend; its debug log prints each run's plan
// as Plan's JSON does.
func newBackend(h backend.Host) backend.Backend { return linux.New(h, linuxPlanJSON) }
