package landlock

import (
	"fmt"
	"os"

	ll "github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Access rights by kind of rule. Landlock refuses directory rights on a
// file, so each path gets the set that fits what it is.
const (
	readFileRights  = llsys.AccessFSExecute | llsys.AccessFSReadFile
	readDirRights   = readFileRights | llsys.AccessFSReadDir
	writeFileRights = readFileRights | llsys.AccessFSWriteFile | llsys.AccessFSTruncate | llsys.AccessFSIoctlDev
	writeDirRights  = readDirRights | llsys.AccessFSWriteFile | llsys.AccessFSTruncate | llsys.AccessFSIoctlDev |
		llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile | llsys.AccessFSMakeChar | llsys.AccessFSMakeDir |
		llsys.AccessFSMakeReg | llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock |
		llsys.AccessFSMakeSym | llsys.AccessFSRefer
	// handled is every right the layer decides. Connecting to Unix
	// sockets by path (ABI 9) is left to the seccomp rule, which knows
	// allowUnixSockets.
	handled = writeDirRights
)

// ABI is the Landlock ABI version of the running kernel; 0 when Landlock
// is missing or disabled.
func ABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// Options add to the filesystem rules.
type Options struct {
	// Scope confines signals and abstract Unix sockets to the process's
	// own domain (ABI 6).
	Scope bool
	// TCP, when set, decides TCP (ABI 4): bind nowhere, connect only to
	// ConnectTCP ports. Landlock's port rules do not see Multipath TCP,
	// so the seccomp filter of the fallback refuses it.
	TCP        bool
	ConnectTCP []uint16
}

// Apply restricts every thread of the calling process, and what it starts,
// to r and o, as far as the kernel's Landlock ABI allows (best effort). It
// returns the ABI it used: 0 means nothing was applied. no_new_privs is
// set as a side effect.
func Apply(r Rules, o Options) (int, error) {
	abi := ABI()
	if abi == 0 {
		return 0, nil
	}
	cfg := ll.Config{HandledAccessFS: ll.AccessFSSet(handled)}
	if o.Scope {
		cfg.Scoped = ll.V6.Scoped
	}
	var rules []ll.Rule
	if o.TCP {
		cfg.HandledAccessNet = ll.AccessNetSet(llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP)
		for _, port := range o.ConnectTCP {
			rules = append(rules, ll.ConnectTCP(port))
		}
	}
	add := func(dirRights, fileRights uint64, paths []string) {
		for _, p := range paths {
			// Gone since the plan was made, now or by the time the
			// rule's path is opened: nothing to allow.
			fi, err := os.Stat(p)
			if err != nil {
				continue
			}
			rights := dirRights
			if !fi.IsDir() {
				rights = fileRights
			}
			if rights != 0 {
				rules = append(rules, ll.PathAccess(ll.AccessFSSet(rights), p).IgnoreIfMissing())
			}
		}
	}
	add(readDirRights, readFileRights, r.Read)
	add(readFileRights, readFileRights, r.ReadFile)
	add(llsys.AccessFSReadDir, 0, r.ListOnly)
	add(writeDirRights, writeFileRights, r.Write)
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return 0, fmt.Errorf("applying Landlock (ABI %d): %w", abi, err)
	}
	return abi, nil
}
