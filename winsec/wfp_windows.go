package winsec

import (
	"fmt"
	"net/netip"

	"github.com/tailscale/wf"
	"golang.org/x/sys/windows"
)

// The one file that puts the plan's WFP filters in force, through
// tailscale's cgo-free binding of the Windows Filtering Platform.

// Fence holds a plan's network filters in force until Close: a dynamic
// session's, which the engine removes when the session's handle closes —
// at Close, or when srt dies.
type Fence struct{ session *wf.Session }

// layers are the WFP layers a plan names.
var layers = map[string]wf.LayerID{
	"ALE_AUTH_CONNECT_V4":     wf.LayerALEAuthConnectV4,
	"ALE_AUTH_CONNECT_V6":     wf.LayerALEAuthConnectV6,
	"ALE_AUTH_RECV_ACCEPT_V4": wf.LayerALEAuthRecvAcceptV4,
	"ALE_AUTH_RECV_ACCEPT_V6": wf.LayerALEAuthRecvAcceptV6,
}

// StartFence adds n's sublayer and filters, for the sandbox account's
// SID and srt's own user's (both "S-1-…").
func StartFence(n Network, sandboxSID, selfSID string) (*Fence, error) {
	// A sublayer of the session's own unless the settings name one: two
	// sessions at once would otherwise meet on srt's default.
	sublayer, err := windows.GenerateGUID()
	if n.Sublayer != "" {
		sublayer, err = windows.GUIDFromString("{" + n.Sublayer + "}")
	}
	if err != nil {
		return nil, fmt.Errorf("WFP sublayer %q: %w", n.Sublayer, err)
	}
	s, err := wf.New(&wf.Options{Name: "srt", Description: "srt: the sandbox account reaches srt's proxies and nothing else", Dynamic: true})
	if err != nil {
		return nil, fmt.Errorf("opening the WFP engine: %w", err)
	}
	f := &Fence{session: s}
	if err := s.AddSublayer(&wf.Sublayer{ID: wf.SublayerID(sublayer), Name: "srt", Description: "srt's sandbox fence", Weight: 0xffff}); err != nil {
		f.Close()
		return nil, fmt.Errorf("adding the WFP sublayer: %w", err)
	}
	for _, filter := range n.Filters {
		rules, err := rulesOf(filter, wf.SublayerID(sublayer), sandboxSID, selfSID)
		if err == nil {
			for _, r := range rules {
				if err = s.AddRule(r); err != nil {
					break
				}
			}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("WFP filter %q on %s: %w", filter.Why, filter.Layer, err)
		}
	}
	return f, nil
}

// Close removes the filters (the dynamic session ends).
func (f *Fence) Close() error { return f.session.Close() }

// rulesOf is filter as WFP rules: one, or one per port where it names
// several (WFP matches a port against one value or one range).
func rulesOf(filter Filter, sublayer wf.SublayerID, sandboxSID, selfSID string) ([]*wf.Rule, error) {
	layer, ok := layers[filter.Layer]
	if !ok {
		return nil, fmt.Errorf("unknown layer %s", filter.Layer)
	}
	action := wf.ActionBlock
	if filter.Action == "permit" {
		action = wf.ActionPermit
	}
	var base []*wf.Match
	var ports []int
	for _, c := range filter.Conditions {
		switch v := c.arg.(type) {
		case users:
			sddl := "D:(A;;CC;;;" + sandboxSID + ")"
			if v.none {
				sddl = "D:(D;;CC;;;" + sandboxSID + ")(D;;CC;;;" + selfSID + ")(A;;CC;;;WD)"
			}
			sd, err := windows.SecurityDescriptorFromString(sddl)
			if err != nil {
				return nil, err
			}
			base = append(base, &wf.Match{Field: wf.FieldALEUserID, Op: wf.MatchTypeEqual, Value: sd})
		case netip.Addr:
			base = append(base, &wf.Match{Field: wf.FieldIPRemoteAddress, Op: wf.MatchTypeEqual, Value: v})
		case portRange:
			base = append(base, &wf.Match{Field: wf.FieldIPRemotePort, Op: wf.MatchTypeRange, Value: wf.Range{From: uint16(v.lo), To: uint16(v.hi)}})
		case []int:
			ports = v
		default:
			return nil, fmt.Errorf("condition %s %s %s: no WFP form", c.Field, c.Match, c.Value)
		}
	}
	rule := func(conds []*wf.Match) (*wf.Rule, error) {
		id, err := windows.GenerateGUID()
		if err != nil {
			return nil, err
		}
		return &wf.Rule{ID: wf.RuleID(id), Name: "srt: " + filter.Why, Layer: layer, Sublayer: sublayer,
			Weight: uint64(filter.Weight), Conditions: conds, Action: action}, nil
	}
	if ports == nil {
		r, err := rule(base)
		return []*wf.Rule{r}, err
	}
	var out []*wf.Rule
	for _, p := range ports {
		r, err := rule(append(append([]*wf.Match(nil), base...), &wf.Match{Field: wf.FieldIPRemotePort, Op: wf.MatchTypeEqual, Value: uint16(p)}))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
