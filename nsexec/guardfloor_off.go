//go:build !srt_guardfloor

package nsexec

// guardFloor: see guardfloor.go; off in every build but that benchmark's.
const guardFloor = false
