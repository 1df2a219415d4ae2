package policy

import "github.com/srt-go/srt/pathguard"

// Guard is what the path guard judges a path by: the name rules
// (package pathguard), and the policy's deny entries for what appears
// after launch.
type Guard struct {
	// GitConfig is filesystem.allowGitConfig: a repository's config is
	// then free.
	GitConfig bool
	// Policy, if set, adds its deny entries for what appears after
	// launch (Policy.DeniedLater) and the host's core.hooksPath values.
	Policy *Policy `json:"-"`
}

// Rules are the name rules of this guard.
func (g Guard) Rules() pathguard.Rules {
	r := pathguard.Rules{GitConfig: g.GitConfig}
	if g.Policy != nil {
		r.HooksPaths = g.Policy.HooksPaths
	}
	return r
}

// Judge says what path is, and the protected name behind it
// (pathguard.Rules.Judge).
func (g Guard) Judge(path string) (pathguard.Name, string) { return g.Rules().Judge(path) }

// JudgeWhere is Judge with the anchor (pathguard.Rules.JudgeWhere).
func (g Guard) JudgeWhere(path string) (pathguard.Name, string, string) {
	return g.Rules().JudgeWhere(path)
}

// ReadLater returns the denyRead entry that keeps path from being opened
// for reading while the command runs, if any.
func (g Guard) ReadLater(path string) (LaterRule, bool) {
	if g.Policy == nil {
		return LaterRule{}, false
	}
	return g.Policy.ReadDeniedLater(path)
}

// HiddenInode returns the denyRead entry that hides the file id, if it is
// a hidden file with other names.
func (g Guard) HiddenInode(id FileID) (string, bool) {
	if g.Policy == nil {
		return "", false
	}
	why, ok := g.Policy.HiddenInodes[id]
	return why, ok
}

// Later returns the deny entry that keeps path from being made or
// written, if any.
func (g Guard) Later(path string) (LaterRule, bool) {
	if g.Policy == nil {
		return LaterRule{}, false
	}
	return g.Policy.DeniedLater(path)
}
