package sched

import (
	"testing"
	"time"
)

const waitFor = 10 * time.Second // a bound on a hang, never a timing assertion

func TestOnReaderRunsOnlyWhatNeverWaits(t *testing.T) {
	for _, c := range []struct {
		name    string
		request bool
		method  string
		want    bool
	}{
		{"a response", false, "", true},
		{"a cancellation", false, "notifications/cancelled", true},
		{"notifications/initialized", false, "notifications/initialized", true},
		{"initialize", true, "initialize", true},
		{"ping", true, "ping", true},
		{"a tool call", true, "tools/call", false},
		{"a listing, which middleware may make wait", true, "tools/list", false},
		{"a read", true, "resources/read", false},
		{"a completion", true, "completion/complete", false},
		{"an extension's method", true, "example.com/anything", false},
		{"a request with a notification's name", true, "notifications/cancelled", false},
	} {
		if got := OnReader(c.request, c.method); got != c.want {
			t.Errorf("%s: OnReader(%v, %q) = %v, want %v", c.name, c.request, c.method, got, c.want)
		}
	}
}

func TestGroupRefusesPastTheLimitAndFreesSlots(t *testing.T) {
	g := NewGroup(2)
	if g.Limit() != 2 {
		t.Fatalf("Limit %d, want 2", g.Limit())
	}
	for i := range 2 {
		if !g.Admit(true) {
			t.Fatalf("slot %d refused", i)
		}
	}
	if g.Admit(true) {
		t.Fatal("a third slot of two was given")
	}
	if !g.Admit(false) {
		t.Fatal("a request without a slot was refused on a full group")
	}
	g.Done(false)
	g.Done(true)
	if !g.Admit(true) {
		t.Fatal("a freed slot was refused")
	}
}

func TestGroupWaitsForEveryRequest(t *testing.T) {
	g := NewGroup(1)
	g.Admit(true)
	g.Admit(false)
	waited := make(chan struct{})
	go func() {
		g.Wait()
		close(waited)
	}()
	for _, slot := range []bool{true, false} {
		select {
		case <-waited:
			t.Fatal("Wait returned with a request still counted in")
		default:
		}
		g.Done(slot)
	}
	select {
	case <-waited:
	case <-time.After(waitFor):
		t.Fatal("Wait did not return once every request was counted out")
	}
}

func TestNewGroupHasAtLeastOneSlot(t *testing.T) {
	for _, limit := range []int{0, -1} {
		if g := NewGroup(limit); g.Limit() != 1 || !g.Admit(true) {
			t.Errorf("NewGroup(%d): limit %d", limit, g.Limit())
		}
	}
}
