// Package testenv runs tests under the identities the sandbox must work
// for: root and an unprivileged user. When the suite runs as root, a test
// body is run once more in a re-executed copy of the test binary with the
// credentials of an unprivileged account, so CI as root covers both.
package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// childEnv names the test that a re-executed binary runs as the other user.
const childEnv = "SRT_TESTENV_CHILD"

// InChild reports whether this process is a re-executed copy.
func InChild() bool { return os.Getenv(childEnv) != "" }

// BothUsers runs body in a subtest "root" and a subtest "user". The one
// matching the caller runs in this process; when the caller is root, "user"
// runs in a copy of the test binary as the unprivileged account nobody;
// when it is not, "root" is skipped with that reason. Files that the body
// needs must be created by the body, or lie in the package's testdata
// directory, which is copied for the child.
//
// keepEnv lists environment variables that the child must also see (for
// example the path of a binary built for the test, which must then be
// readable and executable by anyone).
func BothUsers(t *testing.T, keepEnv []string, body func(t *testing.T)) {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		body(t)
		return
	}
	root := os.Geteuid() == 0
	t.Run("root", func(t *testing.T) {
		if !root {
			t.Skip("requires root; run the suite as root to cover it")
		}
		body(t)
	})
	t.Run("user", func(t *testing.T) {
		if !root {
			body(t)
			return
		}
		runAsUnprivileged(t, strings.TrimSuffix(t.Name(), "/user"), keepEnv)
	})
}

// Unprivileged returns the uid and gid of the account used for the "user"
// runs.
func Unprivileged() (uid, gid uint32) {
	if u, err := user.Lookup("nobody"); err == nil {
		uid64, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid64, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return uint32(uid64), uint32(gid64)
		}
	}
	return 65534, 65534
}

func runAsUnprivileged(t *testing.T, name string, keepEnv []string) {
	if runtime.GOOS != "linux" {
		t.Skipf("re-executing as another user is implemented for Linux only, not %s", runtime.GOOS)
	}
	dir := SharedTempDir(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(exe))
	if err := copyFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyTree("testdata", filepath.Join(dir, "testdata")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	// The child's own scratch space: TMPDIR (for its t.TempDir) and HOME.
	scratch := filepath.Join(dir, "scratch")
	if err := os.Mkdir(scratch, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(scratch, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	var pattern []string
	for _, part := range strings.Split(name, "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.Command(bin, "-test.run="+strings.Join(pattern, "/"), "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{childEnv + "=" + name, "PATH=" + os.Getenv("PATH"), "HOME=" + scratch, "TMPDIR=" + scratch, "LANG=C"}
	for _, k := range keepEnv {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	// The suite's own switches (SRT_TEST_*) reach the other user's run.
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SRT_TEST_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	uid, gid := Unprivileged()
	runAs(cmd, uid, gid)
	out, err := cmd.CombinedOutput()
	text := string(out)
	switch {
	case strings.Contains(text, "--- SKIP: "+name+" "):
		t.Skipf("as uid %d: skipped:\n%s", uid, text)
	case err != nil:
		t.Fatalf("as uid %d: %v\n%s", uid, err, text)
	case !strings.Contains(text, "--- PASS: "+name+" "):
		t.Fatalf("as uid %d: the test did not run (pattern %q):\n%s", uid, strings.Join(pattern, "/"), text)
	}
	t.Logf("as uid %d:\n%s", uid, text)
}

// SharedTempDir is t.TempDir made traversable and readable by every user,
// for files an unprivileged process must reach.
func SharedTempDir(t *testing.T) string {
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "." && filepath.Dir(d) != d; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyTree copies a directory, following symlinks, world-readable.
func copyTree(src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, strings.TrimPrefix(p, src))
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return copyFile(p, target, 0o644)
	})
}

// OutputTimeout is how long Output lets a command run.
const OutputTimeout = time.Minute

// Output is combined output of a command, for assertions.
func Output(cmd *exec.Cmd) (stdout, stderr string, code int, err error) {
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	// A command that hangs is killed, and reported: a test fails rather
	// than hang the suite until go test's own timeout.
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 5 * time.Second
	}
	if err := cmd.Start(); err != nil {
		return "", "", -1, err
	}
	hung := time.AfterFunc(OutputTimeout, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	if !hung.Stop() {
		return o.String(), e.String(), -1, fmt.Errorf("%s did not end within %v (killed)", cmd.Path, OutputTimeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return o.String(), e.String(), ee.ExitCode(), nil
	}
	if err != nil {
		return o.String(), e.String(), -1, err
	}
	return o.String(), e.String(), 0, nil
}
