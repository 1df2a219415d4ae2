package landlock

import (
	"reflect"
	"strings"
	"testing"
)

// fakeTree is a directory tree: a path ending in "/" is a directory.
func fakeTree(paths ...string) Lister {
	return func(dir string) ([]string, map[string]bool, error) {
		var names []string
		isDir := map[string]bool{}
		prefix := strings.TrimSuffix(dir, "/") + "/"
		for _, p := range paths {
			rest, ok := strings.CutPrefix(p, prefix)
			if !ok || rest == "" {
				continue
			}
			name, sub, _ := strings.Cut(rest, "/")
			if _, seen := isDir[name]; seen {
				continue
			}
			names = append(names, name)
			isDir[name] = sub != "" || strings.HasSuffix(rest, "/")
		}
		return names, isDir, nil
	}
}

func TestCompute(t *testing.T) {
	tree := fakeTree("/usr/", "/etc/passwd", "/home/u/.ssh/id_rsa", "/home/u/.bashrc", "/home/u/work/", "/home/v/", "/tmp/")
	cases := []struct {
		name string
		in   Input
		want Rules
	}{
		{"nothing hidden", Input{Writable: []string{"/home/u/work"}},
			Rules{Read: []string{"/"}, Write: []string{"/home/u/work"}}},
		{"a hidden directory", Input{Hidden: []string{"/home/u/.ssh"}, Writable: []string{"/home/u/work"}},
			Rules{Read: []string{"/etc", "/home/u/work", "/home/v", "/tmp", "/usr"}, ReadFile: []string{"/home/u/.bashrc"},
				ListOnly: []string{"/", "/home", "/home/u"}, Write: []string{"/home/u/work"}}},
		{"a hidden file", Input{Hidden: []string{"/etc/passwd"}},
			Rules{Read: []string{"/home", "/tmp", "/usr"}, ListOnly: []string{"/", "/etc"}}},
		{"two hidden siblings", Input{Hidden: []string{"/home/u", "/home/v"}},
			Rules{Read: []string{"/etc", "/tmp", "/usr"}, ListOnly: []string{"/", "/home"}}},
		{"nested hidden", Input{Hidden: []string{"/home", "/home/u/.ssh"}},
			Rules{Read: []string{"/etc", "/tmp", "/usr"}, ListOnly: []string{"/"}}},
		{"reopened inside hidden", Input{Hidden: []string{"/home/u"}, Reopened: []string{"/home/u/work"}},
			Rules{Read: []string{"/etc", "/home/u/work", "/home/v", "/tmp", "/usr"}, ListOnly: []string{"/", "/home"}}},
		{"everything hidden", Input{Hidden: []string{"/"}, Reopened: []string{"/usr"}},
			Rules{Read: []string{"/usr"}}},
	}
	for _, c := range cases {
		got, err := Compute(c.in, tree)
		if err != nil {
			t.Fatal(err)
		}
		norm := func(r Rules) Rules {
			for _, s := range []*[]string{&r.Read, &r.ReadFile, &r.ListOnly, &r.Write} {
				if len(*s) == 0 {
					*s = nil
				}
			}
			return r
		}
		if !reflect.DeepEqual(norm(got), norm(c.want)) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}
