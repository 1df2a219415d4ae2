package backend

import (
	"slices"
	"strconv"
	"strings"

	"github.com/srt-go/srt/internal/environ"
)

// The parts of the command's environment that come from settings rather
// than from the proxies (spec d.4). Pure functions of the settings and the
// inherited environment, for every backend.

// safeDirectoryWildcardPast is the number of git.safeDirectories entries
// past which one safe.directory=* stands for them all (the reference's
// threshold).
const safeDirectoryWildcardPast = 8

// withGitSafeDirectories returns env with dirs (git.safeDirectories) given
// to git as safe.directory through GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n and
// GIT_CONFIG_VALUE_n: each directory and, as "<dir>/*", every repository
// beneath it (git compares safe.directory with a repository's top level),
// or "*" for more than safeDirectoryWildcardPast directories. The numbering
// continues an inherited GIT_CONFIG_COUNT, so the caller's own entries
// stay; an inherited GIT_CONFIG_COUNT=0 says "no configuration from the
// environment", and env is returned as it is.
func withGitSafeDirectories(env, dirs []string) []string {
	count, inherited := environ.Lookup(env, "GIT_CONFIG_COUNT")
	if inherited && count == "0" {
		return env
	}
	var clean []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		// "/" stays "/": an empty safe.directory value would reset the
		// list git has read so far.
		if t := strings.TrimRight(d, "/"); t != "" {
			d = t
		} else {
			d = "/"
		}
		if !slices.Contains(clean, d) {
			clean = append(clean, d)
		}
	}
	if len(clean) == 0 {
		return env
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 {
		n = 0 // git would refuse the inherited value anyway
	}
	var values []string
	if len(clean) > safeDirectoryWildcardPast {
		values = []string{"*"}
	} else {
		for _, d := range clean {
			values = append(values, d, strings.TrimSuffix(d, "/")+"/*")
		}
	}
	for _, v := range values {
		env = environ.Set(env, "GIT_CONFIG_KEY_"+strconv.Itoa(n), "safe.directory")
		env = environ.Set(env, "GIT_CONFIG_VALUE_"+strconv.Itoa(n), v)
		n++
	}
	return environ.Set(env, "GIT_CONFIG_COUNT", strconv.Itoa(n))
}

// JavaToolOptions is the JAVA_TOOL_OPTIONS the command starts from: the
// javaAgentJarPath agent first, then the inherited value. The JVM splits
// the variable at white space but keeps double-quoted words whole, so a
// path with white space in it is quoted.
func JavaToolOptions(agentJar, inherited string) string {
	if agentJar == "" {
		return inherited
	}
	flag := "-javaagent:" + agentJar
	if strings.ContainsAny(agentJar, " \t\n\r\f\v") {
		flag = `"` + flag + `"`
	}
	return strings.TrimSpace(flag + " " + inherited)
}
