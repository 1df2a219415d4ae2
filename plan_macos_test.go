package srt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/testtree"
	"github.com/srt-go/srt/seatbelt"
)

// srt plan --os darwin prints, on any host, the profile a macOS run would
// get: the text reads back, and means the settings.
func TestPlanDarwin(t *testing.T) {
	w := testtree.Tree(t, "home/.ssh/id", "home/proj/a", "sock")
	doc := `{"network":{"allowedDomains":["example.com"],"deniedDomains":[],"allowUnixSockets":["` + w + `/sock"],"allowMachLookup":["com.example.*"]},
		"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]},"allowPty":true}`
	s, _, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Plan(s, PlanOptions{OS: "darwin", Dir: w + "/home/proj", Home: w + "/home"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Darwin == nil || p.Enforcement.Level != Partial || len(p.Enforcement.Lacks) == 0 {
		t.Fatalf("plan: %+v", p)
	}
	tmpdir, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(tmpdir, fmt.Sprintf("srt-%d", os.Getuid()))
	c, err := seatbelt.Compile(p.Darwin.Text)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op, path string
		want     bool
	}{
		{"file-read-data", w + "/home/.ssh/id", false},
		{"file-read-data", w + "/home/proj/a", true},
		{"file-write-data", w + "/home/proj/a", true},
		{"file-write-data", w + "/home/proj/.bashrc", false},
		{"file-write-data", w + "/home/.bashrc", false},
		{"file-write-data", w + "/home/other", false},
		// The run's own TMPDIR, as a run gets it; srt's sockets never.
		{"file-write-data", filepath.Join(base, "run-PLAN", "tmp", "x"), true},
		{"file-read-data", filepath.Join(base, "run-PLAN", "profile.sb"), false},
		{"network-outbound", filepath.Join(base, "run-x", "wrap.sock"), false},
		{"network-outbound", w + "/sock", true},
	} {
		if got := c.Allowed(tc.op, tc.path); got != tc.want {
			t.Errorf("%s %s: %v, want %v", tc.op, tc.path, got, tc.want)
		}
	}
	for _, want := range []string{`(remote unix-socket (path-literal "` + w + `/sock"))`, `(global-name-prefix "com.example.")`, "(allow pseudo-tty)"} {
		if !strings.Contains(p.Darwin.Text, want) {
			t.Errorf("the profile lacks %s", want)
		}
	}
	if !strings.Contains(p.String(), "Seatbelt profile") {
		t.Error("the plan's text has no profile")
	}
}
