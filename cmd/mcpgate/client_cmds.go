package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

func newToolsCmd() *cobra.Command {
	list := newClientLeaf(clientCommand{
		name:  "list",
		short: "List the tools of an MCP server",
		long: `List the tools an MCP server offers, with their descriptions cut to the
width of the terminal. With --json, print {"tools": [...]}: every tool in
full (input schemas included), all pages merged.

` + bareHelp,
		example: `  mcpgate tools list http://127.0.0.1:8765/mcp
  mcpgate tools list --api-key "$KEY" https://mcp.example.com/mcp
  mcpgate tools list -- mcpgate serve --stdio
  mcpgate tools list --json -- npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio`,
		run: func(ctx context.Context, cmd *cobra.Command, c *clientConn, _ []string) error {
			tools, err := listAll(c.cs.Tools(ctx))
			if err != nil {
				if !errors.Is(err, mcp.ErrNotSupported) {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s offers no tools\n", c.t)
			}
			if c.f.json {
				return printJSON(cmd.OutOrStdout(), struct {
					Tools []*mcp.Tool `json:"tools"`
				}{tools})
			}
			t := &table{header: []string{"NAME", "DESCRIPTION"}}
			for _, tl := range tools {
				t.add(tl.Name, describe(tl.Title, tl.Description))
			}
			t.print(cmd.OutOrStdout(), "no tools")
			return nil
		},
	})

	var argsJSON string
	var toolArgs []byte
	call := newClientLeaf(clientCommand{
		name:  "call",
		ops:   []string{"NAME"},
		short: "Call a tool of an MCP server and print its result",
		long: `Call the tool NAME with the arguments given by --args, a JSON object
(--args @FILE reads it from FILE, --args @- from standard input), and print
the result: its text, JSON text indented, and a note for each image, audio
clip or resource. A result with only structured content prints that,
indented. With --json, print the whole result as JSON.

A tool that reports an error (isError) makes the command exit with status
1, its text on standard error (with --json, the result still goes to
standard output).

` + bareHelp + `
A bare server's value (such as {"sum": 5}) becomes the result's structured
content, and a JSON-RPC error it answers with the tool's error.`,
		example: `  mcpgate tools call http://127.0.0.1:8765/mcp create_task --args '{"title":"Try mcpgate"}'
  mcpgate tools call list_tasks --args '{"status":"pending"}' -- mcpgate serve --stdio
  mcpgate tools call echo --args '{"message":"hi"}' -- npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio
  echo '{"title":"from standard input"}' | mcpgate tools call http://127.0.0.1:8765/mcp create_task --args @- --json`,
		flags: func(fl *pflag.FlagSet) {
			fl.StringVarP(&argsJSON, "args", "a", "", "the tool's arguments: a JSON object, @FILE or @- (standard input)")
		},
		prepare: func(cmd *cobra.Command) (err error) {
			toolArgs, err = parseArgsObject(cmd, argsJSON)
			return err
		},
		run: func(ctx context.Context, cmd *cobra.Command, c *clientConn, ops []string) error {
			name := ops[0]
			var a any
			if toolArgs != nil {
				a = jsontext.Value(toolArgs)
			}
			cctx, cancel := c.callCtx(ctx)
			res, err := c.cs.CallTool(cctx, name, a)
			cancel()
			if err != nil {
				var ce *mcp.CallError
				if errors.As(err, &ce) {
					if nf := c.toolNotFound(ctx, name); nf != nil {
						return nf
					}
				}
				return err
			}
			out := cmd.OutOrStdout()
			if c.f.json {
				if err := printJSON(out, res); err != nil {
					return err
				}
			}
			if res.IsError {
				if nf := c.toolNotFound(ctx, name); nf != nil {
					return nf
				}
				if c.f.json {
					return plainErrorf("tool %q reported an error", name)
				}
				var sb strings.Builder
				printToolResult(&sb, res)
				text := strings.TrimRight(sb.String(), "\n")
				if text == "" {
					text = "(no details)"
				}
				sep := " "
				if strings.Contains(text, "\n") {
					sep = "\n"
				}
				return plainErrorf("tool %q reported an error:%s%s", name, sep, text)
			}
			if !c.f.json {
				printToolResult(out, res)
			}
			return nil
		},
	})
	return newClientGroup("tools", "List, call and search the tools of an MCP server (a URL, or a command after --)", list, call, newToolSearchCmd())
}

func newResourcesCmd() *cobra.Command {
	list := newClientLeaf(clientCommand{
		name:  "list",
		short: "List the resources and resource templates of an MCP server",
		long: `List the resources an MCP server offers (URI, name, media type and
description), then its resource templates, if any. With --json, print
{"resources": [...], "resourceTemplates": [...]}, all pages merged.`,
		example: `  mcpgate resources list http://127.0.0.1:8765/mcp
  mcpgate resources list --json -- npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio`,
		run: func(ctx context.Context, cmd *cobra.Command, c *clientConn, _ []string) error {
			res, err := listAll(c.cs.Resources(ctx))
			if err != nil {
				if !errors.Is(err, mcp.ErrNotSupported) {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s offers no resources\n", c.t)
			}
			var tmpls []*mcp.ResourceTemplate
			if err == nil {
				tmpls, err = listAll(c.cs.ResourceTemplates(ctx))
				if err != nil {
					// Servers without templates may not know the method.
					var ce *mcp.CallError
					if !errors.As(err, &ce) || ce.Err.Code != jsonrpc.CodeMethodNotFound {
						return err
					}
				}
			}
			if tmpls == nil {
				tmpls = []*mcp.ResourceTemplate{}
			}
			out := cmd.OutOrStdout()
			if c.f.json {
				return printJSON(out, struct {
					Resources         []*mcp.Resource         `json:"resources"`
					ResourceTemplates []*mcp.ResourceTemplate `json:"resourceTemplates"`
				}{res, tmpls})
			}
			t := &table{header: []string{"URI", "NAME", "TYPE", "DESCRIPTION"}}
			for _, r := range res {
				t.add(r.URI, r.Name, r.MIMEType, describe(r.Title, r.Description))
			}
			t.print(out, "no resources")
			if len(tmpls) > 0 {
				fmt.Fprintln(out)
				t := &table{header: []string{"URI TEMPLATE", "NAME", "TYPE", "DESCRIPTION"}}
				for _, r := range tmpls {
					t.add(r.URITemplate, r.Name, r.MIMEType, describe(r.Title, r.Description))
				}
				t.print(out, "")
			}
			return nil
		},
	})
	read := newClientLeaf(clientCommand{
		name:  "read",
		ops:   []string{"URI"},
		short: "Read a resource of an MCP server",
		long: `Read the resource URI and print its text. Binary contents are
summarised (media type and size); use --json to get them, base64-encoded.
When the server returns several contents, each is introduced by its URI.`,
		example: `  mcpgate resources read http://127.0.0.1:8765/mcp tasks://open
  mcpgate resources read demo://resource/static/document/architecture.md -- npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio`,
		run: func(ctx context.Context, cmd *cobra.Command, c *clientConn, ops []string) error {
			cctx, cancel := c.callCtx(ctx)
			res, err := c.cs.ReadResource(cctx, ops[0])
			cancel()
			if err != nil {
				var ce *mcp.CallError
				if errors.As(err, &ce) && (ce.Err.Code == mcp.CodeResourceNotFound || ce.Err.Code == jsonrpc.CodeInvalidParams) {
					return plainErrorf("cannot read %q: %s (see: %s)", ops[0], ce.Err.Message, c.seeAlso(cmd, "resources list"))
				}
				return err
			}
			if c.f.json {
				return printJSON(cmd.OutOrStdout(), res)
			}
			printResourceContents(cmd.OutOrStdout(), res.Contents)
			return nil
		},
	})
	return newClientGroup("resources", "List and read the resources of an MCP server (a URL, or a command after --)", list, read)
}

func newPromptsCmd() *cobra.Command {
	list := newClientLeaf(clientCommand{
		name:  "list",
		short: "List the prompts of an MCP server",
		long: `List the prompts an MCP server offers, with their arguments (* marks a
required one) and descriptions. With --json, print {"prompts": [...]},
all pages merged.`,
		example: `  mcpgate prompts list http://127.0.0.1:8765/mcp
  mcpgate prompts list -- npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio`,
		run: func(ctx context.Context, cmd *cobra.Command, c *clientConn, _ []string) error {
			prompts, err := listAll(c.cs.Prompts(ctx))
			if err != nil {
				if !errors.Is(err, mcp.ErrNotSupported) {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s offers no prompts\n", c.t)
			}
			if c.f.json {
				return printJSON(cmd.OutOrStdout(), struct {
					Prompts []*mcp.Prompt `json:"prompts"`
				}{prompts})
			}
			t := &table{header: []string{"NAME", "ARGUMENTS", "DESCRIPTION"}}
			for _, p := range prompts {
				t.add(p.Name, promptArgs(p), describe(p.Title, p.Description))
			}
			t.print(cmd.OutOrStdout(), "no prompts")
			return nil
		},
	})
	var argsJSON string
	var promptArgsMap map[string]string
	get := newClientLeaf(clientCommand{
		name:  "get",
		ops:   []string{"NAME"},
		short: "Get a prompt of an MCP server, filled in with arguments",
		long: `Get the prompt NAME with the arguments given by --args, a JSON object
whose values are strings (--args @FILE reads it from FILE, --args @- from
standard input), and print its messages. With --json, print the result.`,
		example: `  mcpgate prompts get http://127.0.0.1:8765/mcp review_tasks --args '{"tag":"home"}'
  mcpgate prompts get args-prompt --args '{"city":"Paris"}' -- npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio`,
		flags: func(fl *pflag.FlagSet) {
			fl.StringVarP(&argsJSON, "args", "a", "", "the prompt's arguments: a JSON object of strings, @FILE or @- (standard input)")
		},
		prepare: func(cmd *cobra.Command) (err error) {
			promptArgsMap, err = parsePromptArgs(cmd, argsJSON)
			return err
		},
		run: func(ctx context.Context, cmd *cobra.Command, c *clientConn, ops []string) error {
			name := ops[0]
			cctx, cancel := c.callCtx(ctx)
			res, err := c.cs.GetPrompt(cctx, name, promptArgsMap)
			cancel()
			if err != nil {
				var ce *mcp.CallError
				if errors.As(err, &ce) {
					if e := c.promptProblem(ctx, name, ce); e != nil {
						return e
					}
				}
				return err
			}
			if c.f.json {
				return printJSON(cmd.OutOrStdout(), res)
			}
			printPrompt(cmd.OutOrStdout(), res)
			return nil
		},
	})
	return newClientGroup("prompts", "List and get the prompts of an MCP server (a URL, or a command after --)", list, get)
}

func newPingCmd() *cobra.Command {
	return newClientLeaf(clientCommand{
		name:  "ping",
		short: "Check that an MCP server answers, and say who it is",
		long: `Connect to an MCP server, send it a ping and print its name, version and
protocol revision, and the round-trip time of the ping. With --json, print
the server's initialize result with "pingMs" added.`,
		example: `  mcpgate ping http://127.0.0.1:8765/mcp
  mcpgate ping --protocol-version 2025-03-26 http://127.0.0.1:8765/mcp
  mcpgate ping -- mcpgate serve --stdio`,
		run: func(ctx context.Context, cmd *cobra.Command, c *clientConn, _ []string) error {
			cctx, cancel := c.callCtx(ctx)
			start := time.Now()
			err := c.cs.Ping(cctx)
			rtt := time.Since(start)
			cancel()
			if err != nil {
				return err
			}
			init := c.cs.InitializeResult()
			ms := float64(rtt.Microseconds()) / 1000
			if c.f.json {
				return printJSON(cmd.OutOrStdout(), struct {
					*mcp.InitializeResult
					PingMs float64 `json:"pingMs"`
					Bare   bool    `json:"bare,omitzero"`
				}{init, ms, c.cs.Bare()})
			}
			if c.cs.Bare() {
				// It has no name to give, and no ping: tools/list answered.
				fmt.Fprintf(cmd.OutOrStdout(), "pong from a bare tool server (no MCP lifecycle; it answered tools/list) in %.1f ms\n", ms)
				return nil
			}
			si := init.ServerInfo
			name := si.Name
			if si.Title != "" && si.Title != si.Name {
				name += " (" + si.Title + ")"
			}
			if si.Version != "" {
				name += " " + si.Version
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pong from %s (protocol %s) in %.1f ms\n", name, init.ProtocolVersion, ms)
			return nil
		},
	})
}

// listAll collects every item of a listing; the iterators of package mcp
// page through it and stop on a server that loops.
func listAll[T any](seq iter.Seq2[T, error]) ([]T, error) {
	out := []T{}
	for it, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, it)
	}
	return out, nil
}

// seeAlso renders the command that lists what a failed call could name.
func (c *clientConn) seeAlso(cmd *cobra.Command, sub string) string {
	prog := cmd.Root().Name()
	if c.t.url != "" {
		return fmt.Sprintf("%s %s %s", prog, sub, c.t.url)
	}
	return fmt.Sprintf("%s %s -- %s", prog, sub, shortCommand(c.t.command))
}

// toolNotFound returns an error naming the server's tools when it has
// none called name, and nil when it has one or cannot say.
func (c *clientConn) toolNotFound(ctx context.Context, name string) error {
	tools, err := listAll(c.cs.Tools(ctx))
	if err != nil {
		return nil
	}
	var names []string
	for _, t := range tools {
		if t.Name == name {
			return nil
		}
		names = append(names, t.Name)
	}
	// A server with tool search may list only some of the tools it runs.
	if handled, err := c.toolNotFoundBySearch(ctx, name); handled {
		return err
	}
	if len(names) == 0 {
		return plainErrorf("tool %q not found: the server has no tools", name)
	}
	return plainErrorf("tool %q not found; the server has: %s", name, strings.Join(names, ", "))
}

// promptProblem explains a failed prompts/get: an unknown prompt, or
// arguments that do not fit it.
func (c *clientConn) promptProblem(ctx context.Context, name string, ce *mcp.CallError) error {
	prompts, err := listAll(c.cs.Prompts(ctx))
	if err != nil {
		return nil
	}
	var names []string
	for _, p := range prompts {
		if p.Name == name {
			if ce.Err.Code == jsonrpc.CodeInvalidParams && len(p.Arguments) > 0 {
				return plainErrorf("prompt %q: %s (its arguments, * for required: %s)", name, ce.Err.Message, promptArgs(p))
			}
			return nil
		}
		names = append(names, p.Name)
	}
	if len(names) == 0 {
		return plainErrorf("prompt %q not found: the server has no prompts", name)
	}
	return plainErrorf("prompt %q not found; the server has: %s", name, strings.Join(names, ", "))
}

func promptArgs(p *mcp.Prompt) string {
	var as []string
	for _, a := range p.Arguments {
		s := a.Name
		if a.Required {
			s += "*"
		}
		as = append(as, s)
	}
	return strings.Join(as, ", ")
}

// readArgs returns the text of an --args flag: the flag itself, or a
// file's contents for @FILE, or standard input for @-.
func readArgs(cmd *cobra.Command, s string) (text, where string, err error) {
	file, ok := strings.CutPrefix(s, "@")
	if !ok {
		return s, "--args", nil
	}
	var b []byte
	if file == "-" {
		b, err = io.ReadAll(cmd.InOrStdin())
		where = "--args @- (standard input)"
	} else {
		b, err = os.ReadFile(file)
		where = "--args @" + file
	}
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", where, err)
	}
	return string(b), where, nil
}

// parseArgsObject reads --args: empty, or a JSON object returned as is.
// A syntax error is reported with its line and column and a caret under
// the spot.
func parseArgsObject(cmd *cobra.Command, s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	text, where, err := readArgs(cmd, s)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, jsonSyntaxError(where, text, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("%s must be a JSON object such as '{\"message\":\"hi\"}', not %s", where, jsonKind(v))
	}
	return []byte(strings.TrimSpace(text)), nil
}

// parsePromptArgs reads the --args of prompts get: a JSON object whose
// values are strings.
func parsePromptArgs(cmd *cobra.Command, s string) (map[string]string, error) {
	b, err := parseArgsObject(cmd, s)
	if b == nil || err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(raw))
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok := raw[k].(string)
		if !ok {
			hint := ""
			if raw[k] != nil {
				j, _ := json.Marshal(raw[k])
				q, _ := json.Marshal(string(j))
				hint = fmt.Sprintf(", such as %q: %s", k, q)
			}
			return nil, fmt.Errorf("--args: the value of %q is %s, but prompt arguments are strings: quote it%s", k, jsonKind(raw[k]), hint)
		}
		out[k] = v
	}
	return out, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// jsonSyntaxError says where JSON text went wrong: line, column, and the
// line with a caret under the spot.
func jsonSyntaxError(where, text string, err error) error {
	var se *json.SyntaxError
	off := len(text)
	msg := err.Error()
	if errors.As(err, &se) {
		off = int(se.Offset)
		msg = se.Error()
	}
	if off > len(text) {
		off = len(text)
	}
	// Offset counts the bytes read, the bad one included.
	pos := off
	if pos > 0 && errors.As(err, &se) && !strings.Contains(msg, "unexpected end") {
		pos--
	}
	line := 1 + strings.Count(text[:pos], "\n")
	start := strings.LastIndex(text[:pos], "\n") + 1
	end := strings.IndexByte(text[start:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += start
	}
	col := 1 + len([]rune(text[start:pos]))
	src := text[start:end]
	caret := strings.Repeat(" ", col-1) + "^"
	const shown = 100
	if r := []rune(src); len(r) > shown {
		// Keep the caret in view.
		from := max(0, col-1-shown/2)
		to := min(len(r), from+shown)
		src = string(r[from:to])
		caret = strings.Repeat(" ", col-1-from) + "^"
	}
	return fmt.Errorf("%s is not valid JSON: %s, at line %d column %d:\n  %s\n  %s", where, msg, line, col, src, caret)
}

// bareHelp explains bare tool servers in the help of the tools commands.
const bareHelp = `A bare tool server, one that answers tools/list and tools/call but answers
initialize with -32601 (Method not found), as servers written from a
template often do, is recognised, with a warning, and spoken to without
the MCP handshake; --bare says so up front, sending it no initialize.`
