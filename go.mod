module github.com/srt-go/srt

go 1.26.0

require (
	golang.org/x/net v0.63.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
