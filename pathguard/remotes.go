package pathguard

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Where the host's git sends a repository. A command that rewrites
// remote.origin.url (or gives origin a pushurl, or points a branch's
// pushRemote at a remote of its own) has the user's next git push send
// the repository to another host: no program runs, but the work leaves.
// So in a repository that existed when the command started, where its
// existing remotes lead and which remote its existing branches push to
// are frozen at what they were then (Remotes.Kept). A new remote, a new
// branch, and an existing branch's upstream set to an existing remote
// (git push -u origin main) are everyday work and go through; a pushurl
// removed leads nowhere new. A remote of the launch is not removed (nor
// renamed): a remote added beside it would become where git pushes.

// Remotes is where a repository's config sent it at launch.
type Remotes struct {
	// URLs and PushURLs are each remote's url and pushurl values, by
	// the remote's name (as the config spells its subsection).
	URLs, PushURLs map[string][]string
	// Remote and PushRemote are each branch's remote and pushRemote
	// values, by the branch's name.
	Remote, PushRemote map[string][]string
	// PushDefault is remote.pushDefault's values.
	PushDefault []string
	// Branches are the branches that existed (refs/heads, as the
	// backend read them), beside those the config names.
	Branches map[string]bool
}

// ReadRemotes reads where the config content sends the repository. A
// config the guard cannot read as git would is an error (the guard then
// keeps nothing of it, and refuses it as written: GitConfigSafe).
func ReadRemotes(content []byte) (Remotes, error) {
	r := Remotes{URLs: map[string][]string{}, PushURLs: map[string][]string{}, Remote: map[string][]string{}, PushRemote: map[string][]string{}}
	v := &valuesSafe{recordOnly: true}
	if err := gitConfigFrozen(content, func(string) bool { return true }, nil, v); err != nil {
		return Remotes{}, err
	}
	for _, e := range v.taken {
		sub := strings.Split(e.entry, "\x00")[1]
		value := strings.TrimSpace(e.value)
		switch e.name {
		case "remote.*.url":
			r.URLs[sub] = append(r.URLs[sub], value)
		case "remote.*.pushurl":
			r.PushURLs[sub] = append(r.PushURLs[sub], value)
		case "branch.*.remote":
			r.Remote[sub] = append(r.Remote[sub], value)
		case "branch.*.pushremote":
			r.PushRemote[sub] = append(r.PushRemote[sub], value)
		case "remote.pushdefault":
			r.PushDefault = append(r.PushDefault, value)
		}
	}
	return r, nil
}

// Kept says why content, a config about to replace this repository's,
// would send it where it did not go at launch (r), if it would: a
// remote of the launch with other urls than it had, or another pushurl
// (none is fine: the url is where it pushes then), a branch of the launch pushing or
// pulling to a remote other than its own of the launch or another
// remote of the launch, remote.pushDefault naming another. A config the
// guard cannot read is refused by its content already.
func (r Remotes) Kept(content []byte) error {
	now, err := ReadRemotes(content)
	if err != nil {
		return nil // refused as written (GitConfigSafe)
	}
	same := func(a, b []string) bool {
		return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
	}
	for _, name := range slices.Sorted(maps.Keys(r.URLs)) {
		for _, kind := range []struct {
			key        string
			then, want map[string][]string
		}{{"url", r.URLs, now.URLs}, {"pushurl", r.PushURLs, now.PushURLs}} {
			// A url removed is refused too: a remote added beside it
			// would become the one git pushes to.
			if got := kind.want[name]; (len(got) > 0 || kind.key == "url") && !same(got, kind.then[name]) {
				return fmt.Errorf("remote.%s.%s = %q: the remote %q existed when the command started, leading to %q; the host's git push would send the repository elsewhere (a new remote may be added)",
					name, kind.key, got, name, kind.then[name])
			}
		}
	}
	// A launch remote, as it still leads (its url unchanged or gone).
	launchRemote := func(v string) bool { return v == "." || len(r.URLs[v]) > 0 }
	existed := func(branch string) bool {
		return r.Branches[branch] || len(r.Remote[branch]) > 0 || len(r.PushRemote[branch]) > 0
	}
	for _, kind := range []struct {
		key        string
		then, want map[string][]string
	}{{"remote", r.Remote, now.Remote}, {"pushRemote", r.PushRemote, now.PushRemote}} {
		// Not unset either: git remote remove unsets a branch's remote
		// first, and the removal, refused next, would leave the branch
		// without it.
		for _, branch := range slices.Sorted(maps.Keys(kind.then)) {
			if len(kind.then[branch]) > 0 && len(kind.want[branch]) == 0 {
				return fmt.Errorf("branch.%s.%s unset: the branch tracked %q when the command started", branch, kind.key, kind.then[branch])
			}
		}
		for _, branch := range slices.Sorted(maps.Keys(kind.want)) {
			if !existed(branch) {
				continue // a new branch: the command's own
			}
			for _, v := range kind.want[branch] {
				if !slices.Contains(kind.then[branch], v) && !launchRemote(v) {
					return fmt.Errorf("branch.%s.%s = %q: the branch existed when the command started; it may track or push to only a remote that existed then", branch, kind.key, v)
				}
			}
		}
	}
	for _, v := range now.PushDefault {
		if !slices.Contains(r.PushDefault, v) && !launchRemote(v) {
			return fmt.Errorf("remote.pushDefault = %q: every branch without a pushRemote would push there; it may name only a remote that existed when the command started", v)
		}
	}
	return nil
}
