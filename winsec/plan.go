// Package winsec is the Windows backend's plan (alpha): the platform-
// neutral policy (package policy) and the session's network as what
// Windows enforces — the identity the command runs as, the ACEs that
// identity is granted and denied, the WFP filters that fence its
// network, the job object that holds its processes, and its environment.
// The plan is pure data, made and tested on any host (srt plan --os
// windows prints it); the calls that apply it live in files of their own.
//
// The identity is the reference's model: a dedicated local account
// (srt-sandbox), made once by an elevated `srt windows install`, that
// runs the command with a write-restricted token whose one restricting
// SID is the account's own. Windows then grants a write only where an
// ACE names the account itself — never through Users, Everyone or
// Authenticated Users — so the command writes exactly where the plan's
// ACEs say, and WFP can tell its connections from the user's by the
// account (ALE_USER_ID). Two other identities were weighed:
//   - an AppContainer: its loopback is closed unless a machine-wide
//     exemption opens it for every container (the proxies live there),
//     and it reads only what grants name ALL APPLICATION PACKAGES, so
//     every tool the user runs would need grants on its files;
//   - a restricted token of the user: WFP matches the user's SID, so
//     the network fence would fence the user's own programs too.
package winsec

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/policy"
)

// DefaultAccount and DefaultGroup are the install's names, as in the
// reference; windows.sandboxUser names another account.
const (
	DefaultAccount = "srt-sandbox"
	DefaultGroup   = "sandbox-runtime-users"
)

// DefaultPortRange is where the session's proxies listen when
// windows.proxyPortRange says nothing (the reference's).
var DefaultPortRange = [2]int{60080, 60089}

// Plan is what the Windows backend applies for one session.
type Plan struct {
	Identity Identity `json:"identity"`
	// ACEs are added when the session starts and undone when it ends,
	// in order (their undos in reverse).
	ACEs []ACE `json:"aces"`
	// Skipped are the rules no ACE can carry, and why.
	Skipped []policy.Skip `json:"skipped,omitempty"`
	Network Network       `json:"network"`
	Job     Job           `json:"job"`
	Env     []Var         `json:"env"`
}

// Identity is who the command runs as.
type Identity struct {
	Account string `json:"account"`
	Group   string `json:"group"`
	// Token is how its token is made: write-restricted, the account's
	// SID the only restricting SID.
	Token string `json:"token"`
	// Install is what makes the account, once.
	Install string `json:"install"`
}

// ACE is one access-control entry the plan adds to a path's DACL.
type ACE struct {
	Path string `json:"path"`
	// Deny: an ACCESS_DENIED entry, else ACCESS_ALLOWED.
	Deny bool `json:"deny,omitempty"`
	// Trustee is the account the entry names.
	Trustee string `json:"trustee"`
	Mask    uint32 `json:"mask"`
	Rights  string `json:"rights"`
	// Inherited: on a directory, the entry is inherited by all beneath
	// it (OBJECT_INHERIT_ACE|CONTAINER_INHERIT_ACE); else it is the
	// object's alone.
	Inherited bool `json:"inherited,omitempty"`
	// Why is the rule behind the entry.
	Why string `json:"why"`
	// Undo is how the entry goes when the session ends.
	Undo string `json:"undo"`
}

// undoACE is every ACE's undo: srt adds an entry only where the DACL
// does not already hold it, and removes only what it added.
const undoACE = "removed when the session ends, matched by trustee, type, mask and flags; not added, and so not removed, where the DACL already holds it"

// Options are what a plan needs besides the filesystem policy.
type Options struct {
	// Account is windows.sandboxUser; "" is DefaultAccount.
	Account string
	// Cwd is the command's working directory: it must be readable.
	Cwd string
	// TempDir is the run's private TEMP, which srt makes.
	TempDir string
	// PortRange is windows.proxyPortRange; zero is DefaultPortRange.
	PortRange [2]int
	// ProxyPorts are the session's HTTP and SOCKS proxy ports; none in a
	// plan made before the session starts (the range stands for them).
	ProxyPorts []int
	// Sublayer is windows.sublayerGuid (or wfpSublayerGuid); "" is srt's own.
	Sublayer string
	// LocalBinding is network.allowLocalBinding.
	LocalBinding bool
	// AllowedDomains are network.allowedDomains, decided by the proxies.
	AllowedDomains []string
}

// OptionsOf are the options settings give: the windows section's
// account, port range and sublayer, and the network section's. A backend
// srt-go does not build (windows.backend "mxc") is refused.
func OptionsOf(settings *config.Settings) (Options, error) {
	o := Options{LocalBinding: settings.Network.AllowLocalBinding, AllowedDomains: settings.Network.AllowedDomains}
	w := settings.Windows
	if w == nil {
		return o, nil
	}
	if w.Backend != "" && w.Backend != "srt-win" {
		return o, fmt.Errorf("windows.backend %q: srt-go has one Windows backend, its own (\"srt-win\", the default)", w.Backend)
	}
	o.Account = w.SandboxUser
	o.Sublayer = w.SublayerGUID
	if o.Sublayer == "" {
		o.Sublayer = w.WFPSublayerGUID
	}
	if len(w.ProxyPortRange) == 2 {
		o.PortRange = [2]int{w.ProxyPortRange[0], w.ProxyPortRange[1]}
	}
	return o, nil
}

// Build is the plan of pol under o.
func Build(pol *policy.Policy, o Options) (*Plan, error) {
	if pol.Disabled {
		return nil, errors.New("filesystem.disabled: the Windows sandbox account writes only where an ACE grants it, so \"everything writable\" cannot be given; remove filesystem.disabled, or list the paths in allowWrite")
	}
	account := o.Account
	if account == "" {
		account = DefaultAccount
	}
	ports := o.PortRange
	if ports == [2]int{} {
		ports = DefaultPortRange
	}
	if ports[0] < 1 || ports[0] > ports[1] || ports[1] > 65535 || ports[1]-ports[0] >= 64 {
		return nil, fmt.Errorf("windows.proxyPortRange %d-%d: want 1 <= low <= high <= 65535, at most 64 ports", ports[0], ports[1])
	}
	aces, err := filesystemACEs(pol, account, o)
	if err != nil {
		return nil, err
	}
	p := &Plan{
		ACEs: aces,
		Identity: Identity{Account: account, Group: DefaultGroup,
			Token:   "write-restricted (CreateRestrictedToken WRITE_RESTRICTED), its one restricting SID the account's: a write needs an ACE naming " + account,
			Install: "`srt windows install`, elevated, once: the account (a random password, DPAPI-protected in HKLM\\SOFTWARE\\sandbox-runtime) and the group"},
		Skipped: skipped(pol),
		Network: network(o, account, ports),
		Job:     DefaultJob(),
		Env:     environment(o, ports),
	}
	return p, nil
}

// filesystemACEs are the ACEs that make pol hold for account: grants
// where it may read or write, denies where a deny rule lies beneath a
// grant (elsewhere the write-restricted token writes nothing anyway),
// and every hidden path denied whole. They are decided on the policy's
// paths (config's slash form) and name each path as Windows spells it.
func filesystemACEs(pol *policy.Policy, account string, o Options) ([]ACE, error) {
	tempDir, err := slashForm("the run's TEMP", o.TempDir)
	if err != nil {
		return nil, err
	}
	// The working directory as the disk spells it (the policy's paths
	// are resolved): a symlink or another spelling on the way would
	// otherwise miss the grants that cover it and get one of its own.
	if real, err := filepath.EvalSymlinks(o.Cwd); err == nil && o.Cwd != "" {
		o.Cwd = real
	}
	cwd, err := slashForm("the working directory", o.Cwd)
	if err != nil {
		return nil, err
	}
	var aces []ACE
	add := func(path string, deny bool, mask uint32, why string) {
		aces = append(aces, ACE{Path: config.ToOS(path), Deny: deny, Trustee: account, Mask: mask, Rights: RightsString(mask), Inherited: true, Why: why, Undo: undoACE})
	}
	// A deny of writing at or above a grant wins (policy's rule); on
	// Windows the nearest entry would, so such a grant is not made.
	var writeDenies []string
	for _, r := range pol.Writes {
		if !r.Allow {
			writeDenies = append(writeDenies, r.Path)
		}
	}
	var grants []string // paths granted Modify
	for _, r := range sortedRules(pol.Writes) {
		if r.Allow && !underAny(r.Path, writeDenies) {
			add(r.Path, false, Modify, r.Why)
			grants = append(grants, r.Path)
		}
	}
	if tempDir != "" && !underAny(tempDir, grants) {
		add(tempDir, false, Modify, "the run's private TEMP")
		grants = append(grants, tempDir)
	}
	granted := func(path string) bool { return underAny(path, grants) }
	reads := sortedRules(pol.Reads)
	// A grant of reading wins over a deny on the same path (policy's
	// rule); on Windows the deny would, so that deny is not made.
	allowedAt := map[string]bool{}
	for _, r := range reads {
		if r.Allow {
			allowedAt[r.Path] = true
		}
	}
	if cwd != "" && !granted(cwd) && pol.Readable(cwd) {
		reads = append(reads, policy.Rule{Path: cwd, Allow: true, Why: "the working directory"})
	}
	for _, r := range reads {
		switch {
		case r.Allow && !granted(r.Path):
			add(r.Path, false, ReadExecute, r.Why)
		case !r.Allow && !allowedAt[r.Path]:
			add(r.Path, true, AllAccess, r.Why+" (hidden: neither read nor written)")
			if hidden := config.ToOS(r.Path); filepath.Dir(hidden) != hidden {
				aces = append(aces, ACE{Path: filepath.Dir(hidden), Deny: true, Trustee: account, Mask: DeleteChild, Rights: RightsString(DeleteChild),
					Why: "the parent of " + hidden + ": no right granted there may delete or move the hidden path away", Undo: undoACE})
			}
		}
	}
	for _, r := range sortedRules(pol.Writes) {
		if !r.Allow && granted(r.Path) {
			add(r.Path, true, WriteRights, r.Why+" (read-only)")
		}
	}
	return aces, nil
}

// slashForm is p, a path of the options, in the policy's form.
func slashForm(what, p string) (string, error) {
	if p == "" {
		return "", nil
	}
	s, err := config.FromOS(p)
	if err != nil {
		return "", fmt.Errorf("%s %w", what, err)
	}
	return s, nil
}

// underAny says whether path is at or beneath one of dirs.
func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if policy.Under(path, d) {
			return true
		}
	}
	return false
}

// sortedRules are rules shallowest first, the order in which ACEs that
// inherit are set (a deeper one is set after, so that setting a
// shallower one's inheritance never rewrites it).
func sortedRules(rs []policy.Rule) []policy.Rule {
	out := append([]policy.Rule(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool { return policy.Depth(out[i].Path) < policy.Depth(out[j].Path) })
	return out
}

// skipped are the rules no ACE carries: those the policy skips, and
// those that apply to what appears after launch — an ACE goes on a path
// that exists, and the alpha has no guard of names made.
func skipped(pol *policy.Policy) []policy.Skip {
	var out []policy.Skip
	later := map[string]bool{}
	for _, l := range pol.Later {
		if l.Existed {
			continue
		}
		what := config.ToOS(l.Path)
		if l.Pattern != "" {
			if what = config.ToOS(l.Pattern); what == "" {
				what = l.Pattern // a pattern whose volume is a wildcard
			}
		}
		later[l.Why] = true
		out = append(out, policy.Skip{Rule: l.Why, Why: what + " does not exist at launch, or is a pattern: no ACE can name it"})
	}
	for _, s := range pol.Skipped {
		if !later[s.Rule] {
			out = append(out, s)
		}
	}
	return out
}

// Network is the WFP part of the plan: filters of a dynamic session
// (they go when srt's engine handle closes, srt's death included) in a
// sublayer of srt's, by which the sandbox account reaches srt's proxies
// on loopback and nothing else, and no other local account reaches the
// proxies.
type Network struct {
	Session  string   `json:"session"`
	Sublayer string   `json:"sublayer,omitempty"` // "": a new one for each session
	Ports    [2]int   `json:"proxyPortRange"`
	Filters  []Filter `json:"filters"`
	// AllowedDomains are decided by the proxies, as on every system.
	AllowedDomains []string `json:"allowedDomains"`
}

// Filter is one WFP filter.
type Filter struct {
	Layer      string      `json:"layer"`
	Action     string      `json:"action"` // "permit" or "block"
	Weight     int         `json:"weight"` // the higher wins within the sublayer
	Conditions []Condition `json:"conditions"`
	Why        string      `json:"why"`
}

// Condition is one condition of a filter; all of a filter's hold.
// Field, Match and Value say it for people; arg is what the OS half
// passes to WFP: a users (ALE_USER_ID), a netip.Addr (the remote
// address), a portRange or a []int of ports (the remote port).
type Condition struct {
	Field string `json:"field"`
	Match string `json:"match"`
	Value string `json:"value"`
	arg   any
}

// users is an ALE_USER_ID condition: the token holds the sandbox
// account's SID (or, with none, holds neither it nor srt's own user's).
type users struct{ none bool }

// portRange is an IP_REMOTE_PORT condition: lo to hi, both in.
type portRange struct{ lo, hi int }

func network(o Options, account string, ports [2]int) Network {
	// Without a sublayer in the settings, each session makes its own
	// (two sessions at once would otherwise meet on one).
	n := Network{Session: "dynamic (FWPM_SESSION_FLAG_DYNAMIC)", Sublayer: o.Sublayer, Ports: ports, AllowedDomains: append([]string{}, o.AllowedDomains...)}
	sandbox := Condition{Field: "ALE_USER_ID", Match: "the token holds", Value: account, arg: users{}}
	others := Condition{Field: "ALE_USER_ID", Match: "the token holds none of", Value: account + ", srt's own user", arg: users{none: true}}
	proxyPorts := Condition{Field: "IP_REMOTE_PORT", Match: "range", Value: strconv.Itoa(ports[0]) + "-" + strconv.Itoa(ports[1]), arg: portRange{ports[0], ports[1]}}
	if len(o.ProxyPorts) > 0 {
		proxyPorts.Match, proxyPorts.Value, proxyPorts.arg = "one of", joinInts(o.ProxyPorts), append([]int(nil), o.ProxyPorts...)
	}
	for _, v := range []struct {
		suffix   string
		loopback netip.Addr
	}{{"V4", netip.MustParseAddr("127.0.0.1")}, {"V6", netip.IPv6Loopback()}} {
		loop := Condition{Field: "IP_REMOTE_ADDRESS", Match: "equal", Value: v.loopback.String(), arg: v.loopback}
		connect, accept := "ALE_AUTH_CONNECT_"+v.suffix, "ALE_AUTH_RECV_ACCEPT_"+v.suffix
		n.Filters = append(n.Filters,
			Filter{Layer: connect, Action: "permit", Weight: 15, Conditions: []Condition{sandbox, loop, proxyPorts},
				Why: "the sandbox reaches srt's proxies on loopback (every allowed domain goes through them)"},
			Filter{Layer: connect, Action: "block", Weight: 14, Conditions: []Condition{others, loop, proxyPorts},
				Why: "no other local account reaches the proxies"})
		if o.LocalBinding {
			n.Filters = append(n.Filters,
				Filter{Layer: connect, Action: "permit", Weight: 13, Conditions: []Condition{sandbox, loop},
					Why: "allowLocalBinding: the sandbox connects to loopback"},
				Filter{Layer: accept, Action: "permit", Weight: 13, Conditions: []Condition{sandbox, loop},
					Why: "allowLocalBinding: the sandbox accepts from loopback"})
		}
		n.Filters = append(n.Filters,
			Filter{Layer: connect, Action: "block", Weight: 1, Conditions: []Condition{sandbox},
				Why: "every other connection of the sandbox (TCP and UDP, to any host and port)"},
			Filter{Layer: accept, Action: "block", Weight: 1, Conditions: []Condition{sandbox},
				Why: "every connection to a socket of the sandbox"})
	}
	return n
}

func joinInts(vs []int) string {
	s := ""
	for i, v := range vs {
		if i > 0 {
			s += ","
		}
		s += strconv.Itoa(v)
	}
	return s
}

// Job is the job object every process of the command runs in.
type Job struct {
	// KillOnClose: closing srt's handle (srt's end, its death included)
	// ends every process of the job.
	KillOnClose bool `json:"killOnClose"`
	// DieOnUnhandledException: no error dialog holds a crashed process.
	DieOnUnhandledException bool `json:"dieOnUnhandledException"`
	// Breakaway: a process may leave the job (never).
	Breakaway bool `json:"breakaway"`
	// ActiveProcesses bounds the job's processes at once.
	ActiveProcesses uint32 `json:"activeProcesses"`
	// UI are the user-interface restrictions (JOB_OBJECT_UILIMIT_*).
	UI []string `json:"ui"`
}

// JobProcessLimit bounds a command's processes at once: far above a
// build's, far below what would exhaust the machine.
const JobProcessLimit = 1024

// DefaultJob is the job every command runs in (the plan's).
func DefaultJob() Job {
	return Job{KillOnClose: true, DieOnUnhandledException: true, ActiveProcesses: JobProcessLimit,
		UI: []string{"DESKTOP", "DISPLAYSETTINGS", "EXITWINDOWS", "GLOBALATOMS", "HANDLES", "READCLIPBOARD", "SYSTEMPARAMETERS", "WRITECLIPBOARD"}}
}

// Var is one variable the command's environment gets, and why.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Why   string `json:"why"`
}

// environment is the plan's: the variables with the proxies' ports and
// the run's credential written as placeholders (a run has its own).
func environment(o Options, ports [2]int) []Var {
	http, socks := "<HTTP proxy port>", "<SOCKS proxy port>"
	if len(o.ProxyPorts) >= 2 {
		http, socks = strconv.Itoa(o.ProxyPorts[0]), strconv.Itoa(o.ProxyPorts[1])
	}
	return proxyEnv(http, socks, "srt:<run credential>", fmt.Sprintf(" (in %d-%d)", ports[0], ports[1]), o)
}

// RunEnv is the variables a run's command gets: its proxies' ports, its
// credential (user and password, as proxy.Credential holds them), its
// TEMP; one spelling each, since Windows' names ignore case.
func RunEnv(o Options, httpPort, socksPort int, user, password string) []string {
	userinfo := url.UserPassword(user, password).String()
	var out []string
	for _, v := range proxyEnv(strconv.Itoa(httpPort), strconv.Itoa(socksPort), userinfo, "", o) {
		out = append(out, v.Name+"="+v.Value)
	}
	return out
}

// proxyEnv maps the proxies as the POSIX backends do (HTTP for http,
// https, all and grpc; SOCKS for ftp and rsync), in the reference's one
// Windows spelling of each.
func proxyEnv(http, socks, userinfo, where string, o Options) []Var {
	httpURL := "http://" + userinfo + "@127.0.0.1:" + http
	socksURL := "socks5h://" + userinfo + "@127.0.0.1:" + socks
	env := []Var{{Name: "SANDBOX_RUNTIME", Value: "1", Why: "tells a program it runs sandboxed"}}
	for _, name := range []string{"http_proxy", "https_proxy", "all_proxy", "grpc_proxy"} {
		env = append(env, Var{Name: name, Value: httpURL, Why: "srt's HTTP proxy" + where})
	}
	env = append(env,
		Var{Name: "ftp_proxy", Value: socksURL, Why: "srt's SOCKS5 proxy" + where},
		Var{Name: "RSYNC_PROXY", Value: userinfo + "@127.0.0.1:" + socks, Why: "srt's SOCKS5 proxy" + where},
		Var{Name: "NODE_USE_ENV_PROXY", Value: "1", Why: "Node's fetch takes the proxy variables"})
	if o.LocalBinding {
		env = append(env, Var{Name: "no_proxy", Value: "localhost,127.0.0.1,::1", Why: "allowLocalBinding: loopback is reached directly"})
	}
	if o.TempDir != "" {
		for _, name := range []string{"TEMP", "TMP"} {
			env = append(env, Var{Name: name, Value: o.TempDir, Why: "the run's private temporary directory"})
		}
	}
	return env
}

// String renders the plan for people.
func (p *Plan) String() string {
	var b strings.Builder
	id := p.Identity
	fmt.Fprintf(&b, "Identity: account %s (group %s), made by %s\nToken: %s\n", id.Account, id.Group, id.Install, id.Token)
	b.WriteString("ACEs (added at the session's start, each undone at its end):\n")
	for _, a := range p.ACEs {
		kind, inherit := "allow", ""
		if a.Deny {
			kind = "deny "
		}
		if a.Inherited {
			inherit = ", inherited beneath"
		}
		fmt.Fprintf(&b, "  %s %s %s: %s%s — %s\n", kind, a.Trustee, a.Path, maskName(a.Mask), inherit, a.Why)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "  skipped %s: %s\n", s.Rule, s.Why)
	}
	n := p.Network
	sublayer := n.Sublayer
	if sublayer == "" {
		sublayer = "a new one for each session"
	}
	fmt.Fprintf(&b, "WFP filters (%s session, sublayer %s; proxies in ports %d-%d):\n", n.Session, sublayer, n.Ports[0], n.Ports[1])
	for _, f := range n.Filters {
		var conds []string
		for _, c := range f.Conditions {
			conds = append(conds, c.Field+" "+c.Match+" "+c.Value)
		}
		fmt.Fprintf(&b, "  %s %s, weight %d, if %s — %s\n", f.Layer, f.Action, f.Weight, strings.Join(conds, " and "), f.Why)
	}
	fmt.Fprintf(&b, "Allowed domains (decided by the proxies): %s\n", strings.Join(n.AllowedDomains, ", "))
	j := p.Job
	fmt.Fprintf(&b, "Job object: kill on close %v, die on unhandled exception %v, breakaway %v, at most %d processes, UI limits %s\n",
		j.KillOnClose, j.DieOnUnhandledException, j.Breakaway, j.ActiveProcesses, strings.Join(j.UI, ", "))
	b.WriteString("Environment:\n")
	for _, v := range p.Env {
		fmt.Fprintf(&b, "  %s=%s — %s\n", v.Name, v.Value, v.Why)
	}
	return b.String()
}
