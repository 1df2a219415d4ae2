package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the settings rules in ../README.md from the table")

// Every key of the schema has a rule, exactly once (on itself or on one
// object above it), and every rule names a key of the schema, in the
// schema's order: a field added to fields.go without a row here fails.
func TestEveryKeyHasARule(t *testing.T) {
	rows := map[string]KeyRule{}
	for _, k := range keyRules {
		if _, dup := rows[k.Key]; dup {
			t.Errorf("%s has two rows", k.Key)
		}
		rows[k.Key] = k
	}
	var order []string
	var walk func(n *node, path string)
	walk = func(n *node, path string) {
		for _, f := range n.fields {
			p := f.name
			if path != "" {
				p = path + "." + f.name
			}
			if _, ok := rows[p]; ok {
				order = append(order, p)
				for key := range rows {
					if strings.HasPrefix(key, p+".") {
						t.Errorf("%s has a row, and so has %s beneath it: one rule per key", p, key)
					}
				}
				continue
			}
			if f.n.kind == kObject && len(f.n.fields) > 0 {
				walk(f.n, p)
				continue
			}
			t.Errorf("settings key %s has no rule: add a row to keyRules in config/platform.go (applied, refused or no meaning on linux, darwin and windows)", p)
		}
	}
	walk(settingsSchema(), "")
	for key := range rows {
		if !slices.Contains(order, key) {
			t.Errorf("keyRules has a row for %s, which the settings schema does not have", key)
		}
	}
	var tableOrder []string
	for _, k := range keyRules {
		if slices.Contains(order, k.Key) {
			tableOrder = append(tableOrder, k.Key)
		}
	}
	if !slices.Equal(tableOrder, order) {
		t.Errorf("keyRules is not in the order of the schema:\n got %q\nwant %q", tableOrder, order)
	}
	for _, k := range keyRules {
		for _, goos := range Platforms() {
			r, ok := k.On(goos)
			switch {
			case !ok || r.Handling < Applied || r.Handling > NoMeaning:
				t.Errorf("%s has no rule on %s", k.Key, goos)
			case r.Handling != Applied && r.Why == "":
				t.Errorf("%s is %s on %s without saying why", k.Key, r.Handling, goos)
			}
		}
	}
}

// setting is, for each key, a document fragment that asks for something
// with it.
var setting = map[string][]any{
	"network.allowedDomains":          {"network.allowedDomains", arr{"example.com"}},
	"network.deniedDomains":           {"network.deniedDomains", arr{"example.com"}},
	"network.deniedDomainReasons":     {"network.deniedDomainReasons", m{"x.com": "no"}},
	"network.strictAllowlist":         {"network.strictAllowlist", true},
	"network.deniedResolvedAddresses": {"network.deniedResolvedAddresses", arr{"10.0.0.0/8"}},
	"network.allowUnixSockets":        {"network.allowUnixSockets", arr{"/run/x.sock"}},
	"network.allowAllUnixSockets":     {"network.allowAllUnixSockets", true},
	"network.allowLocalBinding":       {"network.allowLocalBinding", true},
	"network.allowMachLookup":         {"network.allowMachLookup", arr{"com.example.*"}},
	"network.httpProxyPort":           {"network.httpProxyPort", 8080},
	"network.socksProxyPort":          {"network.socksProxyPort", 1080},
	"network.mitmProxy":               {"network.mitmProxy", m{"socketPath": "/s", "domains": arr{"a.example.com"}}},
	"network.parentProxy":             {"network.parentProxy", m{}},
	"network.tlsTerminate":            {"network.tlsTerminate", m{}},
	"network.allowPlaintextHeaderSet": {"network.allowPlaintextHeaderSet", true},
	"network.stripResponseHeaders":    {"network.stripResponseHeaders", arr{"Set-Cookie"}},
	"network.refuseOpaqueTunnels":     {"network.refuseOpaqueTunnels", true},
	"network.requireHostMatch":        {"network.requireHostMatch", true},
	"network.ambiguousRequestTarget":  {"network.ambiguousRequestTarget", "asSpelled"},
	"filesystem.disabled":             {"filesystem.disabled", true},
	"filesystem.denyRead":             {"filesystem.denyRead", arr{"~/.ssh"}},
	"filesystem.allowRead":            {"filesystem.allowRead", arr{"."}},
	"filesystem.allowWrite":           {"filesystem.allowWrite", arr{"."}},
	"filesystem.denyWrite":            {"filesystem.denyWrite", arr{".env"}},
	"filesystem.allowGitConfig":       {"filesystem.allowGitConfig", true},
	"filesystem.skipPathGuard":        {"filesystem.skipPathGuard", true},
	"credentials":                     {"credentials", m{"envVars": arr{m{"name": "NPM_TOKEN", "mode": "deny"}}}},
	"ignoreViolations":                {"ignoreViolations", m{"*": arr{"/usr/bin"}}},
	"enableWeakerNestedSandbox":       {"enableWeakerNestedSandbox", true},
	"allowNestedUserNamespaces":       {"allowNestedUserNamespaces", true},
	"enableWeakerNetworkIsolation":    {"enableWeakerNetworkIsolation", true},
	"allowAppleEvents":                {"allowAppleEvents", true},
	"allowPty":                        {"allowPty", true},
	"ripgrep":                         {"ripgrep", m{"command": "rg"}},
	"mandatoryDenySearchDepth":        {"mandatoryDenySearchDepth", 5},
	"seccomp":                         {"seccomp", m{}},
	"bwrapPath":                       {"bwrapPath", "/usr/bin/bwrap"},
	"socatPath":                       {"socatPath", "/usr/bin/socat"},
	"javaAgentJarPath":                {"javaAgentJarPath", "/opt/agent.jar"},
	"windows":                         {"windows", m{"sandboxUser": "srt"}},
	"git.safeDirectories":             {"git", m{"safeDirectories": arr{"/work"}}},
}

func setKeys(s *Settings) []string {
	var out []string
	for _, k := range keyRules {
		if k.IsSet(s) {
			out = append(out, k.Key)
		}
	}
	return out
}

func parse(t *testing.T, v any) *Settings {
	t.Helper()
	s, _, err := Parse(doc(t, v))
	if err != nil {
		t.Fatalf("%s: %v", doc(t, v), err)
	}
	return s
}

// A document that sets one key asks for that key alone.
func TestIsSetPerKey(t *testing.T) {
	for _, k := range keyRules {
		if k.set == nil {
			continue // cannot be given (filterRequest)
		}
		kv, ok := setting[k.Key]
		if !ok {
			t.Errorf("no test fragment sets %s: add one to setting", k.Key)
			continue
		}
		s := parse(t, with(kv...))
		if got := setKeys(s); !slices.Equal(got, []string{k.Key}) {
			t.Errorf("a document setting only %s sets %q", k.Key, got)
		}
	}
	// Every way of asking for a credential rule counts.
	for _, c := range []m{
		{"files": arr{m{"path": "~/.netrc", "mode": "deny"}}},
		{"allowPlaintextInject": true},
		{"sigv4": m{"presigned": "passthrough"}},
		{"envVars": arr{m{"name": "T", "mode": "mask"}}, "allowPlaintextInject": true},
	} {
		if got := setKeys(parse(t, with("credentials", c))); !slices.Equal(got, []string{"credentials"}) {
			t.Errorf("credentials %v sets %q", c, got)
		}
	}
}

// A file that spells out defaults asks for nothing: it runs everywhere
// srt runs, and --debug has nothing to list.
func TestDefaultsSpelledOutAskNothing(t *testing.T) {
	spelled := with(
		"network.strictAllowlist", false, "network.deniedDomainReasons", m{}, "network.deniedResolvedAddresses", arr{},
		"network.allowUnixSockets", arr{}, "network.allowAllUnixSockets", false, "network.allowLocalBinding", false,
		"network.allowMachLookup", arr{}, "network.allowPlaintextHeaderSet", false, "network.refuseOpaqueTunnels", false,
		"network.requireHostMatch", false, "network.ambiguousRequestTarget", "refuse",
		"filesystem.disabled", false, "filesystem.allowRead", arr{}, "filesystem.allowGitConfig", false,
		"filesystem.skipPathGuard", false, "credentials", m{"files": arr{}, "envVars": arr{}, "allowPlaintextInject": false, "awsPairs": arr{},
			"sigv4": m{"streaming": "deny", "presigned": "deny", "sigv4a": "deny"}},
		"ignoreViolations", m{}, "enableWeakerNestedSandbox", false, "allowNestedUserNamespaces", false,
		"enableWeakerNetworkIsolation", false, "allowAppleEvents", false, "allowPty", false,
		"mandatoryDenySearchDepth", 3, "windows", m{}, "git", m{"safeDirectories": arr{}},
	)
	for name, s := range map[string]*Settings{
		"defaults spelled out": parse(t, spelled),
		"empty objects":        parse(t, with("credentials", m{}, "git", m{}, "windows", m{}, "credentials.sigv4", m{})),
		"built-in defaults":    Default(),
		"zero Settings":        {},
	} {
		if got := setKeys(s); len(got) > 0 {
			t.Errorf("%s: sets %q", name, got)
		}
		for _, goos := range Platforms() {
			if err := Check(s, goos); err != nil {
				t.Errorf("%s on %s: %v", name, goos, err)
			}
			if got := Meaningless(s, goos); len(got) > 0 {
				t.Errorf("%s on %s: no meaning %v", name, goos, got)
			}
		}
	}
}

// Check names every refused key the settings set, each with why, in the
// table's order, and tells what to do; keys applied or meaningless there
// are not among them.
func TestCheckRefusals(t *testing.T) {
	s := parse(t, with("credentials", m{"envVars": arr{m{"name": "NPM_TOKEN", "mode": "deny"}}},
		"filesystem.disabled", true, "network.requireHostMatch", true, "enableWeakerNestedSandbox", true, "ripgrep", m{"command": "rg"}))
	if err := Check(s, "linux"); err != nil {
		t.Errorf("linux: %v", err)
	}
	err := Check(s, "windows")
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("Check = %v, want a *RefusedError", err)
	}
	var keys []string
	for _, r := range re.Refusals {
		keys = append(keys, r.Key)
	}
	if want := []string{"filesystem.disabled", "credentials"}; !slices.Equal(keys, want) {
		t.Errorf("refused %q, want %q", keys, want)
	}
	want := "filesystem.disabled is not supported on windows yet (the sandbox account writes only where an ACE grants it: list the paths in allowWrite); " +
		"credentials is not supported on windows yet (the Windows plan does not hide credential files yet; it will hide masked files, as the reference does); " +
		"remove them from the settings to plan a run (srt-go's Windows backend is an alpha that plans, and runs nothing yet)"
	if err.Error() != want {
		t.Errorf("Check:\n got %s\nwant %s", err, want)
	}
	// Where srt has no backend, removing keys would not make it run.
	// The experimental macOS backend applies what Linux does, and the
	// macOS keys.
	if mac := Check(parse(t, with("network.allowedDomains", arr{"example.com"}, "allowPty", true, "enableWeakerNestedSandbox", true,
		"network.allowMachLookup", arr{"com.example.x"})), "darwin"); mac != nil {
		t.Errorf("darwin: %v", mac)
	}
	if err := Check(parse(t, with("bwrapPath", "/usr/bin/bwrap")), "plan9"); err == nil || !strings.Contains(err.Error(), "srt has no rules for plan9") {
		t.Errorf("unknown GOOS: %v", err)
	}
	// The reference's every-field example: Linux applies every key.
	data, err := os.ReadFile(filepath.Join("testdata", "every-field.json"))
	if err != nil {
		t.Fatal(err)
	}
	every, _, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	keys = nil
	if errors.As(Check(every, "linux"), &re) {
		for _, r := range re.Refusals {
			keys = append(keys, r.Key)
		}
	}
	if len(keys) > 0 {
		t.Errorf("every-field.json on linux: refused %q", keys)
	}
}

func TestMeaningless(t *testing.T) {
	s := parse(t, with("allowPty", true, "bwrapPath", "/usr/bin/bwrap", "network.allowMachLookup", arr{"com.example.x"},
		"network.ambiguousRequestTarget", "normalize", "enableWeakerNestedSandbox", true))
	var got []string
	for _, r := range Meaningless(s, "linux") {
		got = append(got, r.String())
	}
	want := []string{
		"network.allowMachLookup has no meaning on linux (macOS only: Mach services)",
		"bwrapPath has no meaning on linux (srt-go needs no bubblewrap)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Meaningless:\n got %q\nwant %q", got, want)
	}
	if err := Check(s, "linux"); err != nil {
		t.Errorf("keys with no meaning refused: %v", err)
	}
	var mac []string
	for _, r := range Meaningless(s, "darwin") {
		mac = append(mac, r.Key)
	}
	if want := []string{"enableWeakerNestedSandbox", "bwrapPath"}; !slices.Equal(mac, want) {
		t.Errorf("darwin: no meaning %q, want %q", mac, want)
	}
}

const (
	rulesBegin = "<!-- settings-rules:begin"
	rulesEnd   = "<!-- settings-rules:end -->"
)

// README.md shows the table as the code has it.
func TestREADMERules(t *testing.T) {
	path := filepath.Join("..", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	b := strings.Index(text, rulesBegin)
	e := strings.Index(text, rulesEnd)
	if b < 0 || e < b {
		t.Fatalf("README.md has no %q ... %q section", rulesBegin, rulesEnd)
	}
	b += strings.Index(text[b:], "\n") + 1
	got, want := text[b:e], MarkdownRules()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(text[:b]+want+text[e:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's settings rules differ from config/platform.go; run\n\tgo test ./config -run TestREADMERules -update\n%s", lineDiff(got, want))
}

// lineDiff lists the lines only in README ("-") and only in the code ("+").
func lineDiff(readme, code string) string {
	a, b := strings.Split(readme, "\n"), strings.Split(code, "\n")
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
