// Package cluster lets several mcpgate replicas behind a plain load
// balancer serve any client's request, by sharing what one process kept
// in memory through Redis: the session registry, the events of SSE
// streams (for resumption), the delivery of messages to the replica that
// holds a client's stream or runs its call, rate-limit buckets, and task
// records.
//
// It is an optional integration: a program that does not import it does
// not link a Redis client. [Open] connects and checks Redis; the
// [github.com/mcpgate/mcpgate/mcphttp] handler and the gateway take the
// [*Cluster] in their options.
package cluster
