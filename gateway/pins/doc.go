// Package pins keeps the gateway's tool-definition pins: the hash of each
// tool's definition as its upstream first offered it, so that a later
// change (a description rewritten to tell the model to read ~/.ssh/id_rsa,
// say) is noticed instead of republished silently. The gateway keeps a
// [Store] open and consults it after every listing of an upstream's tools.
//
// # Definitions and hashes
//
// [Of] reduces a tool to its [Definition]: what a model reads and what a
// call is shaped by (name, title, description, input and output schemas,
// annotations), in canonical JSON (RFC 8785), hashed with SHA-256. Two
// listings that differ only in key order or number spelling hash alike.
//
// # The store
//
// [Store] keeps, for each server and tool, the approved definition and
// the latest one seen when that differs (pending). [Decide] says what
// the gateway publishes for a tool under a policy (warn, block or
// approve); [Store.Approve] and [Store.Reset] are the operator's answers.
//
// A Store is a SQLite file (the default), memory, or a Postgres database
// named by a postgres:// URL, which the replicas of a gateway share: an
// approval made through one replica, or by mcpgate pins against the same
// database, reaches every replica through [Store.Version] within its
// poll.
//
// # The scanner
//
// [Scan] looks for instruction-injection patterns in a definition's text
// (see scan.go for the heuristics and their limits). It is a tripwire for
// the obvious, not a defence: a reworded attack passes it.
package pins
