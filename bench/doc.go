// Package bench holds the benchmarks that compare srt with running a
// command bare; bench/cmd/compare runs the same workloads side by side
// with bubblewrap and the reference srt. Run: go test -bench . -run XXX
// ./bench (see README.md here).
package bench
