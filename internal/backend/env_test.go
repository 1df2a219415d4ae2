package backend

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// git.safeDirectories becomes GIT_CONFIG_* entries as the reference makes
// them (spec d.4), after the caller's own entries.
func TestWithGitSafeDirectories(t *testing.T) {
	many := make([]string, 9)
	for i := range many {
		many[i] = fmt.Sprintf("/w/%d", i)
	}
	for _, tc := range []struct {
		name      string
		env, dirs []string
		want      []string // the GIT_CONFIG_* variables, sorted
	}{
		{"none", []string{"A=1"}, nil, nil},
		{"only empty entries", nil, []string{""}, nil},
		{"one", []string{"A=1"}, []string{"/work/"}, []string{
			"GIT_CONFIG_COUNT=2",
			"GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_KEY_1=safe.directory",
			"GIT_CONFIG_VALUE_0=/work", "GIT_CONFIG_VALUE_1=/work/*"}},
		{"root and a duplicate", nil, []string{"/", "//", "/a", "/a/"}, []string{
			"GIT_CONFIG_COUNT=4",
			"GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_KEY_2=safe.directory", "GIT_CONFIG_KEY_3=safe.directory",
			"GIT_CONFIG_VALUE_0=/", "GIT_CONFIG_VALUE_1=/*", "GIT_CONFIG_VALUE_2=/a", "GIT_CONFIG_VALUE_3=/a/*"}},
		{"continues the inherited count", []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_VALUE_0=cat"}, []string{"/w"}, []string{
			"GIT_CONFIG_COUNT=3",
			"GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_KEY_2=safe.directory",
			"GIT_CONFIG_VALUE_0=cat", "GIT_CONFIG_VALUE_1=/w", "GIT_CONFIG_VALUE_2=/w/*"}},
		{"inherited 0 opts out", []string{"GIT_CONFIG_COUNT=0"}, []string{"/w"}, []string{"GIT_CONFIG_COUNT=0"}},
		{"a bogus inherited count starts at 0", []string{"GIT_CONFIG_COUNT=x"}, []string{"/w"}, []string{
			"GIT_CONFIG_COUNT=2",
			"GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_KEY_1=safe.directory",
			"GIT_CONFIG_VALUE_0=/w", "GIT_CONFIG_VALUE_1=/w/*"}},
		{"more than 8: one wildcard", nil, many, []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := withGitSafeDirectories(tc.env, tc.dirs)
			var got []string
			for _, kv := range out {
				if strings.HasPrefix(kv, "GIT_CONFIG_") {
					got = append(got, kv)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("GIT_CONFIG_*:\n got %q\nwant %q", got, tc.want)
			}
			if slices.Contains(tc.env, "A=1") && !slices.Contains(out, "A=1") {
				t.Errorf("the rest of the environment was lost: %q", out)
			}
		})
	}
}

func TestJavaToolOptions(t *testing.T) {
	for _, tc := range []struct{ jar, inherited, want string }{
		{"", "", ""},
		{"", "-Xmx1g", "-Xmx1g"},
		{"/opt/agent.jar", "", "-javaagent:/opt/agent.jar"},
		{"/opt/agent.jar", "-Xmx1g", "-javaagent:/opt/agent.jar -Xmx1g"},
		{"/opt/my agent.jar", "-Xmx1g", `"-javaagent:/opt/my agent.jar" -Xmx1g`},
	} {
		if got := JavaToolOptions(tc.jar, tc.inherited); got != tc.want {
			t.Errorf("JavaToolOptions(%q, %q) = %q, want %q", tc.jar, tc.inherited, got, tc.want)
		}
	}
}
