package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// exhaustionChild, set in the environment, makes TestDescriptorExhaustion
// the proxy process of its parent, with the allowed target as its value.
const exhaustionChild = "SRT_PROXY_EXHAUSTION_CHILD"

// childNoFile is the child's descriptor limit: low enough to run out
// after a hundred tunnels or so.
const childNoFile = 256

// A command that takes every descriptor the proxy has, by opening idle
// tunnels until no more are answered, starves no other command and
// leaves the proxy working once they close: another command's tunnel
// moves bytes all along, the proxy answers again, through the same
// listener and another command's, and holds about as many descriptors
// as before. The proxy runs in a child process with a low descriptor
// limit and is watched from outside, through its listeners and
// /proc/<pid>/fd.
func TestDescriptorExhaustion(t *testing.T) {
	if allow := os.Getenv(exhaustionChild); allow != "" {
		serveExhaustionChild(t, allow)
		return
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("requires /proc")
	}
	port, _ := upstream(t)
	target := fmt.Sprintf("127.0.0.1:%d", port)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestDescriptorExhaustion$", "-test.count=1")
	cmd.Env = append(os.Environ(), exhaustionChild+"="+target)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close() // the child stops serving
		cmd.Wait()
		if t.Failed() {
			t.Logf("child's stderr:\n%s", stderr.String())
		}
	}()
	var ha, hb string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "serving %s %s", &ha, &hb); err == nil {
			break
		}
	}
	if hb == "" {
		t.Fatalf("the child did not start serving:\n%s", stderr.String())
	}
	fds := func() int {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	// tunnel returns a tunnel through the proxy at addr, or nil when the
	// proxy does not answer (or no longer listens).
	tunnel := func(addr string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return nil
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\n", target)
		if head, err := readHead(c); err != nil || !strings.HasPrefix(head, "HTTP/1.1 200 ") {
			c.Close()
			return nil
		}
		c.SetDeadline(time.Time{})
		return c
	}
	// Warm up both listeners with a tunnel that moves bytes, so that what
	// the first connections leave behind is in the baseline.
	for _, addr := range []string{ha, hb} {
		if c := tunnel(addr); c == nil || !echoes(t, c) {
			t.Fatalf("warm-up through %s failed", addr)
		}
	}
	time.Sleep(100 * time.Millisecond)
	base := fds()
	other := tunnel(hb) // another command's, idle until the proxy is exhausted
	if other == nil {
		t.Fatal("no tunnel through the second listener")
	}
	defer other.Close()

	// Tunnels until the proxy cannot dial, then connections that send
	// nothing, which it accepts until it cannot accept.
	var open []net.Conn
	for {
		c := tunnel(ha)
		if c == nil {
			break
		}
		open = append(open, c)
		if len(open) > childNoFile {
			t.Fatalf("%d tunnels open: the child's descriptor limit did not apply", len(open))
		}
	}
	tunnels := len(open)
	for range 16 {
		c, err := net.Dial("tcp", ha)
		if err != nil {
			break // not even listening
		}
		open = append(open, c)
	}
	if c := tunnel(ha); c != nil {
		t.Fatalf("the proxy still answers with %d descriptors open (limit %d): no exhaustion", fds(), childNoFile)
	}
	t.Logf("the proxy stopped answering after %d tunnels and %d idle connections, with %d descriptors open (baseline %d, limit %d)", tunnels, len(open)-tunnels, fds(), base, childNoFile)
	if !echoes(t, other) {
		t.Error("another command's tunnel stopped moving bytes while the proxy was out of descriptors")
	}
	for _, c := range open {
		c.Close()
	}

	for _, addr := range []string{ha, hb} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			if c := tunnel(addr); c != nil {
				if !echoes(t, c) {
					t.Errorf("the tunnel through %s after the exhaustion does not work", addr)
				}
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the proxy on %s never answered again after its descriptors ran out", addr)
			}
		}
	}
	other.Close()
	deadline := time.Now().Add(5 * time.Second)
	for fds() > base+16 {
		if time.Now().After(deadline) {
			t.Fatalf("the proxy holds %d descriptors after its tunnels closed; %d before", fds(), base)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serveExhaustionChild serves an HTTP proxy for each of two clients,
// under a low descriptor limit, until its stdin closes.
func serveExhaustionChild(t *testing.T, allow string) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = childNoFile
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	s := New(policy(t, []string{allow}, nil, nil))
	ha, _ := startFor(t, s, &Client{ID: "a"})
	hb, _ := startFor(t, s, &Client{ID: "b"})
	fmt.Printf("serving %s %s\n", ha, hb)
	io.Copy(io.Discard, os.Stdin)
}
