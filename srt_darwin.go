package srt

import (
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/internal/backend/darwin"
)

// MaybeRunInit runs the keeper or a wrap trampoline when this process was
// started as one, and never returns then; otherwise it returns at once.
func MaybeRunInit() { darwin.MaybeRunInit() }

// newBackend is the macOS backend.
func newBackend(h backend.Host) backend.Backend { return darwin.New(h) }
