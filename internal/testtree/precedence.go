package testtree

// The precedence rows of spec c.1 as data: what each path of a tree is
// under each rule set, with paths relative to the tree (which is also the
// working directory). The policy package checks its views against them,
// the seatbelt package its profile.

// The three views of a path.
const (
	Hidden = "hidden"
	RO     = "ro"
	RW     = "rw"
)

// PrecedenceFiles is the tree the rows are about.
var PrecedenceFiles = []string{"h1/pub/p.txt", "h1/priv/s.txt", ".env", "sub/a.pem", "sub/deep/b.pem", "readme.txt",
	"secrets/s.txt", "w2/sub/t.txt", "w2/top.txt", "both/x", "home/", "out/", "allow/deny.txt", "allow/ok.txt"}

// PrecedenceCase is one rule set and the views it gives.
type PrecedenceCase struct {
	Name  string
	Rules FSRules
	Want  map[string]string
}

// Precedence are the rows.
var Precedence = []PrecedenceCase{
	{"nothing writable by default", FSRules{}, map[string]string{"readme.txt": RO, "h1/pub/p.txt": RO}},
	{"allowRead re-opens inside denyRead", FSRules{DenyRead: []string{"h1"}, AllowRead: []string{"h1/pub"}},
		map[string]string{"h1/pub/p.txt": RO, "h1/priv/s.txt": Hidden, "h1": Hidden, "readme.txt": RO}},
	{"specific deny beats broader allow", FSRules{DenyRead: []string{".env", "**/*.pem"}, AllowRead: []string{"."}},
		map[string]string{".env": Hidden, "sub/a.pem": Hidden, "sub/deep/b.pem": Hidden, "readme.txt": RO}},
	{"denied file in allowRead dir stays hidden", FSRules{DenyRead: []string{"/", "allow/deny.txt"}, AllowRead: []string{"allow"}},
		map[string]string{"allow/deny.txt": Hidden, "allow/ok.txt": RO, "readme.txt": Hidden}},
	{"same path deny and allow: allow wins", FSRules{DenyRead: []string{"both"}, AllowRead: []string{"both"}}, map[string]string{"both/x": RO}},
	{"deny / allow / denies nothing", FSRules{DenyRead: []string{"/"}, AllowRead: []string{"/"}}, map[string]string{"readme.txt": RO}},
	{"denyWrite inside allowWrite", FSRules{AllowWrite: []string{"."}, DenyWrite: []string{"secrets"}},
		map[string]string{"secrets/s.txt": RO, "readme.txt": RW}},
	{"denyWrite at or above allowWrite wins", FSRules{AllowWrite: []string{"w2", "w2/sub"}, DenyWrite: []string{"w2"}},
		map[string]string{"w2/sub/t.txt": RO, "w2/top.txt": RO}},
	{"hidden dir inside allowWrite is read-only", FSRules{AllowWrite: []string{"."}, DenyRead: []string{"h1"}},
		map[string]string{"h1": Hidden, "h1/priv/s.txt": Hidden, "readme.txt": RW}},
	{"allowWrite inside denyRead is re-exposed", FSRules{DenyRead: []string{"h1"}, AllowWrite: []string{"h1/pub"}},
		map[string]string{"h1/pub/p.txt": RW, "h1/priv/s.txt": Hidden}},
	{"missing allowWrite is skipped", FSRules{AllowWrite: []string{"nonexistent-dir", "out/**"}}, map[string]string{"out": RW, "readme.txt": RO}},
}
