// Package landlock computes and applies the Landlock layer of the
// sandbox: a second, kernel-enforced restriction of what the command may
// read and write, under the mount namespace in the full sandbox and alone
// in the fallback. Landlock can only allow, so the rules are computed as
// the hierarchies that stay open; this file is that pure computation.
package landlock

import (
	"path/filepath"
	"sort"
	"strings"
)

// Input is what the layer is computed from: absolute, symlink-free paths.
type Input struct {
	// Writable trees: read and write beneath.
	Writable []string
	// Hidden trees and files (denyRead): nothing beneath may be opened.
	Hidden []string
	// Reopened trees inside hidden ones (allowRead within denyRead).
	Reopened []string
}

// Rules are the hierarchies Landlock allows, by kind of access.
type Rules struct {
	Read     []string `json:"read"`               // read, list, execute beneath
	ReadFile []string `json:"readFile,omitempty"` // files among Read's siblings: read, execute
	ListOnly []string `json:"listOnly,omitempty"` // ancestors of hidden trees: listing only
	Write    []string `json:"write"`              // read and write beneath
}

// Lister reads the names in a directory and says which are directories
// (following symlinks, as Landlock's own open does).
type Lister func(dir string) (names []string, isDir map[string]bool, err error)

// Compute returns the rules for in. Reading starts open at "/"; each hidden
// path closes its own tree by replacing every open ancestor with that
// ancestor's other entries, listed now: an entry added later to such an
// ancestor directory is not readable. The ancestors themselves stay
// listable (names, not contents). Reopened and writable trees are added
// back whole.
func Compute(in Input, list Lister) (Rules, error) {
	open := map[string]bool{"/": true} // open trees, and whether each is a directory
	listOnly := map[string]bool{}
	hidden := clean(in.Hidden)
	for _, h := range hidden {
		if h == "/" {
			delete(open, "/")
			continue
		}
		// The open root that covers h, if any.
		var root string
		for p := h; ; p = filepath.Dir(p) {
			if _, ok := open[p]; ok {
				root = p
				break
			}
			if filepath.Dir(p) == p { // the root, or "." of a relative path
				break
			}
		}
		if root == "" {
			continue // already closed
		}
		delete(open, root)
		// Walk from root down to h's parent, opening every other entry.
		rel := strings.TrimPrefix(strings.TrimPrefix(h, root), "/")
		dir := root
		for _, part := range strings.Split(rel, "/") {
			listOnly[dir] = true
			names, isDir, err := list(dir)
			if err != nil {
				return Rules{}, err
			}
			for _, n := range names {
				if n == part {
					continue
				}
				p := filepath.Join(dir, n)
				if !isHidden(p, hidden) {
					open[p] = isDir[n]
				}
			}
			dir = filepath.Join(dir, part)
		}
	}
	var r Rules
	for p, dir := range open {
		if dir {
			r.Read = append(r.Read, p)
		} else {
			r.ReadFile = append(r.ReadFile, p)
		}
	}
	r.Read = append(r.Read, clean(in.Reopened)...)
	for p := range listOnly {
		r.ListOnly = append(r.ListOnly, p)
	}
	r.Write = clean(in.Writable)
	for _, s := range []*[]string{&r.Read, &r.ReadFile, &r.ListOnly, &r.Write} {
		*s = clean(*s)
	}
	return r, nil
}

func isHidden(p string, hidden []string) bool {
	for _, h := range hidden {
		if p == h {
			return true
		}
	}
	return false
}

// clean sorts and deduplicates.
func clean(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	n := 0
	for i, p := range out {
		if i == 0 || p != out[n-1] {
			out[n] = p
			n++
		}
	}
	return out[:n]
}
