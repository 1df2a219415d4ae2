package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/srt-go/srt/internal/testenv"
)

// base is BASE of the spec's test cases: the smallest valid file.
func base() map[string]any {
	return map[string]any{
		"network":    map[string]any{"allowedDomains": []any{}, "deniedDomains": []any{}},
		"filesystem": map[string]any{"denyRead": []any{}, "allowWrite": []any{}, "denyWrite": []any{}},
	}
}

// with returns base() with the dotted key set to v (nil deletes it).
func with(kvs ...any) map[string]any {
	m := base()
	for i := 0; i < len(kvs); i += 2 {
		keys := strings.Split(kvs[i].(string), ".")
		cur := m
		for _, k := range keys[:len(keys)-1] {
			next, ok := cur[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[k] = next
			}
			cur = next
		}
		if kvs[i+1] == nil {
			delete(cur, keys[len(keys)-1])
		} else {
			cur[keys[len(keys)-1]] = kvs[i+1]
		}
	}
	return m
}

func doc(t *testing.T, v any) []byte {
	t.Helper()
	if s, ok := v.(string); ok {
		return []byte(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type arr = []any
type m = map[string]any

// Every validation row of spec b.3/b.4 (and testcases 24-36): the issue
// that must be reported, "" for a valid document.
func TestParseValidation(t *testing.T) {
	mask := func(extra m) m {
		e := m{"name": "T", "mode": "mask"}
		for k, v := range extra {
			e[k] = v
		}
		return e
	}
	gh := arr{"*.github.com", "api.example.com:443"}
	for _, tc := range []struct {
		name string
		doc  any
		want string
	}{
		{"base", base(), ""},
		{"empty object", `{}`, "network: Required; filesystem: Required"},
		{"array", `[]`, "(root): Expected object, received array"},
		{"null", `null`, "(root): Expected object, received null"},
		{"required network fields", `{"network":{"allowedDomains":[]},"filesystem":{"denyRead":[]}}`,
			"network.deniedDomains: Required; filesystem.allowWrite: Required; filesystem.denyWrite: Required"},
		{"allowRead optional", with("filesystem.allowRead", nil), ""},
		{"empty path", with("filesystem.denyRead", arr{""}), "filesystem.denyRead.0: Path cannot be empty"},
		{"NUL in path", with("filesystem.allowWrite", arr{"/tmp/a\x00b"}), "filesystem.allowWrite.0: contains a NUL byte"},
		{"path not string", with("filesystem.allowWrite", arr{3}), `filesystem.allowWrite.0: Expected a path, or { "path": "<path>", "literal": true }`},
		{"path object without literal", with("filesystem.denyRead", arr{m{"path": "/x"}}), `filesystem.denyRead.0: Expected a path, or { "path": "<path>", "literal": true }`},
		{"path object literal false", with("filesystem.denyRead", arr{m{"path": "/x", "literal": false}}), `Expected a path`},
		{"path object extra key", with("filesystem.denyRead", arr{m{"path": "/x", "literal": true, "extra": 1}}), "filesystem.denyRead.0: Unrecognized key(s) in object: 'extra'"},
		{"path object ok", with("filesystem.denyRead", arr{m{"path": "/x/**", "literal": true}}), ""},
		{"optional bools", with("network.allowUnixSockets", arr{"/var/run/docker.sock"}, "network.allowAllUnixSockets", false,
			"network.allowLocalBinding", true, "ignoreViolations", m{"*": arr{"/usr/bin"}, "git push": arr{"/usr/bin/nc"}}, "enableWeakerNestedSandbox", true), ""},
		{"bool type", with("allowPty", "yes"), "allowPty: Expected boolean, received string"},
		{"null is not absent", with("allowPty", nil, "enableWeakerNestedSandbox", nil, "network.strictAllowlist", "x"), "network.strictAllowlist: Expected boolean, received string"},
		{"explicit null", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"allowPty":null}`, "allowPty: Expected boolean, received null"},
		{"list type", with("network.allowedDomains", "github.com"), "network.allowedDomains: Expected array, received string"},
		{"domain entry", with("network.allowedDomains", arr{"github.com", "ok.org", "not-a-domain"}), "network.allowedDomains.2: invalid domain pattern \"not-a-domain\""},
		{"domain port hint", with("network.allowedDomains", arr{"example.com:0"}), `An optional ":port" suffix (1-65535) restricts the entry to that port.`},
		{"star only in deny", with("network.allowedDomains", arr{"*"}), `network.allowedDomains.0: invalid domain pattern "*"`},
		{"star in deny", with("network.deniedDomains", arr{"*", "*:22"}), ""},
		{"denied entry", with("network.deniedDomains", arr{"ex ample.com"}), "network.deniedDomains.0: invalid domain pattern"},
		{"depth 0", with("mandatoryDenySearchDepth", 0), "mandatoryDenySearchDepth: Number must be greater than or equal to 1"},
		{"depth 11", with("mandatoryDenySearchDepth", 11), "mandatoryDenySearchDepth: Number must be less than or equal to 10"},
		{"depth 5", with("mandatoryDenySearchDepth", 5), ""},
		{"depth float", with("mandatoryDenySearchDepth", 2.5), "mandatoryDenySearchDepth: Expected integer, received float"},
		{"depth huge", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},"mandatoryDenySearchDepth":1e400}`, "Number must be less than or equal to 10"},
		{"depth string", with("mandatoryDenySearchDepth", "3"), "mandatoryDenySearchDepth: Expected number, received string"},
		{"ripgrep", with("ripgrep", m{"command": "claude", "args": arr{"--ripgrep"}}), ""},
		{"ripgrep command required", with("ripgrep", m{"args": arr{}}), "ripgrep.command: Required"},
		{"deny glob separator", with("filesystem.denyRead", arr{"/data/*/"}), `filesystem.denyRead.0: Deny glob "/data/*/" ends in a separator, so as a pattern it can match no path. Write "/data/*"`},
		{"deny glob separator home", with("filesystem.denyWrite", arr{"~/x/*/"}), `filesystem.denyWrite.0: Deny glob "~/x/*/" ends in a separator`},
		{"deny glob relative", with("filesystem.denyRead", arr{"build/*/"}), ""},
		{"allow glob separator", with("filesystem.allowWrite", arr{"/data/*/"}), ""},
		{"deny glob separator disabled", with("filesystem.denyRead", arr{"/data/*/"}, "filesystem.disabled", true), ""},
		{"credentials strict", with("credentials", m{"bogus": 1}), "credentials: Unrecognized key(s) in object: 'bogus'"},
		{"mask needs tls", with("network.allowedDomains", gh, "credentials", m{"envVars": arr{mask(nil)}}), "credentials: Credential masking requires network.tlsTerminate"},
		{"mask with tls", with("network.allowedDomains", gh, "network.tlsTerminate", m{}, "credentials", m{"envVars": arr{mask(nil)}}), ""},
		{"mask plaintext", with("network.allowedDomains", gh, "credentials", m{"allowPlaintextInject": true, "envVars": arr{mask(nil)}}), ""},
		{"inject unreachable", with("network.allowedDomains", gh, "network.tlsTerminate", m{}, "credentials", m{"envVars": arr{mask(m{"injectHosts": arr{"evil.com"}})}}),
			`credentials.envVars.0.injectHosts.0: injectHosts entry "evil.com" is not reachable via network.allowedDomains`},
		{"inject covered", with("network.allowedDomains", gh, "network.tlsTerminate", m{}, "credentials", m{"envVars": arr{mask(m{"injectHosts": arr{"api.github.com", "*.api.github.com"}})}}), ""},
		{"inject wildcard needs wildcard", with("network.allowedDomains", arr{"api.github.com"}, "network.tlsTerminate", m{}, "credentials", m{"envVars": arr{mask(m{"injectHosts": arr{"*.api.github.com"}})}}), "not reachable"},
		{"inject empty", with("network.allowedDomains", gh, "network.tlsTerminate", m{}, "credentials", m{"envVars": arr{mask(m{"injectHosts": arr{}})}}), "credentials.envVars.0.injectHosts: injectHosts is explicitly empty"},
		{"exclude covers all", with("network.allowedDomains", arr{"api.github.com"}, "network.tlsTerminate", m{"excludeDomains": arr{"*.github.com"}}, "credentials", m{"envVars": arr{mask(nil)}}),
			"credentials.envVars.0: This masked credential has no injectHosts, so it defaults to network.allowedDomains — but"},
		{"exclude covers inject", with("network.allowedDomains", gh, "network.tlsTerminate", m{"excludeDomains": arr{"api.github.com"}}, "credentials", m{"envVars": arr{mask(m{"injectHosts": arr{"api.github.com"}})}}), "is in tlsTerminate.excludeDomains"},
		{"env name digit", with("credentials", m{"envVars": arr{m{"name": "1T", "mode": "deny"}}}), "credentials.envVars.0.name: Environment variable name must start with a letter or underscore"},
		{"env name dash", with("credentials", m{"envVars": arr{m{"name": "-u", "mode": "deny"}}}), "Environment variable name must start"},
		{"extract no group", with("credentials", m{"envVars": arr{m{"name": "T", "mode": "deny", "extract": "abc"}}}), "credentials.envVars.0.extract: extract must contain at least one capturing group"},
		{"extract invalid", with("credentials", m{"envVars": arr{m{"name": "T", "mode": "deny", "extract": "("}}}), "credentials.envVars.0.extract: extract is not a valid regular expression"},
		{"maskClaims without decode", with("network.tlsTerminate", m{}, "credentials", m{"envVars": arr{mask(m{"maskClaims": arr{"sub"}})}}), `maskClaims needs decode: "jwt"`},
		{"maskClaims empty", with("network.tlsTerminate", m{}, "credentials", m{"envVars": arr{mask(m{"decode": "jwt", "maskClaims": arr{}})}}), "maskClaims is explicitly empty"},
		{"mask dir", with("network.tlsTerminate", m{}, "credentials", m{"files": arr{m{"path": "/etc/foo/", "mode": "mask"}}}), `credentials.files.0.path: Credential mode "mask" applies to a single file`},
		{"deny file glob separator", with("credentials", m{"files": arr{m{"path": "/etc/*/", "mode": "deny"}}}), `credentials.files.0.path: Deny glob "/etc/*/"`},
		{"mode enum", with("credentials", m{"files": arr{m{"path": "/x", "mode": "allow"}}}), "credentials.files.0.mode: Invalid enum value. Expected 'deny' | 'mask', received 'allow'"},
		{"aws pair deny vars", with("credentials", m{"envVars": arr{m{"name": "A", "mode": "deny"}, m{"name": "B", "mode": "deny"}}, "awsPairs": arr{m{"accessKeyIdVar": "A", "secretAccessKeyVar": "B"}}}),
			`credentials.awsPairs.0.accessKeyIdVar: "A" does not reference a credentials.envVars entry with mode "mask"`},
		{"aws pair twice", with("network.tlsTerminate", m{}, "credentials", m{"envVars": arr{mask(m{"name": "A"}), mask(m{"name": "B"})}, "awsPairs": arr{m{"accessKeyIdVar": "A", "secretAccessKeyVar": "A"}}}), "appears in more than one awsPairs slot"},
		{"aws pair strict", with("credentials", m{"awsPairs": arr{m{"accessKeyIdVar": "A", "secretAccessKeyVar": "B", "x": 1}}}), "credentials.awsPairs.0: Unrecognized key(s) in object: 'x'"},
		{"sigv4 enum", with("credentials", m{"sigv4": m{"streaming": "allow"}}), "credentials.sigv4.streaming: Invalid enum value. Expected 'deny' | 'passthrough', received 'allow'"},
		{"sigv4 strict", with("credentials", m{"sigv4": m{"other": "deny"}}), "credentials.sigv4: Unrecognized key(s) in object: 'other'"},
		{"caCert alone", with("network.tlsTerminate", m{"caCertPath": "/ca.pem"}), "network.tlsTerminate: caCertPath and caKeyPath must be provided together"},
		{"maxTunnels 0", with("network.tlsTerminate", m{"maxTunnels": 0}), "network.tlsTerminate.maxTunnels: Number must be greater than or equal to 1"},
		{"maxTunnels max", with("network.tlsTerminate", m{"maxTunnels": 65537}), "network.tlsTerminate.maxTunnels: Number must be less than or equal to 65536"},
		{"handshake 99", with("network.tlsTerminate", m{"handshakeTimeoutMs": 99}), "network.tlsTerminate.handshakeTimeoutMs: Number must be greater than or equal to 100"},
		{"handshake max", with("network.tlsTerminate", m{"handshakeTimeoutMs": 600001}), "Number must be less than or equal to 600000"},
		{"tls and mitm", with("network.tlsTerminate", m{}, "network.mitmProxy", m{"socketPath": "/s", "domains": arr{"a.example.com"}}), "network.tlsTerminate and network.mitmProxy are mutually exclusive"},
		{"bwrap relative", with("bwrapPath", "bwrap"), "bwrapPath: Binary path must be absolute"},
		{"socat relative", with("socatPath", ""), "socatPath: Binary path must be absolute"},
		{"java relative", with("javaAgentJarPath", "a.jar"), "javaAgentJarPath: Binary path must be absolute"},
		{"http port 0", with("network.httpProxyPort", 0), "network.httpProxyPort: Number must be greater than or equal to 1"},
		{"socks port high", with("network.socksProxyPort", 65536), "network.socksProxyPort: Number must be less than or equal to 65535"},
		{"ports ok", with("network.httpProxyPort", 1, "network.socksProxyPort", 65535), ""},
		{"resolved ok", with("network.deniedResolvedAddresses", arr{"10.0.0.0/8", "192.168.1.10", "fc00::/7", "::ffff:0:0/96", "::/0"}), ""},
		{"resolved bracket", with("network.deniedResolvedAddresses", arr{"[::1]"}), "network.deniedResolvedAddresses.0: Expected an IP address or CIDR range"},
		{"resolved /33", with("network.deniedResolvedAddresses", arr{"10.0.0.0/33"}), "network.deniedResolvedAddresses.0:"},
		{"resolved name", with("network.deniedResolvedAddresses", arr{"example.com"}), "network.deniedResolvedAddresses.0:"},
		{"resolved short", with("network.deniedResolvedAddresses", arr{"1.2.3"}), "network.deniedResolvedAddresses.0:"},
		{"reason empty", with("network.deniedDomainReasons", m{"x.com": ""}), "network.deniedDomainReasons.x.com: String must contain at least 1 character(s)"},
		{"mach ok", with("network.allowMachLookup", arr{"com.example.*", "*"}), ""},
		{"mach middle star", with("network.allowMachLookup", arr{"com.*.x"}), `network.allowMachLookup.0: "*" is only allowed as the last character`},
		{"port range wide", with("windows", m{"proxyPortRange": arr{60000, 60100}}), "windows.proxyPortRange: low must be ≤ high and range width ≤ 64"},
		{"port range backwards", with("windows", m{"proxyPortRange": arr{60100, 60000}}), "low must be ≤ high"},
		{"port range length", with("windows", m{"proxyPortRange": arr{60000}}), "windows.proxyPortRange: Array must contain exactly 2 element(s)"},
		{"windows guid", with("windows", m{"sublayerGuid": "nope"}), "windows.sublayerGuid: Invalid uuid"},
		{"windows backend", with("windows", m{"backend": "docker"}), "windows.backend: Invalid enum value. Expected 'srt-win' | 'mxc', received 'docker'"},
		{"mitm empty", with("network.mitmProxy", m{"socketPath": "/s", "domains": arr{}}), "network.mitmProxy.domains: Array must contain at least 1 element(s)"},
		{"mitm port", with("network.mitmProxy", m{"socketPath": "/s", "domains": arr{"api.example.com:443"}}), "network.mitmProxy.domains.0: invalid domain pattern"},
		{"mitm socket", with("network.mitmProxy", m{"domains": arr{"api.example.com"}}), "network.mitmProxy.socketPath: Required"},
		{"parent url", with("network.parentProxy", m{"https": "not a url"}), "network.parentProxy.https: Invalid url"},
		{"parent scheme", with("network.parentProxy", m{"http": "socks5://p:1080"}), "network.parentProxy.http: parent proxy URL must use http:// or https://"},
		{"ambiguous enum", with("network.ambiguousRequestTarget", "maybe"), "Invalid enum value. Expected 'refuse' | 'asSpelled' | 'normalize', received 'maybe'"},
		{"strip headers empty", with("network.stripResponseHeaders", arr{}), "network.stripResponseHeaders: Array must contain at least 1 element(s)"},
		{"strip header name", with("network.stripResponseHeaders", arr{"Bad Header"}), "network.stripResponseHeaders.0: not a valid HTTP header name"},
		{"filterRequest", with("network.filterRequest", "x"), "network.filterRequest: filterRequest is a callback of the library API"},
		{"seccomp argv0", with("seccomp", m{"argv0": "x"}), "seccomp.argv0: seccompConfig.argv0 requires seccompConfig.applyPath"},
		{"ignoreViolations type", with("ignoreViolations", m{"*": "/usr/bin"}), "ignoreViolations.*: Expected array, received string"},
		{"invalid UTF-8", "{\"network\":{\"allowedDomains\":[],\"deniedDomains\":[]},\"filesystem\":{\"denyRead\":[\"/home/\xe9t\xe9\"],\"allowWrite\":[],\"denyWrite\":[]}}", "invalid UTF-8 at byte 85"},
		{"duplicate key", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"denyRead":[],"allowWrite":[],"denyWrite":[]}}`, `key "denyRead" appears twice`},
		{"trailing data", `{"network":{"allowedDomains":[],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}} {}`, "unexpected data after the top-level value"},
		{"issues in order", with("allowPty", 1, "network.allowedDomains", arr{"x"}, "filesystem.denyWrite", nil),
			"network.allowedDomains.0: invalid domain pattern \"x\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse(doc(t, tc.doc))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error\n  %v\nwant it to contain\n  %s", err, tc.want)
			}
		})
	}
}

// A URL in a domain list is refused for its scheme, saying what to
// write; nothing in the issue is about ports.
func TestParseDomainScheme(t *testing.T) {
	_, _, err := Parse(doc(t, with("network.allowedDomains", arr{"https://x.org"})))
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Issues) != 1 {
		t.Fatalf("err = %v", err)
	}
	if want := `network.allowedDomains.0: invalid domain pattern "https://x.org": a scheme ("https://") is not part of a domain pattern; write "x.org"`; ve.Issues[0] != want {
		t.Errorf("issue\n  %s\nwant\n  %s", ve.Issues[0], want)
	}
}

func TestParseIssueOrder(t *testing.T) {
	_, _, err := Parse(doc(t, with("allowPty", 1, "network.allowedDomains", arr{"x"}, "filesystem.denyWrite", nil)))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	want := []string{"network.allowedDomains.0:", "filesystem.denyWrite: Required", "allowPty: Expected boolean, received number"}
	if len(ve.Issues) != len(want) {
		t.Fatalf("issues = %q", ve.Issues)
	}
	for i, w := range want {
		if !strings.HasPrefix(ve.Issues[i], w) {
			t.Errorf("issue %d = %q, want prefix %q", i, ve.Issues[i], w)
		}
	}
}

func TestParseUnknownKeys(t *testing.T) {
	d := with("whatever", true, "netwrok", m{}, "network.bogus", 1, "filesystem.bar", 2, "credentials", m{"files": arr{m{"path": "/x", "mode": "deny", "note": "hi"}}})
	s, unknown, err := Parse(doc(t, d))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"network.bogus", "filesystem.bar", "credentials.files.0.note", "netwrok", "whatever"}
	for _, w := range want {
		found := false
		for _, u := range unknown {
			found = found || u == w
		}
		if !found {
			t.Errorf("unknown = %q, missing %q", unknown, w)
		}
	}
	if len(unknown) != len(want) {
		t.Errorf("unknown = %q, want %q", unknown, want)
	}
	out, _ := json.Marshal(s)
	for _, k := range []string{"bogus", "whatever", "netwrok", `"bar"`, "note"} {
		if strings.Contains(string(out), k) {
			t.Errorf("parsed settings keep %s: %s", k, out)
		}
	}
}

func TestParseDefaults(t *testing.T) {
	s, _, err := Parse(doc(t, with("git", m{}, "network.tlsTerminate", m{})))
	if err != nil {
		t.Fatal(err)
	}
	if s.MandatoryDenySearchDepth != 3 || s.Filesystem.AllowRead == nil || len(s.Filesystem.AllowRead) != 0 {
		t.Errorf("defaults not applied: depth %d allowRead %#v", s.MandatoryDenySearchDepth, s.Filesystem.AllowRead)
	}
	if s.Git == nil || s.Git.SafeDirectories == nil {
		t.Errorf("git:{} should parse to safeDirectories:[]: %#v", s.Git)
	}
	if s.Network.TLSTerminate.MaxTunnels != 256 || s.Network.TLSTerminate.HandshakeTimeoutMs != 10000 {
		t.Errorf("tlsTerminate defaults: %+v", s.Network.TLSTerminate)
	}
	if s.Ripgrep != nil || s.Network.HTTPProxyPort != nil {
		t.Errorf("absent optional blocks must stay absent")
	}
	d := Default()
	if d.MandatoryDenySearchDepth != 3 || d.Network.AllowedDomains == nil || len(d.Network.AllowedDomains) != 0 {
		t.Errorf("Default() = %+v", d)
	}
}

func TestParseKeepsEntryForms(t *testing.T) {
	s, _, err := Parse(doc(t, with("filesystem.denyRead", arr{"~/.ssh", m{"path": "/a/**", "literal": true}})))
	if err != nil {
		t.Fatal(err)
	}
	want := []PathEntry{{Path: "~/.ssh"}, {Path: "/a/**", Literal: true}}
	if !reflect.DeepEqual(s.Filesystem.DenyRead, want) {
		t.Fatalf("denyRead = %#v", s.Filesystem.DenyRead)
	}
	out, _ := json.Marshal(s.Filesystem.DenyRead)
	if string(out) != `["~/.ssh",{"literal":true,"path":"/a/**"}]` {
		t.Errorf("round trip = %s", out)
	}
}

func TestParseReferenceFiles(t *testing.T) {
	for _, f := range []string{"reference-full.json", "every-field.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		s, unknown, err := Parse(data)
		if err != nil {
			t.Errorf("%s refused: %v", f, err)
			continue
		}
		if len(unknown) != 0 {
			t.Errorf("%s: unknown keys %q", f, unknown)
		}
		if f == "every-field.json" {
			if s.MandatoryDenySearchDepth != 5 || *s.Network.SOCKSProxyPort != 65535 || s.Windows.ProxyPortRange[1] != 60089 ||
				s.Credentials.AWSPairs[0].SecretAccessKeyVar != "AWS_SECRET_ACCESS_KEY" || s.Network.TLSTerminate.MaxTunnels != 65536 {
				t.Errorf("every-field.json parsed wrongly: %+v", s)
			}
		}
	}
}

// Every file-semantics case of spec b.1 / a.4.
func TestLoad(t *testing.T) {
	testenv.BothUsers(t, nil, testLoad)
}

func testLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", string(doc(t, base())))
	empty := write("empty.json", "")
	blank := write("blank.json", "   \n\t\n")
	bad := write("bad.json", "{bad")
	truncated := write("truncated.json", `{"network": {`)
	schema := write("schema.json", `{}`)
	network := write("network.json", `{"network":{}}`)
	homeFile := write("somefile", "x")
	missing := filepath.Join(dir, "missing.json")

	for _, tc := range []struct {
		name     string
		path     string
		explicit bool
		wantMsg  string // "" = loads
		refusal  string
		found    bool
	}{
		{"missing default", missing, false, "", "", false},
		{"missing explicit", missing, true, missing + " does not exist.", refuseAsked, false},
		{"good", good, true, "", "", true},
		{"good default path", good, false, "", "", true},
		{"empty", empty, true, empty + " is empty. Delete it, or put a config in it.", refuseFile, false},
		{"empty at default path", empty, false, empty + " is empty.", refuseFile, false},
		{"whitespace", blank, true, blank + " is empty.", refuseFile, false},
		{"bad json", bad, true, bad + " is not valid JSON: invalid character 'b' (line 1, column 2)", refuseFile, false},
		{"truncated json", truncated, false, truncated + " is not valid JSON: unexpected end of input", refuseFile, false},
		{"schema", schema, true, schema + " does not hold a valid config — network: Required; filesystem: Required", refuseFile, false},
		{"empty network", network, true, network + " does not hold a valid config — network.allowedDomains: Required; network.deniedDomains: Required; filesystem: Required", refuseFile, false},
		{"directory", dir, true, dir + " could not be read (EISDIR).", refuseFile, false},
		{"HOME is a file", filepath.Join(homeFile, ".srt-settings.json"), false, filepath.Join(homeFile, ".srt-settings.json") + " could not be read (ENOTDIR).", refuseFile, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Load(tc.path, tc.explicit)
			if tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if l.Found != tc.found || l.Settings == nil {
					t.Fatalf("Load = %+v", l)
				}
				return
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load = %v, %v; want a LoadError", l, err)
			}
			if !strings.HasPrefix(le.Msg, tc.wantMsg) || le.Refusal != tc.refusal {
				t.Fatalf("Load error %q / %q\nwant       %q / %q", le.Msg, le.Refusal, tc.wantMsg, tc.refusal)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	testenv.BothUsers(t, nil, func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("requires an unprivileged user: root reads a mode-000 file")
		}
		p := filepath.Join(t.TempDir(), "secret.json")
		if err := os.WriteFile(p, doc(t, base()), 0); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p, true)
		var le *LoadError
		if !errors.As(err, &le) || le.Msg != p+" could not be read (EACCES)." || le.Refusal != refuseFile {
			t.Fatalf("Load = %v", err)
		}
	})
}

func TestSchemaCoversEveryField(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal(Schema(), &s); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if s["$schema"] == nil {
		t.Error("no $schema")
	}
	// Walk every path of every-field.json and find it in the schema.
	data, _ := os.ReadFile(filepath.Join("testdata", "every-field.json"))
	var d any
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var walk func(v any, sch map[string]any, path string)
	walk = func(v any, sch map[string]any, path string) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := sch["properties"].(map[string]any); ok {
				for k, e := range v {
					ps, ok := props[k].(map[string]any)
					if !ok {
						t.Errorf("schema has no %s.%s", path, k)
						continue
					}
					walk(e, ps, path+"."+k)
				}
			} else if ap, ok := sch["additionalProperties"].(map[string]any); ok {
				for k, e := range v {
					walk(e, ap, path+"."+k)
				}
			} else if sch["oneOf"] == nil {
				t.Errorf("schema at %s describes no object", path)
			}
		case []any:
			items, ok := sch["items"].(map[string]any)
			if !ok {
				t.Errorf("schema at %s describes no array", path)
				return
			}
			for _, e := range v {
				walk(e, items, path+"[]")
			}
		}
	}
	walk(d, s, "")
}

// The hand-written checks accept exactly what their patterns say.
func TestNameChecks(t *testing.T) {
	for s, ok := range map[string]bool{"A": true, "_x9": true, "PATH": true, "a_B_1": true, "": false, "1A": false, "A-B": false, "A B": false, "é": false} {
		if got := envVarName(s) == ""; got != ok {
			t.Errorf("envVarName(%q) ok = %v", s, got)
		}
	}
	for s, ok := range map[string]bool{"0123abcd-ABCD-ef01-2345-6789abcdef01": true, "0123abcd-ABCD-ef01-2345-6789abcdef0": false,
		"0123abcd0ABCD-ef01-2345-6789abcdef01": false, "0123abcg-ABCD-ef01-2345-6789abcdef01": false, "": false} {
		if got := uuid(s) == ""; got != ok {
			t.Errorf("uuid(%q) ok = %v", s, got)
		}
	}
}
