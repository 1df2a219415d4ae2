package main

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

func probe(what string) {
	switch what {
	case "unix-socket":
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		fmt.Printf("unix-socket: fd=%d err=%v\n", fd, err)
		fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		fmt.Printf("inet-socket: fd=%d err=%v\n", fd, err)
		var params [120]byte
		r, _, errno := syscall.Syscall(425, 1, uintptr(unsafe.Pointer(&params)), 0)
		fmt.Printf("io_uring_setup: r=%d err=%v\n", int(r), errno)
	}
	os.Exit(0)
}
