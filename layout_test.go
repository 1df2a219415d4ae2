package srt_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const mod = "github.com/srt-go/srt"

// goList runs go list for goos (without cgo), one field a word of its
// output, or skips the test without the go tool.
func goList(t *testing.T, goos string, args ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("requires the go tool on PATH")
	}
	cmd := exec.Command(goTool, append([]string{"list"}, args...)...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOOS=%s go list %v: %v", goos, args, err)
	}
	return strings.Fields(string(out))
}

// The layering DESIGN and README draw: the policy package makes no
// system calls of its own, nsexec does not reach into the proxies, and
// the CLI goes through the library.
func TestLayering(t *testing.T) {
	list := func(goos string, args ...string) []string { return goList(t, goos, args...) }
	if !slices.Contains(list("linux", "-deps", "./nsexec"), "golang.org/x/sys/unix") {
		t.Fatal("go list shows no dependencies: the checks below would prove nothing")
	}
	for _, c := range []struct{ pkg, never string }{
		{"./policy", "golang.org/x/sys/unix"},
		{"./pathguard", "golang.org/x/sys/unix"},
		{"./pathguard", mod + "/policy"},
		{"./pathguard", mod + "/config"},
		{"./policy", mod + "/nsexec"},
		{"./nsexec", mod + "/proxy"},
		{"./seccomp", mod + "/nsexec"},
	} {
		for _, goos := range []string{"linux", "darwin", "windows"} {
			if slices.Contains(list(goos, "-deps", c.pkg), c.never) {
				t.Errorf("GOOS=%s: %s depends on %s", goos, c.pkg, c.never)
			}
		}
	}
	for _, imp := range list("linux", "-f", `{{join .Imports " "}}`, "./cmd/srt") {
		if strings.HasPrefix(imp, mod+"/") && !slices.Contains([]string{mod + "/config", mod + "/proxy"}, imp) {
			t.Errorf("cmd/srt imports %s: it goes through the library (srt), config and proxy only", imp)
		}
	}
}

// The root package is the library's face and holds no backend, on every
// system. Each system's backend is a package under internal/backend,
// which the root imports from one file for that system, srt_<goos>.go,
// holding MaybeRunInit and newBackend and nothing else (a system without
// a backend gets internal/backend's Unsupported there); every other root
// file is the same on every system and imports no backend, no package of
// system calls, and of the systems' packages only what the public API
// names; no backend imports another, and the contract between them knows
// no system. So a new system's backend is a new package and its one root
// file, and touches no other backend.
func TestFacadeHoldsNoBackend(t *testing.T) {
	const backends = mod + "/internal/backend/" // the systems' backends
	// The systems' own packages, and the root files that may import them:
	// plan.go for the plans srt plan prints on any host (pure data),
	// contract.go for SetupError, nsexec's.
	systems := map[string][]string{
		mod + "/nsexec":   {"plan.go", "contract.go"},
		mod + "/seatbelt": {"plan.go"},
		mod + "/landlock": {"plan.go"},
		mod + "/seccomp":  {"plan.go"},
		mod + "/winsec":   {"plan.go"},
	}
	syscalls := []string{"syscall", "unsafe", "golang.org/x/sys/unix", "golang.org/x/sys/windows"}
	var shared []string // the root's files but the selector, on the first system
	for _, goos := range []string{"linux", "darwin", "windows"} {
		listed := goList(t, goos, "-f", "{{.Dir}} {{join .GoFiles \" \"}}", ".")
		dir, files := listed[0], listed[1:]
		selector := "srt_" + goos + ".go"
		if !slices.Contains(files, selector) {
			t.Errorf("GOOS=%s: no %s picks the backend (root files %v)", goos, selector, files)
		}
		var others []string
		for _, name := range files {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			var imports []string
			for _, s := range f.Imports {
				p, _ := strconv.Unquote(s.Path.Value)
				imports = append(imports, p)
			}
			if name == selector {
				checkSelector(t, goos, name, f, imports)
				continue
			}
			others = append(others, name)
			for _, p := range imports {
				switch {
				case strings.HasPrefix(p, backends):
					t.Errorf("GOOS=%s: %s imports the backend %s: only %s picks one", goos, name, p, selector)
				case slices.Contains(syscalls, p):
					t.Errorf("GOOS=%s: %s imports %s: the facade makes no system calls; its backend does", goos, name, p)
				case systems[p] != nil && !slices.Contains(systems[p], name):
					t.Errorf("GOOS=%s: %s imports %s: only %v may, for what the public API names", goos, name, p, systems[p])
				}
			}
		}
		if shared == nil {
			shared = others
		} else if !slices.Equal(shared, others) {
			t.Errorf("GOOS=%s: the root's files are %v, on linux %v: a file of one system's is a backend's", goos, others, shared)
		}
		// No backend imports another; the contract imports none, nor any
		// system's package.
		for _, line := range goList(t, goos, "-f", `{{.ImportPath}}:{{join .Deps ","}}`, "./internal/backend/...") {
			pkg, deps, _ := strings.Cut(line, ":")
			for _, d := range strings.Split(deps, ",") {
				switch {
				case strings.HasPrefix(d, backends) && d != pkg:
					t.Errorf("GOOS=%s: %s depends on the backend %s", goos, pkg, d)
				case pkg == mod+"/internal/backend" && systems[d] != nil:
					t.Errorf("GOOS=%s: internal/backend depends on %s: the contract knows no system", goos, d)
				}
			}
		}
	}
}

// checkSelector fails unless f, the root's file for goos, picks its
// backend and does nothing else: it imports internal/backend and one
// backend at most, and declares MaybeRunInit and newBackend only.
func checkSelector(t *testing.T, goos, name string, f *ast.File, imports []string) {
	t.Helper()
	var picked []string
	for _, p := range imports {
		switch {
		case strings.HasPrefix(p, mod+"/internal/backend/"):
			picked = append(picked, p)
		case p != mod+"/internal/backend":
			t.Errorf("GOOS=%s: %s imports %s: it only picks the backend", goos, name, p)
		}
	}
	if len(picked) > 1 {
		t.Errorf("GOOS=%s: %s picks the backends %v: one at most (none: backend.Unsupported)", goos, name, picked)
	}
	var decls []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				decls = append(decls, d.Name.Name)
				continue
			}
			decls = append(decls, "a method")
		case *ast.GenDecl:
			if d.Tok != token.IMPORT {
				decls = append(decls, d.Tok.String())
			}
		}
	}
	if !slices.Equal(decls, []string{"MaybeRunInit", "newBackend"}) {
		t.Errorf("GOOS=%s: %s declares %v: MaybeRunInit and newBackend only", goos, name, decls)
	}
}
