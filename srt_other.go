//go:build !linux && !darwin && !windows

package srt

import "github.com/srt-go/srt/internal/backend"

// MaybeRunInit runs the sandbox's init when this process was started as
// one, and never returns then; otherwise it returns at once.
func MaybeRunInit() {} // no system here has a backend: no process is started as one

// newBackend refuses everything on a system srt has no backend for.
func newBackend(backend.Host) backend.Backend { return backend.Unsupported() }
