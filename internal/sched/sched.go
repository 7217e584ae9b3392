// Package sched is the policy by which an MCP session runs the messages it
// reads, and the bound on how many of its requests run at once.
//
// # Where a message runs
//
// A session on a stream (stdio, or any mcp.Conn) has one goroutine at a
// time that reads its messages, one after another.
//
//   - A response to one of the server's own requests, a notification, and
//     the two requests the engine answers by itself at once (initialize
//     and ping) are handled by the reader, before it reads the next
//     message ([OnReader]). None of them waits for anything: a response
//     is handed to the request that waits for it, notifications/cancelled
//     cancels a context, and initialize sets the state of the session,
//     which the next message must already see.
//   - Every other request runs on a goroutine that does nothing else
//     meanwhile. It may run the server author's code (a tool, a prompt, a
//     middleware, a gateway's listing that waits for its upstream
//     servers) for as long as that takes, and it may wait for the
//     client's answer to a question of its own (sampling, elicitation,
//     roots), which only a reader can deliver; so it must never hold up
//     reading. On a stream, that goroutine is the one that read the
//     request: it starts a new goroutine that reads on, then runs the
//     request, then ends. The request thus starts at once on the thread
//     that read it, and the next reader starts beside it, off the path
//     from request to reply.
//
// Over HTTP each message body already has a goroutine of its own (the one
// net/http serves it on), and its requests run there.
//
// Nothing in this depends on time: where a message runs follows from
// what it is, never from how long the requests before it took.
//
// # How many at once
//
// A session runs at most [Group.Limit] requests at once (initialize and
// ping, which take no slot, aside). A request past the limit is refused
// at once with an error, and reading goes on. Nothing ever waits for a
// slot: requests that hold every slot may all be waiting for the
// client's answers, and a reader that waited could not read them, so the
// session would hang until the requests timed out.
//
// # What it costs
//
// The design this replaced ran a request on the reader itself while it
// stayed quick, and had a timer hand reading on when it did not, so a
// client that waited for each reply never woke a second thread. Here
// every request that reaches a handler starts one goroutine, the next
// reader. make bench, echo over stdio on 2 shared cores, medians of
// three runs (single runs vary by half): the timing design served 27,100
// calls a second one at a time and 167,700 with 64 in flight, at 19 and
// 3.7 µs of server CPU a call; this one 26,200 and 135,700, at 22 and
// 5.5 µs; mcp-go 9,500 and 36,100. Starting a goroutine for the request
// instead and reading on served 16,500 and 111,300 (this one 36,200 and
// 126,400 in those runs), at 31 and 7.6 µs. On handlers that do real work
// (BenchmarkServeStdioWork in package mcp) the designs cost the same to
// within the noise.
//
// Goroutines are started with the go statement: a pool of idle
// goroutines (internal/workpool, before) saved CPU on pipelined echo but
// not on BenchmarkServeStdioWork's tools.
package sched

import "sync"

// OnReader reports whether a stream session handles a message on the
// goroutine that read it: everything but a request (responses and
// notifications), and the requests initialize and ping. Any other request
// runs on a goroutine of its own, in a slot of the session's [Group].
func OnReader(request bool, method string) bool {
	return !request || method == "initialize" || method == "ping"
}

// A Group counts the requests of one session in flight and bounds those
// that take a slot. Its zero value is not usable; call [NewGroup].
type Group struct {
	slots   chan struct{}
	running sync.WaitGroup
}

// NewGroup returns a Group of limit slots (at least one).
func NewGroup(limit int) *Group {
	return &Group{slots: make(chan struct{}, max(limit, 1))}
}

// Limit returns how many requests may hold a slot at once.
func (g *Group) Limit() int { return cap(g.slots) }

// Admit counts one request in, in a slot of its own if slot is true. It
// reports false, and counts nothing, when slot is true and every slot is
// taken; it never waits.
func (g *Group) Admit(slot bool) bool {
	if slot {
		select {
		case g.slots <- struct{}{}:
		default:
			return false
		}
	}
	g.running.Add(1)
	return true
}

// Done counts out a request that Admit counted in with the same slot.
func (g *Group) Done(slot bool) {
	if slot {
		<-g.slots
	}
	g.running.Done()
}

// Wait blocks until every request counted in has been counted out.
func (g *Group) Wait() { g.running.Wait() }
