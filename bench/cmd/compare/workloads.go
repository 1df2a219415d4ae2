//go:build linux

package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

const (
	noNetwork   = `"network":{"allowedDomains":[],"deniedDomains":[]}`
	noFSRules   = `"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}`
	writeCwd    = `"filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}`
	downloadMiB = 500
)

// workloads builds the fixtures (settings files, working trees, the
// download server) and the list of workloads over them.
func workloads(work string, concurrent int) ([]workload, func(), error) {
	tree := filepath.Join(work, "tree")
	if err := makeTree(tree, 100, 100, 10); err != nil {
		return nil, nil, fmt.Errorf("making the 100,000-file tree: %w", err)
	}
	repos := filepath.Join(work, "repos")
	if err := makeRepos(repos, 300); err != nil {
		return nil, nil, fmt.Errorf("making the 300 repositories: %w", err)
	}
	tarball, clonable, err := makeWriteFixtures(work)
	if err != nil {
		return nil, nil, fmt.Errorf("making the tarball and the repository: %w", err)
	}
	server, url, err := serveDownload(downloadMiB << 20)
	if err != nil {
		return nil, nil, err
	}
	tlsServer, tlsURL, caFile, bundle, err := serveTLSDownload(work, downloadMiB<<20)
	if err != nil {
		return nil, nil, err
	}
	// Every implementation gets a TMPDIR of the run's own: what one
	// leaves there (the reference leaves a Unix socket per run) goes with
	// the work dir, and no later run pays for it.
	tmp := filepath.Join(work, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return nil, nil, err
	}
	// The TLS origin's CA: srt-go verifies upstreams against
	// SSL_CERT_FILE, the reference against NODE_EXTRA_CA_CERTS; inside,
	// each points curl at its own trust bundle.
	runEnv = append(os.Environ(), "TMPDIR="+tmp, "SSL_CERT_FILE="+caFile, "NODE_EXTRA_CA_CERTS="+caFile)
	// The fixtures' 110,000 new files are written back now, not while
	// the first workloads are timed.
	unix.Sync()
	launch := func(name, settings, dir string) workload {
		return workload{name: name, settings: settings, metrics: []metric{{"", "ms"}},
			sample: func(im impl, cfg string) ([]float64, error) {
				d, err := timed(im.argv(cfg, []string{"true"}), dir)
				return []float64{ms(d)}, err
			}}
	}
	base := "{" + noNetwork + "," + noFSRules + "}"
	net := `{"network":{"allowedDomains":["example.com","*.github.com"],"deniedDomains":[]},` + noFSRules + "}"
	inCwd := "{" + noNetwork + "," + writeCwd + "}"
	list := []workload{
		launch("true, minimal policy", base, work),
		launch("true, network allowances", net, work),
		launch("true, 100 filesystem rules", rules(work, 100), work),
		launch("true, 1,000 filesystem rules", rules(work, 1000), work),
		launch("true in 100,000 files, allowWrite .", inCwd, tree),
		launch("true in 300 git repositories, allowWrite .", inCwd, repos),
		{
			name: fmt.Sprintf("%d sandboxes at once", concurrent), settings: base,
			metrics: []metric{{", wall time", "ms"}, {", peak memory", "MB"}},
			sample: func(im impl, cfg string) ([]float64, error) {
				return together(im.argv(cfg, []string{"true"}), work, concurrent)
			},
		},
		{
			name:     fmt.Sprintf("download %d MB from loopback", downloadMiB),
			settings: `{"network":{"allowedDomains":["127.0.0.1"],"deniedDomains":[]},` + noFSRules + "}",
			metrics:  []metric{{"", "MB/s"}},
			skip: func(im impl) string {
				if !im.network {
					return "no network inside bwrap --unshare-all (bare is the direct figure)"
				}
				return ""
			},
			sample: func(im impl, cfg string) ([]float64, error) {
				v, err := download(im, cfg, url, work)
				return []float64{v}, err
			},
		},
		{
			name:     fmt.Sprintf("HTTPS download %d MB, TLS terminated, HTTP/1.1", downloadMiB),
			settings: terminate,
			metrics:  []metric{{"", "MB/s"}},
			skip:     needsNetwork,
			sample: func(im impl, cfg string) ([]float64, error) {
				v, err := curlTLS(im, cfg, tlsURL+"/file", bundle, "speed_download", "--http1.1", work)
				return []float64{v / 1e6}, err
			},
		},
		{
			name:     fmt.Sprintf("HTTPS download %d MB, TLS terminated, HTTP/2 where offered", downloadMiB),
			settings: terminate,
			metrics:  []metric{{"", "MB/s"}},
			skip:     needsNetwork,
			sample: func(im impl, cfg string) ([]float64, error) {
				v, err := curlTLS(im, cfg, tlsURL+"/file", bundle, "speed_download", "--http2", work)
				return []float64{v / 1e6}, err
			},
		},
		{
			name:     "HTTPS first byte of a new connection, TLS terminated",
			settings: terminate,
			metrics:  []metric{{"", "ms"}},
			skip:     needsNetwork,
			sample: func(im impl, cfg string) ([]float64, error) {
				v, err := curlTLS(im, cfg, tlsURL+"/one", bundle, "time_starttransfer", "--http1.1", work)
				return []float64{v * 1000}, err
			},
		},
		writes(work, "tar x of 10,000 files", []string{"tar", "xf", tarball, "-C", "out"}),
		writes(work, "git clone of 5,000 files", []string{"git", "clone", "-q", "--no-hardlinks", clonable, "out/c"}),
		writes(work, "rm -rf of 10,000 files", []string{"rm", "-rf", "out/t"}, "mkdir", "out/t", "&&", "tar", "xf", tarball, "-C", "out/t"),
		{
			name: "sandbox processes while sleep 1 runs", settings: base,
			metrics: []metric{{", peak RSS", "MB"}, {", peak PSS", "MB"}},
			skip: func(im impl) string {
				if im.name == "bare" {
					return "no sandbox process to measure"
				}
				return ""
			},
			sample: func(im impl, cfg string) ([]float64, error) {
				return supervisorMem(im.argv(cfg, []string{"sleep", "1"}), work)
			},
		},
	}
	return list, func() { server.Close(); tlsServer.Close() }, nil
}

// terminate is the settings of the TLS workloads: the origin allowed,
// TLS terminated, a masked token injected for it.
const terminate = `{"network":{"allowedDomains":["127.0.0.1"],"deniedDomains":[],"tlsTerminate":{}},` + noFSRules + `}`

// needsNetwork skips a network workload where the sandbox has no way out.
func needsNetwork(im impl) string {
	if !im.network {
		return "no network inside bwrap --unshare-all (bare is the direct figure)"
	}
	return ""
}

// curlTLS fetches url with curl (with the option given), through the
// sandbox's proxy when there is one, trusting the sandbox's bundle (which
// srt names in CURL_CA_BUNDLE), else directly, trusting bundle (the
// host's roots and the origin's CA: the same work for curl to load);
// it returns curl's figure named what (-w): the launch is not part of it.
func curlTLS(im impl, cfg, url, bundle, what, option, dir string) (float64, error) {
	return curlFigure(im, cfg, what, option+" --noproxy '*' --cacert "+bundle, option+` --noproxy '' --cacert "$CURL_CA_BUNDLE" -x "$http_proxy"`, url, dir)
}

// curlFigure runs curl for url in im, with the options direct (outside a
// sandbox) or sandboxed, and returns its figure named what (-w).
func curlFigure(im impl, cfg, what, direct, sandboxed, url, dir string) (float64, error) {
	curl := `curl -sS --fail -o /dev/null -w '%{` + what + `}' ` + direct + ` ` + url
	if im.sandboxed {
		curl = `curl -sS --fail -o /dev/null -w '%{` + what + `}' ` + sandboxed + ` ` + url
	}
	cmd := command(im.argv(cfg, []string{"sh", "-c", curl}), dir)
	var stdout bytes.Buffer
	var stderr tail
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	fields := strings.Fields(stdout.String())
	if len(fields) == 0 {
		return 0, fmt.Errorf("curl printed no %s: %s", what, stderr.String())
	}
	return strconv.ParseFloat(fields[len(fields)-1], 64)
}

// serveTLSDownload serves size bytes of zeros at /file and one byte at
// /one over TLS on a loopback port, with a certificate for 127.0.0.1
// from a CA of its own, written to work/origin-ca.pem, and with the
// host's roots to work/origin-bundle.pem.
func serveTLSDownload(work string, size int64) (srv *http.Server, url, caFile, bundle string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", "", "", err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "srt bench origin CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, key.Public(), key)
	if err != nil {
		return nil, "", "", "", err
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, key.Public(), key)
	if err != nil {
		return nil, "", "", "", err
	}
	caFile = filepath.Join(work, "origin-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return nil, "", "", "", err
	}
	roots, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	bundle = filepath.Join(work, "origin-bundle.pem")
	if err := os.WriteFile(bundle, append(roots, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...), 0o644); err != nil {
		return nil, "", "", "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", "", "", err
	}
	chunk := make([]byte, 1<<20)
	srv = &http.Server{
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/one" {
				w.Write([]byte{'x'})
				return
			}
			w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
			for left := size; left > 0; left -= int64(len(chunk)) {
				if _, err := w.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
					return
				}
			}
		})}
	go srv.ServeTLS(ln, "", "")
	return srv, "https://" + ln.Addr().String(), caFile, bundle, nil
}

// writes is a workload that writes (or removes) many files in work/out,
// emptied before each run, then filled by prepare, commands joined by
// "&&" run bare in work (both untimed); allowWrite there: what the path
// guard costs.
func writes(work, name string, argv []string, prepare ...string) workload {
	out := filepath.Join(work, "out")
	return workload{name: name, metrics: []metric{{"", "ms"}}, makesFiles: true,
		settings: `{` + noNetwork + `,"filesystem":{"denyRead":[],"allowWrite":["` + out + `"],"denyWrite":[]}}`,
		skip: func(im impl) string {
			if im.name == "bwrap" {
				return "this comparison's bwrap line binds / read-only"
			}
			return ""
		},
		sample: func(im impl, cfg string) ([]float64, error) {
			if err := os.RemoveAll(out); err != nil {
				return nil, err
			}
			if err := os.Mkdir(out, 0o755); err != nil {
				return nil, err
			}
			for rest := prepare; len(rest) > 0; {
				i := slices.Index(rest, "&&")
				if i < 0 {
					i = len(rest)
				}
				cmd := exec.Command(rest[0], rest[1:i]...)
				cmd.Dir = work
				if o, err := cmd.CombinedOutput(); err != nil {
					return nil, fmt.Errorf("%v: %v: %s", rest[:i], err, o)
				}
				rest = rest[min(i+1, len(rest)):]
			}
			d, err := timed(im.argv(cfg, argv), work)
			return []float64{ms(d)}, err
		}}
}

// makeWriteFixtures makes a tarball of 10,000 files of 2 KB in 100
// directories and a git repository of 5,000 small files in 50.
func makeWriteFixtures(work string) (tarball, repo string, err error) {
	src := filepath.Join(work, "tar-src")
	for d := 0; d < 100; d++ {
		dir := filepath.Join(src, fmt.Sprintf("d%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", err
		}
		for f := 0; f < 100; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", f)), bytes.Repeat([]byte{byte('a' + f%26)}, 2048), 0o644); err != nil {
				return "", "", err
			}
		}
	}
	tarball = filepath.Join(work, "files.tar")
	if out, err := exec.Command("tar", "cf", tarball, "-C", src, ".").CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("tar: %v: %s", err, out)
	}
	if err := os.RemoveAll(src); err != nil {
		return "", "", err
	}
	repo = filepath.Join(work, "clonable")
	for d := 0; d < 50; d++ {
		dir := filepath.Join(repo, fmt.Sprintf("d%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", err
		}
		for f := 0; f < 100; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", f)), []byte(fmt.Sprintf("package d%02d // %d\n", d, f)), 0o644); err != nil {
				return "", "", err
			}
		}
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
		return nil
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "files"}, {"gc", "-q"}} {
		if err := git(args...); err != nil {
			return "", "", err
		}
	}
	return tarball, repo, nil
}

// runEnv is the environment of every run: the driver's, with TMPDIR in
// the work dir.
var runEnv []string

// command is argv in dir, with runEnv.
func command(argv []string, dir string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = runEnv
	return cmd
}

// timed runs argv in dir and returns its wall time; a failure is an error
// with the end of its output.
func timed(argv []string, dir string) (time.Duration, error) {
	cmd := command(argv, dir)
	var out tail
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%v: %s", err, out.String())
	}
	return d, nil
}

// together starts n copies of argv at once and returns the wall time
// until the last has exited (ms) and the peak of the summed RSS of all
// their processes (MB), sampled every 10 ms (none when every process was
// gone before the first sample).
func together(argv []string, dir string, n int) ([]float64, error) {
	cmds := make([]*exec.Cmd, n)
	outs := make([]tail, n)
	for i := range cmds {
		cmds[i] = command(argv, dir)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
	}
	start := time.Now()
	roots := map[int]bool{}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			return nil, err
		}
		roots[c.Process.Pid] = true
	}
	sampler := sampleMem(roots, nil, false)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Wait(); err != nil {
				errs[i] = fmt.Errorf("%v: %s", err, outs[i].String())
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	peak, _ := sampler()
	mem := mb(peak)
	if peak == 0 {
		mem = math.NaN() // all gone before the first sample: no figure
	}
	return []float64{ms(wall), mem}, errors.Join(errs...)
}

// supervisorMem runs argv (a sandbox around sleep) and returns the peak
// RSS and PSS of the sandbox's own processes (MB), the sleeping command
// left out.
func supervisorMem(argv []string, dir string) ([]float64, error) {
	cmd := command(argv, dir)
	var out tail
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sampler := sampleMem(map[int]bool{cmd.Process.Pid: true}, func(comm string) bool { return comm == "sleep" }, true)
	err := cmd.Wait()
	rss, pss := sampler()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, out.String())
	}
	return []float64{mb(rss), mb(pss)}, nil
}

// download fetches the server's file with curl, through the sandbox's
// HTTP proxy when there is one (the proxy variables point there; curl
// would otherwise go direct for 127.0.0.1), and returns curl's own
// transfer rate in MB/s: the launch is not part of it.
func download(im impl, cfg, url, dir string) (float64, error) {
	bps, err := curlFigure(im, cfg, "speed_download", "--noproxy '*'", `--noproxy '' -x "$http_proxy"`, url, dir)
	return bps / 1e6, err
}

// serveDownload serves size bytes of zeros at /file on a loopback port.
func serveDownload(size int64) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	chunk := make([]byte, 1<<20)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		for left := size; left > 0; left -= int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	return srv, "http://" + ln.Addr().String() + "/file", nil
}

// makeTree makes a tree of a×b directories, each with files files.
func makeTree(root string, a, b, files int) error {
	for i := 0; i < a; i++ {
		for j := 0; j < b; j++ {
			dir := filepath.Join(root, fmt.Sprintf("d%03d", i), fmt.Sprintf("e%03d", j))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			for f := 0; f < files; f++ {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), nil, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// makeRepos makes n git repositories (git init, a few files each) under
// root.
func makeRepos(root string, n int) error {
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("repo%03d", i))
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("git init: %v: %s", err, out)
		}
		for _, f := range []string{"README.md", "main.go", "src/lib.go", "src/lib_test.go"} {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// rules is a settings document of n filesystem rules over directories it
// creates under work.
func rules(work string, n int) string {
	var deny, allow []string
	for i := 0; i < n; i++ {
		dir := filepath.Join(work, fmt.Sprintf("r%d-%d", n, i))
		os.MkdirAll(dir, 0o755)
		if i%2 == 0 {
			deny = append(deny, fmt.Sprintf("%q", dir))
		} else {
			allow = append(allow, fmt.Sprintf("%q", dir))
		}
	}
	return fmt.Sprintf(`{`+noNetwork+`,"filesystem":{"denyRead":[%s],"allowWrite":[%s],"denyWrite":[]}}`,
		strings.Join(deny, ","), strings.Join(allow, ","))
}

// tail keeps the last 512 bytes written to it, for error messages.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 512 {
		t.b = t.b[len(t.b)-512:]
	}
	return len(p), nil
}

func (t *tail) String() string { return strings.TrimSpace(string(t.b)) }

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
func mb(bytes uint64) float64    { return float64(bytes) / 1e6 }
