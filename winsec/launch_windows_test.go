package winsec

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The test binary is also the command's child and grandchild, by role.
const roleVar = "WINSEC_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleVar) {
	case "":
		os.Exit(m.Run())
	case "grandchild":
		time.Sleep(5 * time.Minute) // bounds a failed run
		os.Exit(0)
	case "leaves":
		g := exec.Command(os.Args[0])
		g.Env = append(os.Environ(), roleVar+"=grandchild")
		if err := g.Start(); err != nil {
			fmt.Println("no grandchild:", err)
			os.Exit(2)
		}
		fmt.Println(g.Process.Pid)
		os.Exit(3) // the grandchild is left behind
	case "srt":
		// srt: starts its keeper, passes on what the keeper prints,
		// and waits to be killed.
		k := exec.Command(os.Args[0])
		k.Env = append(os.Environ(), roleVar+"=keeper", "WINSEC_TEST_PARENT="+strconv.Itoa(os.Getpid()))
		k.Stdout, k.Stderr = os.Stdout, os.Stderr
		if err := k.Start(); err != nil {
			fmt.Println("no keeper:", err)
			os.Exit(2)
		}
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	case "keeper":
		// The keeper, watching its parent, runs a grandchild that
		// prints its pid and sleeps.
		parent, _ := strconv.Atoi(os.Getenv("WINSEC_TEST_PARENT"))
		code, err := Keep(DefaultJob(), Command{Argv: []string{os.Args[0]},
			Env: append(os.Environ(), roleVar+"=sleeper"), Stdout: os.Stdout, Stderr: os.Stderr}, parent)
		if err != nil {
			fmt.Fprintln(os.Stderr, "keeper:", err)
		}
		os.Exit(code)
	case "sleeper":
		fmt.Println(os.Getpid())
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	case "handles":
		// Writes through the handle value of a file the test holds open:
		// were that handle inherited, the file would get the bytes.
		v, _ := strconv.ParseUint(os.Getenv("WINSEC_TEST_PROBE"), 10, 64)
		var n uint32
		windows.WriteFile(windows.Handle(v), []byte("leaked"), &n, nil)
		fmt.Println("done")
		os.Exit(0)
	}
	os.Exit(2)
}

// started runs argv in a new job of the plan's limits, with stdout to a
// pipe, and returns the process and what it prints.
func started(t *testing.T, argv []string, env []string) (*Process, *bufio.Reader) {
	t.Helper()
	job, err := NewJob(DefaultJob())
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Command{Argv: argv, Env: append(os.Environ(), env...), Stdout: w, Stderr: os.Stderr}, job)
	w.Close()
	if err != nil {
		windows.CloseHandle(job)
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); r.Close() })
	return p, bufio.NewReader(r)
}

// The command's exit code comes back, and what it prints.
func TestStartExitCode(t *testing.T) {
	p, out := started(t, []string{"cmd", "/c", "echo hello& exit 7"}, nil)
	code, err := p.Wait()
	if err != nil || code != 7 {
		t.Fatalf("exit code %d, %v", code, err)
	}
	if line, _ := out.ReadString('\n'); strings.TrimSpace(line) != "hello" {
		t.Errorf("printed %q", line)
	}
}

// A grandchild the command left behind lives until the job is closed,
// and dies then.
func TestCloseKillsWhatIsLeft(t *testing.T) {
	p, out := started(t, []string{os.Args[0]}, []string{roleVar + "=leaves"})
	line, _ := out.ReadString('\n')
	pid, err := strconv.ParseUint(strings.TrimSpace(line), 10, 32)
	if err != nil {
		t.Fatalf("the grandchild's pid: %q", line)
	}
	g, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(g)
	defer windows.TerminateProcess(g, 1)
	if code, _ := p.Wait(); code != 3 {
		t.Fatalf("the command's exit code %d, want 3", code)
	}
	if ev, _ := windows.WaitForSingleObject(g, 500); ev == windows.WAIT_OBJECT_0 {
		t.Fatal("the grandchild ended with its parent: the test would prove nothing")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if ev, _ := windows.WaitForSingleObject(g, 10000); ev != windows.WAIT_OBJECT_0 {
		t.Fatal("the grandchild outlived the job")
	}
}

// Only the standard handles go in: a file srt holds open, made
// inheritable, is not among the command's handles.
func TestStartHandsOverOnlyStdio(t *testing.T) {
	f, err := os.CreateTemp("", "winsec-handle")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	h := windows.Handle(f.Fd())
	if err := windows.SetHandleInformation(h, windows.HANDLE_FLAG_INHERIT, windows.HANDLE_FLAG_INHERIT); err != nil {
		t.Fatal(err)
	}
	p, out := started(t, []string{os.Args[0]}, []string{roleVar + "=handles", "WINSEC_TEST_PROBE=" + strconv.FormatUint(uint64(h), 10)})
	p.Wait()
	rest, _ := io.ReadAll(out)
	if data, _ := os.ReadFile(f.Name()); strings.Contains(string(data), "leaked") {
		t.Errorf("the command wrote through srt's handle: %q", data)
	}
	if !strings.Contains(string(rest), "done") {
		t.Errorf("the command did not run: %q", rest)
	}
}

// The job refuses what would let a process out: no kill on close, or
// breakaway.
func TestNewJobRefusesLeaks(t *testing.T) {
	for _, j := range []Job{{KillOnClose: false}, {KillOnClose: true, Breakaway: true}} {
		if h, err := NewJob(j); err == nil {
			windows.CloseHandle(h)
			t.Errorf("%+v taken", j)
		}
	}
}

// The keeper returns the command's exit code.
func TestKeepExitCode(t *testing.T) {
	code, err := Keep(DefaultJob(), Command{Argv: []string{"cmd", "/c", "exit 5"}, Env: os.Environ()}, os.Getpid())
	if err != nil || code != 5 {
		t.Fatalf("exit code %d, %v", code, err)
	}
}

// When srt dies first (killed, so nothing of it runs after), its keeper
// ends the command's job: the command dies.
func TestKeepEndsWithSrt(t *testing.T) {
	srt := exec.Command(os.Args[0])
	srt.Env = append(os.Environ(), roleVar+"=srt")
	out, err := srt.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srt.Stderr = os.Stderr
	if err := srt.Start(); err != nil {
		t.Fatal(err)
	}
	defer srt.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	pid, err := strconv.ParseUint(strings.TrimSpace(line), 10, 32)
	if err != nil {
		t.Fatalf("the command's pid: %q", line)
	}
	cmd, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(cmd)
	defer windows.TerminateProcess(cmd, 1)
	if ev, _ := windows.WaitForSingleObject(cmd, 300); ev == windows.WAIT_OBJECT_0 {
		t.Fatal("the command ended before srt: the test would prove nothing")
	}
	srt.Process.Kill()
	srt.Wait()
	if ev, _ := windows.WaitForSingleObject(cmd, 10000); ev != windows.WAIT_OBJECT_0 {
		t.Fatal("the command outlived srt")
	}
}

// A name given twice keeps its last value, whatever its case; entries
// are sorted by name; one without "=" is refused.
func TestEnvBlock(t *testing.T) {
	b, err := envBlock([]string{"A=1", "=C:=C:\\x", "b=2", "a=3", "B=4"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p := b; *p != 0; {
		s := windows.UTF16PtrToString(p)
		got = append(got, s)
		p = (*uint16)(unsafe.Add(unsafe.Pointer(p), 2*(len(windows.StringToUTF16(s)))))
	}
	if want := []string{"=C:=C:\\x", "a=3", "B=4"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("block %q, want %q", got, want)
	}
	if _, err := envBlock([]string{"NOVALUE"}); err == nil {
		t.Error("an entry without = taken")
	}
}
