//go:build srt_noguard

package nsexec

// guardBuilt: a benchmark build without the path guard (see guardbuild.go).
const guardBuilt = false
