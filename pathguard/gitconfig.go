package pathguard

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A repository's config can make git run a program (core.fsmonitor,
// core.hooksPath, alias.x = !cmd, filter drivers, credential helpers,
// include.path, ...): the guard lets a config made inside the sandbox
// hold only keys on a list of ones that name no program and pull in no
// other file. The list is short on purpose: what git init, clone,
// config user.*, remote add, branch tracking, submodules and worktrees
// write, and the common settings that only change how git behaves. Any
// line this parser does not read the way git would is refused, so a
// spelling git accepts and this parser misreads cannot slip a key by.

// safeGitKeys are the allowed keys, "section.key" or "section.*.key" for
// a key under any subsection, lower case.
var safeGitKeys = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
		core.repositoryformatversion core.filemode core.bare core.logallrefupdates
		core.ignorecase core.precomposeunicode core.symlinks core.autocrlf core.eol
		core.safecrlf core.sparsecheckout core.sparsecheckoutcone core.splitindex
		core.untrackedcache core.commitgraph core.multipackindex core.checkstat
		core.trustctime core.quotepath core.compression core.loosecompression
		core.bigfilethreshold core.abbrev core.fsync core.preloadindex
		extensions.objectformat extensions.refstorage extensions.worktreeconfig
		extensions.partialclone extensions.preciousobjects extensions.noop
		init.defaultbranch
		user.name user.email user.signingkey
		remote.*.url remote.*.pushurl remote.*.fetch
		remote.*.tagopt remote.*.prune remote.*.prunetags remote.*.promisor
		remote.*.partialclonefilter remote.*.skipdefaultupdate remote.*.skipfetchall
		branch.*.remote branch.*.merge branch.*.rebase branch.*.pushremote branch.*.description
		submodule.*.url submodule.*.active submodule.*.branch submodule.*.ignore
		submodule.*.fetchrecursesubmodules submodule.*.shallow submodule.active submodule.recurse
		pull.rebase pull.ff push.default push.autosetupremote fetch.prune fetch.prunetags
		gc.auto gc.autopacklimit gc.autodetach gc.reflogexpire gc.reflogexpireunreachable
		pack.threads pack.windowmemory index.version index.threads feature.manyfiles
		feature.experimental color.ui advice.detachedhead commit.gpgsign tag.gpgsign
		merge.ff merge.conflictstyle rebase.autosquash rebase.autostash rerere.enabled
		status.showuntrackedfiles diff.renames diff.algorithm
		lfs.repositoryformatversion
		index.sparse branch.autosetupmerge branch.autosetuprebase commit.verbose log.date
		core.whitespace http.postbuffer push.followtags tag.sort fetch.parallel status.short
		color.diff diff.colormoved transfer.fsckobjects receive.denycurrentbranch
		maintenance.auto maintenance.strategy
		core.sharedrepository receive.denynonfastforwards
		`) {
		safeGitKeys[k] = true
	}
}

// RebaseTodo is the name of a rebase's todo list, in a git directory's
// rebase-merge.
const RebaseTodo = "git-rebase-todo"

// GitFileSafe judges the content of a file git reads as settings or
// instructions (see GitConfig), by its name: a rebase's todo list, an
// index (read with hashSize, the repository's), or else a config.
func GitFileSafe(name string, content []byte, hashSize int) error {
	switch lower := strings.ToLower(name); {
	case lower == RebaseTodo:
		return RebaseTodoSafe(content)
	case lower == RebaseStrategy:
		return StrategySafe(content)
	case lower == RebaseStrategyOpts:
		return StrategyOptsSafe(content)
	case lower == SequencerOpts:
		return SequencerOptsSafe(content)
	case lower == ApplyOpts:
		return ApplyOptsSafe(content)
	case IsIndexName(lower):
		return GitIndexSafe(content, hashSize)
	case lower == strings.ToLower(MergeRR):
		return MergeRRSafe(content)
	}
	return GitConfigSafe(content)
}

// Rebase and sequencer state that names a merge strategy, which git
// runs as git-merge-<strategy> (from the work tree with a slash in it),
// and an am's options for git apply.
const (
	RebaseStrategy     = "strategy"      // in rebase-merge
	RebaseStrategyOpts = "strategy_opts" // in rebase-merge
	SequencerOpts      = "opts"          // in sequencer
	ApplyOpts          = "apply-opt"     // in rebase-apply
)

// gitStateFiles are, by the directory of a git directory's that holds
// them, the state files of an operation left stopped that the host's git
// reads as instructions when it goes on (rebase --continue, am
// --continue or --skip, cherry-pick --continue): each is judged by its
// content, like a config (see GitConfig).
var gitStateFiles = map[string][]string{
	"rebase-merge": {RebaseTodo, RebaseStrategy, RebaseStrategyOpts},
	"rebase-apply": {ApplyOpts},
	"sequencer":    {SequencerOpts},
}

// IsGitStateDir reports whether a git directory's entry name holds state
// files (see gitStateFiles): moved there whole, it would bring them
// unseen.
func IsGitStateDir(name string) bool {
	_, ok := gitStateFiles[name]
	return ok
}

// IsGitStateFile reports whether name, in a git directory's entry dir,
// is a state file the guard judges by its content (see gitStateFiles).
func IsGitStateFile(dir, name string) bool {
	for _, n := range gitStateFiles[dir] {
		if n == name {
			return true
		}
	}
	return false
}

// GitStateFiles lists every state file the guard judges, relative to
// its git directory.
func GitStateFiles() []string {
	var all []string
	for dir, names := range gitStateFiles {
		for _, n := range names {
			all = append(all, dir+"/"+n)
		}
	}
	return all
}

// WrittenEmpty reports whether git writes the state file name in place,
// empty when the operation has nothing in it: an am's options, empty
// when none is given. The guard lets such an open through as the
// emptying it is, and no more (see ApplyOptsSafe).
func WrittenEmpty(name string) bool { return name == ApplyOpts }

// applyOption is one of the options git am passes on to git apply (and
// writes in rebase-apply/apply-opt), each as git quotes it. git apply
// takes more (--build-fake-ancestor=<file> writes an index anywhere,
// --unsafe-paths), which a stopped am would pass on at the host's git am
// --continue.
var applyOption = regexp.MustCompile(`^'(--ignore-space-change|--ignore-whitespace|--reject|--whitespace=(nowarn|warn|fix|error|error-all|strip)|-C[0-9]{1,4}|-p[0-9]{1,4}|--(include|exclude)=[A-Za-z0-9._/*?-]*|--directory=[A-Za-z0-9._-][A-Za-z0-9._/-]*)'$`)

// ApplyOptsSafe reports whether an am's options for git apply are each
// one git am itself passes on, quoted as git quotes them; a directory
// goes through no "..".
func ApplyOptsSafe(content []byte) error {
	for _, f := range strings.Fields(string(content)) {
		dir, isDir := strings.CutPrefix(strings.Trim(f, "'"), "--directory=")
		if !applyOption.MatchString(f) || isDir && slices.Contains(strings.Split(dir, "/"), "..") {
			return fmt.Errorf("an option for git apply other than those git am passes on (%q)", f)
		}
	}
	return nil
}

// strategyOption is one of the -X options git's own ort and recursive
// strategies take; git-merge-resolve and -octopus, shell scripts, pass
// theirs on to git read-tree (--index-output=<anywhere>), so none other
// is taken.
var strategyOption = regexp.MustCompile(`^(ours|theirs|patience|histogram|minimal|diff-algorithm=[a-z]+|ignore-space-change|ignore-all-space|ignore-space-at-eol|ignore-cr-at-eol|renormalize|no-renormalize|no-renames|find-renames(=[0-9]{1,3}%?)?|rename-threshold=[0-9]{1,3}%?|subtree(=[A-Za-z0-9._/-]*)?)$`)

// StrategyOptsSafe reports whether a rebase's strategy options are each
// one git's own strategies take (strategyOption), written as git
// writes them: " --<option>" in turn, optionally single-quoted.
func StrategyOptsSafe(content []byte) error {
	for _, f := range strings.Fields(string(content)) {
		f = strings.Trim(f, "'")
		opt, ok := strings.CutPrefix(f, "--")
		if !ok || !strategyOption.MatchString(opt) {
			return fmt.Errorf("a strategy option other than git's own strategies' (%q)", f)
		}
	}
	return nil
}

// builtinStrategies are the merge strategies git runs itself.
var builtinStrategies = map[string]bool{"ort": true, "recursive": true, "resolve": true, "octopus": true, "ours": true, "subtree": true}

// StrategySafe reports whether a rebase's strategy file names one of
// git's own merge strategies.
func StrategySafe(content []byte) error {
	if !builtinStrategies[strings.TrimSuffix(string(content), "\n")] {
		return fmt.Errorf("a merge strategy other than git's own (%s)", "ort, recursive, resolve, octopus, ours, subtree")
	}
	return nil
}

// plainStrategy is the one spelling of a sequencer's strategy the guard
// takes.
var plainStrategy = regexp.MustCompile(`^[ \t]*strategy[ \t]*=[ \t]*(ort|recursive|resolve|octopus|ours|subtree)[ \t]*$`)

// plainStrategyOption is the one spelling of a sequencer's strategy
// option the guard reads.
var plainStrategyOption = regexp.MustCompile(`^[ \t]*strategy-option[ \t]*=[ \t]*([^ \t"'\\;#]*)[ \t]*$`)

// SequencerOptsSafe reports whether a cherry-pick's or revert's options
// name no merge strategy but git's own: every line that mentions a
// strategy, other than its options (strategy-option), is that key,
// spelled plainly, with a built-in one.
func SequencerOptsSafe(content []byte) error {
	if len(content) > 1<<20 || strings.ContainsRune(string(content), 0) {
		return fmt.Errorf("not options the guard reads")
	}
	for n, line := range strings.Split(string(content), "\n") {
		lower := strings.ToLower(strings.TrimRight(line, "\r"))
		if !strings.Contains(lower, "strategy") {
			continue
		}
		if m := plainStrategyOption.FindStringSubmatch(lower); m != nil && strategyOption.MatchString(m[1]) {
			continue
		}
		if !plainStrategy.MatchString(lower) {
			return fmt.Errorf("line %d: a merge strategy or option other than git's own, or not spelled plainly", n+1)
		}
	}
	return nil
}

// maxRebaseTodo bounds the todo list the guard reads: a line per commit.
const maxRebaseTodo = 8 << 20

// RebaseTodoSafe reports whether a rebase's todo list holds no line git
// would run as a command (exec, or x): a rebase the command leaves
// stopped would run it on the host at git rebase --continue. Any line
// that starts so is refused, however git would read the rest of it (a
// comment character set in the config included).
func RebaseTodoSafe(content []byte) error {
	if len(content) > maxRebaseTodo {
		return fmt.Errorf("a todo list of %d bytes is more than the guard reads", len(content))
	}
	for n, line := range strings.Split(string(content), "\n") {
		if strings.ContainsRune(line, 0) {
			return fmt.Errorf("line %d: a NUL byte", n+1)
		}
		t := strings.ToLower(strings.TrimLeft(line, " \t\r\v\f"))
		if strings.HasPrefix(t, "exec") || t != "" && t[0] == 'x' && (len(t) == 1 || !isAlnum(t[1])) {
			return fmt.Errorf("line %d: a command for git to run (exec), which the host's git rebase --continue would run", n+1)
		}
	}
	return nil
}

// GitConfigSafe reports whether a git config file's content holds only
// keys that run no program and include no other file; when it does not,
// the error names the first key (or line) refused.
func GitConfigSafe(content []byte) error {
	return gitConfigSafe(content, nil)
}

// LocalRepo judges a repository on this machine that a new URL of a
// config names, by its absolute path as the URL spells it (see
// remoteSafe).
type LocalRepo func(path string) error

// gitConfigSafe judges a config as GitConfigSafe does, but for the keys
// off the list that kept takes: each is given as one entry (section,
// subsection, key and its value as spelled, continued lines included).
func gitConfigSafe(content []byte, kept func(entry string) bool) error {
	return gitConfigFrozen(content, kept, nil, newValuesSafe(nil, nil))
}

// gitConfigFrozen is gitConfigSafe with the keys frozen (by name, as
// safeGitKeys spells them) taken only as kept takes them too; values
// judges every entry taken by its value (see valuesSafe), after the
// whole file is read.
func gitConfigFrozen(content []byte, kept func(entry string) bool, frozen map[string]bool, values *valuesSafe) error {
	if len(content) > 1<<20 {
		return fmt.Errorf("a config of %d bytes is more than the guard reads", len(content))
	}
	s := string(content)
	if strings.ContainsRune(s, 0) {
		return fmt.Errorf("a NUL byte")
	}
	section, sub := "", ""
	hasSub := false
	formats := 0
	lines := strings.Split(s, "\n")
	for n := 0; n < len(lines); n++ {
		line := strings.TrimRight(lines[n], "\r")
		rest := strings.TrimLeft(line, " \t")
		if rest == "" || rest[0] == '#' || rest[0] == ';' {
			continue
		}
		if rest[0] == '[' {
			var err error
			section, sub, hasSub, rest, err = gitSection(rest)
			if err != nil {
				return fmt.Errorf("line %d: %v", n+1, err)
			}
			rest = strings.TrimLeft(rest, " \t")
			if rest == "" || rest[0] == '#' || rest[0] == ';' {
				continue
			}
			// git reads a key on the same line as its section header.
		}
		if section == "" {
			return fmt.Errorf("line %d: a key outside any section", n+1)
		}
		i := 0
		for i < len(rest) && (isAlnum(rest[i]) || rest[i] == '-') {
			i++
		}
		if i == 0 || !isAlpha(rest[0]) {
			return fmt.Errorf("line %d: not a key git would read", n+1)
		}
		key := strings.ToLower(rest[:i])
		name := section + "." + key
		if hasSub {
			name = section + ".*." + key
		}
		full := section + "." + key
		if hasSub {
			full = section + "." + sub + "." + key
		}
		// The value: quoted parts may hold anything; an unquoted
		// backslash at the end continues it on the next line.
		v := strings.TrimLeft(rest[i:], " \t")
		raw := v
		if v != "" && v[0] != '=' && v[0] != '#' && v[0] != ';' {
			return fmt.Errorf("line %d: not a key git would read", n+1)
		}
		if name == "extensions.objectformat" {
			// How the guard reads an index (HashSizeOf): once, plainly.
			if formats++; formats > 1 || !plainObjectFormat.MatchString(v) {
				return fmt.Errorf("line %d: extensions.objectFormat other than once, as \"= sha1\" or \"= sha256\"", n+1)
			}
		}
		value := ""
		if v != "" && v[0] == '=' {
			value, _ = gitValueText(v[1:], lines, n)
		}
		quoted := false
		for {
			cont, open, err := gitValue(v, quoted)
			if err != nil {
				return fmt.Errorf("line %d: %v", n+1, err)
			}
			if !cont {
				break
			}
			quoted = open
			n++
			if n >= len(lines) {
				return fmt.Errorf("a value continued past the end")
			}
			v = strings.TrimRight(lines[n], "\r")
			raw += "\n" + v
		}
		entry := section + "\x00" + sub + "\x00" + strconv.FormatBool(hasSub) + "\x00" + key + "\x00" + raw
		if (!safeGitKeys[name] || frozen[name]) && (kept == nil || !kept(entry)) {
			if safeGitKeys[name] {
				return fmt.Errorf("%s may not be added or changed where the config keeps the host's keys off the list: it would change where they lead (core.bare, a worktree config) or which server gets them (a URL)", full)
			}
			return fmt.Errorf("%s is not a key the sandbox lets a repository's config hold (it holds only keys known to run no program on the host: policy/gitconfig.go)", full)
		}
		values.add(name, full, entry, sub, value)
	}
	return values.judge()
}

// GitConfigSafeBeside is GitConfigSafe for content about to replace old,
// a repository's config as it is (the host's, or one the guard took): a
// key off the list is taken too where old holds it, in the same section
// and subsection, with the same value spelled the same way, as many
// times — git config user.name, remote add and branch tracking then work
// in a repository whose config holds husky's core.hooksPath or a
// credential helper, and nothing the config runs is added or changed.
//
// Where it keeps such keys, what would change their meaning is frozen
// too, taken only as old has it: core.bare and extensions.worktreeConfig
// (a bare repository's git takes a relative core.hooksPath from the
// directory it runs in), and, beside a kept http or credential key (an
// extraHeader, a helper, which git gives the remote it fetches from),
// every URL git would fetch or push to.
func GitConfigSafeBeside(content, old []byte, local LocalRepo) error {
	have := map[string]int{}
	keeps, credentials := false, false
	oldValues := &valuesSafe{recordOnly: true}
	if gitConfigFrozen(old, func(entry string) bool {
		have[entry]++
		section, _, _ := strings.Cut(entry, "\x00")
		if !safeGitKeys[entryName(entry)] {
			keeps = true
			credentials = credentials || section == "http" || section == "credential"
		}
		return true
	}, meaningKeys, oldValues) != nil {
		have, keeps = nil, false // an old config the guard cannot read keeps nothing
	}
	frozen := map[string]bool{}
	if keeps {
		for k := range meaningKeys {
			if !urlKeys[k] || credentials {
				frozen[k] = true
			}
		}
	}
	return gitConfigFrozen(content, func(entry string) bool {
		if have[entry] == 0 {
			return false
		}
		have[entry]--
		return true
	}, frozen, newValuesSafe(oldValues, local))
}

// valuesSafe judges a config's entries by their values, once the whole
// file is read (a branch's remote may be defined below it). A push or
// fetch to a repository on this machine runs git there, with that
// repository's hooks (receive-pack runs pre-receive, update,
// post-receive...) — so a URL may lead to one only where the command
// cannot have shaped it, now or through what the host's git later
// checks out: the guard's LocalRepo says where. Without one, no URL
// may lead to this machine. A remote git knows no URL of (none given, or
// the ones it had removed) is a path to git, its own name, and so is a
// branch's remote that names no remote with a URL. And a push may not
// check files out in the repository it lands in
// (receive.denyCurrentBranch=updateInstead): the command's commit would
// write, through the host's git, a repository with hooks for the next
// push to run.
type valuesSafe struct {
	recordOnly bool           // only read (the config being replaced)
	old        map[string]int // the replaced config's entries: taken as they are
	oldURLs    map[string]bool
	local      LocalRepo
	entries    map[string]int  // every entry read, as gitConfigFrozen spells it
	urls       map[string]bool // the remotes the config gives a URL
	taken      []valueEntry    // in order
}

type valueEntry struct{ name, full, entry, value string }

// newValuesSafe judges a config beside old, the one it replaces (read
// with recordOnly; nil: none).
func newValuesSafe(old *valuesSafe, local LocalRepo) *valuesSafe {
	v := &valuesSafe{local: local}
	if old != nil {
		v.old, v.oldURLs = maps.Clone(old.entries), old.urls
	}
	return v
}

func (v *valuesSafe) add(name, full, entry, sub, value string) {
	if v.entries == nil {
		v.entries, v.urls = map[string]int{}, map[string]bool{}
	}
	v.entries[entry]++
	if name == "remote.*.url" && value != "" {
		v.urls[sub] = true
	}
	v.taken = append(v.taken, valueEntry{name, full, entry, value})
}

func (v *valuesSafe) judge() error {
	if v.recordOnly {
		return nil
	}
	for _, r := range slices.Sorted(maps.Keys(v.oldURLs)) {
		if !v.urls[r] {
			return fmt.Errorf("remote %q loses its URL: the host's git would take its name for a path (./%s), where the command's commit may put a repository with hooks", r, r)
		}
	}
	for _, e := range v.taken {
		unchanged := v.old[e.entry] > 0
		if unchanged {
			v.old[e.entry]-- // the host's, as it was
		}
		var err error
		switch {
		case e.name == "branch.*.remote" || e.name == "branch.*.pushremote":
			// A name no remote of this config gives a URL is a URL or
			// a path to git: judged as one, unless the host's config
			// had it so.
			if e.value != "." && !v.urls[e.value] && !(unchanged && !v.oldURLs[e.value]) {
				err = remoteSafe(e.value, v.local)
			}
		case unchanged:
		case e.name == "core.sharedrepository":
			err = sharedRepositorySafe(e.value)
		case e.name == "receive.denycurrentbranch":
			if strings.EqualFold(strings.TrimSpace(e.value), "updateinstead") {
				err = errors.New("a push would check the pushed files out into this repository's work tree, where the host's git would write what the command committed (a repository with hooks, for the next push to run)")
			}
		case e.name == "remote.*.url" || e.name == "remote.*.pushurl":
			err = remoteSafe(e.value, v.local)
		}
		if err != nil {
			return fmt.Errorf("%s = %q: %v", e.full, e.value, err)
		}
	}
	return nil
}

// networkURL is a URL git reaches over the network; its host, when it is
// this machine by name (loopbackHost), runs git here too.
var (
	networkURL   = regexp.MustCompile(`(?i)^(?:https?|ftps?|git|ssh|git\+ssh|ssh\+git)://(?:[^@/]*@)?(\[[^\]]*\]|[^:/]*)([^/]*)(/.*)?$`)
	sshURL       = regexp.MustCompile(`(?i)^(?:ssh|git\+ssh|ssh\+git)://`)
	helperURL    = regexp.MustCompile(`(?i)^(?:https?|ftps?)::`)
	loopbackHost = regexp.MustCompile(`(?i)^(?:localhost(?:\.localdomain)?|127(?:\.[0-9]{1,3}){3}|\[?::1\]?|\[?::ffff:127(?:\.[0-9]{1,3}){3}\]?|0\.0\.0\.0|\[?::\]?)$`)
)

// remoteSafe judges a URL (or a path) a config gives git to fetch from or
// push to: one over the network to another machine is taken; one that
// leads to this machine (a path, file://, ssh to localhost) only by
// local, given an absolute path; anything else (a relative path, which
// git reads from wherever it runs, a transport helper) is refused.
func remoteSafe(u string, local LocalRepo) error {
	var p string
	switch {
	case u == "":
		return errors.New("an empty URL")
	case helperURL.MatchString(u):
		return nil
	case strings.Contains(u, "::"):
		return errors.New("a remote helper's URL (<transport>::<address>), which runs a program")
	case networkURL.MatchString(u):
		// Only ssh runs git on the machine it reaches in a path of that
		// machine's; http and git's daemon serve what they export.
		m := networkURL.FindStringSubmatch(u)
		if !sshURL.MatchString(u) || !loopbackHost.MatchString(m[1]) {
			return nil
		}
		p = m[3]
	case len(u) > 7 && strings.EqualFold(u[:7], "file://"):
		p = u[7:]
	case isSCPLike(u):
		host, rest, _ := strings.Cut(u, ":")
		if _, h, ok := strings.Cut(host, "@"); ok {
			host = h
		}
		if !loopbackHost.MatchString(host) {
			return nil
		}
		p = rest
	default:
		p = u
	}
	if !strings.HasPrefix(p, "/") {
		return errors.New("a relative path to a repository on this machine, which git reads from wherever it runs")
	}
	if local == nil {
		return errors.New("a repository on this machine, whose hooks a push there would run")
	}
	return local(p) // as written: the kernel, not the lexicon, says what ".." is past a symlink
}

// isSCPLike says whether git reads u as [user@]host:path (ssh): a colon
// before any slash.
func isSCPLike(u string) bool {
	colon := strings.IndexByte(u, ':')
	slash := strings.IndexByte(u, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

// urlKeys are the keys that say where git fetches and pushes; meaningKeys
// those and the ones that change where a kept core.hooksPath leads.
var (
	urlKeys = map[string]bool{"remote.*.url": true, "remote.*.pushurl": true, "url.*.insteadof": true, "url.*.pushinsteadof": true,
		"submodule.*.url": true, "branch.*.remote": true, "branch.*.pushremote": true}
	meaningKeys = map[string]bool{"core.bare": true, "extensions.worktreeconfig": true}
)

func init() {
	for k := range urlKeys {
		meaningKeys[k] = true
	}
}

// entryName is the name of an entry as safeGitKeys spells it.
func entryName(entry string) string {
	f := strings.Split(entry, "\x00")
	if f[2] == "true" {
		return f[0] + ".*." + f[3]
	}
	return f[0] + "." + f[3]
}

// plainObjectFormat is the one spelling of extensions.objectFormat's
// value the guard takes (what follows the key on its line).
var plainObjectFormat = regexp.MustCompile(`^=[ \t]*sha(1|256)[ \t]*$`)

// gitSection reads a section header at the start of s: [section],
// [section "subsection"] or the old [section.subsection]. It returns the
// section in lower case, the subsection and what follows the header.
func gitSection(s string) (section, sub string, hasSub bool, rest string, err error) {
	i := 1
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-' || s[i] == '.') {
		i++
	}
	name := s[1:i]
	if name == "" {
		return "", "", false, "", fmt.Errorf("an empty section name")
	}
	if i < len(s) && s[i] == ']' {
		if dot := strings.IndexByte(name, '.'); dot >= 0 {
			return strings.ToLower(name[:dot]), strings.ToLower(name[dot+1:]), true, s[i+1:], nil
		}
		return strings.ToLower(name), "", false, s[i+1:], nil
	}
	if strings.Contains(name, ".") || i >= len(s) || s[i] != ' ' {
		return "", "", false, "", fmt.Errorf("a section header git would not read this way")
	}
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if i >= len(s) || s[i] != '"' {
		return "", "", false, "", fmt.Errorf("a section header git would not read this way")
	}
	var b strings.Builder
	for i++; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 >= len(s) {
				return "", "", false, "", fmt.Errorf("an unfinished subsection")
			}
			i++
			b.WriteByte(s[i])
		case '"':
			if i+1 >= len(s) || s[i+1] != ']' {
				return "", "", false, "", fmt.Errorf("a section header git would not read this way")
			}
			return strings.ToLower(name), b.String(), true, s[i+2:], nil
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false, "", fmt.Errorf("an unfinished subsection")
}

// gitValue reads one line of a value as git's parse_value does. quoted
// says whether a quote is open where the line starts: a quote stays open
// across a continued line. It reports whether a backslash at the end
// continues the value on the next line, and whether a quote is open
// there. A comment (an unquoted # or ;) ends the value, a backslash at
// its end included; an escape git does not know makes git refuse the
// file, and the guard too.
func gitValue(v string, quoted bool) (cont, open bool, err error) {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			quoted = !quoted
		case '\\':
			if i+1 == len(v) {
				return true, quoted, nil
			}
			i++
			if !strings.ContainsRune(`tbn\"`, rune(v[i])) {
				return false, false, fmt.Errorf("an escape git does not know")
			}
		case '#', ';':
			if !quoted {
				return false, false, nil
			}
		}
	}
	if quoted {
		return false, false, fmt.Errorf("a quote left open at the end of a line") // git refuses it too
	}
	return false, false, nil
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

// GitConfigPaths reads, from the content of a git config the host made,
// every value of core.hooksPath (the directory whose programs git runs
// as hooks) and of include.path and includeIf.<condition>.path (other
// files git reads as config), in order, as git decodes them. Lines git
// would refuse are passed over: the host's git refuses the file, and
// runs nothing from it.
func GitConfigPaths(content []byte) (hooks, includes []string) {
	content = bytes.TrimPrefix(content, []byte("\xef\xbb\xbf")) // a BOM, which git skips
	section, hasSub := "", false
	lines := strings.Split(string(content), "\n")
	for n := 0; n < len(lines); n++ {
		rest := strings.TrimLeft(strings.TrimRight(lines[n], "\r"), " \t")
		if rest == "" || rest[0] == '#' || rest[0] == ';' {
			continue
		}
		if rest[0] == '[' {
			var err error
			if section, _, hasSub, rest, err = gitSection(rest); err != nil {
				section = ""
				continue
			}
			rest = strings.TrimLeft(rest, " \t")
		}
		i := 0
		for i < len(rest) && (isAlnum(rest[i]) || rest[i] == '-') {
			i++
		}
		key := strings.ToLower(rest[:i])
		v := strings.TrimLeft(rest[i:], " \t")
		if key == "" || section == "" || v == "" || v[0] != '=' {
			continue
		}
		value, next := gitValueText(v[1:], lines, n)
		n = next
		switch {
		case section == "core" && !hasSub && key == "hookspath":
			hooks = append(hooks, value)
		case (section == "include" && !hasSub || section == "includeif" && hasSub) && key == "path":
			includes = append(includes, value)
		}
	}
	return hooks, includes
}

// gitValueText decodes a value that begins with v on line n, as git's
// parse_value does: quotes, escapes, comments, continued lines, and
// whitespace kept only inside. It returns the value and the line it ends
// on.
func gitValueText(v string, lines []string, n int) (string, int) {
	var b strings.Builder
	quoted, pending := false, 0 // pending: whitespace not yet known to be inside
	v = strings.TrimLeft(v, " \t")
	for {
		v = strings.TrimRight(v, "\r")
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '\\' && i+1 == len(v):
				if n+1 < len(lines) {
					n++
					v = lines[n]
					goto next
				}
				return b.String(), n
			case c == '\\':
				i++
				b.WriteString(strings.Repeat(" ", pending))
				pending = 0
				switch v[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'b':
					b.WriteByte('\b')
				default:
					b.WriteByte(v[i])
				}
			case c == '"':
				quoted = !quoted
			case !quoted && (c == '#' || c == ';'):
				return b.String(), n
			case !quoted && (c == ' ' || c == '\t'):
				if b.Len() > 0 {
					pending++
				}
			default:
				b.WriteString(strings.Repeat(" ", pending))
				pending = 0
				b.WriteByte(c)
			}
		}
		return b.String(), n
	next:
	}
}

// MergeRR is where rerere keeps the paths of a merge's conflicts, in a
// git directory (a worktree's own): the host's git commit, merge or
// rebase --continue merges each path's recorded resolution into the file
// at that path and writes it there, or copies that file into rr-cache,
// through whatever the path leads (git checks none of it, follows
// symlinks in the work tree, which the command may make at any time, and
// runs rerere by itself once rr-cache exists).
const MergeRR = "MERGE_RR"

// MergeRRSafe takes only an empty MERGE_RR (no conflict recorded): no
// path can be judged safe, since any may become a symlink later.
func MergeRRSafe(content []byte) error {
	if len(content) != 0 {
		return fmt.Errorf("conflicts recorded for rerere, whose paths the host's git would follow through symlinks the command may make")
	}
	return nil
}

// WorktreeGitdir is a linked worktree's link back, in its git directory
// (worktrees/<id>/gitdir): the path of the worktree's .git. The host's
// git worktree repair writes a .git file where it leads, and git
// worktree remove deletes the directory it names, so it may lead only
// into a tree the command may write (the guard judges that, knowing the
// trees); git writes it in place.
const WorktreeGitdir = "gitdir"

// WorktreeGitdirPath reads a worktree's link back as git writes it: an
// absolute, clean path ending in /.git, on one line; ok is false for
// anything else.
func WorktreeGitdirPath(content []byte) (string, bool) {
	s, ok := strings.CutSuffix(string(content), "\n")
	if !ok || !strings.HasPrefix(s, "/") || strings.ContainsAny(s, "\n\x00") || path.Clean(s) != s || path.Base(s) != ".git" {
		return "", false
	}
	return s, true
}

// sharedRepositorySafe judges core.sharedRepository (git init --shared):
// a repository its group may write is taken (its hooks directory and
// config stay the owner's: the guard never lets them take group write);
// one everybody may write (everybody, all, world, 2, or a mode that
// gives others write) is not.
func sharedRepositorySafe(value string) error {
	v := strings.ToLower(strings.TrimSpace(value))
	switch v {
	case "", "false", "no", "off", "umask", "0", "true", "yes", "on", "group", "1":
		return nil
	case "all", "world", "everybody", "2":
	default:
		if mode, err := strconv.ParseUint(v, 8, 32); err == nil && mode&0o002 == 0 && mode <= 0o777 {
			return nil
		}
	}
	return errors.New("everyone on the machine could then write the repository")
}
