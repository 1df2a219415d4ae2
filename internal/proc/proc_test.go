package proc

import (
	"os"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		stat string
		want Proc
		ok   bool
	}{
		{"12 (sleep) S 7 12 12 0 -1", Proc{Pid: 12, PPid: 7, Comm: "sleep", State: "S"}, true},
		{"13 (a) b (c)) T 1 13", Proc{Pid: 13, PPid: 1, Comm: "a) b (c)", State: "T"}, true},
		{"14 ( ) Z 2 0\n", Proc{Pid: 14, PPid: 2, Comm: " ", State: "Z"}, true},
		{"18 (cat) R 5 18 18 0 -1 4194304 94 0 0 0 0 0 0 0 20 0 1 0 8812 5476352", Proc{Pid: 18, PPid: 5, Comm: "cat", State: "R", Start: 8812}, true},
		{"15 (x) S", Proc{}, false},
		{"(x) S 1", Proc{}, false},
		{"16 x S 1", Proc{}, false},
		{"17 (x) S y", Proc{}, false},
		{"", Proc{}, false},
	} {
		got, ok := Parse([]byte(c.stat))
		if ok != c.ok || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", c.stat, got, ok, c.want, c.ok)
		}
	}
}

func TestSelf(t *testing.T) {
	me, ok := Of(os.Getpid())
	// The state is the thread group leader's: running, or asleep while
	// another of the test's threads reads it.
	if !ok || me.Pid != os.Getpid() || me.PPid != os.Getppid() || me.State != "R" && me.State != "S" || me.Start <= 0 {
		t.Fatalf("Of(self) = %+v, %v", me, ok)
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range all {
		found = found || p.Pid == os.Getpid()
	}
	if !found {
		t.Error("All lacks this process")
	}
	if _, ok := Of(-1); ok {
		t.Error("a process of pid -1")
	}
}
