package netfilter

import (
	"fmt"
	"net/netip"
	"strings"
)

// Reasons given for denials that no deniedDomainReasons entry explains.
const (
	ReasonMalformed  = "malformed host"
	ReasonDenyListed = "host is on the deny list"
	ReasonNotAllowed = "host is not on the allow list"
)

// Decision is the verdict on one destination.
type Decision struct {
	Allowed bool
	// Rule is the entry that decided, as written in the settings; empty
	// when the host was malformed or no entry matched.
	Rule string
	// Reason says why a connection was denied: the deniedDomainReasons
	// text of Rule when there is one, else one of the Reason constants.
	Reason string
}

// Rules is a compiled pair of allowedDomains and deniedDomains. It is
// immutable and safe for concurrent use; replace it whole to change policy.
//
// Both lists live in one index, so a decision costs one map lookup per
// label of the host, however many entries there are.
type Rules struct {
	names    map[string][]rule
	suffixes map[string][]rule
	addrs    map[[16]byte][]rule // by Addr.As16, IPv4 in its mapped form
	any      []rule
	// suffixLabels and nameLabels have labelBit(n) set when some "*."
	// suffix, or some exact name, has n labels, so that lookups that
	// cannot hit are skipped.
	suffixLabels, nameLabels uint64
}

type rule struct {
	deny   bool
	index  int // position in its list: the first entry that matches decides
	port   uint16
	depth  int
	entry  string
	reason string
}

// ListError says which entry of which list was refused.
type ListError struct {
	List  string // "allowedDomains" or "deniedDomains"
	Index int
	Err   error
}

func (e *ListError) Error() string { return fmt.Sprintf("%s.%d: %v", e.List, e.Index, e.Err) }
func (e *ListError) Unwrap() error { return e.Err }

// Compile builds the matcher. reasons maps a deniedDomains entry, spelled
// exactly as in the list, to the text a denial by that entry reports.
func Compile(allowed, denied []string, reasons map[string]string) (*Rules, error) {
	r := &Rules{names: map[string][]rule{}, suffixes: map[string][]rule{}, addrs: map[[16]byte][]rule{}}
	if err := r.add("allowedDomains", allowed, Allow, nil); err != nil {
		return nil, err
	}
	if err := r.add("deniedDomains", denied, Deny, reasons); err != nil {
		return nil, err
	}
	return r, nil
}

func (s *Rules) add(list string, entries []string, grammar List, reasons map[string]string) error {
	for i, e := range entries {
		p, err := ParsePattern(e, grammar)
		if err != nil {
			return &ListError{List: list, Index: i, Err: err}
		}
		r := rule{deny: grammar == Deny, index: i, port: p.Port, depth: p.Depth, entry: e, reason: reasons[e]}
		switch {
		case p.Any:
			s.any = append(s.any, r)
		case p.Addr.IsValid():
			k := p.Addr.As16()
			s.addrs[k] = append(s.addrs[k], r)
		case p.Suffix != "":
			s.suffixes[p.Suffix] = append(s.suffixes[p.Suffix], r)
			s.suffixLabels |= labelBit(strings.Count(p.Suffix, ".") + 1)
		default:
			s.names[p.Name] = append(s.names[p.Name], r)
			s.nameLabels |= labelBit(strings.Count(p.Name, ".") + 1)
		}
	}
	return nil
}

// Decide says whether a connection to host:port may go out: a malformed
// host is denied, then the first matching deniedDomains entry denies, then
// the first matching allowedDomains entry allows, and anything else is
// denied. It does not allocate.
func (r *Rules) Decide(host string, port uint16) Decision {
	var why problem
	name, upper, addr := canon(host, &why)
	switch {
	case why.msg != "":
		return Decision{Reason: ReasonMalformed}
	case addr.IsValid():
		return r.decideAddr(addr, port)
	case upper:
		return r.decideUpper(name, port)
	}
	return decideName(r, name, port)
}

// decideUpper lower-cases name into a stack buffer, kept out of Decide so
// that only such names pay for it.
//
//go:noinline
func (r *Rules) decideUpper(name string, port uint16) Decision {
	var buf [MaxNameLen]byte
	b := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return decideName(r, b, port)
}

// DecideHost is Decide for a host that ParseHost already canonicalised.
func (r *Rules) DecideHost(h Host, port uint16) Decision {
	if h.Addr.IsValid() {
		return r.decideAddr(h.Addr, port)
	}
	return r.Decide(h.Name, port)
}

func (r *Rules) decideAddr(addr netip.Addr, port uint16) Decision {
	m := matches{port: port}
	m.consider(r.any, 0)
	m.consider(r.addrs[addr.As16()], 0)
	return m.decision()
}

// decideName looks up a lower-case name: once as an exact name, then once
// per suffix whose label count some "*." entry has.
func decideName[T string | []byte](r *Rules, name T, port uint16) Decision {
	return lookupName(r, name, matches{port: port})
}

// MayAllow reports whether a connection to host could be allowed on some
// port: the DNS stub answers such names and refuses the rest, so that a
// query for a denied name reveals nothing and goes nowhere.
func (r *Rules) MayAllow(host string) bool {
	h, err := ParseHost(host)
	if err != nil {
		return false
	}
	if h.IsAddr() {
		m := matches{anyPort: true}
		m.consider(r.any, 0)
		m.consider(r.addrs[h.Addr.As16()], 0)
		return m.decision().Allowed
	}
	return lookupName(r, h.Name, matches{anyPort: true}).Allowed
}

func lookupName[T string | []byte](r *Rules, name T, m matches) Decision {
	m.consider(r.any, 0)
	// Right to left: n is the label count of the suffix name[i+1:]. Only
	// suffixes whose label count some "*." entry has are looked up.
	n := 0
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] != '.' {
			continue
		}
		n++
		if r.suffixLabels&labelBit(n) == 0 {
			continue
		}
		if rs := r.suffixes[string(name[i+1:])]; rs != nil {
			m.consider(rs, strings.Count(string(name[:i]), ".")+1)
		}
	}
	if r.nameLabels&labelBit(n+1) != 0 {
		m.consider(r.names[string(name)], 0)
	}
	return m.decision()
}

// labelBit is the bit of a label count in the label masks; counts of 63
// and more share the last bit.
func labelBit(n int) uint64 { return 1 << min(n, 63) }

func (m *matches) decision() Decision {
	switch {
	case m.deny != nil:
		reason := m.deny.reason
		if reason == "" {
			reason = ReasonDenyListed
		}
		return Decision{Rule: m.deny.entry, Reason: reason}
	case m.allow != nil:
		return Decision{Allowed: true, Rule: m.allow.entry}
	}
	return Decision{Reason: ReasonNotAllowed}
}

// matches keeps the earliest matching entry of each list.
type matches struct {
	port uint16
	// anyPort asks whether some port could be allowed: allow entries
	// match whatever their port, deny entries only when they have none.
	anyPort     bool
	deny, allow *rule
}

func (m *matches) consider(rs []rule, depth int) {
	for i := range rs {
		r := &rs[i]
		if depth < r.depth {
			continue
		}
		if m.anyPort {
			if r.deny && r.port != 0 {
				continue
			}
		} else if r.port != 0 && r.port != m.port {
			continue
		}
		best := &m.allow
		if r.deny {
			best = &m.deny
		}
		if *best == nil || r.index < (*best).index {
			*best = r
		}
	}
}

// Denies reports whether a deniedDomains entry (on any port) names host,
// or host is malformed: what no allowance added on top may override.
func (r *Rules) Denies(host string) bool {
	h, err := ParseHost(host)
	if err != nil {
		return true
	}
	var d Decision
	if h.IsAddr() {
		m := matches{anyPort: true}
		m.consider(r.any, 0)
		m.consider(r.addrs[h.Addr.As16()], 0)
		d = m.decision()
	} else {
		d = lookupName(r, h.Name, matches{anyPort: true})
	}
	return !d.Allowed && d.Rule != ""
}
