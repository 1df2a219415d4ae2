package nsexec

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/srt-go/srt/internal/testtree"
	"github.com/srt-go/srt/policy"
)

// A run's whole plan, for each kind of run: the namespace sandbox with
// its Landlock layer, the fallback (host namespaces, /dev hidden but for
// the harmless devices), nested namespaces without Landlock, and the
// settings the fallback refuses before anything starts.
func TestPlanRun(t *testing.T) {
	dir := testtree.Tree(t, "secret/key", "work/out/a", "work/.env", "home/")
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	opts := PlanOptions{Home: home, Cwd: dir, TempDir: tmp, RunDirs: filepath.Join(dir, "runs")}

	s := testtree.FSRules{DenyRead: []string{"secret"}, AllowWrite: []string{"work"}}.Settings()
	rp, err := PlanRun(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rp.Fallback || rp.Landlock == nil || rp.NoLandlock != "" || rp.Seccomp.HostNamespaces || rp.Seccomp.ReportSockets {
		t.Errorf("namespace plan: %+v", rp)
	}
	if v := see(rp.Mounts, filepath.Join(dir, "secret/key")); v.Readable {
		t.Error("denyRead is readable")
	}
	if v := see(rp.Mounts, filepath.Join(dir, "work/out/a")); !v.Writable {
		t.Error("allowWrite is not writable")
	}
	if v := see(rp.Mounts, tmp); !v.Writable {
		t.Error("the run's TMPDIR is not writable")
	}
	if !slices.Contains(rp.Landlock.Write, "/dev") || !slices.Contains(rp.Landlock.Write, filepath.Join(dir, "work")) {
		t.Errorf("Landlock write: %v", rp.Landlock.Write)
	}
	text := rp.String()
	for _, want := range []string{"Mounts:", filepath.Join(dir, "secret"), "Landlock layer: read", "Seccomp filter for"} {
		if !strings.Contains(text, want) {
			t.Errorf("String() lacks %q:\n%s", want, text)
		}
	}
	// Build is the mounts alone, the same.
	if p, err := Build(s, policy.Env{Home: home, Cwd: dir, Writable: []string{tmp}, Private: opts.RunDirs}); err != nil || p.String() != rp.Mounts.String() {
		t.Errorf("Build: %v\n%s\nwant\n%s", err, p, rp.Mounts)
	}

	fb := opts
	fb.Fallback, fb.Report = true, true
	rp, err = PlanRun(s, fb)
	if err != nil {
		t.Fatal(err)
	}
	if !rp.Fallback || !rp.Seccomp.HostNamespaces || rp.Seccomp.NestedNamespaces || !rp.Seccomp.ReportSockets || rp.Landlock == nil {
		t.Errorf("fallback plan: %+v", rp)
	}
	if slices.Contains(rp.Landlock.Write, "/dev") || !slices.Contains(rp.Landlock.Write, "/dev/null") || slices.Contains(rp.Landlock.Read, "/dev") {
		t.Errorf("fallback /dev: write %v, read %v", rp.Landlock.Write, rp.Landlock.Read)
	}

	// What the fallback cannot honour is refused.
	inside := testtree.FSRules{DenyRead: []string{"work/.env"}, AllowWrite: []string{"work"}}.Settings()
	if _, err := PlanRun(inside, fb); err == nil || !strings.Contains(err.Error(), "cannot hide") {
		t.Errorf("denyRead inside allowWrite: %v", err)
	}
	insidePlan, _ := build(t, inside, dir)
	if mask, bind, found := HiddenInWritable(insidePlan); !found || mask.Path != filepath.Join(dir, "work/.env") || bind.Path != filepath.Join(dir, "work") {
		t.Errorf("HiddenInWritable: %v %v %v", mask, bind, found)
	}
	pty := testtree.FSRules{}.Settings()
	pty.AllowPty = true
	if _, err := PlanRun(pty, fb); err == nil || !strings.Contains(err.Error(), "allowPty") {
		t.Errorf("allowPty in the fallback: %v", err)
	}
	if _, err := PlanRun(pty, opts); err != nil {
		t.Errorf("allowPty in the namespace sandbox: %v", err)
	}

	nested := testtree.FSRules{}.Settings()
	nested.AllowNestedUserNamespaces = true
	rp, err = PlanRun(nested, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rp.Landlock != nil || rp.NoLandlock != NestedNoLandlock || !strings.Contains(rp.String(), "No Landlock layer: "+NestedNoLandlock) {
		t.Errorf("nested plan: %+v", rp)
	}
}
