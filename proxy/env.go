package proxy

import (
	"fmt"
	"strings"
)

// Env returns the environment that points a command's clients at the
// proxies: the HTTP proxy at localhost:httpPort and the SOCKS proxy at
// localhost:socksPort (spec d.4, where it still applies here: no
// credentials, since only the sandbox reaches these ports). javaOpts is
// the inherited JAVA_TOOL_OPTIONS, extended.
func Env(httpPort, socksPort int, javaOpts string) []string {
	httpURL := fmt.Sprintf("http://localhost:%d", httpPort)
	socksURL := fmt.Sprintf("socks5h://localhost:%d", socksPort)
	noProxy := "localhost,127.0.0.1,::1"
	java := strings.TrimSpace(strings.Join([]string{javaOpts,
		fmt.Sprintf("-Dhttp.proxyHost=localhost -Dhttp.proxyPort=%d -Dhttps.proxyHost=localhost -Dhttps.proxyPort=%d", httpPort, httpPort),
		"-Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]"}, " "))
	return []string{
		"SANDBOX_RUNTIME=1",
		"HTTP_PROXY=" + httpURL, "HTTPS_PROXY=" + httpURL, "http_proxy=" + httpURL, "https_proxy=" + httpURL,
		"ALL_PROXY=" + httpURL, "all_proxy=" + httpURL, "GRPC_PROXY=" + httpURL, "grpc_proxy=" + httpURL,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
		"FTP_PROXY=" + socksURL, "ftp_proxy=" + socksURL,
		fmt.Sprintf("RSYNC_PROXY=localhost:%d", socksPort),
		"DOCKER_HTTP_PROXY=" + httpURL, "DOCKER_HTTPS_PROXY=" + httpURL,
		"CLOUDSDK_PROXY_TYPE=http", "CLOUDSDK_PROXY_ADDRESS=localhost", fmt.Sprintf("CLOUDSDK_PROXY_PORT=%d", httpPort),
		"NODE_USE_ENV_PROXY=1",
		"JAVA_TOOL_OPTIONS=" + java,
	}
}
