package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/srt-go/srt/config"
)

// The settings reach the inspecting proxy whole: every key of
// tlsTerminate and of the request policy.
func TestInspectionFromSettings(t *testing.T) {
	extra := filepath.Join(t.TempDir(), "extra.pem")
	os.WriteFile(extra, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600)
	doc := `{"network":{"allowedDomains":["a.example"],"deniedDomains":[],"refuseOpaqueTunnels":true,"requireHostMatch":true,
		"stripResponseHeaders":["Set-Cookie"],"allowPlaintextHeaderSet":true,"ambiguousRequestTarget":"normalize",
		"tlsTerminate":{"excludeDomains":["x.example"],"maxTunnels":5,"handshakeTimeoutMs":300,"extraCaCertPaths":["` + extra + `","/nonexistent"]}},
		"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`
	s, _, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	in, bundle, err := inspection(s.Network, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if in.CA == nil || in.MaxTunnels != 5 || in.HandshakeTimeout != 300*time.Millisecond || len(in.Exclude) != 1 || in.Exclude[0].String() != "x.example" ||
		!in.RefuseOpaque || !in.RequireHostMatch || len(in.StripResponseHeaders) != 1 || !in.AllowPlaintextHeaderSet || in.AmbiguousTarget != "normalize" {
		t.Errorf("inspection: %+v", in)
	}
	if !strings.HasPrefix(string(bundle), string(in.CA.PEM)) || strings.Contains(string(bundle), "PRIVATE KEY") {
		t.Errorf("the bundle does not start with the CA, or holds a key")
	}
	// The same settings again keep the CA: running commands trust it.
	again, _, err := inspection(s.Network, in, false)
	if err != nil || again.CA != in.CA {
		t.Errorf("a new CA for the same settings: %v", err)
	}
	// Nothing asked: no inspection, unless a filter needs one.
	plain, _, _ := config.Parse([]byte(`{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}`))
	if in, _, _ := inspection(plain.Network, nil, false); in != nil {
		t.Errorf("an inspection nobody asked for: %+v", in)
	}
	if in, _, _ := inspection(plain.Network, nil, true); in == nil || in.CA != nil {
		t.Errorf("a filter's inspection: %+v", in)
	}
}
