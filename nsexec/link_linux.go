package nsexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// The link is a SOCK_SEQPACKET socket pair between srt (outside every
// namespace of the sandbox, unfiltered) and the process it starts, which
// finds its end at fd 4. Each message is one JSON linkMessage, with
// descriptors as SCM_RIGHTS; the kernel attaches the sender's credentials
// (SO_PASSCRED on srt's end).
//
//	srt: Launch.watch                       the init: runInit
//	     |                                        |
//	     |<---------- hello (1 byte) -------------|  sayHello; its pid from the
//	     |   srt closes its copy of the init's    |  credentials (a pidfd)
//	     |   end: the link now ends with the init |
//	     |<--- {sockets:[kind,port...]} + fds ----|  handOverSockets: the proxy
//	     |     srt serves them (proxies,          |  ports' listeners, the
//	     |     transparent path, DNS stub)        |  transparent path's, the DNS stub's
//	     |<--- {seccomp:true} + listener ---------|  seccomp.Install, when the
//	     |     srt answers the command's connects |  filter notifies
//	     |<--- {started:true} --------------------|  the command runs
//	     |<--- {stopped:true[,asked:true]} -------|  whenever the command stops
//	     |     (srt stops too; its SIGCONT goes   |  (job control)
//	     |     on to the init)                    |
//	     |<--- {terminal:true} -------------------|  once, on demand: the command,
//	     |     (srt takes the caller's terminal   |  started in the background of
//	     |     and relays it)                     |  its terminal, wants it; it is
//	     |                                        |  its foreground group now
//	     |---- {openMap:{id,pid,file}} ---------->|  allowNestedUserNamespaces: a
//	     |<--- {map:{id,errno}} + fd -------------|  user namespace map, opened by
//	     |     (the guard hands it on)            |  the init for the command
//	     |                 ...                    |
//	     |<--- end of the link -------------------|  the init exited: the run is over
//	     |                                        |
//	     |---- srt closes its end --------------->|  the init exits 137, and the
//	                                                 kernel kills the namespace
//
// A setup failure ends the exchange instead: {failure:{step, path, errno,
// detail, fix}}, then the end of the link. Each kind of message is taken
// once: the init sends each once, before the command starts.
//
// The fallback (no namespaces) speaks the same link: its reaper
// (runFallback) says hello, holds the link until the run ends and tells
// when the command stops, and when it wants its terminal; its child
// (runFallbackExec) sends {seccomp:true, started:true} with the filter's
// listener — or a failure — and becomes the command. srt serves that
// listener until no process is left under the filter: the run is over
// then, and the link's end.

// linkMessage is one message to srt on the link.
type linkMessage struct {
	// Sockets say what the descriptors are, in their order.
	Sockets []linkSocket `json:"sockets,omitempty"`
	// Seccomp: the descriptor is the seccomp filter's listener.
	Seccomp bool `json:"seccomp,omitempty"`
	// Started: the command runs, or is about to (the last message).
	Started bool `json:"started,omitempty"`
	// Failure: the sandbox could not be built; the sender exits 1.
	Failure *SetupError `json:"failure,omitempty"`
	// Stopped: the command was stopped (Ctrl-Z on its terminal, or the
	// SIGTSTP srt relayed: Asked); SIGCONT from srt lets it go on.
	Stopped bool `json:"stopped,omitempty"`
	Asked   bool `json:"asked,omitempty"`
	// Terminal: the command, started in the background of its terminal
	// (Spec.TerminalOnDemand), stopped to read it or change its modes,
	// and is now its foreground group, going on.
	Terminal bool `json:"terminal,omitempty"`
	// Map answers an initRequest's OpenMap: the descriptor, or Errno.
	Map *mapReply `json:"map,omitempty"`
}

// initRequest is the one message srt sends the init (allowNested-
// UserNamespaces only): open, for writing, a user namespace map of a
// process of the sandbox — a map the kernel reads as its opener's, which
// the init, in the sandbox's user namespace, may open, and srt, outside
// it, may not (see procOpen).
type initRequest struct {
	OpenMap *mapRequest `json:"openMap,omitempty"`
}

type mapRequest struct {
	ID   uint64 `json:"id"`
	Pid  int    `json:"pid"`  // as the sandbox's PID namespace numbers it
	File string `json:"file"` // uid_map, gid_map, setgroups or projid_map
}

type mapReply struct {
	ID    uint64 `json:"id"`
	Errno int    `json:"errno,omitempty"`
}

// linkSocket says what one handed-over socket is.
type linkSocket struct {
	Kind string `json:"kind"`           // one of the socket kinds below
	Port int    `json:"port,omitempty"` // socketProxy: the loopback port
}

// Kinds of handed-over sockets.
const (
	socketProxy       = "proxy"       // a proxy's listener on the sandbox's loopback
	socketTransparent = "transparent" // the listener the nftables redirect sends all other TCP to
	socketDNSUDP      = "dns-udp"     // the DNS stub, UDP
	socketDNSTCP      = "dns-tcp"     // the DNS stub, TCP
)

// envSetupOnLink, in the started process's environment, says that srt
// takes a setup failure from the link (Launch.Start returns it): the
// process does not print it. Without it (a Cmd started by its caller, a
// wrapped run) the failure is printed on the command's stderr.
const envSetupOnLink = "SRT_SETUP_FAILURE=link"

// The sender's side.

// sayHello tells srt on the link (fd 4) that this process has started,
// and keeps the link out of its children.
func sayHello() (*os.File, error) {
	link := os.NewFile(4, "link")
	if _, err := unix.FcntlInt(4, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("no link to srt on fd 4: %w", err)
	}
	if _, err := link.Write([]byte{1}); err != nil {
		return nil, fmt.Errorf("saying hello to srt: %w", err)
	}
	return link, nil
}

// sendInit sends the init a request over the link (srt's end).
func (l *Launch) sendInit(r *initRequest) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	rc, err := l.link.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), data, nil, nil, 0)
		return serr != unix.EAGAIN
	}); err != nil {
		return err
	}
	return serr
}

// serveRequests reads srt's requests on the link, for the init's life:
// its end (srt gone) ends the run.
func serveRequests(link *os.File) {
	// The maps are opened with no capability: the kernel judges a map by
	// its opener, and the init's other threads keep capabilities in the
	// sandbox's user namespace (CAP_SETFCAP would let a map of uid 0
	// through) that the command, which writes the map, never has.
	runtime.LockOSThread() // for good: this thread's credentials are its own
	capless := unprivilegedThread() == nil
	buf := make([]byte, 4096)
	for {
		n, err := link.Read(buf)
		if err != nil || n == 0 {
			os.Exit(137) // PID 1 gone: the kernel kills the namespace
		}
		var r initRequest
		if json.Unmarshal(buf[:n], &r) != nil || r.OpenMap == nil {
			continue
		}
		m := r.OpenMap
		reply := &linkMessage{Map: &mapReply{ID: m.ID}}
		if !capless || !procSelfMaps[m.File] || m.Pid <= 1 {
			reply.Map.Errno = int(unix.EPERM)
			sendLink(link, reply, nil)
			continue
		}
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/%s", m.Pid, m.File), unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			reply.Map.Errno = int(errnoOf(err))
			sendLink(link, reply, nil)
			continue
		}
		sendLink(link, reply, []int{fd})
		unix.Close(fd)
	}
}

// sendLink sends one message to srt over the link, with descriptors.
func sendLink(link *os.File, msg *linkMessage, fds []int) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	return unix.Sendmsg(int(link.Fd()), data, oob, nil, 0)
}

// linkFD is where the started process holds the link: fd 4, until the
// fallback's child moves it out of the way of the command's descriptors.
var linkFD = 4

// moveLink moves the link from fd 4 to the lowest free descriptor from
// above on, out of the slots the command is given (--control-fd's
// /dev/null).
func moveLink(above int) (*os.File, error) {
	fd, err := unix.FcntlInt(4, unix.F_DUPFD_CLOEXEC, above)
	if err != nil {
		return nil, fmt.Errorf("moving the link to srt: %w", err)
	}
	unix.Close(4)
	linkFD = fd
	return os.NewFile(uintptr(fd), "link"), nil
}

// failed ends a started process whose setup failed step with err: srt
// learns of it over the link when it asked to (envSetupOnLink), otherwise
// it is printed. The exit status is 1 either way.
func failed(step string, err error) {
	se := setupError(step, err)
	for _, kv := range os.Environ() {
		if kv == envSetupOnLink && sendLink(os.NewFile(uintptr(linkFD), "link"), &linkMessage{Failure: se}, nil) == nil {
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "srt: cannot start the sandbox: %v\n", se)
	os.Exit(1)
}

// srt's side.

// newLink makes the socket pair of the link.
func (l *Launch) newLink() error {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	// Our end goes to the poller, so that Close interrupts a read.
	if err := unix.SetNonblock(pair[0], true); err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		return err
	}
	l.link, l.linkChild = os.NewFile(uintptr(pair[0]), "link"), os.NewFile(uintptr(pair[1]), "link")
	return nil
}

// Start starts Cmd and returns once the command runs, or with the
// *SetupError of a sandbox that could not be built (the process has then
// been waited for, and nothing of the command ran). Unlike Cmd.Start it
// needs no hello to learn that the process is gone.
func (l *Launch) Start() error {
	if l.Cmd == nil {
		return errors.New("this run was wrapped: its trampoline starts it")
	}
	l.Cmd.Env = append(l.Cmd.Env, envSetupOnLink)
	var err error
	onSpawnThread(func() { err = l.Cmd.Start() })
	// Our copy of the child's end goes now: the link ends with the
	// process even if it dies before its hello.
	l.closeChild.Do(func() { l.linkChild.Close() })
	if err != nil {
		return err
	}
	select {
	case <-l.ready:
	case <-l.done:
	}
	if f := l.Failure(); f != nil {
		l.Cmd.Wait()
		return f
	}
	return nil
}

// Failure is the setup failure the started process reported, if any.
func (l *Launch) Failure() *SetupError {
	select {
	case <-l.ready:
		return l.failure
	default:
		return nil
	}
}

// setReady records that the run started, or failed with f: the first
// word counts.
func (l *Launch) setReady(f *SetupError) {
	l.readyOnce.Do(func() {
		l.failure = f
		close(l.ready)
	})
}

// watch follows the link (the diagram above). Done is closed when the
// link ends, or when Close stops a run that never started.
func (l *Launch) watch() {
	defer close(l.done)
	rc, err := l.link.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PASSCRED, 1) })
	buf := make([]byte, 16<<10)
	oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred)+unix.CmsgSpace(32*4))
	recv := func() (data, control []byte, ok bool) {
		var n, oobn int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
			return rerr != unix.EAGAIN
		}); err != nil || rerr != nil || n == 0 {
			return nil, nil, false
		}
		return buf[:n], oob[:oobn], true
	}
	hello, control, ok := recv()
	closeAll(rights(control))
	if !ok || len(hello) != 1 {
		return
	}
	l.closeChild.Do(func() { l.linkChild.Close() })
	l.notePid(control)
	// The network's sockets live in the sandbox's network namespace,
	// which they keep alive: they are closed when the link ends.
	var served []io.Closer
	defer func() {
		for _, c := range served {
			c.Close()
		}
	}()
	var gotSockets, gotListener bool
	for {
		data, control, ok := recv()
		if !ok {
			return
		}
		// Every message carries the sender's credentials; its
		// descriptors are what it is about.
		fds := rights(control)
		var msg linkMessage
		if json.Unmarshal(data, &msg) != nil {
			closeAll(fds)
			continue
		}
		switch {
		case msg.Failure != nil:
			closeAll(fds)
			l.setReady(msg.Failure)
		case msg.Seccomp && len(fds) == 1 && !gotListener:
			gotListener = true
			if l.connectPolicy == nil {
				go func() {
					if err := ServeConnects(fds[0], l.nsPolicy); err != nil {
						l.fail(err)
					}
				}()
				break
			}
			// The fallback: the run lasts while anything is under its
			// filter.
			served := make(chan struct{})
			go func() {
				if err := ServeConnects(fds[0], l.connectPolicy); err != nil {
					l.fail(err)
				}
				close(served)
			}()
			defer func() { <-served }()
		case msg.Map != nil && l.nsPolicy != nil:
			l.nsPolicy.mapReplied(msg.Map, fds)
		case len(msg.Sockets) > 0 && len(msg.Sockets) == len(fds) && !gotSockets:
			gotSockets = true
			served = append(served, l.serveSockets(msg.Sockets, fds)...)
		default:
			closeAll(fds)
		}
		if msg.Started {
			l.setReady(nil)
		}
		if msg.Stopped && l.onStop != nil {
			l.onStop(msg.Asked)
		}
		if msg.Terminal && l.onTerminal != nil {
			l.onTerminal()
		}
	}
}

// notePid opens a pidfd for the sender of the hello, whose credentials
// the kernel attached (its pid as this process sees it).
func (l *Launch) notePid(oob []byte) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	for _, m := range msgs {
		if cred, err := unix.ParseUnixCredentials(&m); err == nil && cred.Pid > 0 {
			if l.nsPolicy != nil {
				l.nsPolicy.initPid.Store(cred.Pid)
			}
			if fd, err := unix.PidfdOpen(int(cred.Pid), 0); err == nil {
				l.pidMu.Lock()
				l.pidfd = fd
				l.pidMu.Unlock()
			}
			return
		}
	}
}

// rights returns the descriptors passed in a message's control data.
func rights(oob []byte) []int {
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob); err == nil {
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// serveSockets serves the sockets the init handed over: each proxy port
// with its proxy, the transparent listeners and the DNS stub with the
// transparent path. It returns them, to be closed with the run. A socket
// srt has nothing to serve with is closed.
func (l *Launch) serveSockets(kinds []linkSocket, fds []int) []io.Closer {
	var out []io.Closer
	var transparent []net.Listener
	var dnsUDP []net.PacketConn
	var dnsTCP []net.Listener
	for i, fd := range fds {
		k := kinds[i]
		f := os.NewFile(uintptr(fd), "sandbox-socket")
		var serve func(net.Listener)
		if k.Kind == socketProxy {
			serve = l.proxies[k.Port]
		}
		intercepting := l.transparent != nil && (k.Kind == socketTransparent || k.Kind == socketDNSTCP || k.Kind == socketDNSUDP)
		if serve == nil && !intercepting {
			f.Close()
			continue
		}
		if k.Kind == socketDNSUDP {
			pc, err := net.FilePacketConn(f) // a duplicate: f is closed below
			f.Close()
			if err == nil {
				out = append(out, pc)
				dnsUDP = append(dnsUDP, pc)
			}
			continue
		}
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			continue
		}
		out = append(out, ln)
		switch k.Kind {
		case socketProxy:
			go serve(ln)
		case socketTransparent:
			transparent = append(transparent, ln)
		case socketDNSTCP:
			dnsTCP = append(dnsTCP, ln)
		}
	}
	if len(transparent)+len(dnsUDP)+len(dnsTCP) > 0 {
		l.transparent(transparent, dnsUDP, dnsTCP)
	}
	return out
}
