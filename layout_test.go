package srt_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layering DESIGN and README draw: the policy package makes no
// system calls of its own, nsexec does not reach into the proxies, and
// the CLI goes through the library.
func TestLayering(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("requires the go tool on PATH")
	}
	list := func(goos string, args ...string) []string {
		t.Helper()
		cmd := exec.Command(goTool, append([]string{"list"}, args...)...)
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list %v: %v", goos, args, err)
		}
		return strings.Fields(string(out))
	}
	const mod = "github.com/srt-go/srt"
	if !slices.Contains(list("linux", "-deps", "./nsexec"), "golang.org/x/sys/unix") {
		t.Fatal("go list shows no dependencies: the checks below would prove nothing")
	}
	for _, c := range []struct{ pkg, never string }{
		{"./policy", "golang.org/x/sys/unix"},
		{"./pathguard", "golang.org/x/sys/unix"},
		{"./pathguard", mod + "/policy"},
		{"./pathguard", mod + "/config"},
		{"./policy", mod + "/nsexec"},
		{"./nsexec", mod + "/proxy"},
		{"./seccomp", mod + "/nsexec"},
	} {
		for _, goos := range []string{"linux", "darwin", "windows"} {
			if slices.Contains(list(goos, "-deps", c.pkg), c.never) {
				t.Errorf("GOOS=%s: %s depends on %s", goos, c.pkg, c.never)
			}
		}
	}
	for _, imp := range list("linux", "-f", `{{join .Imports " "}}`, "./cmd/srt") {
		if strings.HasPrefix(imp, mod+"/") && !slices.Contains([]string{mod + "/config", mod + "/proxy"}, imp) {
			t.Errorf("cmd/srt imports %s: it goes through the library (srt), config and proxy only", imp)
		}
	}
}
