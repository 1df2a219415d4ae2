package seatbelt

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/srt-go/srt/internal/testtree"
	"github.com/srt-go/srt/policy"
)

// specRow is a filesystem case of shared/spec/testcases.md (sections 3,
// 4 and 10), by its number there, as settings and the reads, writes and
// moves it checks. Where DESIGN.md departs from the reference on purpose,
// departure says how and the check holds our answer.
type specRow struct {
	id, departure string
	files         []string // under W; "~/x" under H
	rules         testtree.FSRules
	depth         int // mandatoryDenySearchDepth, 0: the default
	gitConfig     bool
	disabled      bool
	checks        []specCheck
}

// specCheck is one access: 'r' a read, 'w' a write, 'm' a move (unlink)
// of path (under W; "~/x" under H; "/x" absolute) and whether it is
// allowed.
type specCheck struct {
	op   byte
	path string
	want bool
}

func r(path string, want bool) specCheck { return specCheck{'r', path, want} }
func w(path string, want bool) specCheck { return specCheck{'w', path, want} }
func m(path string, want bool) specCheck { return specCheck{'m', path, want} }

var (
	dangerous = []string{".bashrc", ".bash_profile", ".gitconfig", ".gitmodules", ".zshrc", ".zprofile", ".profile", ".ripgreprc", ".mcp.json"}
	setup61   = append([]string{".git/config", ".git/HEAD", ".git/index", ".git/hooks/pre-commit", ".git/objects/test-obj", ".git/refs/heads/main",
		".vscode/settings.json", ".idea/workspace.xml", ".claude/commands/test.md", ".claude/agents/test-agent.md", ".claude/some-other-file.txt", "safe-file.txt"}, dangerous...)
	nested = []string{"a/.bashrc", "a/b/.bashrc", "a/b/c/.bashrc", "a/b/c/d/.bashrc", "a/.vscode/x", "a/b/.vscode/x", "a/b/c/.vscode/x"}
)

func writes(paths []string, want bool) []specCheck {
	var out []specCheck
	for _, p := range paths {
		out = append(out, w(p, want))
	}
	return out
}

var baseW = testtree.FSRules{AllowWrite: []string{"."}}

var specRows = []specRow{
	{id: "37", rules: baseW, checks: []specCheck{w("/tmp/sandbox-blocked-write.txt", false), w("../elsewhere.txt", false)}},
	{id: "38", rules: baseW, checks: []specCheck{w("allowed-write.txt", true)}},
	{id: "39", checks: []specCheck{w("f.txt", false), w("/tmp/f.txt", false), w("/dev/null", true)}},
	{id: "40", files: []string{"~/.bashrc"}, checks: []specCheck{r("~/.bashrc", true)}},
	{id: "42", files: []string{"~/.ssh/id_rsa"}, rules: testtree.FSRules{DenyRead: []string{"~/.ssh"}}, checks: []specCheck{r("~/.ssh/id_rsa", false), r("~/.ssh/new", false)}},
	{id: "43", files: []string{".env"}, rules: testtree.FSRules{DenyRead: []string{".env"}}, checks: []specCheck{r(".env", false), r("other", true)}},
	{id: "44", files: []string{"~/pub/p.txt", "~/priv/s.txt"}, rules: testtree.FSRules{DenyRead: []string{"~"}, AllowRead: []string{"~/pub"}},
		checks: []specCheck{r("~/pub/p.txt", true), r("~/priv/s.txt", false)}},
	{id: "45", departure: "a denied directory is read-only, not a throwaway tmpfs", rules: testtree.FSRules{DenyRead: []string{"~"}, AllowWrite: []string{"."}},
		checks: []specCheck{w("~/new.txt", false), w("new.txt", true)}},
	{id: "46", files: []string{".env", "sub/a.pem", "sub/deep/b.pem", "readme.txt"}, rules: testtree.FSRules{DenyRead: []string{".env", "**/*.pem"}, AllowRead: []string{"."}},
		checks: []specCheck{r(".env", false), r("sub/a.pem", false), r("sub/deep/b.pem", false), r("readme.txt", true)}},
	{id: "47", rules: testtree.FSRules{AllowWrite: []string{"."}, DenyWrite: []string{"secrets"}}, files: []string{"secrets/s.txt"},
		checks: []specCheck{w("secrets/s.txt", false), w("secrets/new", false), w("new.txt", true)}},
	{id: "48", rules: testtree.FSRules{AllowWrite: []string{".", "sub"}, DenyWrite: []string{"."}}, files: []string{"sub/"},
		checks: []specCheck{w("sub/t.txt", false), w("top.txt", false)}},
	{id: "50a", rules: testtree.FSRules{AllowWrite: []string{"./out"}}, files: []string{"out/"}, checks: []specCheck{w("out/x", true), w("other/x", false)}},
	{id: "50b", rules: testtree.FSRules{AllowWrite: []string{"~/proj"}}, files: []string{"~/proj/"}, checks: []specCheck{w("~/proj/x", true), w("~/x", false)}},
	{id: "50c", rules: testtree.FSRules{AllowWrite: []string{"src/**"}}, files: []string{"src/d/"}, checks: []specCheck{w("src/a", true), w("src/d/e", true), w("a", false)}},
	{id: "58", disabled: true, rules: testtree.FSRules{DenyRead: []string{"."}}, checks: []specCheck{w("dis.txt", true), r("dis.txt", true), w(".bashrc", true)}},
	{id: "61", files: setup61, rules: baseW, checks: writes(dangerous, false)},
	{id: "62", files: setup61, rules: baseW, checks: writes([]string{".git/config", ".git/hooks/pre-commit"}, false)},
	{id: "63", files: setup61, rules: baseW, checks: writes([]string{".vscode/settings.json", ".idea/workspace.xml", ".claude/commands/test.md", ".claude/agents/test-agent.md"}, false)},
	{id: "64", files: setup61, rules: baseW, checks: writes([]string{"safe-file.txt", ".git/objects/test-obj", ".git/refs/heads/main", ".git/index", ".claude/some-other-file.txt"}, true)},
	{id: "65", files: setup61, rules: baseW, gitConfig: true, checks: []specCheck{w(".git/config", true), w(".git/hooks/x", false)}},
	{id: "67", rules: baseW, checks: writes([]string{".bashrc", ".mcp.json", ".claude/commands/x", ".vscode/x"}, false)},
	{id: "68", departure: "protected names are protected at any depth", files: nested, rules: baseW, checks: writes(nested, false)},
	{id: "69", departure: "protected names are protected at any depth", files: nested, rules: baseW, depth: 1, checks: writes(nested, false)},
	{id: "73", departure: "protected names are protected at any depth", files: []string{"node_modules/x/.bashrc"}, rules: baseW,
		checks: []specCheck{w("node_modules/x/.bashrc", false), w("node_modules/x/y", true)}},
	{id: "53b", departure: "a denied symlink to nothing protects its target once it appears", files: []string{"dang -> work/tgt-later"},
		rules: testtree.FSRules{DenyRead: []string{"dang"}}, checks: []specCheck{r("tgt-later", false), r("dang", false), r("other", true)}},
	{id: "140", files: []string{"d/secret.txt", "g/a.txt", "g/sub/b.txt", "ok/x"}, rules: testtree.FSRules{AllowWrite: []string{"."}, DenyRead: []string{"d", "g/*.txt"}},
		checks: []specCheck{r("d/secret.txt", false), m("d/secret.txt", false), m("d", false), m(".", false), m("g/a.txt", false), m("g", false),
			r("g/a.txt", false), r("g/sub/b.txt", true), m("ok/x", true)}},
	{id: "141", files: []string{"A/denied/f", "A/g.lock", "A/ok"}, rules: testtree.FSRules{AllowWrite: []string{"A"}, DenyWrite: []string{"A/denied", "A/*.lock"}},
		checks: []specCheck{m("A/denied", false), w("A/denied/f", false), w("A/denied/new", false), m("A", false), m(".", false), m("A/g.lock", false), w("A/g.lock", false), m("A/ok", true)}},
}

// The spec's filesystem cases, each run against the generated profile
// (through the evaluator) and against the Linux backend's policy and
// guard: both give the answer the row holds.
func TestSpecFilesystemRows(t *testing.T) {
	for _, row := range specRows {
		t.Run(row.id, func(t *testing.T) {
			var files []string
			for _, f := range row.files {
				if rest, ok := strings.CutPrefix(f, "~/"); ok {
					files = append(files, "home/"+rest)
				} else {
					files = append(files, "work/"+f)
				}
			}
			root := testtree.Tree(t, append(files, "home/", "work/")...)
			home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
			s := row.rules.Settings()
			s.Filesystem.AllowGitConfig = row.gitConfig
			s.Filesystem.Disabled = row.disabled
			if row.depth > 0 {
				s.MandatoryDenySearchDepth = row.depth
			}
			pol, c := profileOf(t, s, policy.Env{Home: home, Cwd: work}, Options{Tag: "t", GitConfig: row.gitConfig})
			g := policy.Guard{GitConfig: row.gitConfig, Policy: pol}
			for _, ck := range row.checks {
				path := ck.path
				switch {
				case strings.HasPrefix(path, "~/"):
					path = filepath.Join(home, path[2:])
				case !filepath.IsAbs(path):
					path = filepath.Join(work, path)
				}
				read, write := linuxView(pol, g, path)
				var seatbelt, linux bool
				switch ck.op {
				case 'r':
					seatbelt, linux = c.Allowed("file-read-data", path), read
				case 'w':
					seatbelt, linux = c.Allowed("file-write-data", path), write
					if strings.HasPrefix(path, "/dev/") {
						// Linux's /dev is the sandbox's own, not the
						// policy's view (the CLI's row 39 runs it).
						linux = ck.want
					}
				case 'm':
					// Linux keeps what a denied path lies in by mounts
					// over it (EBUSY), not by a rule a view holds.
					seatbelt, linux = c.Allowed("file-write-unlink", path), ck.want
				}
				if seatbelt != ck.want || linux != ck.want {
					t.Errorf("%c %s: Seatbelt %v, Linux %v, want %v %s", ck.op, ck.path, seatbelt, linux, ck.want, row.departure)
				}
			}
		})
	}
}

// The policy package's path views (spec c.1's precedence rows), each run
// against the generated profile and the Linux backend's view: hidden is
// neither read nor written, ro only read, rw both.
func TestPolicyViewRows(t *testing.T) {
	w := testtree.Tree(t, testtree.PrecedenceFiles...)
	for _, tc := range testtree.Precedence {
		t.Run(tc.Name, func(t *testing.T) {
			pol, c := profileOf(t, tc.Rules.Settings(), policy.Env{Cwd: w, Home: filepath.Join(w, "home")}, Options{Tag: "t"})
			g := policy.Guard{Policy: pol}
			for rel, want := range tc.Want {
				path := filepath.Join(w, rel)
				read, write := want != testtree.Hidden, want == testtree.RW
				lr, lw := linuxView(pol, g, path)
				sr, sw := c.Allowed("file-read-data", path), c.Allowed("file-write-data", path)
				if sr != read || sw != write || lr != read || lw != write {
					t.Errorf("%s (%s): Seatbelt read %v write %v, Linux read %v write %v", rel, want, sr, sw, lr, lw)
				}
			}
		})
	}
}
