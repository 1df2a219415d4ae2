//go:build !linux

package nsexec

import "github.com/srt-go/srt/policy"

// dirReader is the reader the plan's walk uses here.
var dirReader policy.DirReader = policy.OSDirs{}
