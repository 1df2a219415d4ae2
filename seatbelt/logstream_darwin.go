//go:build darwin

package seatbelt

import (
	"bufio"
	"context"
	"os/exec"
)

// StreamDenials follows the system log for the denials of the profiles
// whose tags end in session's suffix (NewTag), until ctx is done, and
// calls f for each. It runs /usr/bin/log, the system's own reader of the
// unified log: there is no cgo-free interface to it. Built and vetted for
// darwin in CI; never run on a Mac.
func StreamDenials(ctx context.Context, session string, f func(Denial)) error {
	cmd := exec.CommandContext(ctx, LogCommand, "stream", "--style", "compact",
		"--predicate", `eventMessage ENDSWITH "_`+session+TagSuffix+`"`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		var r LogReader
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if d, ok := r.Line(sc.Text()); ok {
				f(d)
			}
		}
		cmd.Wait()
	}()
	return nil
}
