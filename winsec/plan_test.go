package winsec

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/testtree"
	"github.com/srt-go/srt/policy"
)

// planOf is the plan of settings s with home and cwd.
func planOf(t *testing.T, s *config.Settings, env policy.Env, o Options) (*policy.Policy, *Plan) {
	t.Helper()
	pol, err := policy.Build(s, env)
	if err != nil {
		t.Fatal(err)
	}
	o.Cwd = env.Cwd
	p, err := Build(pol, o)
	if err != nil {
		t.Fatal(err)
	}
	return pol, p
}

// The precedence rows every backend is held to: for each file, the
// plan's ACEs give the sandbox account what the policy says — written
// where the policy writes, hidden where it hides, and a read of any
// other path left to the host (Agrees).
func TestPlanPrecedence(t *testing.T) {
	for _, c := range testtree.Precedence {
		t.Run(c.Name, func(t *testing.T) {
			dir := testtree.Tree(t, testtree.PrecedenceFiles...)
			pol, p := planOf(t, c.Rules.Settings(), policy.Env{Cwd: dir, Home: filepath.Join(dir, "home")}, Options{})
			for rel, want := range c.Want {
				path := filepath.Join(dir, rel)
				if !Agrees(p.ACEs, pol, path) {
					t.Errorf("%s (%s): writable %v, read %v; the policy: %+v\n%s", rel, want, Writable(p.ACEs, path), Readable(p.ACEs, path), pol.View(path), aceList(p.ACEs))
				}
			}
		})
	}
}

func aceList(aces []ACE) string {
	var b strings.Builder
	for _, a := range aces {
		kind := "allow"
		if a.Deny {
			kind = "deny"
		}
		b.WriteString("  " + kind + " " + a.Rights + " " + a.Path + " (" + a.Why + ")\n")
	}
	return b.String()
}

// A settings file with allowWrite, denyWrite, denyRead, allowRead and
// allowedDomains: every path of a project and home agrees with the
// policy, a protected name that exists is read-only and cannot be
// deleted or moved away (no FILE_DELETE_CHILD anywhere), an ordinary
// file can, the hidden directory's parent keeps it in place, and every
// entry names the account and has its undo.
func TestPlanFilesystem(t *testing.T) {
	dir := testtree.Tree(t, "home/.ssh/id_ed25519", "home/data/private/p.txt", "home/data/shared/s.txt",
		"home/proj/src/a.go", "home/proj/.git/hooks/pre-commit", "home/proj/.git/config", "home/proj/.bashrc",
		"home/proj/.vscode/settings.json", "home/proj/secret/key", "home/other/o.txt")
	home, proj := filepath.Join(dir, "home"), filepath.Join(dir, "home", "proj")
	s := testtree.FSRules{AllowWrite: []string{"."}, DenyWrite: []string{"secret"}, DenyRead: []string{"~/.ssh", "~/data"},
		AllowRead: []string{"~/data/shared"}}.Settings()
	s.Network.AllowedDomains = []string{"example.com", "*.github.com"}
	tmp := filepath.Join(dir, "tmp")
	s.Windows = &config.Windows{SandboxUser: "sbx"}
	o, err := OptionsOf(s)
	if err != nil {
		t.Fatal(err)
	}
	o.TempDir = tmp
	pol, p := planOf(t, s, policy.Env{Home: home, Cwd: proj, Writable: []string{tmp}}, o)
	var paths []string
	filepath.Walk(dir, func(path string, _ os.FileInfo, _ error) error { paths = append(paths, path); return nil })
	for _, path := range append(paths, filepath.Join(proj, "new.txt"), filepath.Join(proj, "src", "new", "b.go"), filepath.Join(tmp, "x")) {
		if !Agrees(p.ACEs, pol, path) {
			t.Errorf("%s: writable %v, read %v; the policy: %+v", path, Writable(p.ACEs, path), Readable(p.ACEs, path), pol.View(path))
		}
	}
	for _, rel := range []string{".git/hooks/pre-commit", ".git/config", ".bashrc", ".vscode/settings.json", "secret/key"} {
		path := filepath.Join(proj, rel)
		if Writable(p.ACEs, path) || Deletable(p.ACEs, path) {
			t.Errorf("%s: writable %v, deletable %v", rel, Writable(p.ACEs, path), Deletable(p.ACEs, path))
		}
	}
	for _, path := range []string{filepath.Join(proj, "src", "a.go"), filepath.Join(tmp, "x")} {
		if !Writable(p.ACEs, path) || !Deletable(p.ACEs, path) {
			t.Errorf("%s: writable %v, deletable %v", path, Writable(p.ACEs, path), Deletable(p.ACEs, path))
		}
	}
	for _, path := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(home, "data", "private", "p.txt")} {
		if Readable(p.ACEs, path) != Denied || Deletable(p.ACEs, path) {
			t.Errorf("%s: read %v, deletable %v", path, Readable(p.ACEs, path), Deletable(p.ACEs, path))
		}
	}
	// Started in the project through a symlink to it: the project's grant
	// covers it, and no read grant of its own is added.
	// (wine's CreateSymbolicLink succeeds and makes nothing: no link, no
	// check.)
	link := filepath.Join(dir, "proj-link")
	os.Symlink(proj, link)
	if _, err := os.Stat(link); err == nil {
		o.Cwd = link
		if q, err := Build(pol, o); err != nil {
			t.Fatal(err)
		} else if len(q.ACEs) != len(p.ACEs) {
			t.Errorf("a working directory spelled through a symlink changed the ACEs: %d, was %d", len(q.ACEs), len(p.ACEs))
		}
	}
	if Readable(p.ACEs, filepath.Join(home, "data", "shared", "s.txt")) != Granted || Readable(p.ACEs, filepath.Join(proj, "src", "a.go")) != Granted {
		t.Error("allowRead, or the working directory, is not readable")
	}
	for _, a := range p.ACEs {
		if a.Trustee != "sbx" || a.Undo == "" || a.Why == "" || a.Rights != RightsString(a.Mask) {
			t.Errorf("entry %+v", a)
		}
		if !a.Deny && a.Mask&fileDeleteChild != 0 {
			t.Errorf("a grant of FILE_DELETE_CHILD: %+v", a)
		}
	}
	if got := p.Network.AllowedDomains; len(got) != 2 || got[0] != "example.com" {
		t.Errorf("allowed domains %v", got)
	}
}

// conn is a connection WFP judges: who makes it, where to, at which
// layer.
type conn struct {
	layer, user, addr string
	port              int
}

// decide is what the plan's filters do to c: the action of the highest
// weight filter whose conditions all hold ("permit" when none does:
// other sublayers, the system's, decide).
func decide(fs []Filter, c conn) string {
	best, action := -1, "permit"
	for _, f := range fs {
		if f.Layer != c.layer || f.Weight <= best || !conditionsHold(f.Conditions, c) {
			continue
		}
		best, action = f.Weight, f.Action
	}
	return action
}

func conditionsHold(cs []Condition, c conn) bool {
	for _, k := range cs {
		switch k.Field {
		case "ALE_USER_ID":
			in := false
			for _, u := range strings.Split(k.Value, ", ") {
				in = in || u == c.user || (u == "srt's own user" && c.user == "me")
			}
			if in != (k.Match == "the token holds") {
				return false
			}
		case "IP_REMOTE_ADDRESS":
			if k.Value != c.addr {
				return false
			}
		case "IP_REMOTE_PORT":
			lo, hi := 0, 0
			if k.Match == "range" {
				fmt.Sscanf(k.Value, "%d-%d", &lo, &hi)
				if c.port < lo || c.port > hi {
					return false
				}
				continue
			}
			found := false
			for _, v := range strings.Split(k.Value, ",") {
				found = found || v == strconv.Itoa(c.port)
			}
			if !found {
				return false
			}
		default:
			panic("unknown field " + k.Field)
		}
	}
	return true
}

// The network: over IPv4 and IPv6 the sandbox account reaches srt's
// proxies on loopback and nothing else — not another loopback port, not
// a remote host, not its own listener from outside — while srt's user
// reaches the proxies and another local account does not. With
// allowLocalBinding, loopback opens both ways. The proxy ports are the
// settings' range, or the session's ports once known.
func TestPlanNetwork(t *testing.T) {
	dir := testtree.Tree(t, "proj/")
	s := testtree.FSRules{AllowWrite: []string{"."}}.Settings()
	s.Windows = &config.Windows{SandboxUser: "sbx", ProxyPortRange: []int{61000, 61009}}
	for _, local := range []bool{false, true} {
		s.Network.AllowLocalBinding = local
		o, err := OptionsOf(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, ports := range [][]int{nil, {61003, 61004}} {
			o.ProxyPorts = ports
			_, p := planOf(t, s, policy.Env{Cwd: filepath.Join(dir, "proj")}, o)
			proxy := 61000
			if ports != nil {
				proxy = ports[0]
			}
			for _, v := range []struct{ suffix, loop, remote string }{{"V4", "127.0.0.1", "93.184.216.34"}, {"V6", "::1", "2606:2800:220:1::1"}} {
				connect, accept := "ALE_AUTH_CONNECT_"+v.suffix, "ALE_AUTH_RECV_ACCEPT_"+v.suffix
				loopback := map[bool]string{false: "block", true: "permit"}[local]
				for _, c := range []struct {
					conn
					want string
				}{
					{conn{connect, "sbx", v.loop, proxy}, "permit"},
					{conn{connect, "me", v.loop, proxy}, "permit"},
					{conn{connect, "mallory", v.loop, proxy}, "block"},
					{conn{connect, "sbx", v.loop, 61009 + 1}, loopback},
					{conn{connect, "sbx", v.loop, 22}, loopback},
					{conn{connect, "sbx", v.remote, 443}, "block"},
					{conn{connect, "sbx", v.remote, proxy}, "block"},
					{conn{connect, "me", v.remote, 443}, "permit"},
					{conn{accept, "sbx", v.remote, 50000}, "block"},
					{conn{accept, "sbx", v.loop, 50000}, loopback},
				} {
					if got := decide(p.Network.Filters, c.conn); got != c.want {
						t.Errorf("allowLocalBinding %v, ports %v: %+v: %s, want %s", local, ports, c.conn, got, c.want)
					}
				}
			}
			// Every condition has the form the OS half hands to WFP.
			for _, f := range p.Network.Filters {
				for _, c := range f.Conditions {
					switch c.arg.(type) {
					case users, netip.Addr, portRange, []int:
					default:
						t.Errorf("%s: condition %+v has no WFP form", f.Why, c)
					}
				}
			}
			if p.Network.Ports != [2]int{61000, 61009} || !strings.Contains(p.Network.Session, "DYNAMIC") {
				t.Errorf("network %+v", p.Network)
			}
		}
	}
}

// The job kills what is left when srt lets go, lets nothing break away,
// bounds the processes and restricts the UI; the environment points
// every proxy variable at loopback and TEMP at the run's own directory.
func TestPlanJobAndEnvironment(t *testing.T) {
	dir := testtree.Tree(t, "proj/")
	o := Options{TempDir: filepath.Join(dir, "tmp"), ProxyPorts: []int{60081, 60082}}
	_, p := planOf(t, testtree.FSRules{}.Settings(), policy.Env{Cwd: filepath.Join(dir, "proj")}, o)
	if j := p.Job; !j.KillOnClose || j.Breakaway || !j.DieOnUnhandledException || j.ActiveProcesses == 0 || len(j.UI) == 0 {
		t.Errorf("job %+v", j)
	}
	got := map[string]string{}
	for _, v := range p.Env {
		got[v.Name] = v.Value
	}
	for _, name := range []string{"http_proxy", "https_proxy", "all_proxy", "grpc_proxy"} {
		if !strings.HasPrefix(got[name], "http://") || !strings.HasSuffix(got[name], "@127.0.0.1:60081") {
			t.Errorf("%s=%q", name, got[name])
		}
	}
	if !strings.HasPrefix(got["ftp_proxy"], "socks5h://") || !strings.HasSuffix(got["ftp_proxy"], ":60082") || !strings.HasSuffix(got["RSYNC_PROXY"], "@127.0.0.1:60082") ||
		got["TEMP"] != o.TempDir || got["TMP"] != o.TempDir {
		t.Errorf("environment %v", got)
	}
	// One spelling of each name: Windows' names ignore case.
	seen := map[string]bool{}
	for _, v := range p.Env {
		if seen[strings.ToUpper(v.Name)] {
			t.Errorf("%s twice", v.Name)
		}
		seen[strings.ToUpper(v.Name)] = true
	}
	// A run's own: the credential in the URL, escaped.
	run := strings.Join(RunEnv(o, 60081, 60082, "srt", "p@ss:w/rd"), "\n")
	if !strings.Contains(run, "http_proxy=http://srt:p%40ss%3Aw%2Frd@127.0.0.1:60081") {
		t.Errorf("a run's environment:\n%s", run)
	}
	if _, ok := got["no_proxy"]; ok {
		t.Error("no_proxy without allowLocalBinding")
	}
	if p.Identity.Account != DefaultAccount || !strings.Contains(p.Identity.Token, "write-restricted") {
		t.Errorf("identity %+v", p.Identity)
	}
}

// Settings the Windows backend cannot hold are refused with a message:
// filesystem.disabled, another backend, a port range out of bounds.
func TestPlanRefuses(t *testing.T) {
	dir := testtree.Tree(t, "proj/")
	env := policy.Env{Cwd: filepath.Join(dir, "proj")}
	s := testtree.FSRules{}.Settings()
	s.Filesystem.Disabled = true
	pol, err := policy.Build(s, env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(pol, Options{}); err == nil || !strings.Contains(err.Error(), "filesystem.disabled") {
		t.Errorf("filesystem.disabled: %v", err)
	}
	s = testtree.FSRules{}.Settings()
	s.Windows = &config.Windows{Backend: "mxc"}
	if _, err := OptionsOf(s); err == nil || !strings.Contains(err.Error(), "mxc") {
		t.Errorf("backend mxc: %v", err)
	}
	pol, _ = policy.Build(testtree.FSRules{}.Settings(), env)
	for _, r := range [][2]int{{61000, 60000}, {60000, 60064}, {0, 10}} {
		if _, err := Build(pol, Options{PortRange: r}); err == nil {
			t.Errorf("port range %v taken", r)
		}
	}
}
