package relay

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A stop wait reported is undone once a SIGCONT has ended it, and stays
// so for every report the SIGCONT overtook; a stop that holds, or one
// that came after the SIGCONT, is not undone. Each stop's report is
// taken first, as the init's and the reaper's waits take it.
func TestStopUndone(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	pid := cmd.Process.Pid
	stop := func() {
		t.Helper()
		syscall.Kill(pid, syscall.SIGSTOP)
		var ws syscall.WaitStatus
		if got, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil); err != nil || got != pid || !ws.Stopped() {
			t.Fatalf("no stop reported: %v %v", err, ws)
		}
	}
	cont := func() {
		t.Helper()
		syscall.Kill(pid, syscall.SIGCONT)
		// The SIGCONT has ended the stop once the state says so.
		for i := 0; i < 500 && state(pid) == "T"; i++ {
			time.Sleep(2 * time.Millisecond)
		}
	}
	if StopUndone(pid) {
		t.Fatal("a running process that never stopped: undone")
	}
	stop()
	if StopUndone(pid) {
		t.Fatal("a stop that holds: undone")
	}
	cont()
	// Asked twice: asking leaves "continued" kept for the next report.
	if first, second := StopUndone(pid), StopUndone(pid); !first || !second {
		t.Fatalf("a stop a SIGCONT ended: undone %v, then %v", first, second)
	}
	stop()
	if StopUndone(pid) {
		t.Fatal("a stop after the SIGCONT: undone")
	}
	cont()
	stop()
	cont()
	if !StopUndone(pid) {
		t.Fatal("two stops, each ended by a SIGCONT: not undone")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if StopUndone(pid) {
		t.Fatal("a reaped child: undone")
	}
}

// state is pid's state letter in /proc.
func state(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
