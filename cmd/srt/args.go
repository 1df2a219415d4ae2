package main

import (
	"fmt"
	"strconv"
	"strings"
)

// options is a parsed command line.
type options struct {
	settings    string // --settings; "" = the default path
	debug       bool
	shell       string // -c
	hasShell    bool
	controlFD   int    // --control-fd; -1 = none
	violations  string // --violations FILE or fd:N
	quiet       bool
	help        bool
	version     bool
	command     []string // the command and its arguments (with -c: sh's $0 and positional parameters)
	subcommand  string   // "schema"
	subcmdArgs  []string // arguments of the subcommand
	sawSettings bool
}

// usageError is a bad command line; its message is printed after "srt: ".
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// subcommands are recognised only as the very first argument, so that
// "srt -- schema" still runs a program called schema.
var subcommands = map[string]bool{"schema": true, "doctor": true, "ssh-proxy": true, "plan": true, "windows-install": true, "windows-uninstall": true}

// parseArgs reads srt's own options. They end at the first word that is
// not one of them, or at "--": everything after belongs to the command,
// untouched, so "srt grep -c x f" runs grep with its own -c (the reference
// would take -c for itself).
func parseArgs(args []string) (*options, error) {
	o := &options{controlFD: -1}
	if len(args) > 0 && subcommands[args[0]] {
		o.subcommand, o.subcmdArgs = args[0], args[1:]
		return o, nil
	}
	i := 0
	value := func(name string, inline *string) (string, error) {
		if inline != nil {
			return *inline, nil
		}
		if i+1 >= len(args) {
			return "", usagef("option %s needs a value", name)
		}
		i++
		return args[i], nil
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, inline := a, (*string)(nil)
		if strings.HasPrefix(a, "--") {
			if eq := strings.IndexByte(a, '='); eq >= 0 {
				v := a[eq+1:]
				name, inline = a[:eq], &v
			}
		}
		switch name {
		case "-s", "--settings":
			v, err := value(name, inline)
			if err != nil {
				return nil, err
			}
			if o.sawSettings {
				return nil, usagef("option --settings is given twice")
			}
			if v == "" {
				return nil, usagef("option --settings needs a file name, not an empty string")
			}
			o.settings, o.sawSettings = v, true
		case "-d", "--debug":
			if inline != nil {
				return nil, usagef("option %s takes no value", name)
			}
			o.debug = true
		case "-c":
			v, err := value(name, inline)
			if err != nil {
				return nil, err
			}
			if o.hasShell {
				return nil, usagef("option -c is given twice")
			}
			// An empty -c counts as absent, as in the reference.
			o.shell, o.hasShell = v, v != ""
		case "--control-fd":
			v, err := value(name, inline)
			if err != nil {
				return nil, err
			}
			fd, err := parseFD(v)
			if err != nil {
				return nil, err
			}
			o.controlFD = fd
		case "--violations":
			v, err := value(name, inline)
			if err != nil {
				return nil, err
			}
			if v == "" {
				return nil, usagef("option --violations needs a file name or fd:N")
			}
			o.violations = v
		case "-q", "--quiet":
			if inline != nil {
				return nil, usagef("option %s takes no value", name)
			}
			o.quiet = true
		case "-h", "--help":
			o.help = true
		case "-V", "--version":
			o.version = true
		default:
			return nil, usagef("unknown option %q; srt's options come before the command, and \"--\" ends them (srt -- %s ...)", a, a)
		}
	}
	o.command = args[i:]
	return o, nil
}

// parseFD accepts a decimal descriptor number of 3 or more: 0-2 are the
// command's own stdio.
func parseFD(v string) (int, error) {
	bad := usagef("option --control-fd: %q is not a file descriptor number of 3 or more", v)
	if v == "" || strings.TrimLeft(v, "0123456789") != "" {
		return 0, bad
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 || fd > 1<<20 {
		return 0, bad
	}
	return fd, nil
}

// argv is what runs inside the sandbox: the positional command as an argv
// (never re-parsed by a shell), or the -c string through /bin/sh, with the
// positional words as its $0, $1, ...
func (o *options) argv() []string {
	if o.hasShell {
		return append([]string{"/bin/sh", "-c", o.shell}, o.command...)
	}
	return o.command
}

// commandText is the command as a user reads it, for messages and
// violation attribution.
func (o *options) commandText() string {
	if o.hasShell {
		return o.shell
	}
	return shellQuote(o.command)
}

// shellQuote joins words so that a POSIX shell would split them back into
// exactly the same words (spec a.2).
func shellQuote(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = quoteWord(w)
	}
	return strings.Join(out, " ")
}

func quoteWord(w string) string {
	if w == "" {
		return "''"
	}
	bare := true
	for i := 0; i < len(w) && bare; i++ {
		c := w[i]
		bare = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("_./:@+,-", c) >= 0 || (c == '=' && i > 0)
	}
	if bare {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'"'"'`) + "'"
}

const usage = `usage: srt [options] [--] command [args...]
       srt [options] -c 'shell string' [arg0 [args...]]
       srt schema
       srt doctor
       srt plan [--os linux|darwin|windows] [--json] [--fallback] [-s FILE]
       srt windows-install [--sandbox-user NAME] [--force] | windows-uninstall

Runs a command so that it and everything it starts can read, write and
connect only where the settings allow, enforced by the kernel.

Options (they end at the first word that is not one, or at "--"):
  -s, --settings FILE   settings file (default ~/.srt-settings.json; a file
                        given here must exist)
  -c STRING             run STRING with /bin/sh -c; words after it become
                        $0, $1, ...
  -d, --debug           log what srt does on stderr (also SRT_DEBUG=1)
      --control-fd N    read settings updates as JSON lines from fd N (N >= 3);
                        network rules apply to the next connection
      --violations OUT  write every denial as a JSON line to file OUT, or to
                        descriptor N with fd:N, as it happens
  -q, --quiet           no summary of denials when the command fails
  -h, --help            show this help
  -V, --version         print the version

Subcommands:
  schema                print the JSON Schema of the settings file
  doctor                show what this host supports; exit 1 if no sandbox can run
  plan                  print what a run with the settings would enforce (the
                        mounts and the rule behind each, the seccomp filter,
                        the Landlock layer, the level), on any host, without
                        running anything; --os picks the system, --fallback
                        the weaker Linux fallback; exit 1 for a system with
                        no backend
  ssh-proxy HOST PORT   inside the sandbox: ssh's ProxyCommand through the policy
  windows-install [--sandbox-user NAME] [--force]
                        Windows, elevated, once: make the sandbox account
  windows-uninstall     Windows, elevated: remove it

Exit status: the command's own; 128+N when it died of signal N; 1 when srt
itself fails (messages start with "srt: ").
`
