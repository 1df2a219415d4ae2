package winsec

import (
	"strconv"
	"strings"
)

// Access rights of files and directories, as Windows numbers them
// (winnt.h), so that a plan is data on any host.
const (
	fileReadData        = 0x0001 // a file's data; a directory's list
	fileWriteData       = 0x0002 // a file's data; a directory: make a file
	fileAppendData      = 0x0004 // a file: append; a directory: make a subdirectory
	fileReadEA          = 0x0008
	fileWriteEA         = 0x0010
	fileExecute         = 0x0020 // run a file; traverse a directory
	fileDeleteChild     = 0x0040 // a directory: delete any child, whatever the child's own ACL says
	fileReadAttributes  = 0x0080
	fileWriteAttributes = 0x0100
	deleteRight         = 0x0001_0000
	readControl         = 0x0002_0000
	writeDAC            = 0x0004_0000
	writeOwner          = 0x0008_0000
	synchronize         = 0x0010_0000
)

// The masks a plan uses.
const (
	// ReadExecute is icacls's RX: read, list, traverse, run.
	ReadExecute = readControl | fileReadData | fileReadAttributes | fileReadEA | fileExecute | synchronize
	// Modify is icacls's M: read, write, run and delete the object —
	// and, unlike full control, no FILE_DELETE_CHILD, which would let
	// the command delete or move away a child its own ACL protects.
	Modify = ReadExecute | fileWriteData | fileAppendData | fileWriteEA | fileWriteAttributes | deleteRight
	// WriteRights are every right that changes an object, its name or
	// its security: what a deny on a protected path takes away.
	WriteRights = fileWriteData | fileAppendData | fileWriteEA | fileWriteAttributes | fileDeleteChild | deleteRight | writeDAC | writeOwner
	// AllAccess is every file right but SYNCHRONIZE (denying that would
	// only make waits on a handle fail): what a hidden path denies.
	AllAccess = 0x000F_01FF
	// DeleteChild is FILE_DELETE_CHILD alone.
	DeleteChild = fileDeleteChild
)

// rightNames name the bits of a mask, in this order.
var rightNames = []struct {
	bit  uint32
	name string
}{
	{fileReadData, "FILE_READ_DATA"}, {fileWriteData, "FILE_WRITE_DATA"}, {fileAppendData, "FILE_APPEND_DATA"},
	{fileReadEA, "FILE_READ_EA"}, {fileWriteEA, "FILE_WRITE_EA"}, {fileExecute, "FILE_EXECUTE"},
	{fileDeleteChild, "FILE_DELETE_CHILD"}, {fileReadAttributes, "FILE_READ_ATTRIBUTES"},
	{fileWriteAttributes, "FILE_WRITE_ATTRIBUTES"}, {deleteRight, "DELETE"}, {readControl, "READ_CONTROL"},
	{writeDAC, "WRITE_DAC"}, {writeOwner, "WRITE_OWNER"}, {synchronize, "SYNCHRONIZE"},
}

// RightsString names the bits of mask, joined by "|"; bits with no name
// are written in hex.
func RightsString(mask uint32) string {
	var parts []string
	for _, r := range rightNames {
		if mask&r.bit != 0 {
			parts = append(parts, r.name)
			mask &^= r.bit
		}
	}
	if mask != 0 {
		parts = append(parts, "0x"+strings.ToUpper(strconv.FormatUint(uint64(mask), 16)))
	}
	return strings.Join(parts, "|")
}

// maskName is a short name of the plan's masks, for people.
func maskName(mask uint32) string {
	switch mask {
	case Modify:
		return "modify (icacls M: no FILE_DELETE_CHILD)"
	case ReadExecute:
		return "read and execute (icacls RX)"
	case AllAccess:
		return "all access"
	case WriteRights:
		return "every right to write, delete, rename or re-own"
	}
	return RightsString(mask)
}
