package winsec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The one file that starts the command: a job object with the plan's
// limits, and the command in it, started suspended, assigned, then let
// go, so that not one instruction of it runs outside the job. It is
// handed its three standard handles and nothing else of srt's.

var (
	advapi32                  = windows.NewLazySystemDLL("advapi32.dll")
	procCreateRestrictedToken = advapi32.NewProc("CreateRestrictedToken")
)

// CreateRestrictedToken's flags (winnt.h).
const (
	disableMaxPrivilege = 0x1 // every privilege but SeChangeNotifyPrivilege
	writeRestricted     = 0x8 // the restricting SIDs are checked for writes only
)

// WriteRestrictedToken is this process's token made write-restricted to
// sid ("S-1-…"): a write then needs an ACE that grants it to sid as well
// as to the token's own SIDs, and every privilege but traversal is gone.
// Run as the sandbox account, with its own SID, only the plan's ACEs
// grant writes.
func WriteRestrictedToken(sid string) (windows.Token, error) {
	s, err := windows.StringToSid(sid)
	if err != nil {
		return 0, err
	}
	var self windows.Token
	if err := windows.OpenProcessToken(windows.CurrentProcess(), windows.TOKEN_DUPLICATE|windows.TOKEN_QUERY|windows.TOKEN_ASSIGN_PRIMARY, &self); err != nil {
		return 0, err
	}
	defer self.Close()
	restrict := []windows.SIDAndAttributes{{Sid: s}}
	var out windows.Token
	r, _, e := procCreateRestrictedToken.Call(uintptr(self), disableMaxPrivilege|writeRestricted, 0, 0, 0, 0,
		uintptr(len(restrict)), uintptr(unsafe.Pointer(&restrict[0])), uintptr(unsafe.Pointer(&out)))
	if r == 0 {
		return 0, fmt.Errorf("CreateRestrictedToken: %w", e)
	}
	return out, nil
}

// uiLimits are the job's UI restrictions by name.
var uiLimits = map[string]uint32{
	"DESKTOP": windows.JOB_OBJECT_UILIMIT_DESKTOP, "DISPLAYSETTINGS": windows.JOB_OBJECT_UILIMIT_DISPLAYSETTINGS,
	"EXITWINDOWS": windows.JOB_OBJECT_UILIMIT_EXITWINDOWS, "GLOBALATOMS": windows.JOB_OBJECT_UILIMIT_GLOBALATOMS,
	"HANDLES": windows.JOB_OBJECT_UILIMIT_HANDLES, "READCLIPBOARD": windows.JOB_OBJECT_UILIMIT_READCLIPBOARD,
	"SYSTEMPARAMETERS": windows.JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS, "WRITECLIPBOARD": windows.JOB_OBJECT_UILIMIT_WRITECLIPBOARD,
}

// NewJob is a job object with j's limits. Closing its handle (srt's end,
// or srt's death) ends every process in it.
func NewJob(j Job) (windows.Handle, error) {
	if !j.KillOnClose || j.Breakaway {
		return 0, errors.New("a job must kill on close and allow no breakaway")
	}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("CreateJobObject: %w", err)
	}
	var limits windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	limits.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if j.DieOnUnhandledException {
		limits.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
	}
	if j.ActiveProcesses > 0 {
		limits.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
		limits.BasicLimitInformation.ActiveProcessLimit = j.ActiveProcesses
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limits)), uint32(unsafe.Sizeof(limits))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("the job's limits: %w", err)
	}
	var ui windows.JOBOBJECT_BASIC_UI_RESTRICTIONS
	for _, name := range j.UI {
		bit, ok := uiLimits[name]
		if !ok {
			windows.CloseHandle(job)
			return 0, fmt.Errorf("unknown UI restriction %s", name)
		}
		ui.UIRestrictionsClass |= bit
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectBasicUIRestrictions,
		uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("the job's UI restrictions: %w", err)
	}
	return job, nil
}

// Command is what Start starts.
type Command struct {
	Argv []string
	Dir  string
	Env  []string // "NAME=value"
	// Stdin, Stdout and Stderr are handed over, and nothing else.
	Stdin, Stdout, Stderr *os.File
	// Token runs the command as that token (WriteRestrictedToken's);
	// 0 runs it with srt's own (tests, where the account is out of
	// reach).
	Token windows.Token
}

// Process is a started command in its job.
type Process struct {
	Pid     int
	job     windows.Handle
	process windows.Handle
}

// Start starts c in job: suspended, assigned to the job, then resumed.
func Start(c Command, job windows.Handle) (*Process, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("no command")
	}
	// The program is found here, by srt (PATH and PATHEXT, never the
	// current directory first), not by CreateProcess's own search.
	path, err := exec.LookPath(c.Argv[0])
	if err != nil {
		return nil, err
	}
	argv0, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	cmdline, err := windows.UTF16PtrFromString(windows.ComposeCommandLine(c.Argv))
	if err != nil {
		return nil, err
	}
	var dir *uint16
	if c.Dir != "" {
		if dir, err = windows.UTF16PtrFromString(c.Dir); err != nil {
			return nil, err
		}
	}
	env, err := envBlock(c.Env)
	if err != nil {
		return nil, err
	}
	// Only the standard handles are inherited (PROC_THREAD_ATTRIBUTE_
	// HANDLE_LIST), each made inheritable for the moment.
	handles := []windows.Handle{}
	for _, f := range []*os.File{c.Stdin, c.Stdout, c.Stderr} {
		if f == nil {
			continue
		}
		h := windows.Handle(f.Fd())
		if err := windows.SetHandleInformation(h, windows.HANDLE_FLAG_INHERIT, windows.HANDLE_FLAG_INHERIT); err != nil {
			return nil, fmt.Errorf("stdio: %w", err)
		}
		defer windows.SetHandleInformation(h, windows.HANDLE_FLAG_INHERIT, 0)
		if !slices.Contains(handles, h) {
			handles = append(handles, h)
		}
	}
	si := new(windows.StartupInfoEx)
	si.Cb = uint32(unsafe.Sizeof(*si))
	si.Flags = windows.STARTF_USESTDHANDLES
	si.StdInput, si.StdOutput, si.StdErr = stdHandle(c.Stdin), stdHandle(c.Stdout), stdHandle(c.Stderr)
	flags := uint32(windows.CREATE_SUSPENDED | windows.CREATE_UNICODE_ENVIRONMENT | windows.CREATE_NEW_PROCESS_GROUP)
	inherit := len(handles) > 0
	if inherit {
		list, err := windows.NewProcThreadAttributeList(1)
		if err != nil {
			return nil, err
		}
		defer list.Delete()
		if err := list.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&handles[0]), uintptr(len(handles))*unsafe.Sizeof(handles[0])); err != nil {
			return nil, err
		}
		si.ProcThreadAttributeList = list.List()
		flags |= windows.EXTENDED_STARTUPINFO_PRESENT
	}
	var pi windows.ProcessInformation
	if c.Token != 0 {
		err = windows.CreateProcessAsUser(c.Token, argv0, cmdline, nil, nil, inherit, flags, env, dir, &si.StartupInfo, &pi)
	} else {
		err = windows.CreateProcess(argv0, cmdline, nil, nil, inherit, flags, env, dir, &si.StartupInfo, &pi)
	}
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.Argv[0], err)
	}
	defer windows.CloseHandle(pi.Thread)
	if err := windows.AssignProcessToJobObject(job, pi.Process); err != nil {
		windows.TerminateProcess(pi.Process, 1)
		windows.CloseHandle(pi.Process)
		return nil, fmt.Errorf("putting %s in its job: %w", c.Argv[0], err)
	}
	if _, err := windows.ResumeThread(pi.Thread); err != nil {
		windows.TerminateProcess(pi.Process, 1)
		windows.CloseHandle(pi.Process)
		return nil, fmt.Errorf("starting %s: %w", c.Argv[0], err)
	}
	return &Process{Pid: int(pi.ProcessId), job: job, process: pi.Process}, nil
}

func stdHandle(f *os.File) windows.Handle {
	if f == nil {
		return windows.InvalidHandle
	}
	return windows.Handle(f.Fd())
}

// Wait waits for the command (not for what it left in the job) and
// returns its exit code.
func (p *Process) Wait() (uint32, error) {
	if _, err := windows.WaitForSingleObject(p.process, windows.INFINITE); err != nil {
		return 0, err
	}
	var code uint32
	if err := windows.GetExitCodeProcess(p.process, &code); err != nil {
		return 0, err
	}
	return code, nil
}

// Close ends every process left in the job, and lets the handles go.
func (p *Process) Close() error {
	windows.CloseHandle(p.process)
	return windows.CloseHandle(p.job)
}

// envBlock is env as CreateProcess wants it: "NAME=value" strings, each
// ended by a NUL, sorted by name without case, and a final NUL. A name
// given twice (in any case) keeps its last value, as os/exec does:
// Windows would read the first.
func envBlock(env []string) (*uint16, error) {
	last := map[string]int{}
	for i, kv := range env {
		last[envName(kv)] = i
	}
	var kept []string
	for i, kv := range env {
		if strings.ContainsRune(kv, 0) || !strings.Contains(kv[min(1, len(kv)):], "=") {
			return nil, fmt.Errorf("environment entry %q", kv)
		}
		if last[envName(kv)] == i {
			kept = append(kept, kv)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return envName(kept[i]) < envName(kept[j]) })
	var b []uint16
	for _, kv := range kept {
		u, err := windows.UTF16FromString(kv)
		if err != nil {
			return nil, err
		}
		b = append(b, u...)
	}
	b = append(b, 0)
	if len(b) == 1 {
		b = append(b, 0)
	}
	return &b[0], nil
}

// envName is an entry's name in upper case; a leading "=" belongs to it
// (cmd's "=C:=C:\dir" names the current directory of drive C).
func envName(kv string) string {
	if kv == "" {
		return ""
	}
	name, _, _ := strings.Cut(kv[1:], "=")
	return strings.ToUpper(kv[:1] + name)
}
