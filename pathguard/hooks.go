package pathguard

// maxGitConfigRead bounds a host config the launch reads for
// core.hooksPath, and includeDepth the includes it follows (git's own
// limit).
const (
	maxGitConfigRead = 1 << 20
	includeDepth     = 10
)

// ConfigHooksPaths returns the core.hooksPath values of the git config
// file at name and of the files it includes (every include, whatever its
// condition: a directory that might be the hooks directory is kept), to
// includeDepth, appending to included the paths at which each included
// file is kept. read reads a file (at most maxGitConfigRead bytes);
// locate turns an include's value, as the config at from spells it, into
// the path to read and the paths to keep (false: none).
func ConfigHooksPaths(name string, read func(name string, limit int) ([]byte, error), locate func(inc, from string) (next string, keep []string, ok bool), included *[]string) []string {
	var walk func(name string, depth int) []string
	walk = func(name string, depth int) []string {
		if depth > includeDepth {
			return nil
		}
		content, err := read(name, maxGitConfigRead)
		if err != nil {
			return nil
		}
		hooks, includes := GitConfigPaths(content)
		for _, inc := range includes {
			if next, keep, ok := locate(inc, name); ok {
				*included = append(*included, keep...)
				hooks = append(hooks, walk(next, depth+1)...)
			}
		}
		return hooks
	}
	return walk(name, 1)
}

// HuskyHooks is the directory husky (v9) makes core.hooksPath: its
// hooks run the same-named scripts one directory up (.husky/pre-commit),
// which are kept as hooks too.
const HuskyHooks = "_"

// GitHookNames are the hooks git runs (githooks(5)), by their names in
// a hooks directory.
var GitHookNames = []string{"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push",
	"pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction", "push-to-checkout",
	"pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist",
	"p4-post-changelist", "p4-pre-submit", "post-index-change"}
