package pathguard

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gitIndexOf makes a repository with git, runs steps in it, and returns
// its index (and the shared index, if split).
func gitIndexOf(t *testing.T, initArgs []string, steps ...[]string) (index []byte, shared []byte) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("needs git: not installed")
	}
	dir := t.TempDir()
	if out, err := gitCmd(dir, append([]string{"init", "-q"}, append(initArgs, "r")...)...); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	r := filepath.Join(dir, "r")
	for _, step := range steps {
		if step[0] == "write" {
			os.MkdirAll(filepath.Dir(filepath.Join(r, step[1])), 0o755)
			os.WriteFile(filepath.Join(r, step[1]), []byte(step[2]), 0o644)
			continue
		}
		if out, err := gitCmd(r, step...); err != nil && step[0] != "merge" {
			t.Fatalf("git %v: %v %s", step, err, out)
		}
	}
	index, err := os.ReadFile(filepath.Join(r, ".git/index"))
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(r, ".git/sharedindex.*")); len(m) > 0 {
		shared, _ = os.ReadFile(m[0])
	}
	return index, shared
}

// Every index git writes passes; the same index with a path changed,
// byte for byte, to one git would check out into .git or out of the
// work tree, does not — in each version and hash size.
func TestGitIndexSafe(t *testing.T) {
	files := [][]string{{"write", "xgit/hooks/post-checkout", "x"}, {"write", "aa/x", "y"}, {"write", "sub/zzz", "z"}}
	add := []string{"add", "."}
	commit := []string{"commit", "-q", "-m", "m"}
	cases := map[string]struct {
		init  []string
		steps [][]string
	}{
		"v2":        {nil, append(files, add, commit)},
		"v3":        {nil, append(files, []string{"write", "n", "x"}, []string{"add", "-N", "n"}, add)},
		"v4":        {nil, append(files, add, []string{"update-index", "--index-version", "4"})},
		"sha256":    {[]string{"--object-format=sha256"}, append(files, add, commit)},
		"sha256v4":  {[]string{"--object-format=sha256"}, append(files, add, []string{"update-index", "--index-version", "4"})},
		"split":     {nil, append(files, add, commit, []string{"update-index", "--split-index"}, []string{"write", "aa/x", "changed"}, []string{"write", "new", "n"}, add)},
		"threads":   {nil, append(files, add, []string{"-c", "index.threads=2", "-c", "index.recordOffsetTable=true", "-c", "index.recordEndOfIndexEntries=true", "update-index", "--force-write-index"})},
		"threadsv4": {nil, append(files, add, []string{"-c", "index.threads=2", "-c", "index.recordOffsetTable=true", "-c", "index.recordEndOfIndexEntries=true", "update-index", "--index-version", "4", "--force-write-index"})},
		"sparse":    {nil, append(files, add, commit, []string{"sparse-checkout", "init", "--cone", "--sparse-index"}, []string{"sparse-checkout", "set", "sub"})},
		"reuc": {nil, append(files, add, commit, []string{"checkout", "-q", "-b", "b"}, []string{"write", "aa/x", "b"}, []string{"commit", "-q", "-am", "b"},
			[]string{"checkout", "-q", "-"}, []string{"write", "aa/x", "c"}, []string{"commit", "-q", "-am", "c"}, []string{"merge", "-q", "b"},
			[]string{"write", "aa/x", "d"}, []string{"add", "aa/x"})},
	}
	for name, tc := range cases {
		index, shared := gitIndexOf(t, tc.init, tc.steps...)
		for what, b := range map[string][]byte{"index": index, "shared": shared} {
			if b == nil {
				continue
			}
			size := 20
			if strings.HasPrefix(name, "sha256") {
				size = 32
			}
			if err := GitIndexSafe(b, size); err != nil {
				t.Errorf("%s %s: git's own refused: %v", name, what, err)
			}
			if name == "reuc" && what == "index" && !bytes.Contains(b, []byte("REUC")) {
				t.Errorf("reuc: the index holds no resolve-undo extension")
			}
			if strings.HasPrefix(name, "threads") && (!bytes.Contains(b, []byte("IEOT")) || !bytes.Contains(b, []byte("EOIE"))) {
				t.Errorf("%s: the index holds no offset table", name)
			}
			for _, swap := range [][2]string{{"xgit/hooks", ".git/hooks"}, {"aa/x", "../x"}, {"xgit/hooks", ".GIT./hook"}, {"sub/zzz", "git~1/z"}} {
				if !bytes.Contains(b, []byte(swap[0])) {
					continue
				}
				bad := bytes.ReplaceAll(b, []byte(swap[0]), []byte(swap[1]))
				if err := GitIndexSafe(bad, size); err == nil {
					t.Errorf("%s %s: %s in place of %s taken", name, what, swap[1], swap[0])
				}
			}
		}
	}
}

func TestCheckoutPath(t *testing.T) {
	for _, p := range []string{"a", "a/b/c", ".gitignore", "x.git", ".github/workflows/x", "git", ".gitx"} {
		if err := checkoutPath(p, 0o100644); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
	for _, p := range []string{"", "/a", "a//b", "a/./b", "../a", "a/..", ".git/config", "a/.Git/hooks/x", ".git ", ".git./x", "GIT~1/x", ".git::$INDEX_ALLOCATION/x", "a/"} {
		if err := checkoutPath(p, 0o100644); err == nil {
			t.Errorf("%q taken", p)
		}
	}
	if checkoutPath("d/", 0o040000) != nil || checkoutPath("d", 0o040000) == nil {
		t.Error("a sparse directory entry judged wrong")
	}
	if checkoutPath("a/.gitmodules", 0o120000) == nil || checkoutPath("a/.gitmodules", 0o100644) != nil {
		t.Error("a symlink named .gitmodules judged wrong")
	}
	if !strings.Contains(GitFileSafe("index", []byte("DIRC"), 20).Error(), "index") {
		t.Error("GitFileSafe does not judge an index as one")
	}
}

// A version-4 name is as long as its flags say, whatever bytes its
// suffix holds: an entry whose padding hides another the guard would
// read and git would not is read as git reads it (a NUL in a name),
// and refused.
func TestGitIndexV4Lengths(t *testing.T) {
	entry := func(mode uint32, length int, strip byte, suffix string) []byte {
		e := make([]byte, 40+20+2)
		binary.BigEndian.PutUint32(e[24:], mode)
		binary.BigEndian.PutUint16(e[60:], uint16(length))
		return append(append(e, strip), append([]byte(suffix), 0)...)
	}
	index := func(entries ...[]byte) []byte {
		b := []byte("DIRC\x00\x00\x00\x04")
		b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
		for _, e := range entries {
			b = append(b, e...)
		}
		return append(b, make([]byte, 20)...)
	}
	good := index(entry(0o100644, 3, 0, "a/b"), entry(0o100644, 3, 1, "c"))
	if err := GitIndexSafe(good, 20); err != nil {
		t.Errorf("a plain version-4 index refused: %v", err)
	}
	hidden := index(entry(0o100644, 10, 0, "-a\x00\x00\x00\x00\x00\x00\x00\x00"), entry(0o100644, 12, 10, ".git/hooks/x"))
	if GitIndexSafe(hidden, 20) == nil {
		t.Error("a name hiding bytes past its NUL taken")
	}
	if GitIndexSafe(index(entry(0o100644, 2, 0, "abc")), 20) == nil {
		t.Error("a name longer than its flags say taken")
	}
	for config, want := range map[string]int{"": 20, "[extensions]\n\tobjectFormat = sha256\n": 32, "[extensions] objectformat=\"sha256\"": 32,
		"[core]\n\tobjectformat = sha256\n": 20, "[extensions]\n\tobjectformat = sha1\n": 20} {
		if got := HashSizeOf([]byte(config)); got != want {
			t.Errorf("HashSizeOf(%q) = %d, want %d", config, got, want)
		}
	}
}

// git reading an index with threads takes its entries from the blocks
// an offset table (IEOT) lists and its extensions from where the end of
// entries (EOIE) says: an entry hidden in another extension, which a
// reading in order skips, is refused, as is an EOIE that points
// elsewhere than where the entries end.
func TestGitIndexThreadedReading(t *testing.T) {
	entry := func(name string) []byte {
		e := make([]byte, 62)
		binary.BigEndian.PutUint32(e[24:], 0o100644)
		binary.BigEndian.PutUint16(e[60:], uint16(len(name)))
		e = append(e, name...)
		return append(e, make([]byte, 8-(62+len(name))%8)...)
	}
	ext := func(sig string, data []byte) []byte {
		return append(binary.BigEndian.AppendUint32([]byte(sig), uint32(len(data))), data...)
	}
	build := func(ieotAt int, eoieAt int, hidden bool) []byte {
		b := []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01")
		b = append(b, entry("a")...)
		extStart := len(b)
		if hidden {
			b = append(b, ext("ZZZZ", entry(".git/hooks/x"))...)
		}
		ieot := binary.BigEndian.AppendUint32(nil, 1)
		ieot = binary.BigEndian.AppendUint32(ieot, uint32(ieotAt))
		ieot = binary.BigEndian.AppendUint32(ieot, 1)
		b = append(b, ext("IEOT", ieot)...)
		if eoieAt < 0 {
			eoieAt = extStart
		}
		b = append(b, ext("EOIE", append(binary.BigEndian.AppendUint32(nil, uint32(eoieAt)), make([]byte, 20)...))...)
		return append(b, make([]byte, 20)...)
	}
	if err := GitIndexSafe(build(12, -1, false), 20); err != nil {
		t.Errorf("a consistent offset table refused: %v", err)
	}
	hiddenAt := 12 + len(entry("a")) + 8
	if GitIndexSafe(build(hiddenAt, -1, true), 20) == nil {
		t.Error("an offset table leading to an entry hidden in an extension taken")
	}
	if GitIndexSafe(build(12, 12+len(entry("a"))+8, true), 20) == nil {
		t.Error("an end of entries pointing into an extension taken")
	}
	// git follows the first offset table, a reading that checked only
	// the last would not see where it leads.
	twice := []byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01")
	twice = append(twice, entry("a")...)
	extStart := len(twice)
	table := func(at int) []byte {
		return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 1), uint32(at)), 1)
	}
	twice = append(twice, ext("IEOT", table(extStart+8+12+8+4))...)
	twice = append(twice, ext("IEOT", append(binary.BigEndian.AppendUint32(nil, 0), entry(".git/hooks/x")...))...)
	twice = append(twice, ext("IEOT", table(12))...)
	twice = append(twice, ext("EOIE", append(binary.BigEndian.AppendUint32(nil, uint32(extStart)), make([]byte, 20)...))...)
	twice = append(twice, make([]byte, 20)...)
	if GitIndexSafe(twice, 20) == nil {
		t.Error("an index with three offset tables taken")
	}
}

// A resolve-undo mode git reads with strtoul is taken only in octal
// digits: "-0" is a zero to git, and no object id follows it.
func TestGitIndexResolveUndoModes(t *testing.T) {
	if err := resolveUndoPaths([]byte("a\x00100644\x000\x000\x00"+strings.Repeat("x", 20)), 20); err != nil {
		t.Errorf("a plain record refused: %v", err)
	}
	if resolveUndoPaths([]byte("a\x00-0\x000\x000\x00"+strings.Repeat("x", 20)), 20) == nil {
		t.Error("a mode git reads otherwise taken")
	}
}

// An index crafted so that, read with 20-byte object ids, its one entry
// is "a", and read with 32-byte ids (after a config, commondir or
// worktree makes git read it so), a path outside the work tree: refused
// whatever format it is judged with (a round of attacks landed one as a
// worktree's index, then switched the repository to SHA-256).
func TestGitIndexSafeBothFormats(t *testing.T) {
	data, err := os.ReadFile("testdata/index-two-formats")
	if err != nil {
		t.Fatal(err)
	}
	if err := indexPaths(data, 20); err != nil {
		t.Fatalf("the crafted index does not read as a harmless one with 20-byte ids: %v", err)
	}
	if err := indexPaths(data, 32); err == nil {
		t.Fatal("the crafted index reads as harmless with 32-byte ids too: it proves nothing")
	}
	for _, size := range []int{20, 32} {
		if err := GitIndexSafe(data, size); err == nil {
			t.Errorf("taken judged with %d-byte ids", size)
		}
	}
}
