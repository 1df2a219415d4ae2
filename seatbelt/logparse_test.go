package seatbelt

import (
	"strings"
	"testing"
)

func TestLogReader(t *testing.T) {
	tag := NewTag("k3j9", "run42")
	if id, session, ok := ParseTag(tag); !ok || id != "run42" || session != "k3j9" {
		t.Errorf("ParseTag(%q) = %q %q %v", tag, id, session, ok)
	}
	input := strings.Join([]string{
		"Timestamp               Ty Process[PID:TID]",
		"2026-12-04 10:00:00.000 E  kernel[0:1a2b] (Sandbox) Sandbox: cat(4242) deny(1) file-read-data /Users/me/.ssh/id ed25519",
		tag,
		"2026-12-04 10:00:01.000 E  kernel[0:1a2b] (Sandbox) Sandbox: curl(4243) deny(1) network-outbound 1.2.3.4:443 " + tag,
		"2026-12-04 10:00:02.000 E  kernel[0:1a2b] (Sandbox) Sandbox: mDNSResponder(88) deny(1) network-outbound /private/var/run/mDNSResponder",
		tag,
		"2026-12-04 10:00:03.000 E  kernel[0:1a2b] (Sandbox) Sandbox: sh(4244) deny(2) mach-lookup com.apple.analyticsd",
		tag,
		"an unrelated line " + tag,
	}, "\n")
	var r LogReader
	var got []string
	for _, l := range strings.Split(input, "\n") {
		if d, ok := r.Line(l); ok {
			got = append(got, d.Process+" "+d.Line()+" "+d.Tag)
		}
	}
	want := []string{"cat deny file-read-data /Users/me/.ssh/id ed25519 " + tag, "curl deny network-outbound 1.2.3.4:443 " + tag}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Whatever the log holds, the reader neither panics nor makes up a
// denial without a tag of srt's.
func FuzzLogReader(f *testing.F) {
	f.Add("kernel Sandbox: a(1) deny(1) file-read-data /x\nSRT_a_b_SBX")
	f.Add("Sandbox: ((1) deny(1) x SRT_1_2_SBX")
	f.Fuzz(func(t *testing.T, text string) {
		var r LogReader
		for _, l := range strings.Split(text, "\n") {
			d, ok := r.Line(l)
			if !ok {
				continue
			}
			if _, _, ok := ParseTag(d.Tag); !ok {
				t.Fatalf("a denial with tag %q", d.Tag)
			}
			if d.Operation == "" || strings.ContainsAny(d.Operation, " \t") {
				t.Fatalf("operation %q", d.Operation)
			}
		}
	})
}
