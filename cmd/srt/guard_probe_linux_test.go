package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// raceProbe races the path guard from inside the sandbox, in dir: one
// thread keeps changing a path (its bytes in memory, or a symlink or
// directory on the disk) between a harmless spelling and a protected
// one, while others make, rename, link and open through it. It prints
// how many calls it made; the test looks from outside for what must not
// be there.
func raceProbe(dir string, d time.Duration) {
	runtime.GOMAXPROCS(4)
	if err := os.Chdir(dir); err != nil {
		fmt.Println("race:", err)
		os.Exit(1)
	}
	canary := []byte(os.Getenv("SRT_RACE_CANARY"))
	os.MkdirAll("real", 0o755)
	os.WriteFile("payload", canary, 0o644)
	// A repository's hooks directory, to aim symlinks at.
	os.MkdirAll("repo/.git/hooks", 0o755)
	var calls atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	loop := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					f()
					calls.Add(1)
				}
			}
		}()
	}
	// Bytes flipped in place: "safe_nm" and ".bashrc" are the same length.
	name := []byte("safe_nm\x00")
	loop(func() {
		copy(name, ".bashrc")
		copy(name, "safe_nm")
	})
	p := unsafe.Pointer(&name[0])
	cwd := uintptr(0xffffffffffffff9c) // AT_FDCWD
	write := func(fd int) {
		if fd >= 0 {
			unix.Write(fd, canary)
			unix.Close(fd)
		}
	}
	loop(func() {
		fd, _, _ := unix.Syscall6(unix.SYS_OPENAT, cwd, uintptr(p), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o755, 0, 0)
		write(int(fd))
		unix.Unlink("safe_nm")
	})
	loop(func() {
		unix.Syscall(unix.SYS_MKDIRAT, cwd, uintptr(p), 0o755)
		unix.Rmdir("safe_nm")
	})
	src, _ := unix.BytePtrFromString("payload")
	loop(func() {
		unix.Syscall6(unix.SYS_LINKAT, cwd, uintptr(unsafe.Pointer(src)), cwd, uintptr(p), 0, 0)
		unix.Syscall6(unix.SYS_SYMLINKAT, uintptr(unsafe.Pointer(src)), cwd, uintptr(p), 0, 0, 0)
		os.WriteFile("moved", canary, 0o644)
		mv, _ := unix.BytePtrFromString("moved")
		unix.Syscall6(unix.SYS_RENAMEAT2, cwd, uintptr(unsafe.Pointer(mv)), cwd, uintptr(p), 0, 0)
		unix.Unlink("safe_nm")
	})
	// A directory on the way swapped for a symlink to the hooks.
	os.Symlink("repo/.git/hooks", "hooks-link")
	loop(func() {
		unix.Renameat2(unix.AT_FDCWD, "real", unix.AT_FDCWD, "swap", 0)
		unix.Renameat2(unix.AT_FDCWD, "hooks-link", unix.AT_FDCWD, "swap", 0)
		unix.Renameat2(unix.AT_FDCWD, "swap", unix.AT_FDCWD, "hooks-link", 0)
		os.MkdirAll("real", 0o755)
	})
	loop(func() {
		fd, err := unix.Open("swap/pre-commit", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o755)
		if err == nil {
			write(fd)
		}
		unix.Unlink("real/pre-commit")
	})
	// A final symlink re-aimed between a harmless target and .zshrc.
	loop(func() {
		os.Remove("aim")
		os.Symlink("safe_target", "aim")
		os.Remove("aim")
		os.Symlink(".zshrc", "aim")
	})
	loop(func() {
		fd, err := unix.Open("aim", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err == nil {
			write(fd)
		}
		os.Remove("safe_target")
	})
	time.Sleep(d)
	close(stop)
	wg.Wait()
	fmt.Printf("race calls %d\n", calls.Load())
	matches, _ := filepath.Glob("*")
	fmt.Println("race left", matches)
	os.Exit(0)
}

// raceReadProbe reads, from dir, a path whose bytes another thread keeps
// flipping between open.txt and hide.env (a denyRead match the host made
// after launch), once dir/go exists; it prints what it read.
func raceReadProbe(dir string, d time.Duration) {
	runtime.GOMAXPROCS(4)
	os.Chdir(dir)
	os.WriteFile("ready", nil, 0o644)
	for i := 0; i < 500; i++ {
		if _, err := os.Stat("go"); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	name := []byte("open.txt\x00")
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				copy(name, "hide.env")
				copy(name, "open.txt")
			}
		}
	}()
	cwd := uintptr(0xffffffffffffff9c) // AT_FDCWD
	deadline := time.Now().Add(d)
	reads, seen := 0, map[string]bool{}
	buf := make([]byte, 256)
	for time.Now().Before(deadline) {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, cwd, uintptr(unsafe.Pointer(&name[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
		reads++
		if errno != 0 {
			continue
		}
		n, _ := unix.Read(int(fd), buf)
		unix.Close(int(fd))
		seen[string(buf[:n])] = true
	}
	close(stop)
	fmt.Printf("race reads %d\n", reads)
	for s := range seen {
		fmt.Printf("read %q\n", s)
	}
	os.Exit(0)
}
