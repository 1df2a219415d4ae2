// Package config loads and validates the settings file of the sandbox: the
// reference's schema, its file semantics (a file asked for but unusable is
// an error, never a fallback to defaults), and the expansion of path
// entries. Validation is strict where the reference lets garbage through.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Settings is a validated settings file. Optional fields that have a
// default hold it after Parse; pointers are nil where absence itself means
// something (an external proxy port, an optional feature block).
type Settings struct {
	Network                      Network             `json:"network"`
	Filesystem                   Filesystem          `json:"filesystem"`
	Credentials                  *Credentials        `json:"credentials,omitempty"`
	IgnoreViolations             map[string][]string `json:"ignoreViolations,omitempty"`
	EnableWeakerNestedSandbox    bool                `json:"enableWeakerNestedSandbox,omitempty"`
	AllowNestedUserNamespaces    bool                `json:"allowNestedUserNamespaces,omitempty"`
	EnableWeakerNetworkIsolation bool                `json:"enableWeakerNetworkIsolation,omitempty"`
	AllowAppleEvents             bool                `json:"allowAppleEvents,omitempty"`
	AllowPty                     bool                `json:"allowPty,omitempty"`
	Ripgrep                      *Ripgrep            `json:"ripgrep,omitempty"`
	MandatoryDenySearchDepth     int                 `json:"mandatoryDenySearchDepth"`
	Seccomp                      *Seccomp            `json:"seccomp,omitempty"`
	BwrapPath                    string              `json:"bwrapPath,omitempty"`
	SocatPath                    string              `json:"socatPath,omitempty"`
	JavaAgentJarPath             string              `json:"javaAgentJarPath,omitempty"`
	Windows                      *Windows            `json:"windows,omitempty"`
	Git                          *Git                `json:"git,omitempty"`
}

// Network is the "network" section.
type Network struct {
	AllowedDomains          []string          `json:"allowedDomains"`
	DeniedDomains           []string          `json:"deniedDomains"`
	DeniedDomainReasons     map[string]string `json:"deniedDomainReasons,omitempty"`
	StrictAllowlist         bool              `json:"strictAllowlist,omitempty"`
	DeniedResolvedAddresses []string          `json:"deniedResolvedAddresses,omitempty"`
	AllowUnixSockets        []string          `json:"allowUnixSockets,omitempty"`
	AllowAllUnixSockets     bool              `json:"allowAllUnixSockets,omitempty"`
	AllowLocalBinding       bool              `json:"allowLocalBinding,omitempty"`
	AllowMachLookup         []string          `json:"allowMachLookup,omitempty"`
	HTTPProxyPort           *int              `json:"httpProxyPort,omitempty"`
	SOCKSProxyPort          *int              `json:"socksProxyPort,omitempty"`
	MITMProxy               *MITMProxy        `json:"mitmProxy,omitempty"`
	ParentProxy             *ParentProxy      `json:"parentProxy,omitempty"`
	TLSTerminate            *TLSTerminate     `json:"tlsTerminate,omitempty"`
	AllowPlaintextHeaderSet bool              `json:"allowPlaintextHeaderSet,omitempty"`
	StripResponseHeaders    []string          `json:"stripResponseHeaders,omitempty"`
	RefuseOpaqueTunnels     bool              `json:"refuseOpaqueTunnels,omitempty"`
	RequireHostMatch        bool              `json:"requireHostMatch,omitempty"`
	AmbiguousRequestTarget  string            `json:"ambiguousRequestTarget,omitempty"`
}

// MITMProxy is "network.mitmProxy".
type MITMProxy struct {
	SocketPath string   `json:"socketPath"`
	Domains    []string `json:"domains"`
}

// ParentProxy is "network.parentProxy".
type ParentProxy struct {
	HTTP    string `json:"http,omitempty"`
	HTTPS   string `json:"https,omitempty"`
	NoProxy string `json:"noProxy,omitempty"`
}

// TLSTerminate is "network.tlsTerminate".
type TLSTerminate struct {
	CACertPath         string   `json:"caCertPath,omitempty"`
	CAKeyPath          string   `json:"caKeyPath,omitempty"`
	ExcludeDomains     []string `json:"excludeDomains,omitempty"`
	ExtraCACertPaths   []string `json:"extraCaCertPaths,omitempty"`
	MaxTunnels         int      `json:"maxTunnels"`
	HandshakeTimeoutMs int      `json:"handshakeTimeoutMs"`
}

// Filesystem is the "filesystem" section.
type Filesystem struct {
	Disabled       bool        `json:"disabled,omitempty"`
	DenyRead       []PathEntry `json:"denyRead"`
	AllowRead      []PathEntry `json:"allowRead"`
	AllowWrite     []PathEntry `json:"allowWrite"`
	DenyWrite      []PathEntry `json:"denyWrite"`
	AllowGitConfig bool        `json:"allowGitConfig,omitempty"`
	// SkipPathGuard turns the path guard off (Linux's namespace sandbox):
	// the protected names that exist at launch stay read-only mounts,
	// and those made during the run are not refused.
	SkipPathGuard bool `json:"skipPathGuard,omitempty"`
}

// PathEntry is one entry of a filesystem list: a path or glob as written,
// or, with Literal, a path that is never read as a glob.
type PathEntry struct {
	Path    string
	Literal bool
}

// UnmarshalJSON reads either form; the schema has already checked it.
func (p *PathEntry) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		p.Literal = false
		return json.Unmarshal(b, &p.Path)
	}
	var o struct {
		Path    string `json:"path"`
		Literal bool   `json:"literal"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	p.Path, p.Literal = o.Path, o.Literal
	return nil
}

// MarshalJSON writes the entry in the form it was given.
func (p PathEntry) MarshalJSON() ([]byte, error) {
	if !p.Literal {
		return json.Marshal(p.Path)
	}
	return json.Marshal(map[string]any{"path": p.Path, "literal": true})
}

// Credentials is the "credentials" section.
type Credentials struct {
	Files                []CredentialFile   `json:"files,omitempty"`
	EnvVars              []CredentialEnvVar `json:"envVars,omitempty"`
	AllowPlaintextInject bool               `json:"allowPlaintextInject,omitempty"`
	AWSPairs             []AWSPair          `json:"awsPairs,omitempty"`
	SigV4                *SigV4             `json:"sigv4,omitempty"`
}

// CredentialRule is what file and environment credentials share.
type CredentialRule struct {
	Mode             string    `json:"mode"`
	Extract          string    `json:"extract,omitempty"`
	OnExtractNoMatch string    `json:"onExtractNoMatch,omitempty"`
	Decode           string    `json:"decode,omitempty"`
	MaskClaims       *[]string `json:"maskClaims,omitempty"`
	InjectHosts      *[]string `json:"injectHosts,omitempty"`
}

// CredentialFile is one "credentials.files" entry.
type CredentialFile struct {
	Path           string `json:"path"`
	MaskDuplicates bool   `json:"maskDuplicates,omitempty"`
	CredentialRule
}

// CredentialEnvVar is one "credentials.envVars" entry.
type CredentialEnvVar struct {
	Name string `json:"name"`
	CredentialRule
}

// AWSPair is one "credentials.awsPairs" entry.
type AWSPair struct {
	AccessKeyIDVar     string `json:"accessKeyIdVar"`
	SecretAccessKeyVar string `json:"secretAccessKeyVar"`
	SessionTokenVar    string `json:"sessionTokenVar,omitempty"`
}

// SigV4 is "credentials.sigv4"; each field is "deny" (the default) or
// "passthrough".
type SigV4 struct {
	Streaming string `json:"streaming,omitempty"`
	Presigned string `json:"presigned,omitempty"`
	SigV4A    string `json:"sigv4a,omitempty"`
}

// Ripgrep is "ripgrep" (accepted for compatibility; not used).
type Ripgrep struct {
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	Argv0   string   `json:"argv0,omitempty"`
}

// Seccomp is "seccomp" (accepted for compatibility; not used).
type Seccomp struct {
	ApplyPath string `json:"applyPath,omitempty"`
	Argv0     string `json:"argv0,omitempty"`
}

// Windows is "windows".
type Windows struct {
	Backend         string `json:"backend,omitempty"`
	SandboxUser     string `json:"sandboxUser,omitempty"`
	SublayerGUID    string `json:"sublayerGuid,omitempty"`
	WFPSublayerGUID string `json:"wfpSublayerGuid,omitempty"`
	ProxyPortRange  []int  `json:"proxyPortRange,omitempty"`
	SrtWin          *struct {
		Path string `json:"path,omitempty"`
	} `json:"srtWin,omitempty"`
}

// Git is "git".
type Git struct {
	SafeDirectories []string `json:"safeDirectories"`
}

// DefaultSearchDepth is the default of mandatoryDenySearchDepth.
const DefaultSearchDepth = 3

// Default returns the built-in settings used when no file exists at the
// default path: no network, writes only to the default write paths, reads
// unrestricted.
func Default() *Settings {
	s := &Settings{
		Network:    Network{AllowedDomains: []string{}, DeniedDomains: []string{}},
		Filesystem: Filesystem{DenyRead: []PathEntry{}, AllowRead: []PathEntry{}, AllowWrite: []PathEntry{}, DenyWrite: []PathEntry{}},
	}
	s.applyDefaults()
	return s
}

func (s *Settings) applyDefaults() {
	if s.MandatoryDenySearchDepth == 0 {
		s.MandatoryDenySearchDepth = DefaultSearchDepth
	}
	if s.Filesystem.AllowRead == nil {
		s.Filesystem.AllowRead = []PathEntry{}
	}
	if t := s.Network.TLSTerminate; t != nil {
		if t.MaxTunnels == 0 {
			t.MaxTunnels = 256
		}
		if t.HandshakeTimeoutMs == 0 {
			t.HandshakeTimeoutMs = 10000
		}
	}
	if s.Git != nil && s.Git.SafeDirectories == nil {
		s.Git.SafeDirectories = []string{}
	}
	if s.Network.AmbiguousRequestTarget == "" {
		s.Network.AmbiguousRequestTarget = "refuse"
	}
}

// ValidationError lists every problem found in a settings document.
type ValidationError struct {
	Issues []string // "path.to.field: what is wrong", in file order
}

func (e *ValidationError) Error() string { return strings.Join(e.Issues, "; ") }

// Parse validates a settings document. It returns the settings, the
// dotted paths of keys it ignored (unknown to the schema), and an error
// that is a *ValidationError for schema problems.
func Parse(data []byte) (*Settings, []string, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, nil, &SyntaxError{Msg: err.Error()}
	}
	var r report
	settingsSchema().validate(v, nil, &r)
	var s Settings
	if len(r.issues) == 0 {
		// The schema held, so the document decodes; the checks that
		// relate fields to each other work on the typed form.
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, r.unknown, bug(err)
		}
		crossChecks(&s, &r)
	}
	if len(r.issues) > 0 {
		ve := &ValidationError{}
		for _, i := range r.issues {
			ve.Issues = append(ve.Issues, i.String())
		}
		return nil, r.unknown, ve
	}
	s.applyDefaults()
	return &s, r.unknown, nil
}

// SyntaxError is a document that is not JSON.
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return e.Msg }

// bug wraps an error that the validation before it makes impossible.
func bug(err error) error {
	return fmt.Errorf("internal error (please report): %w", err)
}

// LoadError is a settings file that cannot be used. Its message names the
// file and what is wrong, and Refusal is the sentence that says why srt
// does not fall back to the built-in defaults.
type LoadError struct {
	Path    string
	Msg     string // "<path> is not valid JSON: ..."
	Refusal string
	Err     error
}

func (e *LoadError) Error() string { return e.Msg }
func (e *LoadError) Unwrap() error { return e.Err }

const (
	refuseAsked = "Refusing to run with the built-in defaults, which would drop the rules --settings asked for."
	refuseFile  = "Refusing to run with the built-in defaults, which would drop this file's rules (its denyRead, allowRead and credential entries included)."
)

// Loaded is the result of Load.
type Loaded struct {
	Settings *Settings
	Path     string
	Found    bool     // false: no file at the default path, Settings are the defaults
	Unknown  []string // ignored keys, dotted
}

// Load reads the settings file at path. explicit says the path was asked
// for (--settings): then a missing file is an error too. Without explicit,
// a missing file means the built-in defaults; every other problem (a read
// error, an empty file, bad JSON, a schema violation) is an error either
// way, because the file's rules would otherwise be silently dropped.
func Load(path string, explicit bool) (*Loaded, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
			if !explicit {
				return &Loaded{Settings: Default(), Path: path}, nil
			}
			return nil, &LoadError{Path: path, Msg: path + " does not exist.", Refusal: refuseAsked, Err: err}
		}
		return nil, &LoadError{Path: path, Msg: fmt.Sprintf("%s could not be read (%s).", path, errnoName(err)), Refusal: refuseFile, Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &LoadError{Path: path, Msg: path + " is empty. Delete it, or put a config in it.", Refusal: refuseFile}
	}
	s, unknown, err := Parse(data)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return nil, &LoadError{Path: path, Msg: fmt.Sprintf("%s is not valid JSON: %s", path, se.Msg), Refusal: refuseFile, Err: err}
		}
		return nil, &LoadError{Path: path, Msg: fmt.Sprintf("%s does not hold a valid config — %v", path, err), Refusal: refuseFile, Err: err}
	}
	return &Loaded{Settings: s, Path: path, Found: true, Unknown: unknown}, nil
}

// isNotDir tells ENOTDIR (a path component is a file, e.g. $HOME is a
// file) from a plain missing file: the reference refuses the former.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// errnoName gives the symbolic name of the errno inside err ("EACCES").
func errnoName(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if name, ok := errnoNames[errno]; ok {
			return name
		}
		return errno.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

var errnoNames = map[syscall.Errno]string{
	syscall.EACCES:  "EACCES",
	syscall.EISDIR:  "EISDIR",
	syscall.ENOTDIR: "ENOTDIR",
	syscall.ELOOP:   "ELOOP",
	syscall.EPERM:   "EPERM",
	syscall.EIO:     "EIO",
	syscall.ENOENT:  "ENOENT",
}

// Schema returns the JSON Schema of the settings file.
func Schema() []byte {
	s := settingsSchema().jsonSchema()
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = "srt settings"
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(bug(err))
	}
	return append(b, '\n')
}
