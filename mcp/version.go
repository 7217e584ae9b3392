package mcp

import "slices"

// Protocol revisions, oldest first.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"

	// LatestVersion is the newest revision negotiated through initialize.
	LatestVersion = Version20251125

	// ModernVersion is the stateless revision: no initialize, every
	// request names its revision and client in _meta.
	ModernVersion = "2026-07-28"
)

// ModernVersions lists the stateless revisions a Server serves, newest
// first. They are never negotiated through initialize.
var ModernVersions = []string{ModernVersion}

// SupportedVersions lists the revisions a Server negotiates, oldest first.
// Support is decided by membership in this list, never by comparing the
// date strings: "2099-01-01" is not supported just because it sorts later.
var SupportedVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125}

// Versions returns every revision this package speaks, newest first: the
// stateless ones (ModernVersions), then those negotiated through
// initialize (SupportedVersions). It is the list to show people (help
// texts, version output, configuration hints), so that they never drift
// apart; the slice is the caller's to keep or change.
func Versions() []string {
	out := slices.Clone(ModernVersions)
	for _, v := range slices.Backward(SupportedVersions) {
		out = append(out, v)
	}
	return out
}

// revision is a negotiated protocol revision as an ordinal, so features can
// be switched with comparisons of small integers.
type revision uint8

const (
	rev20241105 revision = iota + 1
	rev20250326
	rev20250618
	rev20251125
	revModern // 2026-07-28, never negotiated: claimed per request
)

func parseRevision(v string) (revision, bool) {
	i := slices.Index(SupportedVersions, v)
	if i < 0 {
		return 0, false
	}
	return revision(i + 1), true
}

func (r revision) String() string {
	if r == revModern {
		return ModernVersion
	}
	if r == 0 || int(r) > len(SupportedVersions) {
		return ""
	}
	return SupportedVersions[r-1]
}

// Feature switches, named for what a client of that revision understands.

func (r revision) batches() bool             { return r == rev20250326 }
func (r revision) audio() bool               { return r >= rev20250326 }
func (r revision) toolAnnotations() bool     { return r >= rev20250326 }
func (r revision) progressMessage() bool     { return r >= rev20250326 }
func (r revision) completionsCap() bool      { return r >= rev20250326 }
func (r revision) structuredOutput() bool    { return r >= rev20250618 }
func (r revision) resourceLinks() bool       { return r >= rev20250618 }
func (r revision) titles() bool              { return r >= rev20250618 }
func (r revision) elicitation() bool         { return r >= rev20250618 }
func (r revision) metaOnDefinitions() bool   { return r >= rev20250618 }
func (r revision) icons() bool               { return r >= rev20251125 }
func (r revision) urlElicitation() bool      { return r >= rev20251125 }
func (r revision) implementationExtra() bool { return r >= rev20251125 }
