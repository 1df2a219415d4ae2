package proc

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A stopped process is stopped now; continued, it is not; gone, it
// cannot be told.
func TestStoppedNow(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid
	wait := func(want bool) {
		t.Helper()
		for i := 0; i < 200; i++ {
			if now, known := StoppedNow(pid); known && now == want {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("stopped never became %v", want)
	}
	wait(false)
	syscall.Kill(pid, syscall.SIGSTOP)
	wait(true)
	syscall.Kill(pid, syscall.SIGCONT)
	wait(false)
	cmd.Process.Kill()
	cmd.Wait()
	if _, known := StoppedNow(pid); known {
		t.Error("a process that is gone was told")
	}
}
