package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// Versions is what people are shown; server/discover is what clients are
// told. They must be the same list, newest first.
func TestVersionsListsEveryRevisionNewestFirst(t *testing.T) {
	got := Versions()
	want := []string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}
	if !slices.Equal(got, want) {
		t.Fatalf("Versions() = %v, want %v", got, want)
	}
	if !slices.IsSortedFunc(got, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("Versions() = %v: not newest first", got)
	}
	s := NewServer(&Implementation{Name: "v", Version: "1"}, nil)
	res, err := s.discover(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.(*DiscoverResult).SupportedVersions; !slices.Equal(d, got) {
		t.Errorf("server/discover says %v, Versions() %v", d, got)
	}
	got[0] = "changed"
	if Versions()[0] != Version20260728 {
		t.Error("changing the returned slice changed the next call's")
	}
}
