package relay

import "golang.org/x/sys/unix"

// StopUndone says whether the stop of the child pid that wait last
// reported has been ended since by a SIGCONT: acted on late, such a stop
// would stop the job again after it was told to go on. The kernel keeps
// "continued" from a SIGCONT that ends a stop until the next stop, and
// asking here leaves it kept (WNOWAIT): every stop report that the
// SIGCONT overtook reads as undone, while a stop that came after it does
// not. The child's own PID namespace and /proc play no part.
func StopUndone(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WCONTINUED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		// With nothing to tell, WNOHANG leaves the siginfo zeroed.
		return err == nil && info.Signo == int32(unix.SIGCHLD) && info.Code == cldContinued
	}
}

const cldContinued = 6 // CLD_CONTINUED, si_code of a SIGCHLD
