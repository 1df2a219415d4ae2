package proxy

import (
	"fmt"
	"net/url"
	"strings"
)

// Env returns the environment that points a command's clients at the
// proxies: the HTTP proxy at localhost:httpPort and the SOCKS proxy at
// localhost:socksPort (spec d.4, where it still applies here: no
// credentials, since only the sandbox reaches these ports). javaOpts is
// the inherited JAVA_TOOL_OPTIONS, extended.
func Env(httpPort, socksPort int, javaOpts string) []string {
	return env("localhost", "", httpPort, socksPort, javaOpts)
}

// EnvWithCredential is Env for proxies on the host's loopback that ask for
// cred (the fallback sandbox): the URLs carry it, and point at 127.0.0.1.
// The JVM's proxy properties cannot carry a password, so Java clients
// there cannot authenticate.
func EnvWithCredential(httpPort, socksPort int, cred *Credential, javaOpts string) []string {
	return env("127.0.0.1", url.UserPassword(cred.User, cred.Password).String()+"@", httpPort, socksPort, javaOpts)
}

func env(host, userinfo string, httpPort, socksPort int, javaOpts string) []string {
	httpURL := fmt.Sprintf("http://%s%s:%d", userinfo, host, httpPort)
	socksURL := fmt.Sprintf("socks5h://%s%s:%d", userinfo, host, socksPort)
	noProxy := "localhost,127.0.0.1,::1"
	java := strings.TrimSpace(strings.Join([]string{javaOpts,
		fmt.Sprintf("-Dhttp.proxyHost=%s -Dhttp.proxyPort=%d -Dhttps.proxyHost=%s -Dhttps.proxyPort=%d", host, httpPort, host, httpPort),
		"-Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]"}, " "))
	return []string{
		"SANDBOX_RUNTIME=1",
		"HTTP_PROXY=" + httpURL, "HTTPS_PROXY=" + httpURL, "http_proxy=" + httpURL, "https_proxy=" + httpURL,
		"ALL_PROXY=" + httpURL, "all_proxy=" + httpURL, "GRPC_PROXY=" + httpURL, "grpc_proxy=" + httpURL,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
		"FTP_PROXY=" + socksURL, "ftp_proxy=" + socksURL,
		fmt.Sprintf("RSYNC_PROXY=%s%s:%d", userinfo, host, socksPort),
		"DOCKER_HTTP_PROXY=" + httpURL, "DOCKER_HTTPS_PROXY=" + httpURL,
		"CLOUDSDK_PROXY_TYPE=http", "CLOUDSDK_PROXY_ADDRESS=" + host, fmt.Sprintf("CLOUDSDK_PROXY_PORT=%d", httpPort),
		"NODE_USE_ENV_PROXY=1",
		"JAVA_TOOL_OPTIONS=" + java,
	}
}
