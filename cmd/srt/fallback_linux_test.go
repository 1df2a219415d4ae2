package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/srt-go/srt/landlock"

	"github.com/srt-go/srt/internal/testenv"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// noUsernsHarness makes the test binary a host without user namespaces,
// as Docker's default seccomp profile makes one: it installs a filter that
// answers clone/unshare with CLONE_NEWUSER with EPERM (and clone3, whose
// flags a filter cannot read, with ENOSYS), then executes its arguments.
// With mode "nolandlock", Landlock is missing too. With mode "docker" it
// also refuses, as that profile does for a container without
// CAP_SYS_ADMIN and CAP_SYS_PTRACE, every unshare (a thread's own
// filesystem context), process_vm_readv and _writev, pidfd_getfd and
// kcmp: the calls the guard uses where it can; .ci/docker checks the
// same in a real container.
func noUsernsHarness(mode string) {
	const (
		allow  = 0x7fff0000
		eperm  = 0x00050000 | 1
		enosys = 0x00050000 | 38
	)
	type rule struct{ nr, ret uint32 }
	landlockRet := uint32(allow)
	if mode == "nolandlock" {
		landlockRet = enosys
	}
	rules := []rule{{unix.SYS_CLONE3, enosys}, {unix.SYS_LANDLOCK_CREATE_RULESET, landlockRet}}
	if mode == "docker" {
		for _, nr := range []uint32{unix.SYS_UNSHARE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD, unix.SYS_KCMP} {
			rules = append(rules, rule{nr, eperm})
		}
	}
	prog := []bpf.Instruction{bpf.LoadAbsolute{Off: 0, Size: 4}}
	for _, r := range rules {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: r.nr, SkipFalse: 1}, bpf.RetConstant{Val: r.ret})
	}
	if mode == "norecv" || mode == "nosend" || mode == "nsnorecv" {
		// A profile that refuses srt the listener's RECV, or its SEND:
		// the guard cannot be served once the command runs.
		notif := uint32(0xc0502100) // SECCOMP_IOCTL_NOTIF_RECV
		if mode == "nosend" {
			notif = 0xc0182101 // SECCOMP_IOCTL_NOTIF_SEND
		}
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_IOCTL, SkipFalse: 3},
			bpf.LoadAbsolute{Off: 24, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: notif, SkipFalse: 1},
			bpf.RetConstant{Val: eperm},
			bpf.LoadAbsolute{Off: 0, Size: 4})
	}
	if mode == "nsnorecv" {
		// Namespaces stay allowed: the namespace sandbox runs.
		prog = append(prog, bpf.RetConstant{Val: allow})
	}
	prog = append(prog,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_CLONE, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_UNSHARE, SkipFalse: 3},
		bpf.LoadAbsolute{Off: 16, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.CLONE_NEWUSER, SkipFalse: 1},
		bpf.RetConstant{Val: eperm},
		bpf.RetConstant{Val: allow})
	raw, err := bpf.Assemble(prog)
	if err != nil {
		panic(err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// no_new_privs is a property of the thread: seccomp must be asked on
	// the thread that set it (TSYNC then carries both to the others).
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		panic(err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		panic(errno)
	}
	runtime.KeepAlive(filter)
	args := os.Args[1:]
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, noUsernsEnv+"=") {
			env = append(env, kv)
		}
	}
	err = syscall.Exec(args[0], args, env)
	fmt.Fprintln(os.Stderr, "harness exec:", err)
	os.Exit(125)
}

// harnessEnv, set to a harness mode ("docker"), makes every fallback
// test that runs on the plain harness (mode "") run on that one instead:
// .ci/run runs the fallback tests once more so.
const harnessEnv = "SRT_TEST_HARNESS"

// runNoUserns runs srt with args on a host that refuses user namespaces.
func (b *box) runNoUserns(mode string, env []string, args ...string) result {
	b.t.Helper()
	if m := os.Getenv(harnessEnv); mode == "" && m != "" {
		mode = m
	}
	exe := testExe(b.t)
	cmd := exec.Command(exe, append([]string{os.Getenv(srtEnv)}, args...)...)
	cmd.Env = append([]string{noUsernsEnv + "=" + mode, "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}, env...)
	cmd.Dir = b.W
	out, errOut, code, err := testenv.Output(cmd)
	if err != nil {
		b.t.Fatal(err)
	}
	return result{out, errOut, code}
}

// The fallback: on a host that refuses user namespaces, with
// enableWeakerNestedSandbox, srt runs the command under Landlock and
// seccomp, reports "partial", and still enforces writes, reads of denied
// trees and the network policy: a direct connection to a loopback listener
// and a UDP datagram (a DNS query) get nowhere, checked from outside.
func TestFallbackSandbox(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "~/.ssh/id_rsa")
		if _, err := exec.LookPath("curl"); err != nil {
			t.Skip("requires curl")
		}
		if r := b.runNoUserns("", nil, "doctor"); !strings.Contains(r.stdout, "-- user namespaces") || !strings.Contains(r.stdout, "with enableWeakerNestedSandbox: partial (Landlock ABI") {
			t.Fatalf("the harness does not refuse user namespaces, or the doctor does not offer the fallback: %+v", r)
		}
		if r := b.runNoUserns("nolandlock", nil, "doctor"); r.code != 1 || strings.Contains(r.stdout, "partial") {
			t.Errorf("doctor without namespaces and Landlock: %+v", r)
		}
		// The host that refuses namespaces alone (Ubuntu's AppArmor
		// restriction), and the one that also refuses what Docker's
		// default profile does.
		for _, mode := range []string{"", "docker"} {
			t.Run("harness="+mode, func(t *testing.T) { fallbackScenario(t, b, mode) })
		}

		// Without the setting, the same host gets a refusal that names it.
		r := b.runNoUserns("", nil, "-c", "touch ran")
		if r.code != 1 || !strings.Contains(r.stderr, "enableWeakerNestedSandbox") {
			t.Errorf("without enableWeakerNestedSandbox: %+v", r)
		}
		cfg := filepath.Join(filepath.Dir(b.W), "fallback.json")
		// With neither namespaces nor Landlock, nothing runs.
		r = b.runNoUserns("nolandlock", nil, "--settings", cfg, "-c", "touch ran")
		if r.code != 1 || !strings.Contains(r.stderr, "neither user namespaces nor Landlock") {
			t.Errorf("without Landlock: %+v", r)
		}
		if _, err := os.Stat(b.path("ran")); err == nil {
			t.Error("a command ran without a sandbox")
		}
	})
}

// fallbackScenario is TestFallbackSandbox's run on the harness mode.
func fallbackScenario(t *testing.T, b *box, mode string) {
	port, requests := hostHTTPServer(t)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	udpGot := make(chan string, 4)
	go func() {
		buf := make([]byte, 512)
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			udpGot <- string(buf[:n])
		}
	}()
	doc := fmt.Sprintf(`{"enableWeakerNestedSandbox":true,"network":{"allowedDomains":["127.0.0.1:%d"],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]}}`, port)
	cfg := filepath.Join(filepath.Dir(b.W), "fallback.json")
	os.WriteFile(cfg, []byte(doc), 0o644)
	outside := filepath.Join(b.H, "outside")
	// A process of the same user outside the sandbox: the command
	// must not be able to kill it (Landlock's signal scope).
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	victimDone := make(chan struct{})
	go func() { victim.Wait(); close(victimDone) }()
	defer victim.Process.Kill()
	script := strings.Join([]string{
		fmt.Sprintf("kill -9 %d; echo kill=$?", victim.Process.Pid),
		"echo ok > allowed",
		"echo no > " + outside,
		"cat " + b.path("~/.ssh/id_rsa"),
		"ls " + b.H + " >/dev/null && echo LISTED",
		fmt.Sprintf(`curl -s --noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:%d/proxied && echo`, port),
		fmt.Sprintf(`curl -s --max-time 3 --noproxy '*' http://127.0.0.1:%d/direct; echo direct=$?`, port),
		fmt.Sprintf(`echo dns-query > /dev/udp/127.0.0.1/%d; echo udp=$?`, udp.LocalAddr().(*net.UDPAddr).Port),
	}, "; ")
	os.Remove(outside)
	os.Remove(b.path("allowed"))
	r := b.runNoUserns(mode, []string{"SRT_DEBUG=1"}, "--settings", cfg, "-c", "exec bash -c '"+strings.ReplaceAll(script, "'", `'\''`)+"'")
	b.noCanary(r)
	if !strings.Contains(r.stderr, "Enforcement: partial") {
		t.Errorf("no partial enforcement reported: %q", r.stderr)
	}
	if b.read("allowed") != "ok\n" {
		t.Errorf("the allowed write failed: %q (%+v)", b.read("allowed"), r)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("a write outside allowWrite succeeded")
	}
	if !strings.Contains(r.stdout, "LISTED") || !strings.Contains(r.stdout, "hello") {
		t.Errorf("listing home or the proxied request failed: %+v", r)
	}
	if strings.Contains(r.stdout, "direct=0") || !strings.Contains(r.stdout, "udp=1") {
		t.Errorf("direct TCP or UDP got out: %+v", r)
	}
	if landlock.ABI() >= 6 {
		select {
		case <-victimDone:
			t.Errorf("the command killed a process outside the sandbox: %+v", r)
		case <-time.After(200 * time.Millisecond):
		}
	} else {
		t.Logf("signal scoping not asserted: Landlock ABI %d < 6 (listed among what the fallback lacks)", landlock.ABI())
	}
	for _, req := range requests() {
		if strings.Contains(req, "/direct") {
			t.Errorf("the loopback server saw a direct request: %q", req)
		}
	}
	select {
	case got := <-udpGot:
		t.Errorf("the UDP listener got %q", got)
	default:
	}
}

// A container whose /proc has masked paths lets no namespace mount a fresh
// /proc (the test makes one: unshare(1) and a tmpfs over /proc/acpi). srt
// refuses there and names the setting; with enableWeakerNestedSandbox the
// host's /proc is bound instead, and the rest of the sandbox holds.
func TestSandboxMaskedHostProc(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t, "~/.ssh/id_rsa")
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("requires unshare(1)")
		}
		if _, err := os.Stat("/proc/acpi"); err != nil {
			t.Skip("requires /proc/acpi to mask")
		}
		doc := `{"enableWeakerNestedSandbox":true,"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"allowWrite":[],"denyWrite":[]}}`
		cfg := filepath.Join(filepath.Dir(b.W), "weak.json")
		os.WriteFile(cfg, []byte(doc), 0o644)
		run := func(args ...string) result {
			cmd := exec.Command("unshare", append([]string{"-rm", "sh", "-c", `mount -t tmpfs x /proc/acpi && exec "$@"`, "sh", os.Getenv(srtEnv)}, args...)...)
			// TMPDIR: inside unshare -r the caller is uid 0, and the real
			// root's /tmp/srt-0 is rightly refused as not its own.
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H, "TMPDIR=" + filepath.Dir(b.W)}
			cmd.Dir = b.W
			out, errOut, code, err := testenv.Output(cmd)
			if err != nil {
				t.Fatal(err)
			}
			return result{out, errOut, code}
		}
		r := run("-c", "touch ran")
		if r.code != 1 || !strings.Contains(r.stderr, "enableWeakerNestedSandbox") {
			t.Errorf("without the setting: %+v", r)
		}
		if _, err := os.Stat(b.path("ran")); err == nil {
			t.Error("the command ran")
		}
		r = run("--settings", cfg, "-c", "cat "+b.path("~/.ssh/id_rsa")+"; touch ran; echo done")
		b.noCanary(r)
		if !strings.Contains(r.stdout, "done") {
			t.Errorf("with enableWeakerNestedSandbox: %+v", r)
		}
		if _, err := os.Stat(b.path("ran")); err == nil {
			t.Error("a write outside allowWrite succeeded")
		}
	})
}

// In the fallback the link to srt is the child's fd 4 until it confines
// itself: a --control-fd of 4 (or 3), whose slot the command finds on
// /dev/null, must not take its place.
func TestFallbackControlFDSlots(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		exe := testExe(t)
		for _, fd := range []string{"3", "4"} {
			r3, w3, _ := os.Pipe()
			r4, w4, _ := os.Pipe()
			cmd := exec.Command(exe, os.Getenv(srtEnv), "--settings", b.fallbackConfig(""), "--control-fd", fd,
				"-c", `[ "$(readlink /proc/self/fd/`+fd+`)" = /dev/null ] && echo NULL_$((1+1))`)
			cmd.Env = []string{noUsernsEnv + "=", "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + b.H}
			cmd.Dir = b.W
			cmd.ExtraFiles = []*os.File{r3, r4}
			out, errOut, code, err := testenv.Output(cmd)
			r3.Close()
			r4.Close()
			w3.Close()
			w4.Close()
			if err != nil {
				t.Fatal(err)
			}
			if code != 0 || !strings.Contains(out, "NULL_2") {
				t.Errorf("--control-fd %s: exit %d, stdout %q, stderr %q", fd, code, out, errOut)
			}
		}
	})
}

// When srt's own side fails while the command runs (here: a profile that
// refuses the listener's RECV or SEND, so no guarded call can be served;
// in the fallback and in the namespace sandbox), srt
// stops the command and exits non-zero with a message, whatever the
// command's own status would have been. Judged from outside: the
// command's later write never lands, and srt's status is 1.
func TestFallbackServingFailureStopsTheRun(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		b := newBox(t)
		cfg := filepath.Join(filepath.Dir(b.W), "fallback.json")
		os.WriteFile(cfg, []byte(`{"enableWeakerNestedSandbox":true,"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[]}}`), 0o644)
		strict := filepath.Join(filepath.Dir(b.W), "strict.json")
		os.WriteFile(strict, []byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[]}}`), 0o644)
		for _, mode := range []string{"norecv", "nosend", "nsnorecv"} {
			settings := cfg
			if mode == "nsnorecv" {
				settings = strict // the namespace sandbox: it shares the threads
			}
			// Stopped, the command never writes "later"; let run, it would.
			r := b.runNoUserns(mode, nil, "--settings", settings, "-c", "mkdir d; sleep 2; echo later > later; exit 0")
			if r.code != 1 || !strings.Contains(r.stderr, "the sandbox failed while the command ran") || !strings.Contains(r.stderr, "seccomp notification") {
				t.Errorf("%s: srt's side failed, and srt did not say so with a non-zero status: %+v", mode, r)
			}
			if _, err := os.Stat(b.path("later")); err == nil {
				t.Errorf("%s: the command went on after srt's side failed", mode)
			}

		}
	})
}

// With allowLocalBinding, the fallback's command may reach its own
// listeners on the host's loopback, and nothing else there: not a host
// service on another loopback address with the port it listens on, nor
// one that took a port after the command's listener on it closed.
// Judged by the host's listeners, which must see no connection. Both
// harnesses; both users.
func TestFallbackOwnListenersOnly(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("needs python3")
		}
		for _, mode := range []string{"", "docker"} {
			t.Run("harness="+mode, func(t *testing.T) {
				b := newBox(t)
				got := make(chan string, 8)
				serve := func(ln net.Listener) {
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						got <- c.RemoteAddr().String()
						c.Close()
					}
				}
				host, err := net.Listen("tcp4", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer host.Close()
				go serve(host)
				port := host.Addr().(*net.TCPAddr).Port
				// A free port the command listens on first, which a host
				// service takes once the command has closed it.
				probe, err := net.Listen("tcp4", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				later := probe.Addr().(*net.TCPAddr).Port
				probe.Close()
				var late net.Listener
				b.whenReady("closed", "taken", 10*time.Second, func() {
					if late, err = net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", later)); err == nil {
						go serve(late)
					}
				})
				defer func() {
					if late != nil {
						late.Close()
					}
				}()
				cfg := filepath.Join(filepath.Dir(b.W), "lb.json")
				os.WriteFile(cfg, []byte(`{"enableWeakerNestedSandbox":true,"network":{"allowLocalBinding":true,"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[]}}`), 0o644)
				script := fmt.Sprintf(`import os, socket, time
def conn(host, port, what):
    c = socket.socket()
    c.settimeout(2)
    try:
        c.connect((host, port)); print(what, "CONNECTED")
    except OSError as e:
        print(what, "refused", e.errno)
own = socket.socket(); own.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
own.bind(("127.0.0.2", %[1]d)); own.listen()
conn("127.0.0.2", %[1]d, "own")
conn("127.0.0.1", %[1]d, "other-address")
gone = socket.socket(); gone.bind(("127.0.0.1", %[2]d)); gone.listen(); gone.close()
open("closed", "w").close()
for i in range(200):
    if os.path.exists("taken"): break
    time.sleep(0.05)
conn("127.0.0.1", %[2]d, "after-close")
print("END")
`, port, later)
				b.write("lb.py", script)
				r := b.runNoUserns(mode, nil, "--settings", cfg, "-c", "python3 lb.py")
				if !strings.Contains(r.stdout, "END") {
					t.Fatalf("the script did not run: %+v", r)
				}
				if !strings.Contains(r.stdout, "own CONNECTED") {
					t.Errorf("the command could not reach its own listener: %+v", r)
				}
				if strings.Contains(r.stdout, "other-address CONNECTED") || strings.Contains(r.stdout, "after-close CONNECTED") {
					t.Errorf("the command reached a host service: %+v", r)
				}
				select {
				case from := <-got:
					t.Errorf("a host listener got a connection from %s: %+v", from, r)
				case <-time.After(100 * time.Millisecond):
				}
			})
		}
	})
}

// The files, directories and Unix sockets the guard makes for the
// command take the command's umask, whether srt's serving thread has a
// umask of its own or shares srt's (the Docker-like harness refuses
// unshare). Judged on the host; both harnesses; both users.
func TestFallbackUmask(t *testing.T) {
	testenv.BothUsers(t, []string{srtEnv}, func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("needs python3")
		}
		for _, mode := range []string{"", "docker"} {
			t.Run("harness="+mode, func(t *testing.T) {
				b := newBox(t)
				cfg := filepath.Join(filepath.Dir(b.W), "umask.json")
				os.WriteFile(cfg, []byte(`{"enableWeakerNestedSandbox":true,"network":{"allowAllUnixSockets":true,"allowedDomains":[],"deniedDomains":[]},"filesystem":{"allowWrite":["."],"denyRead":[],"denyWrite":[]}}`), 0o644)
				script := `umask 077; echo x > f077; mkdir d077; python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("s077")'
umask 002; echo x > f002; mkdir d002; python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("s002")'; echo END`
				r := b.runNoUserns(mode, nil, "--settings", cfg, "-c", script)
				if !strings.Contains(r.stdout, "END") {
					t.Fatalf("the script did not run: %+v", r)
				}
				for name, want := range map[string]os.FileMode{"f077": 0o600, "d077": 0o700, "s077": 0o700, "f002": 0o664, "d002": 0o775, "s002": 0o775} {
					fi, err := os.Lstat(b.path(name))
					if err != nil {
						t.Errorf("%s was not made: %v (%+v)", name, err, r)
						continue
					}
					if got := fi.Mode().Perm(); got != want {
						t.Errorf("%s has mode %o, want %o: the command's umask was not applied", name, got, want)
					}
				}
			})
		}
	})
}
