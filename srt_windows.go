package srt

import (
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/internal/backend/unsupported"
)

// MaybeRunInit runs the sandbox's init when this process was started as
// one, and never returns then; otherwise it returns at once.
func MaybeRunInit() {} // Windows has no backend yet: no process is started as one

// newBackend refuses everything until Windows has a backend: nothing
// runs unconfined.
func newBackend(backend.Host) backend.Backend { return unsupported.New() }
