//go:build !linux

package nsexec

import (
	"io/fs"

	"github.com/srt-go/srt/policy"
)

// dirReader is the reader the plan's walk uses here.
var dirReader policy.DirReader = policy.OSDirs{}

// inodeOf: no hard-link check of hidden files here.
var inodeOf func(fs.FileInfo) (policy.FileID, uint64, bool)
