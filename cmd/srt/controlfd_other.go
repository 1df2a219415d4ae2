//go:build !unix

package main

import "errors"

func checkControlFD(fd int) error {
	return errors.New("inherited control descriptors are not supported on this platform")
}

func checkWritableFD(fd int) error {
	return errors.New("inherited descriptors are not supported on this platform")
}
