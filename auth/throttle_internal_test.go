package auth

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// An unknown user is compared against a dummy hash of the median cost of
// the file, so that it answers as a typical user does.
func TestUnknownUsersPayTheMedianCost(t *testing.T) {
	fake := func(cost int) string { return fmt.Sprintf("$2a$%02d$%s", cost, strings.Repeat("x", 53)) }
	for _, tt := range []struct {
		costs []int
		want  int
	}{
		{[]int{10}, 10},
		{[]int{14, 10, 11}, 11},
		{[]int{10, 11, 11, 14, 15}, 11},
	} {
		var file strings.Builder
		for i, c := range tt.costs {
			fmt.Fprintf(&file, "user%d:%s\n", i, fake(c))
		}
		u, err := ParseBasicUsers(strings.NewReader(file.String()))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := bcrypt.Cost(u.dummy()); err != nil || got != tt.want {
			t.Errorf("costs %v: the dummy's cost is %d (%v), want %d", tt.costs, got, err, tt.want)
		}
	}
}

// The delay doubles with each failure past the free ones, up to MaxDelay,
// and is forgotten after Window. The clock is the test's.
func TestThrottleDoublesTheDelay(t *testing.T) {
	th := newThrottle(ThrottleConfig{PerUser: 3, PerAddress: 100, Delay: time.Second, MaxDelay: 8 * time.Second, Window: time.Minute})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const addr = "192.0.2.1:4242"
	for i, want := range []time.Duration{0, 0, 1, 2, 4, 8, 8} {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		th.fail(addr, "bob", now)
		if got := th.wait(addr, "bob", now); got != want*time.Second {
			t.Errorf("after %d failures: wait %v, want %v", i+1, got, want*time.Second)
		}
		if got := th.wait(addr, "alice", now); got != 0 {
			t.Errorf("after %d failures of bob: alice waits %v", i+1, got)
		}
	}
	last := t0.Add(6 * time.Millisecond)
	if got := th.wait(addr, "bob", last.Add(5*time.Second)); got != 3*time.Second {
		t.Errorf("5s into an 8s delay: wait %v, want 3s", got)
	}
	if got := th.wait(addr, "bob", last.Add(time.Minute+time.Second)); got != 0 {
		t.Errorf("after the window: wait %v", got)
	}
}

// Failures are counted per address too, an IPv6 address as its /64.
func TestThrottleCountsAddresses(t *testing.T) {
	th := newThrottle(ThrottleConfig{PerAddress: 2, PerUser: 100})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th.fail("[2001:db8:1:2::1]:1000", "a", now)
	th.fail("[2001:db8:1:2::99]:2000", "b", now)
	for _, tt := range []struct {
		addr    string
		waiting bool
	}{
		{"[2001:db8:1:2::ffff]:3000", true},
		{"[2001:db8:1:3::1]:3000", false},
		{"192.0.2.1:1", false},
	} {
		if got := th.wait(tt.addr, "c", now) > 0; got != tt.waiting {
			t.Errorf("%s: waiting %v, want %v", tt.addr, got, tt.waiting)
		}
	}
}

// However many addresses and names fail, the throttle remembers at most
// MaxEntries of each, the most recent ones.
func TestThrottleMemoryIsBounded(t *testing.T) {
	const max = 100
	th := newThrottle(ThrottleConfig{MaxEntries: max, PerUser: 1, PerAddress: 1})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var now time.Time
	for i := range 50 * max {
		now = t0.Add(time.Duration(i) * time.Millisecond)
		th.fail(fmt.Sprintf("10.%d.%d.%d:5555", i>>16&255, i>>8&255, i&255), fmt.Sprintf("user-%d-%s", i, strings.Repeat("x", i%300)), now)
	}
	if len(th.addrs) > max || len(th.users) > max {
		t.Fatalf("%d addresses and %d names remembered, want at most %d", len(th.addrs), len(th.users), max)
	}
	last := 50*max - 1
	if th.wait(fmt.Sprintf("10.%d.%d.%d:1", last>>16&255, last>>8&255, last&255), "", now) == 0 {
		t.Error("the latest address was forgotten")
	}
}
