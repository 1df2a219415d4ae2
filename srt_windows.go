package srt

import (
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/internal/backend/windows"
)

// MaybeRunInit runs a run's keeper when this process was started as
// one, and never returns then; otherwise it returns at once.
func MaybeRunInit() { windows.MaybeRunKeeper() }

// newBackend is the Windows backend: the install; a session only in its
// test mode until the launch as the sandbox account is built, so that
// nothing runs unconfined by accident.
func newBackend(h backend.Host) backend.Backend { return windows.New(h) }
