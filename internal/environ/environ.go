// Package environ edits environments in the form of os.Environ: a list
// of "KEY=value".
package environ

import "strings"

// Lookup is the value of key in env, the last one when it is there twice
// (as a process would see it).
func Lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Set returns env with key set to value, every earlier setting of key
// removed. env itself is left as it was.
func Set(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
