package proxy

import (
	"strings"
	"testing"
)

func TestEnv(t *testing.T) {
	env := map[string]string{}
	for _, kv := range Env(3128, 1080, "-Xmx1g") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, want := range map[string]string{
		"HTTP_PROXY": "http://localhost:3128", "https_proxy": "http://localhost:3128", "ALL_PROXY": "http://localhost:3128",
		"NO_PROXY": "localhost,127.0.0.1,::1", "FTP_PROXY": "socks5h://localhost:1080", "RSYNC_PROXY": "localhost:1080",
		"NODE_USE_ENV_PROXY": "1", "SANDBOX_RUNTIME": "1", "CLOUDSDK_PROXY_PORT": "3128",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if j := env["JAVA_TOOL_OPTIONS"]; !strings.HasPrefix(j, "-Xmx1g -Dhttp.proxyHost=localhost -Dhttp.proxyPort=3128") {
		t.Errorf("JAVA_TOOL_OPTIONS = %q", j)
	}
}
