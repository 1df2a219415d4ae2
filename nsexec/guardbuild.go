//go:build !srt_noguard

package nsexec

// guardBuilt: this binary runs the path guard. Only a binary built with
// the tag srt_noguard, for the benchmarks that measure what the guard
// costs, lacks it; no setting turns it off.
const guardBuilt = true
