package mcp

import "slices"

// Protocol revisions, oldest first. They fall in two eras:
//
//   - The session era, 2024-11-05 to 2025-11-25: a client and server
//     negotiate the revision once, through initialize, and everything after
//     belongs to that session ([NegotiatedVersions]).
//   - The per-request era, from 2026-07-28: there is no initialize and no
//     session; every request names its revision, capabilities and client
//     in params._meta ([PerRequestVersions]).
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"

	// LatestNegotiatedVersion is the newest revision negotiated through
	// initialize: what a session-era client offers.
	LatestNegotiatedVersion = Version20251125
)

// PerRequestVersions lists the revisions of the per-request era a Server
// serves, newest first. They are never negotiated through initialize.
var PerRequestVersions = []string{Version20260728}

// NegotiatedVersions lists the session-era revisions a Server negotiates
// through initialize, oldest first. Support is decided by membership in
// this list, never by comparing the date strings: "2099-01-01" is not
// supported just because it sorts later.
var NegotiatedVersions = []string{Version20241105, Version20250326, Version20250618, Version20251125}

// Versions returns every revision this package speaks, newest first: the
// per-request ones ([PerRequestVersions]), then those negotiated through
// initialize ([NegotiatedVersions]). It is the list to show people (help
// texts, version output, configuration hints), so that they never drift
// apart; the slice is the caller's to keep or change.
func Versions() []string {
	out := slices.Clone(PerRequestVersions)
	for _, v := range slices.Backward(NegotiatedVersions) {
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
	rev20260728 // 2026-07-28, never negotiated: claimed per request
)

func parseRevision(v string) (revision, bool) {
	i := slices.Index(NegotiatedVersions, v)
	if i < 0 {
		return 0, false
	}
	return revision(i + 1), true
}

func (r revision) String() string {
	if r == rev20260728 {
		return Version20260728
	}
	if r == 0 || int(r) > len(NegotiatedVersions) {
		return ""
	}
	return NegotiatedVersions[r-1]
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
