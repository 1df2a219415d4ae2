//go:build srt_guardfloor

package nsexec

// guardFloor: a benchmark build whose guard answers every call the
// filter sends it at once, letting the kernel make it: what the round
// trips alone cost, the floor under any guard that judges a call in user
// space (bench/cmd/compare's "trap floor"). It judges nothing: never a
// build to run commands in.
const guardFloor = true
