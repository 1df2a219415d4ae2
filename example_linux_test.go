package srt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/srt-go/srt"
	"github.com/srt-go/srt/config"
)

// A session under settings as the settings file spells them.
func ExampleNew() {
	settings, _, err := config.Parse([]byte(`{"network":{"allowedDomains":["github.com"],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	sb, err := srt.New(context.Background(), settings)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	fmt.Println(sb.Enforcement().Level)
	// Output: full
}

func ExampleSandbox_Command() {
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	out, err := sb.Command(context.Background(), "/bin/sh", "-c", "echo hello from $(id -un 2>/dev/null | wc -l) sandbox").Output()
	fmt.Printf("%s%v\n", out, err)
	// Output:
	// hello from 1 sandbox
	// <nil>
}

// Start returns once the command runs, or with what kept the sandbox
// from being built: here the working directory, which is not there.
func ExampleSandbox_Start() {
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	cmd := sb.CommandRun(context.Background(), srt.Run{Dir: "/nonexistent/project"}, "true")
	err = sb.Start(cmd)
	var se *srt.SetupError
	if errors.As(err, &se) {
		fmt.Println(se.Step, se.Path, errors.Is(err, syscall.ENOENT))
	}
	// Output: entering the working directory /nonexistent/project true
}

// A command with an id, a text for people, and a domain allowed for it
// alone; what the proxy denied it is reported under its id.
func ExampleSandbox_CommandRun() {
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	run := srt.Run{ID: "step-1", Text: "fetch the docs", AllowedDomains: []string{"docs.example"}}
	cmd := sb.CommandRun(context.Background(), run, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}\n", "http://elsewhere.example/")
	out, _ := cmd.Output()
	fmt.Print(string(out))
	for _, v := range sb.Violations("step-1") {
		if !v.Probe() { // the C library's try of a Unix socket (nscd)
			fmt.Println(v)
		}
	}
	// Output:
	// 403
	// deny network-outbound elsewhere.example:80 (host is not on the allow list)
}

// Update replaces the network lists for the next connection.
func ExampleSandbox_Update() {
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	next := config.Default()
	next.Network.AllowedDomains = []string{"*.example.com"}
	fmt.Println(sb.Update(next))
	bad := config.Default()
	bad.Network.AllowedDomains = []string{"exa mple.com"}
	fmt.Println(sb.Update(bad) != nil, sb.Settings().Network.AllowedDomains)
	// Output:
	// <nil>
	// true [*.example.com]
}

func ExampleSandbox_Violations() {
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	sb.CommandRun(context.Background(), srt.Run{ID: "probe"}, "curl", "-s", "http://blocked.example/").Run()
	for _, v := range sb.Violations("probe") {
		fmt.Println(v.Kind, v.Operation, v.Target)
	}
	// Unordered output:
	// network connect blocked.example:80
	// unix-socket socket AF_UNIX
}

// A write into a denyWrite hole: the shell's error names the file, and
// AnnotateStderr says which rule refused it.
func ExampleSandbox_AnnotateStderr() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("x"), 0o644)
	settings := config.Default()
	settings.Filesystem.AllowWrite = []config.PathEntry{{Path: dir}}
	settings.Filesystem.DenyWrite = []config.PathEntry{{Path: filepath.Join(dir, "secret.txt")}}
	sb, err := srt.New(context.Background(), settings)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	var stderr strings.Builder
	cmd := sb.CommandRun(context.Background(), srt.Run{ID: "write", Dir: dir}, "/bin/sh", "-c", "echo y > secret.txt")
	cmd.Stderr = &stderr
	cmd.Run()
	annotated := sb.AnnotateStderr("write", stderr.String())
	fmt.Println(strings.ReplaceAll(annotated[len(stderr.String()):], dir, "DIR"))
	// Output:
	// <sandbox_violations>
	// deny file-write DIR/secret.txt (Read-only file system)
	// </sandbox_violations>
}

func ExampleSandbox_Enforcement() {
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	e := sb.Enforcement()
	fmt.Println(e.Level, len(e.Lacks))
	// Output: full 0
}

func ExampleSandbox_Close() {
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sb.Close(), sb.Close())
	fmt.Println(sb.Command(context.Background(), "true").Run())
	// Output:
	// <nil> <nil>
	// srt: the sandbox is closed
}

// Wrap hands back an argv for a caller that starts processes itself.
func ExampleSandbox_Wrap() {
	sb, err := srt.New(context.Background(), config.Default())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	argv, env, err := sb.Wrap(srt.Run{ID: "wrapped"}, "/bin/sh", "-c", "echo wrapped; curl -s -o /dev/null http://nowhere.example/")
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out, err := cmd.Output()
	fmt.Printf("%s%v\n", out, err)
	for _, v := range sb.Violations("wrapped") {
		if !v.Probe() {
			fmt.Println(v)
		}
	}
	// Output:
	// wrapped
	// <nil>
	// deny network-outbound nowhere.example:80 (host is not on the allow list)
}

// MaybeRunInit comes first in main: in the sandbox's init it never
// returns; in every other process it returns at once.
func ExampleMaybeRunInit() {
	srt.MaybeRunInit()
	fmt.Println("not the init")
	// Output: not the init
}
