// Command srt runs a command inside the sandbox: it reads the settings
// file, builds the isolation the settings ask for, and runs the command in
// it, or refuses with a reason. It never runs a command unconfined.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/srt-go/srt"
	"github.com/srt-go/srt/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	// The same binary is the sandbox's init: that role returns never.
	srt.MaybeRunInit()
	closeOnExec()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// cli carries what one invocation writes to.
type cli struct {
	stdout, stderr io.Writer
	debug          bool
}

func (c *cli) errorf(format string, args ...any) {
	fmt.Fprintf(c.stderr, "srt: "+format+"\n", args...)
}

func (c *cli) debugf(format string, args ...any) {
	if c.debug {
		fmt.Fprintf(c.stderr, "[SandboxDebug] "+format+"\n", args...)
	}
}

// run is srt without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	c := &cli{stdout: stdout, stderr: stderr}
	o, err := parseArgs(args)
	if err != nil {
		c.errorf("%v", err)
		c.errorf(`run "srt --help" for usage`)
		return 1
	}
	switch {
	case o.subcommand == "schema":
		if len(o.subcmdArgs) > 0 {
			c.errorf("schema takes no arguments (got %q)", o.subcmdArgs[0])
			return 1
		}
		if _, err := stdout.Write(config.Schema()); err != nil {
			c.errorf("writing the schema: %v", err)
			return 1
		}
		return 0
	case o.subcommand == "doctor":
		return doctor(c, o.subcmdArgs)
	case o.subcommand == "plan":
		return plan(c, o.subcmdArgs)
	case o.subcommand == "ssh-proxy":
		return sshProxy(c, o.subcmdArgs)
	case o.subcommand == "windows-install" || o.subcommand == "windows-uninstall":
		return windowsInstall(c, o.subcommand, o.subcmdArgs)
	case o.help:
		fmt.Fprint(stdout, usage)
		return 0
	case o.version:
		fmt.Fprintln(stdout, version)
		return 0
	}
	c.debug = o.debug || os.Getenv("SRT_DEBUG") != ""
	// What srt prints never holds a real value (credential.Redacting),
	// and the libraries' log lines are srt's to print: under --debug,
	// as its own debug lines; else nowhere.
	c.stderr = srt.Redacting(stderr)
	logTo := io.Discard
	if c.debug {
		logTo = c.stderr
		log.SetPrefix("[SandboxDebug] log: ")
	}
	log.SetFlags(0)
	log.SetOutput(srt.Redacting(logTo))

	// The order is the reference's: settings first, then the control fd,
	// then the command, so a broken settings file is reported even when
	// the rest of the line is wrong too.
	settings, ok := c.loadSettings(o)
	if !ok {
		return 1
	}
	if o.controlFD >= 0 {
		if err := checkControlFD(o.controlFD); err != nil {
			c.errorf("--control-fd %d is not usable: %v. Refusing to run the command without the control channel it asks for.", o.controlFD, err)
			return 1
		}
	}
	argv := o.argv()
	if len(argv) == 0 {
		c.errorf("no command specified. Use -c <command> or provide command arguments.")
		return 1
	}
	if o.hasShell {
		c.debugf("Command string mode (-c): %s", o.shell)
	} else {
		c.debugf("Original command: %s", o.commandText())
	}
	out, err := openViolations(o.violations)
	if err != nil {
		c.errorf("--violations %s: %v", o.violations, err)
		return 1
	}
	if out != nil {
		defer out.Close()
	}
	opts := []srt.Option{srt.WithViolationHandler(out.write)}
	if c.debug {
		opts = append(opts, srt.WithDebugLog(c.debugf))
	}
	sb, err := srt.New(context.Background(), settings, opts...)
	if err != nil {
		c.errorf("%v; refusing to run %q unconfined", err, o.commandText())
		return 1
	}
	defer sb.Close()
	run := srt.Run{Text: o.commandText()}
	var control *controlChannel
	if o.controlFD >= 0 {
		// The command finds /dev/null where srt's channel is; the
		// channel is read from now on, the sandbox being ready.
		run.NullFDs = []int{o.controlFD}
		control = readControl(c, sb, o.controlFD)
	}
	key := run.Text
	stopped := make(chan bool, 16)
	run.OnStop = func(asked bool) {
		select {
		case stopped <- asked:
		default:
		}
	}
	l, err := sandboxCommand(c, sb, run, argv, func(line string) { sb.InferFromStderr(key, line) })
	if err != nil {
		c.errorf("%v; refusing to run %q unconfined", err, o.commandText())
		return 1
	}
	j := job{start: func() error { return sb.Start(l.Cmd) }, stopped: stopped,
		afterStart: func() {
			l.started()
			if control != nil {
				control.started(l.Cmd.Process)
			}
		}}
	l.terminal(&j)
	status, err := supervise(l.Cmd, j)
	l.Close()
	if err != nil {
		// A host that refuses the sandbox says so in its own words.
		var ue *srt.UnsupportedError
		if errors.As(err, &ue) {
			err = ue
		}
		c.errorf("%v", err)
		return 1
	}
	if err := sb.Err(key); err != nil {
		// The command was stopped: srt's side of its sandbox failed.
		c.errorf("the sandbox failed while the command ran, and srt stopped it: %v", err)
		return 1
	}
	if control != nil && control.failed() {
		return 1
	}
	if status != 0 && !o.quiet {
		summarize(c, sb.Violations(key))
	}
	return status
}

// summarize tells a person what the sandbox blocked, at most a few lines.
// Library probes (Violation.Probe) are left out; --violations has them.
func summarize(c *cli, all []srt.Violation) {
	const most = 5
	var vs []srt.Violation
	for _, v := range all {
		if !v.Probe() {
			vs = append(vs, v)
		}
	}
	for i, v := range vs {
		if i == most {
			c.errorf("... and %d more (see --violations)", len(vs)-most)
			break
		}
		c.errorf("%s", v.Summary())
	}
}

// loadSettings reads the settings file and reports every problem on
// stderr. It never falls back to the defaults when a file was asked for
// or exists but cannot be used.
func (c *cli) loadSettings(o *options) (*config.Settings, bool) {
	path, explicit := o.settings, o.sawSettings
	if !explicit {
		home, err := homeDir()
		if err != nil {
			c.debugf("No home directory (%v), using default config", err)
			return config.Default(), true
		}
		path = filepath.Join(home, ".srt-settings.json")
	}
	l, err := config.Load(path, explicit)
	if err != nil {
		var le *config.LoadError
		if errors.As(err, &le) {
			c.errorf("%s", le.Msg)
			c.errorf("%s", le.Refusal)
		} else {
			c.errorf("%v", err)
		}
		return nil, false
	}
	if !l.Found {
		c.debugf("No config found at %s, using default config", path)
	}
	if len(l.Unknown) > 0 {
		quoted := make([]string, len(l.Unknown))
		for i, k := range l.Unknown {
			quoted[i] = fmt.Sprintf("%q", k)
		}
		noun := "key"
		if len(quoted) > 1 {
			noun = "keys"
		}
		c.errorf("ignoring unknown settings %s %s in %s", noun, strings.Join(quoted, ", "), path)
	}
	source := "Loaded config from " + path
	if !l.Found {
		source = "Default config"
	}
	c.debugf("%s: %d allowed and %d denied domains, %d denyRead, %d allowRead, %d allowWrite, %d denyWrite entries",
		source, len(l.Settings.Network.AllowedDomains), len(l.Settings.Network.DeniedDomains),
		len(l.Settings.Filesystem.DenyRead), len(l.Settings.Filesystem.AllowRead),
		len(l.Settings.Filesystem.AllowWrite), len(l.Settings.Filesystem.DenyWrite))
	if refused := c.refusedKeys(l.Settings); refused > 0 {
		what := "the key above from it"
		if refused > 1 {
			what = "the keys above from it"
		}
		c.errorf("Refusing to run without what %s asks for; remove %s to run.", path, what)
		return nil, false
	}
	c.acceptedMeaningless(l.Settings)
	return l.Settings, true
}

// refusedKeys reports, a line each, the keys of s that srt refuses on
// this platform (config.Rules), and returns how many there are. A
// platform with no backend at all is left to srt.New to report.
func (c *cli) refusedKeys(s *config.Settings) int {
	var re *config.RefusedError
	if !errors.As(srt.CheckSettings(s), &re) {
		return 0
	}
	for _, r := range re.Refusals {
		c.errorf("%s", r)
	}
	return len(re.Refusals)
}

// acceptedMeaningless lists under --debug the keys of s that have no
// meaning on this platform: accepted, and nothing done for them.
func (c *cli) acceptedMeaningless(s *config.Settings) {
	for _, r := range config.Meaningless(s, runtime.GOOS) {
		c.debugf("%s: accepted, nothing to apply", r)
	}
}

// homeDir is $HOME, or the account's home directory when HOME is unset.
func homeDir() (string, error) {
	if h := os.Getenv("HOME"); h != "" {
		return h, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", err
	}
	if u.HomeDir == "" {
		return "", errors.New("the account has no home directory")
	}
	return u.HomeDir, nil
}
