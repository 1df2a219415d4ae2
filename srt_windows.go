package srt

import (
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/internal/backend/windows"
)

// MaybeRunInit runs the sandbox's init when this process was started as
// one, and never returns then; otherwise it returns at once.
func MaybeRunInit() {} // Windows's backend starts no process as one (yet)

// newBackend is the Windows backend: the install; until its launch is
// written, it refuses every session, so that nothing runs unconfined.
func newBackend(h backend.Host) backend.Backend { return windows.New(h) }
