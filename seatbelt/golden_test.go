package seatbelt

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/policy"
)

var update = flag.Bool("update", false, "rewrite the golden profiles")

// Golden profiles for the settings the reference's examples use (the
// reference's profiles for them were compared by meaning; README's
// departures list what differs). The Mac's tree is testdata/mac; its
// path is cut from the text, so the profiles read as on a Mac.
func TestGoldenProfiles(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("testdata", "mac"))
	if err != nil {
		t.Fatal(err)
	}
	home, cwd := filepath.Join(root, "Users/me"), filepath.Join(root, "Users/me/proj")
	for _, tc := range []struct{ name, doc string }{
		{"minimal", `{"network":{"allowedDomains":["example.com"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`},
		{"typical", `{"network":{"allowedDomains":["github.com"],"deniedDomains":[],"allowUnixSockets":["/var/run/docker.sock"]},
			"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":["./secrets"]}}`},
		{"options", `{"network":{"allowedDomains":[],"deniedDomains":[],"allowLocalBinding":true,"allowAllUnixSockets":true,
			"allowMachLookup":["com.example.*","com.apple.foo"]},"enableWeakerNetworkIsolation":true,"allowAppleEvents":true,"allowPty":true,
			"filesystem":{"denyRead":["~/**/*.pem"],"allowRead":[],"allowWrite":["` + root + `/tmp/work"],"denyWrite":[]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, err := config.Parse([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			pol, err := policy.Build(s, policy.Env{Home: home, Cwd: cwd})
			if err != nil {
				t.Fatal(err)
			}
			n := s.Network
			p, err := Build(pol, Settings{Options: Options{Tag: "srt-GOLDEN"}, ProxyPorts: []int{54321}, LocalBinding: n.AllowLocalBinding,
				AllUnixSockets: n.AllowAllUnixSockets, UnixSockets: n.AllowUnixSockets, MachLookup: n.AllowMachLookup,
				WeakerNetworkIsolation: s.EnableWeakerNetworkIsolation, AppleEvents: s.AllowAppleEvents, Pty: s.AllowPty})
			if err != nil {
				t.Fatal(err)
			}
			// The directories above the tree's root are this checkout's.
			for i, r := range p.Rules {
				var keep []Filter
				for _, f := range r.Filters {
					if f.Kind == "literal" && policy.Under(root, f.Value) {
						continue
					}
					keep = append(keep, f)
				}
				p.Rules[i].Filters = keep
			}
			// The checkout's path, as text and as a caseless regex.
			folded := Quote(caseless(root))
			got := strings.ReplaceAll(strings.ReplaceAll(p.String(), folded[1:len(folded)-1], ""), root, "")
			// What is not of the Mac's tree but this host's (the default
			// write paths in its own home) is left out.
			var lines []string
			for _, l := range strings.Split(got, "\n") {
				if hostHome, _ := os.UserHomeDir(); hostHome != "" && strings.Contains(l, hostHome+"/") {
					continue
				}
				lines = append(lines, l)
			}
			got = strings.Join(lines, "\n")
			file := filepath.Join("testdata", "golden", tc.name+".sb")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (go test ./seatbelt -run Golden -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n%s", tc.name, file, got)
			}
			if _, err := Compile(got); err != nil {
				t.Errorf("the golden profile does not read back: %v", err)
			}
		})
	}
}
