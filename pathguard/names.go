package pathguard

import (
	"slices"
	"strings"
)

// The path guard's rules: what a path's names make it, wherever it is.
// Mounts protect the protected names that exist when a command starts;
// the guard (srt's seccomp supervisor, which makes every file creation,
// rename, link and write-open on the command's behalf) asks these rules
// about the path a call would create or write, so a name that does not
// exist yet, or lies deeper than mandatoryDenySearchDepth, is protected
// too. The rules look at names only, case-insensitively, anywhere: a
// write outside the writable trees fails anyway, so "anywhere" means
// every writable tree, at any depth.

// Name is what the guard makes of a path.
type Name int

const (
	// Free: no protected name; the call goes ahead.
	Free Name = iota
	// Protected: a protected name, or beneath a protected directory;
	// nothing is created, renamed, linked or opened for writing there.
	Protected
	// HooksDir is a repository's hooks directory itself: git's
	// templates make it, and an empty directory runs nothing.
	HooksDir
	// HookSample is a file directly in a hooks directory that git never
	// runs (IsInertHookName): git's templates, a copy's temporary name.
	HookSample
	// GitConfig is a file git reads as settings or instructions: a
	// repository's config (config, config.worktree), a rebase's todo
	// list (rebase-merge/git-rebase-todo, whose exec lines the host's
	// git rebase --continue runs), or its index (index, sharedindex.*,
	// whose paths the host's git checkout writes). It takes only content that runs
	// nothing (GitFileSafe), copied in by the guard; it is never opened
	// for writing.
	GitConfig
	// Context is a directory name that gives the names beneath it their
	// meaning (.git, .claude, and what lies inside a .git): a directory
	// moved there by rename would bring names the guard never saw made,
	// so such a rename is refused with EXDEV, which makes mv copy the
	// tree, one guarded file at a time.
	Context
)

func (n Name) String() string {
	return [...]string{"free", "protected", "hooks directory", "hook sample", "git config", "context"}[n]
}

// Rules are the settings the name rules depend on.
type Rules struct {
	// GitConfig is filesystem.allowGitConfig: a repository's config is
	// then free.
	GitConfig bool
	// HooksPaths are the relative values of core.hooksPath in the host's
	// own git config: in every repository, the directory of that path
	// beneath its work tree is where git runs hooks from.
	HooksPaths []string
}

// Judge says what path (absolute, or relative to the tree it is in) is,
// and the protected name behind it ("" when Free).
func (g Rules) Judge(path string) (Name, string) {
	n, rule, _ := g.JudgeWhere(path)
	return n, rule
}

// JudgeWhere is Judge, with the directory that makes a Protected name
// one: the host runs a shell's startup files, and an agent's or an IDE's
// configuration, from the places the user works (home, the projects
// there), so such a name is protected where its anchor — the directory
// that holds it (.bashrc, .mcp.json), or that holds the .vscode, .idea,
// .claude or .config on its way — existed when the command started; in a
// tree the command made during the run (a clone, an unpacked tarball)
// it is that project's content. The names of a repository (its hooks,
// its config, git's state) are protected in every repository, whoever
// made it: their anchor is "".
func (g Rules) JudgeWhere(path string) (Name, string, string) {
	lead := ""
	if strings.HasPrefix(path, "/") {
		lead = "/"
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	parts[0] = lead + parts[0]
	lower := make([]string, len(parts))
	for i, p := range parts {
		lower[i] = strings.ToLower(p)
	}
	lower[0] = strings.TrimPrefix(lower[0], "/")
	n := len(lower)
	last := n - 1
	// dirOf is the directory holding parts[i].
	dirOf := func(i int) string {
		if i == 0 {
			if lead == "/" {
				return "/"
			}
			return "."
		}
		return strings.Join(parts[:i], "/")
	}
	verdict, rule := Free, ""
	for i, c := range lower {
		switch {
		case slices.Contains(protectedDirs, c):
			return Protected, strings.Join(parts[:i+1], "/"), dirOf(i)
		case c == ".claude":
			if i < last && slices.Contains(protectedClaude, lower[i+1]) {
				return Protected, strings.Join(parts[:i+2], "/"), dirOf(i)
			}
			if verdict == Free && i < last {
				verdict = Context // beneath .claude
			}
		case c == ".git":
			if v, r := g.gitDir(parts, lower, i+1); v != Free {
				return v, r, ""
			}
			if i < last {
				verdict = Context
			}
		}
	}
	for _, h := range g.HooksPaths {
		if v, r := hooksPathJudge(parts, lower, strings.Split(strings.ToLower(h), "/")); v != Free {
			return v, r, ""
		}
	}
	if slices.Contains(protectedFiles, lower[last]) {
		return Protected, path, dirOf(last)
	}
	// No name of the path begins a protected path: the common case, for
	// every file a build or an unpack makes.
	paths := protectedPaths
	if !slices.ContainsFunc(lower, IsProtectedFirst) {
		paths = nil
	}
	for _, pp := range paths {
		// Beneath it (fish's directory: every file there is its
		// startup's).
		for i := 0; i+len(pp) < n; i++ {
			if matchParts(pp, lower[i:i+len(pp)]) {
				return Protected, strings.Join(parts[:i+len(pp)], "/"), dirOf(i)
			}
		}
		// The whole path, or a directory on its way as the last name (a
		// directory moved there would bring the file unseen).
		for k := len(pp); k >= 1; k-- {
			if n >= k && matchParts(pp[:k], lower[n-k:]) {
				if k == len(pp) {
					return Protected, path, dirOf(n - k)
				}
				return Context, path, ""
			}
		}
	}
	if lower[last] == ".git" || lower[last] == ".claude" {
		return Context, path, ""
	}
	return verdict, rule, ""
}

// hooksPathJudge judges a path by a relative core.hooksPath of the
// host's (hooks, its names in lower case): a directory so named, in any
// repository, is where the host's git runs hooks from. What lies in one
// is protected (but git's samples); the directory itself may be made,
// and is, like a directory on its way, context (moved there whole, it
// would bring hooks unseen).
func hooksPathJudge(parts, lower, hooks []string) (Name, string) {
	n := len(lower)
	for i := 0; i+len(hooks) <= n; i++ {
		if !equalTail(lower[:i+len(hooks)], hooks) {
			continue
		}
		j := i + len(hooks) - 1
		switch {
		case j == n-1:
			return HooksDir, strings.Join(parts, "/")
		case j == n-2 && IsInertHookName(lower[n-1]):
			return HookSample, strings.Join(parts[:j+1], "/")
		}
		return Protected, strings.Join(parts[:j+1], "/")
	}
	for k := len(hooks) - 1; k >= 1; k-- {
		if n >= k && equalTail(lower, hooks[:k]) {
			return Context, strings.Join(parts, "/")
		}
	}
	return Free, ""
}

// IsInertHookName reports whether a file so named in a hooks directory
// is one git never runs: it runs a hook by its exact name (pre-commit,
// post-checkout, ...), none of which ends in ".sample" (git's templates)
// or begins with a dot (the temporary name rsync and editors give a
// file before renaming it, which is judged at the rename).
func IsInertHookName(name string) bool {
	return strings.HasSuffix(name, ".sample") && len(name) > len(".sample") ||
		strings.HasPrefix(name, ".") && name != "." && name != ".."
}

// MergeProgramPrefix begins the names git runs as a merge strategy's
// program: a rebase or cherry-pick left stopped names its strategy in
// its state (rebase-merge/strategy, sequencer/opts), and git runs
// "git-merge-<strategy>"; with a slash in the strategy, from the work
// tree ("git-merge-x/y"), not from git's own directory (without one,
// from PATH only). So no directory, nor symlink, whose name begins so
// (any case) is made: no state the command leaves can lead the host's
// git rebase --continue to a program of the command's. Files may be
// (git's own sources hold git-merge-octopus.sh).
const MergeProgramPrefix = "git-merge-"

// IsMergeProgramDir reports whether name may not be a directory or a
// symlink (see MergeProgramPrefix).
func IsMergeProgramDir(name string) bool {
	return len(name) >= len(MergeProgramPrefix) && strings.EqualFold(name[:len(MergeProgramPrefix)], MergeProgramPrefix)
}

// equalTail reports whether parts ends with tail.
func equalTail(parts, tail []string) bool {
	off := len(parts) - len(tail)
	for i, t := range tail {
		if parts[off+i] != t {
			return false
		}
	}
	return true
}

// OnProtectedPath reports whether the last name of p is a directory on
// the way of a protected path of more than one name (.ssh of
// .ssh/config, .local or lib of Python's user site-packages, .config of
// .config/git/config), and the anchor that makes it one: the directory
// that holds the path's first name. A symlink there would lead the
// protected path to a file the command may write elsewhere, which the
// host then reads by the protected path's name.
func (g Rules) OnProtectedPath(p string) (anchor string, ok bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	lower := make([]string, len(parts))
	for i, c := range parts {
		lower[i] = strings.ToLower(c)
	}
	n := len(lower)
	if !slices.ContainsFunc(lower, IsProtectedFirst) {
		return "", false
	}
	for _, pp := range protectedPaths {
		for k := len(pp) - 1; k >= 1; k-- {
			if n >= k && matchParts(pp[:k], lower[n-k:]) {
				anchor = strings.Join(parts[:n-k], "/")
				if strings.HasPrefix(p, "/") {
					anchor = "/" + anchor
				}
				if anchor == "" {
					anchor = "."
				}
				return anchor, true
			}
		}
	}
	return "", false
}

// protectedFirst are the first names of the protected paths (none of
// which stands for many names).
var protectedFirst = func() map[string]bool {
	m := map[string]bool{}
	for _, pp := range protectedPaths {
		m[pp[0]] = true
	}
	return m
}()

// IsProtectedFirst reports whether name (in lower case) begins a
// protected path of more than one name.
func IsProtectedFirst(name string) bool { return protectedFirst[name] }

// MatchComponent reports whether name (in lower case) is one a
// protected path's component stands for: itself, or, where it holds a
// "*", any run of characters there ("python*": python3.12; "*.pth").
func MatchComponent(pattern, name string) bool {
	before, after, wild := strings.Cut(pattern, "*")
	if !wild {
		return pattern == name
	}
	return len(name) >= len(before)+len(after) && strings.HasPrefix(name, before) && strings.HasSuffix(name, after)
}

// matchParts reports whether names (in lower case) are, one by one, what
// the components pattern stand for.
func matchParts(pattern, names []string) bool {
	if len(pattern) != len(names) {
		return false
	}
	for i, p := range pattern {
		if !MatchComponent(p, names[i]) {
			return false
		}
	}
	return true
}

// gitDir judges the names from index at on inside a git directory
// (parts[:at] ends with it): its hooks and its config, and those of the
// submodules' git directories kept in modules/ (at any depth: a
// submodule's name may hold slashes) and of worktrees.
func (g Rules) gitDir(parts, lower []string, at int) (Name, string) {
	n := len(lower)
	if at >= n {
		return Free, ""
	}
	rule := func(end int) string { return strings.Join(parts[:end], "/") }
	hooksAt := func(j int) (Name, string) {
		switch {
		case j == n-1:
			return HooksDir, rule(j + 1)
		case j == n-2 && IsInertHookName(lower[n-1]):
			return HookSample, rule(j + 1)
		}
		return Protected, rule(j + 1)
	}
	config := func(name string) bool { return name == "config" || name == "config.worktree" }
	remotesAt := func(j int) (Name, string) {
		if j == n-1 {
			return Context, rule(j + 1) // the directory itself (git's templates make branches/)
		}
		return Protected, rule(j + 1)
	}
	if n-2 >= at && IsGitStateFile(lower[n-2], lower[n-1]) {
		// In the git directory, a submodule's or a worktree's.
		return GitConfig, rule(n)
	}
	if (IsIndexName(lower[n-1]) || lower[n-1] == strings.ToLower(MergeRR)) && (at == n-1 || lower[at] == "worktrees" && n-1 == at+2) {
		// The repository's index, or a worktree's (a submodule's, in
		// a git directory known by its marks, is the guard's).
		return GitConfig, rule(n)
	}
	switch {
	case lower[at] == "hooks":
		return hooksAt(at)
	case IsLegacyRemotes(lower[at]):
		return remotesAt(at)
	case at == n-1 && config(lower[at]):
		return g.config(rule(n))
	case lower[at] == "modules":
		refs := false // past a refs or logs: refs/remotes/… are remote-tracking branches
		for j := at + 2; j < n; j++ {
			if lower[j] == "hooks" {
				return hooksAt(j)
			}
			refs = refs || lower[j] == "refs" || lower[j] == "logs"
			if !refs && IsLegacyRemotes(lower[j]) {
				return remotesAt(j)
			}
		}
		if n-1 >= at+2 && config(lower[n-1]) {
			return g.config(rule(n))
		}
	case lower[at] == "worktrees":
		if n-1 == at+2 && lower[n-1] == WorktreeGitdir {
			return GitConfig, rule(n)
		}
		if n-1 == at+2 && config(lower[n-1]) {
			return g.config(rule(n))
		}
	}
	return Free, ""
}

// IsLegacyRemotes reports whether name (in lower case, in a git
// directory) is one of git's legacy remote directories: git still reads
// remotes/<name> and branches/<name> for a remote the config gives no
// URL, with their Push: lines (a refspec that deletes the remote's
// branches at the host's git push, which the config may not hold:
// remote.*.push is off its list). git never writes them; nothing is
// made in them.
func IsLegacyRemotes(name string) bool { return name == "remotes" || name == "branches" }

func (g Rules) config(rule string) (Name, string) {
	if g.GitConfig {
		return Free, ""
	}
	return GitConfig, rule
}

// Protected names (spec c.5): never writable wherever they are found.
// The shell startup files the reference's list leaves out (bash's
// .bash_login, which it reads before .profile, and .bash_logout; the
// .bash_aliases Debian's .bashrc sources; readline's .inputrc, whose
// macros type commands; zsh's .zshenv, .zlogin and .zlogout; csh's,
// tcsh's, ksh's, and fish's directory) are the same class and protected
// too; and so is what the host runs from them the same way: an editor's
// or a terminal multiplexer's startup files (vim's, neovim's, tmux's),
// a package manager's config that names a shell or a hook script to run
// (npm's script-shell, yarn's yarnPath, pnpm's .pnpmfile.cjs), and the
// other agents' and editors' project configurations (Cursor's rules and
// MCP servers, Zed's tasks, Continue's, Aider's, Gemini CLI's).
var (
	protectedFiles = []string{".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".ripgreprc", ".mcp.json",
		".bash_login", ".bash_logout", ".zshenv", ".zlogin", ".zlogout", ".login", ".logout", ".cshrc", ".tcshrc", ".kshrc", ".mkshrc",
		".bash_aliases", ".inputrc",
		".vimrc", ".gvimrc", ".exrc", ".tmux.conf", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".aider.conf.yml",
		".claude.json", ".xsessionrc", ".xprofile", ".pam_environment"}
	protectedDirs = []string{".vscode", ".idea", ".cursor", ".zed", ".continue", ".vim"}
	// protectedClaude are inside .claude: the reference's commands and
	// agents, the settings files whose hooks, status line and
	// apiKeyHelper Claude Code runs as commands on the host, and hooks,
	// where Claude Code's documentation puts the scripts they run.
	protectedClaude = []string{"commands", "agents", "settings.json", "settings.local.json", "hooks"}
	// protectedPaths end in a protected file or directory named by more
	// than its last name (a component with a "*" stands for any run of
	// characters there: MatchComponent): git's global config where XDG
	// puts it (~/.config/git/config, read as .gitconfig is); fish's,
	// neovim's, vim's and tmux's startup directories; ssh's config
	// (ProxyCommand, LocalCommand, Match exec) and rc (run at each
	// login); AWS's config and credentials (credential_process);
	// kubectl's config (a user's exec plugin); Docker's (credsStore,
	// credHelpers: docker-credential-* programs); the session's
	// environment (systemd's environment.d), autostart entries and user
	// units; Gemini CLI's settings (MCP servers); and Python's user
	// site-packages' .pth files and site or user customization, which
	// every python the user starts runs (a venv's are its project's).
	protectedPaths = [][]string{{".config", "git", "config"}, {".config", "fish"}, {".config", "nvim"}, {".config", "vim"}, {".config", "tmux"},
		{".ssh", "config"}, {".ssh", "rc"}, {".aws", "config"}, {".aws", "credentials"}, {".kube", "config"}, {".docker", "config.json"},
		{".config", "environment.d"}, {".config", "autostart"}, {".config", "systemd", "user"}, {".gemini", "settings.json"},
		{".local", "lib", "python*", "site-packages", "*.pth"}, {".local", "lib", "python*", "site-packages", "sitecustomize*"},
		{".local", "lib", "python*", "site-packages", "usercustomize*"},
		{".local", "lib", "python*", "site-packages", "__pycache__", "sitecustomize*"},
		{".local", "lib", "python*", "site-packages", "__pycache__", "usercustomize*"},
		{"library", "python", "*", "lib", "python", "site-packages", "*.pth"},
		{"library", "python", "*", "lib", "python", "site-packages", "sitecustomize*"},
		{"library", "python", "*", "lib", "python", "site-packages", "usercustomize*"},
		{"library", "python", "*", "lib", "python", "site-packages", "__pycache__", "sitecustomize*"},
		{"library", "python", "*", "lib", "python", "site-packages", "__pycache__", "usercustomize*"},
		// Other agents' and tools' configuration in home: Claude Code's
		// own (.claude.json: MCP servers), Codex's, opencode's; the
		// editors' user settings (tasks, terminals, extensions' commands);
		// cargo's (a rustc wrapper), direnv's, gh's (a pager), pnpm's,
		// pip's (an index: what pip installs); the session's environment
		// and start (PAM, X, Plasma); sshd's environment for the user;
		// neovim's site directory, tmux's plugins, the terminals' shells;
		// Docker's CLI plugins; systemd's other user unit directories.
		{".codex", "config.toml"}, {".config", "opencode"}, {".config", "zed"}, {".config", "code", "user"},
		{".config", "cursor", "user"}, {".config", "vscodium", "user"}, {".cargo", "config.toml"}, {".cargo", "config"},
		{".config", "direnv"}, {".config", "gh"}, {".config", "pnpm"}, {".config", "pip"}, {".pip", "pip.conf"},
		{".config", "plasma-workspace", "env"}, {".config", "autostart-scripts"}, {".ssh", "environment"}, {".ssh", "authorized_keys"}, {".ssh", "authorized_keys2"},
		{".local", "share", "nvim", "site"}, {".tmux", "plugins"}, {".config", "kitty"}, {".config", "alacritty"},
		{".docker", "cli-plugins"}, {".config", "systemd", "user.control"}, {".local", "share", "systemd", "user"}}
)

// ProtectedPaths returns the protected paths of more than one name
// ("a/b/c": a file c in b in a), matched, as the names are, anywhere.
func ProtectedPaths() []string {
	var out []string
	for _, p := range protectedPaths {
		out = append(out, strings.Join(p, "/"))
	}
	return out
}

// ProtectedNames returns the protected names (spec c.5): files, directories,
// and the directories of .claude that are protected, for backends that
// match them by name (Seatbelt's regular expressions).
func ProtectedNames() (files, dirs, claude []string) {
	return append([]string(nil), protectedFiles...), append([]string(nil), protectedDirs...), append([]string(nil), protectedClaude...)
}

// ProtectedFile reports whether name (in lower case) is a protected
// file's, wherever it is.
func ProtectedFile(name string) bool { return slices.Contains(protectedFiles, name) }

// ProtectedDir reports whether name (in lower case) is a protected
// directory's, wherever it is.
func ProtectedDir(name string) bool { return slices.Contains(protectedDirs, name) }

// ProtectedInClaude reports whether name (in lower case) is protected
// directly in a .claude directory.
func ProtectedInClaude(name string) bool { return slices.Contains(protectedClaude, name) }

// ProtectedClaude returns the names protected directly in a .claude
// directory.
func ProtectedClaude() []string { return append([]string(nil), protectedClaude...) }

// ProtectedPathParts returns the protected paths of more than one name,
// each as its names in lower case.
func ProtectedPathParts() [][]string {
	out := make([][]string, len(protectedPaths))
	for i, p := range protectedPaths {
		out[i] = append([]string(nil), p...)
	}
	return out
}
