package landlock

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// childEnv makes the test binary a restricted child: it applies the rules
// in the variable and then tries each operation of its arguments.
const childEnv = "SRT_TEST_LANDLOCK_RULES"

func TestMain(m *testing.M) {
	if rules := os.Getenv(childEnv); rules != "" {
		var r struct {
			Rules
			Options
		}
		if err := json.Unmarshal([]byte(rules), &r); err != nil {
			fmt.Println("bad rules:", err)
			os.Exit(2)
		}
		r.Options.Scope = true
		abi, err := Apply(r.Rules, r.Options)
		fmt.Printf("abi %d err %v\n", abi, err)
		for _, op := range os.Args[1:] {
			kind, path, _ := strings.Cut(op, ":")
			var err error
			switch kind {
			case "read":
				_, err = os.ReadFile(path)
			case "list":
				_, err = os.ReadDir(path)
			case "write":
				err = os.WriteFile(path, []byte("x"), 0o644)
			case "mkdir":
				err = os.Mkdir(path, 0o755)
			case "connect":
				var c net.Conn
				if c, err = net.DialTimeout("tcp", path, 2*time.Second); err == nil {
					c.Close()
				}
			case "listen":
				var ln net.Listener
				if ln, err = net.Listen("tcp4", path); err == nil {
					ln.Close()
				}
			}
			fmt.Printf("%s: %v\n", op, err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The layer alone, in a real process: hidden trees cannot be read, their
// ancestors can be listed, siblings read, and nothing outside the writable
// trees written. The canary is checked from outside.
func TestApplyEnforces(t *testing.T) {
	if ABI() == 0 {
		t.Skip("requires Landlock (not in this kernel, or disabled)")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"home/.ssh", "home/work", "other"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	canary := "CANARY-landlock"
	os.WriteFile(filepath.Join(root, "home/.ssh/id_rsa"), []byte(canary), 0o600)
	os.WriteFile(filepath.Join(root, "home/.bashrc"), []byte("rc"), 0o644)
	os.WriteFile(filepath.Join(root, "other/keep"), []byte("keep"), 0o644)
	rules, err := Compute(Input{
		Hidden:   []string{filepath.Join(root, "home/.ssh")},
		Writable: []string{filepath.Join(root, "home/work")},
	}, func(dir string) ([]string, map[string]bool, error) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, nil, nil
		}
		var names []string
		isDir := map[string]bool{}
		for _, e := range entries {
			names = append(names, e.Name())
			isDir[e.Name()] = e.IsDir()
		}
		return names, isDir, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(rules)
	p := func(rel string) string { return filepath.Join(root, rel) }
	exe, _ := os.Executable()
	cmd := exec.Command(exe,
		"read:"+p("home/.ssh/id_rsa"), "list:"+p("home"), "read:"+p("home/.bashrc"), "read:"+p("other/keep"),
		"write:"+p("home/work/new"), "write:"+p("other/keep"), "write:"+p("home/.bashrc"), "mkdir:"+p("other/dir"))
	cmd.Env = append(os.Environ(), childEnv+"="+string(data))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := string(out)
	if strings.Contains(got, canary) {
		t.Errorf("the canary leaked: %s", got)
	}
	want := map[string]string{
		"read:" + p("home/.ssh/id_rsa"): "permission denied",
		"list:" + p("home"):             "<nil>",
		"read:" + p("home/.bashrc"):     "<nil>",
		"read:" + p("other/keep"):       "<nil>",
		"write:" + p("home/work/new"):   "<nil>",
		"write:" + p("other/keep"):      "permission denied",
		"write:" + p("home/.bashrc"):    "permission denied",
		"mkdir:" + p("other/dir"):       "permission denied",
	}
	for op, w := range want {
		line := ""
		for _, l := range strings.Split(got, "\n") {
			if strings.HasPrefix(l, op+": ") {
				line = strings.TrimPrefix(l, op+": ")
			}
		}
		if !strings.Contains(line, w) {
			t.Errorf("%s: %q, want %q\n%s", op, line, w, got)
		}
	}
	// Checked from outside: nothing was written where the layer forbids.
	if data, _ := os.ReadFile(p("other/keep")); string(data) != "keep" {
		t.Errorf("other/keep changed: %q", data)
	}
	if _, err := os.Stat(p("other/dir")); err == nil {
		t.Error("other/dir was created")
	}
	if !strings.Contains(got, fmt.Sprintf("abi %d err <nil>", ABI())) {
		t.Errorf("applied ABI: %s", got)
	}
}

// With TCP decided (the fallback), only the listed ports can be connected
// to and nothing can be bound; a loopback listener on another port, watched
// from outside, sees no connection.
func TestApplyTCP(t *testing.T) {
	if ABI() < 4 {
		t.Skipf("requires Landlock ABI 4 for TCP rules (this kernel: %d)", ABI())
	}
	var hits [2]atomic.Int32
	var addrs [2]string
	for i := range addrs {
		// Plain TCP: Go listens with Multipath TCP by default, which
		// Landlock's port rules do not see.
		var lc net.ListenConfig
		lc.SetMultipathTCP(false)
		ln, err := lc.Listen(t.Context(), "tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		addrs[i] = ln.Addr().String()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				hits[i].Add(1)
				c.Close()
			}
		}()
	}
	_, allowedPort, _ := net.SplitHostPort(addrs[0])
	port, _ := strconv.Atoi(allowedPort)
	data, _ := json.Marshal(map[string]any{"read": []string{"/"}, "TCP": true, "ConnectTCP": []uint16{uint16(port)}})
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "connect:"+addrs[0], "connect:"+addrs[1], "listen:127.0.0.1:0")
	cmd.Env = append(os.Environ(), childEnv+"="+string(data), "GODEBUG=multipathtcp=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := string(out)
	for _, w := range []string{"connect:" + addrs[0] + ": <nil>", "connect:" + addrs[1] + ": dial tcp " + addrs[1] + ": connect: permission denied", "listen:127.0.0.1:0: listen tcp4 127.0.0.1:0: bind: permission denied"} {
		if !strings.Contains(got, w) {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
	// The accept loop may lag behind the child's connect.
	for deadline := time.Now().Add(2 * time.Second); hits[0].Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if hits[0].Load() != 1 || hits[1].Load() != 0 {
		t.Errorf("connections seen outside: allowed port %d, other port %d", hits[0].Load(), hits[1].Load())
	}
}
