// Command mcpgo is an MCP server built on github.com/mark3labs/mcp-go, for
// our client to talk to. It offers the same surface as peers/gosdk:
//
//	tools      echo {text}, fail (always a tool error), count {steps}
//	           (progress), slow {key} (runs until cancelled),
//	           cancel_state {key, waitMs}, session
//	resource   interop://greeting
//	prompt     greet {name}
//
//	mcpgo -stdio               serve over stdin/stdout
//	mcpgo -addr 127.0.0.1:0    serve Streamable HTTP at /mcp; the URL goes to stderr
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// slowCalls records how each slow call ended (see peers/gosdk).
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
	return mcp.NewToolResultText(string(b))
}

func progress(ctx context.Context, req mcp.CallToolRequest, p, total float64, msg string) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return
	}
	params := map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": p, "message": msg}
	if total > 0 {
		params["total"] = total
	}
	server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", params)
}

func newServer() *server.MCPServer {
	s := server.NewMCPServer("interop-mcpgo", "1.0.0",
		server.WithToolCapabilities(false), server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text"),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo back"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, err := req.RequireString("text")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(text), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Always fails, as a tool error")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("this tool always fails"), nil
		})
	s.AddTool(mcp.NewTool("count", mcp.WithDescription("Report progress steps times, then answer"),
		mcp.WithNumber("steps", mcp.Required(), mcp.Description("how many progress notifications to send"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			steps := req.GetInt("steps", 0)
			for i := 1; i <= steps; i++ {
				progress(ctx, req, float64(i), float64(steps), fmt.Sprintf("step %d", i))
				time.Sleep(20 * time.Millisecond)
			}
			return jsonText(map[string]int{"counted": steps}), nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Report progress once, then run until cancelled (at most 10 s)"),
		mcp.WithString("key", mcp.Required(), mcp.Description("a name the client picks for the call"))),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			key := req.GetString("key", "")
			setState(key, "running", "")
			progress(ctx, req, 1, 0, "started")
			select {
			case <-ctx.Done():
				setState(key, "cancelled", fmt.Sprint(context.Cause(ctx)))
				return nil, ctx.Err()
			case <-time.After(10 * time.Second):
				setState(key, "finished", "")
				return jsonText(map[string]string{"state": "finished"}), nil
			}
		})
	s.AddTool(mcp.NewTool("cancel_state", mcp.WithDescription("How a slow call ended; waits up to waitMs for it to be cancelled"),
		mcp.WithString("key", mcp.Required()), mcp.WithNumber("waitMs")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			key := req.GetString("key", "")
			wait := time.Duration(req.GetInt("waitMs", 3000)) * time.Millisecond
			deadline := time.Now().Add(wait)
			for {
				state, cause := getState(key)
				if state == "cancelled" || time.Now().After(deadline) {
					return jsonText(map[string]string{"state": state, "cause": cause}), nil
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	s.AddTool(mcp.NewTool("session", mcp.WithDescription("The client's name")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			out := map[string]string{}
			if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
				out["clientName"] = cs.GetClientInfo().Name
			}
			return jsonText(out), nil
		})
	s.AddResource(mcp.NewResource("interop://greeting", "greeting", mcp.WithMIMEType("text/plain")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "interop://greeting", MIMEType: "text/plain", Text: "hello from mcpgo"}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptDescription("Greets someone"), mcp.WithArgument("name", mcp.RequiredArgument())),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Say hello to "+req.Params.Arguments["name"]))}}, nil
		})
	return s
}

func main() {
	stdio := flag.Bool("stdio", false, "serve over stdin/stdout")
	addr := flag.String("addr", "", "serve Streamable HTTP on this address (path /mcp)")
	flag.Parse()
	log.SetOutput(os.Stderr)
	switch {
	case *stdio:
		if err := server.ServeStdio(newServer()); err != nil {
			log.Fatal(err)
		}
	case *addr != "":
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			log.Fatal(err)
		}
		h := server.NewStreamableHTTPServer(newServer(), server.WithEndpointPath("/mcp"))
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", ln.Addr())
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		log.Fatal(hs.Serve(ln))
	default:
		flag.Usage()
		os.Exit(2)
	}
}
