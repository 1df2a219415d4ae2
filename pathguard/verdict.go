package pathguard

import "path"

// What the guard says of a name it refuses, and whether and how the user
// may allow it.

// Blocked says whether a name of kind n may not be made or written.
func Blocked(n Name) bool { return n == Protected || n == HooksDir || n == GitConfig }

// FileIs names what a GitConfig file is, for a refusal.
func FileIs(name string) string {
	switch {
	case name == RebaseTodo:
		return "a rebase's todo list"
	case name == RebaseStrategy || name == RebaseStrategyOpts || name == SequencerOpts:
		return "a rebase's or cherry-pick's merge strategy"
	case name == ApplyOpts:
		return "a stopped am's options for git apply"
	case IsIndexName(name):
		return "a repository's index"
	case name == MergeRR:
		return "a merge's conflicts as rerere records them"
	case name == WorktreeGitdir:
		return "a worktree's link back to its work tree"
	case name == ".git":
		return "a .git file naming a git directory"
	case name == "commondir":
		return "a worktree's common directory"
	}
	return "a repository's config"
}

// Reason says why the name behind rule, of kind n, was refused, and
// whether and how the user may allow it.
func (g Rules) Reason(rule string, n Name) string {
	switch n {
	case GitConfig:
		return FileIs(path.Base(rule)) + ", which takes only content that runs nothing: " + rule + " (filesystem.allowGitConfig lets a repository's config take any)"
	case HooksDir:
		return "a repository's hooks directory: " + rule + "; not allowed: the host's git would run what it holds"
	}
	if _, _, anchor := g.JudgeWhere(rule); anchor != "" {
		return "protected name " + rule + ": the host runs it from " + anchor + ", which existed when the command started; not allowed there (a tree the command makes may hold it)"
	}
	return "protected name " + rule + "; not allowed: the host's git would run it"
}

// JudgeMade is Judge where the command makes trees: a project's
// protected name (one with an anchor, JudgeWhere) is that project's
// content, free, in a tree made reports the command made during the run.
func (g Rules) JudgeMade(p string, made func(anchor string) bool) (Name, string) {
	n, rule, anchor := g.JudgeWhere(p)
	if n == Protected && anchor != "" && made(anchor) {
		return Free, ""
	}
	return n, rule
}
