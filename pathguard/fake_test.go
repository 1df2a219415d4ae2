package pathguard

import (
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// fakeTree is a Tree in memory, for the decisions' tests on every OS.
// Paths are absolute; a handle is the path of a directory opened.
type fakeTree struct {
	nodes   map[string]*fakeNode
	open    map[Dir]string
	next    Dir
	closed  int
	denied  map[string]bool // directories that can be neither searched nor read
	foreign map[string]bool // another user's directories (Foreign)
}

type fakeNode struct {
	mode   fs.FileMode // fs.ModeDir, fs.ModeSymlink or 0
	data   string
	target string
}

// newFakeTree makes a tree of entries: "a/b/" a directory, "a/f=text" a
// file, "a/l->target" a symlink; parents are made.
func newFakeTree(entries ...string) *fakeTree {
	t := &fakeTree{nodes: map[string]*fakeNode{"/": {mode: fs.ModeDir}}, open: map[Dir]string{}, next: 3,
		denied: map[string]bool{}, foreign: map[string]bool{}}
	for _, e := range entries {
		switch {
		case strings.Contains(e, "->"):
			p, target, _ := strings.Cut(e, "->")
			t.add(p, &fakeNode{mode: fs.ModeSymlink, target: target})
		case strings.Contains(e, "="):
			p, data, _ := strings.Cut(e, "=")
			t.add(p, &fakeNode{data: data})
		case strings.HasSuffix(e, "/"):
			t.add(strings.TrimSuffix(e, "/"), &fakeNode{mode: fs.ModeDir})
		default:
			t.add(e, &fakeNode{})
		}
	}
	return t
}

func (t *fakeTree) add(p string, n *fakeNode) {
	p = path.Clean("/" + p)
	for d := path.Dir(p); d != "/"; d = path.Dir(d) {
		if _, ok := t.nodes[d]; !ok {
			t.nodes[d] = &fakeNode{mode: fs.ModeDir}
		}
	}
	t.nodes[p] = n
}

// handle opens p (absolute, a directory) as a handle.
func (t *fakeTree) handle(p string) Dir {
	d, err := t.OpenDir(0, p, true)
	if err != nil {
		panic(err)
	}
	return d
}

var errDenied = fs.ErrPermission

// resolve walks rel from the handle dir's directory, following symlinks
// on the way (and at the end if follow), as the kernel would.
func (t *fakeTree) resolve(dir Dir, rel string, follow bool) (string, *fakeNode, error) {
	base := "/"
	if !strings.HasPrefix(rel, "/") {
		b, ok := t.open[dir]
		if !ok {
			return "", nil, errors.New("bad handle")
		}
		base = b
	}
	comps := strings.Split(strings.Trim(rel, "/"), "/")
	cur := base
	for hops := 0; len(comps) > 0; {
		c := comps[0]
		comps = comps[1:]
		if t.denied[cur] {
			return "", nil, errDenied
		}
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		n, ok := t.nodes[next]
		if !ok {
			return "", nil, fs.ErrNotExist
		}
		if n.mode == fs.ModeSymlink && (len(comps) > 0 || follow) {
			if hops++; hops > 40 {
				return "", nil, errors.New("too many links")
			}
			target := n.target
			if !strings.HasPrefix(target, "/") {
				target = path.Join(cur, target)
			}
			comps = append(strings.Split(strings.Trim(target, "/"), "/"), comps...)
			cur = "/"
			continue
		}
		if len(comps) > 0 && n.mode != fs.ModeDir {
			// A file on the way, unless nothing but "." follows.
			rest := strings.Trim(strings.Join(comps, "/"), "/")
			if rest != "" && rest != "." {
				return "", nil, ErrNotDir
			}
			return "", nil, ErrNotDir
		}
		cur = next
	}
	return cur, t.nodes[cur], nil
}

func (t *fakeTree) Lstat(dir Dir, rel string) (fs.FileMode, error) {
	// A trailing "/." asks for a directory, following a link.
	if strings.HasSuffix(rel, "/.") || rel == "." {
		p, n, err := t.resolve(dir, rel, true)
		if err != nil {
			return 0, err
		}
		if n.mode != fs.ModeDir {
			return 0, ErrNotDir
		}
		_ = p
		return fs.ModeDir, nil
	}
	_, n, err := t.resolve(dir, rel, false)
	if err != nil {
		return 0, err
	}
	return n.mode, nil
}

func (t *fakeTree) OpenDir(dir Dir, rel string, follow bool) (Dir, error) {
	p, n, err := t.resolve(dir, rel, follow)
	if err != nil {
		return -1, err
	}
	if n.mode != fs.ModeDir {
		return -1, ErrNotDir
	}
	if t.denied[p] {
		return -1, errDenied
	}
	t.next++
	t.open[t.next] = p
	return t.next, nil
}

func (t *fakeTree) ReadDir(dir Dir) ([]fs.DirEntry, error) {
	p, ok := t.open[dir]
	if !ok {
		return nil, errors.New("bad handle")
	}
	var out []fs.DirEntry
	for q, n := range t.nodes {
		if q != "/" && path.Dir(q) == p {
			out = append(out, fakeEntry{name: path.Base(q), mode: n.mode})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (t *fakeTree) ReadFile(dir Dir, rel string, limit int) ([]byte, error) {
	_, n, err := t.resolve(dir, rel, false)
	if err != nil {
		return nil, err
	}
	if n.mode != 0 {
		return nil, errors.New("not a regular file")
	}
	b := []byte(n.data)
	if len(b) > limit+1 {
		b = b[:limit+1]
	}
	return b, nil
}

func (t *fakeTree) Readlink(dir Dir, name string) (string, error) {
	_, n, err := t.resolve(dir, name, false)
	if err != nil {
		return "", err
	}
	if n.mode != fs.ModeSymlink {
		return "", errors.New("not a symlink")
	}
	return n.target, nil
}

func (t *fakeTree) Foreign(dir Dir, name string) bool {
	return t.foreign[path.Join(t.open[dir], name)]
}

func (t *fakeTree) Close(dir Dir) {
	if _, ok := t.open[dir]; !ok {
		panic("closed twice, or never opened")
	}
	delete(t.open, dir)
	t.closed++
}

type fakeEntry struct {
	name string
	mode fs.FileMode
}

func (e fakeEntry) Name() string               { return e.name }
func (e fakeEntry) IsDir() bool                { return e.mode.IsDir() }
func (e fakeEntry) Type() fs.FileMode          { return e.mode }
func (e fakeEntry) Info() (fs.FileInfo, error) { return nil, errors.ErrUnsupported }
