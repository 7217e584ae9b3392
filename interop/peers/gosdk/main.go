// Command gosdk is an MCP server built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), for our client to talk to. Its
// surface is the one every peer server in interop/peers offers:
//
//	tools      echo {text}, fail (always a tool error), count {steps}
//	           (progress), slow {key} (runs until cancelled),
//	           cancel_state {key, waitMs}, session
//	resource   interop://greeting
//	prompt     greet {name}
//
//	gosdk -stdio               serve over stdin/stdout
//	gosdk -addr 127.0.0.1:0    serve Streamable HTTP at /mcp; the URL goes to stderr
//	gosdk -addr 127.0.0.1:0 -stateless
//	                           likewise, stateless (StreamableHTTPOptions.Stateless):
//	                           each POST gets a fresh session, and 2026-07-28
//	                           requests are served
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

type countIn struct {
	Steps int `json:"steps" jsonschema:"how many progress notifications to send"`
}

type keyIn struct {
	Key string `json:"key" jsonschema:"a name the client picks for the call"`
}

type stateIn struct {
	Key    string `json:"key" jsonschema:"the key given to slow"`
	WaitMs int    `json:"waitMs,omitempty" jsonschema:"how long to wait for the call to be cancelled"`
}

// slowCalls records how each slow call ended, so that cancel_state can
// tell the client whether its notifications/cancelled reached the handler.
var slowCalls = struct {
	sync.Mutex
	state map[string]string
	cause map[string]string
}{state: map[string]string{}, cause: map[string]string{}}

func setState(key, state, cause string) {
	slowCalls.Lock()
	slowCalls.state[key], slowCalls.cause[key] = state, cause
	slowCalls.Unlock()
}

func getState(key string) (string, string) {
	slowCalls.Lock()
	defer slowCalls.Unlock()
	s := slowCalls.state[key]
	if s == "" {
		s = "unknown"
	}
	return s, slowCalls.cause[key]
}

func jsonText(v any) *mcp.CallToolResult {
	b, _ := json.Marshal(v)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "interop-gosdk", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails, as a tool error"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("this tool always fails")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "count", Description: "Report progress steps times, then answer"},
		func(ctx context.Context, req *mcp.CallToolRequest, in countIn) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps; i++ {
				if tok != nil {
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
				}
				time.Sleep(20 * time.Millisecond)
			}
			return jsonText(map[string]int{"counted": in.Steps}), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Report progress once, then run until cancelled (at most 10 s)"},
		func(ctx context.Context, req *mcp.CallToolRequest, in keyIn) (*mcp.CallToolResult, any, error) {
			setState(in.Key, "running", "")
			if tok := req.Params.GetProgressToken(); tok != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: "started"})
			}
			select {
			case <-ctx.Done():
				setState(in.Key, "cancelled", fmt.Sprint(context.Cause(ctx)))
				return nil, nil, ctx.Err()
			case <-time.After(10 * time.Second):
				setState(in.Key, "finished", "")
				return jsonText(map[string]string{"state": "finished"}), nil, nil
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "cancel_state", Description: "How a slow call ended; waits up to waitMs for it to be cancelled"},
		func(ctx context.Context, req *mcp.CallToolRequest, in stateIn) (*mcp.CallToolResult, any, error) {
			wait := time.Duration(in.WaitMs) * time.Millisecond
			if wait <= 0 {
				wait = 3 * time.Second
			}
			deadline := time.Now().Add(wait)
			for {
				state, cause := getState(in.Key)
				if state == "cancelled" || time.Now().After(deadline) {
					return jsonText(map[string]string{"state": state, "cause": cause}), nil, nil
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "session", Description: "The revision the client offered and its name"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			p := req.Session.InitializeParams()
			out := map[string]string{}
			if p != nil {
				out["offered"] = p.ProtocolVersion
				if p.ClientInfo != nil {
					out["clientName"] = p.ClientInfo.Name
				}
			}
			return jsonText(out), nil, nil
		})
	s.AddResource(&mcp.Resource{URI: "interop://greeting", Name: "greeting", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "interop://greeting", MIMEType: "text/plain", Text: "hello from gosdk"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"]}}}}, nil
		})
	return s
}

func main() {
	stdio := flag.Bool("stdio", false, "serve over stdin/stdout")
	addr := flag.String("addr", "", "serve Streamable HTTP on this address (path /mcp)")
	stateless := flag.Bool("stateless", false, "with -addr: a stateless handler, which also serves 2026-07-28 requests")
	flag.Parse()
	log.SetOutput(os.Stderr)
	switch {
	case *stdio:
		if err := newServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
	case *addr != "":
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			log.Fatal(err)
		}
		srv := newServer()
		mux := http.NewServeMux()
		var opts *mcp.StreamableHTTPOptions
		if *stateless {
			// PropagateRequestCancellation: a 2026-07-28 call is cancelled
			// by closing its POST, and the handler should see that.
			opts = &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}
		}
		mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts))
		fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", ln.Addr())
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		log.Fatal(hs.Serve(ln))
	default:
		flag.Usage()
		os.Exit(2)
	}
}
