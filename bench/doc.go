// Package bench holds the benchmarks that compare srt with running a
// command bare (and, in a later issue, with the reference srt and
// bubblewrap). Run: go test -bench . -run XXX ./bench
package bench
