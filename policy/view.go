package policy

import "github.com/srt-go/srt/config"

func index(rules []Rule) map[string][]Rule {
	m := map[string][]Rule{}
	for _, r := range rules {
		m[r.Path] = append(m[r.Path], r)
	}
	return m
}

// ancestors yields p, its parent, ..., the root (the path that is its
// own parent: "/", or a volume's root).
func ancestors(p string, yield func(string) bool) {
	for {
		if !yield(p) {
			return
		}
		parent := config.Dir(p)
		if parent == p {
			return
		}
		p = parent
	}
}

func viewAt(p string, reads, writes map[string][]Rule) View {
	v := View{Readable: true}
	decided := false
	allowed, denied := false, false
	ancestors(p, func(a string) bool {
		if rs, ok := reads[a]; ok && !decided {
			decided = true
			v.Readable = false
			for _, r := range rs {
				v.Readable = v.Readable || r.Allow
			}
		}
		for _, r := range writes[a] {
			if r.Allow {
				allowed = true
			} else {
				denied = true
			}
		}
		return true
	})
	// A hidden path is never writable: a hidden directory is empty and
	// read-only inside, never a scratch area (DESIGN promise 1).
	v.Writable = allowed && !denied && v.Readable
	return v
}
