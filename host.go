package srt

import (
	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/proxy"
)

// host is a Sandbox as its backend sees it (backend.Host): the session's
// settings and options, and where a run's violations, failures and plan
// go.
type host struct{ s *Sandbox }

var _ backend.Host = host{}

// Settings are the session's settings, ErrClosed once Close has begun.
func (h host) Settings() (*config.Settings, error) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.s.closed {
		return nil, ErrClosed
	}
	return h.s.settings, nil
}

// Record adds a violation of the command with attribution key key and
// text text.
func (h host) Record(key, text string, v Violation) {
	v.CommandID, v.Command = key, text
	h.s.store.add(v)
}

// Failed keeps the failure of a run of key (see Err).
func (h host) Failed(key string, err error) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == nil {
		s.failures = map[string]error{}
	}
	if len(s.failures) >= ViolationBuffer {
		clear(s.failures)
	}
	s.failures[key] = err
	if s.debugf != nil {
		s.debugf("srt's side of the run failed: %v", err)
	}
}

// Planned keeps what the last run of key does to paths, for
// InferFromStderr.
func (h host) Planned(key, text, cwd, home string, pol *policy.Policy, allowWrite []config.PathEntry) {
	info := planRules(pol, allowWrite, text, cwd, home)
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plans[key] = info
	if len(s.plans) > ViolationBuffer {
		for k := range s.plans {
			if k != key {
				delete(s.plans, k)
				break
			}
		}
	}
}

func (h host) Debug() bool                       { return h.s.debug }
func (h host) Debugf(format string, args ...any) { h.s.debugf(format, args...) }
func (h host) Warn(w string)                     { h.s.warn(w) }
func (h host) Filter() proxy.RequestFilter       { return h.s.filter }

// Ask is WithAsk's callback, asked with the command's attribution key.
func (h host) Ask() func(commandID, host string, port uint16) (bool, string, error) {
	ask := h.s.ask
	if ask == nil {
		return nil
	}
	return func(id, name string, port uint16) (bool, string, error) {
		return ask(AskRequest{CommandID: id, Host: name, Port: port})
	}
}
