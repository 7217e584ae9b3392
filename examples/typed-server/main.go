// Command typed-server is an MCP server on standard input and output with
// two typed tools, a resource and a prompt: the smallest complete server
// built with package mcp.
//
// The tools are registered with mcp.AddTool, so their input and output
// schemas come from the struct tags of ConvertIn, ConvertOut, CountIn and
// CountOut, and every call's arguments are checked against them before
// the handler runs: a call without "value", or with a "from" that is not
// one of the three units, never reaches convert.
//
// Run it under any MCP client, such as the client example:
//
//	go run ./examples/client -tool convert_temperature -args '{"value":100,"from":"celsius","to":"fahrenheit"}' -- go run ./examples/typed-server
//
// or mcpgate's own:
//
//	mcpgate tools call convert_temperature --args '{"value":100,"from":"celsius","to":"fahrenheit"}' -- go run ./examples/typed-server
package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"os/signal"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/mcp"
)

// ConvertIn are the arguments of convert_temperature. Value and From have
// no omitempty, so they are required; To and Digits may be left out, and
// then take their defaults.
type ConvertIn struct {
	Value  float64 `json:"value" jsonschema:"description=The temperature to convert"`
	From   string  `json:"from" jsonschema:"description=The unit of value,enum=celsius,enum=fahrenheit,enum=kelvin"`
	To     string  `json:"to,omitempty" jsonschema:"description=The unit to convert to,enum=celsius,enum=fahrenheit,enum=kelvin,default=celsius"`
	Digits int     `json:"digits,omitempty" jsonschema:"description=Decimal places of the result,minimum=0,maximum=6,default=2"`
}

// ConvertOut is the structured result of convert_temperature.
type ConvertOut struct {
	Value float64 `json:"value" jsonschema:"description=The converted temperature"`
	Unit  string  `json:"unit" jsonschema:"description=Its unit"`
}

// CountIn are the arguments of count_words.
type CountIn struct {
	Text string `json:"text" jsonschema:"description=The text to count,minLength=1,maxLength=100000"`
}

// CountOut is the structured result of count_words.
type CountOut struct {
	Words      int `json:"words"`
	Characters int `json:"characters"`
}

const unitsURI = "units://temperature"

const unitsText = `# Temperature units

- celsius: water freezes at 0 and boils at 100
- fahrenheit: F = C × 9/5 + 32
- kelvin: K = C + 273.15
`

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "typed-server", Version: "1.0.0"}, &mcp.ServerOptions{
		Instructions: "Use convert_temperature for unit conversions; " + unitsURI + " explains the units.",
	})
	mcp.AddTool(s, &mcp.Tool{
		Name:        "convert_temperature",
		Description: "Convert a temperature between Celsius, Fahrenheit and Kelvin",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, convert)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "count_words",
		Description: "Count the words and characters of a text",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, countWords)
	if err := s.AddResource(&mcp.Resource{
		URI: unitsURI, Name: "temperature-units", MIMEType: "text/markdown",
		Description: "The units convert_temperature knows, and how they relate",
	}, readUnits); err != nil {
		log.Fatal(err)
	}
	if err := s.AddPrompt(&mcp.Prompt{
		Name:        "explain_conversion",
		Description: "Ask the model to convert a temperature and explain the formula",
		Arguments: []*mcp.PromptArgument{
			{Name: "value", Description: "The temperature", Required: true},
			{Name: "from", Description: "Its unit", Required: true},
			{Name: "to", Description: "The unit to convert to"},
		},
	}, explain); err != nil {
		log.Fatal(err)
	}

	// SIGINT and SIGTERM end the session; requests in flight finish first.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := s.ServeStdio(ctx, nil); err != nil {
		log.Fatal(err)
	}
}

func convert(ctx context.Context, req *mcp.CallToolRequest, in ConvertIn) (*mcp.CallToolResult, ConvertOut, error) {
	// The schema has already refused units other than these three, so
	// the default cases are unreachable from a client.
	var c float64
	switch in.From {
	case "celsius":
		c = in.Value
	case "fahrenheit":
		c = (in.Value - 32) * 5 / 9
	case "kelvin":
		c = in.Value - 273.15
	}
	if c < -273.15 {
		// A failure the model should see and can correct: an isError
		// result, not a protocol error.
		return mcp.ErrorResult("%g %s is below absolute zero", in.Value, in.From), ConvertOut{}, nil
	}
	var v float64
	switch in.To {
	case "celsius":
		v = c
	case "fahrenheit":
		v = c*9/5 + 32
	case "kelvin":
		v = c + 273.15
	}
	scale := math.Pow(10, float64(in.Digits))
	// A nil result: the engine sends out as structured content, and as
	// its JSON text for clients that read only text.
	return nil, ConvertOut{Value: math.Round(v*scale) / scale, Unit: in.To}, nil
}

func countWords(ctx context.Context, req *mcp.CallToolRequest, in CountIn) (*mcp.CallToolResult, CountOut, error) {
	return nil, CountOut{Words: len(strings.Fields(in.Text)), Characters: utf8.RuneCountInString(in.Text)}, nil
}

func readUnits(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: unitsURI, MIMEType: "text/markdown", Text: unitsText},
	}}, nil
}

func explain(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	to := args["to"]
	if to == "" {
		to = "celsius"
	}
	text := fmt.Sprintf("Convert %s %s to %s with the convert_temperature tool, then explain the formula in one sentence.",
		args["value"], args["from"], to)
	return &mcp.GetPromptResult{
		Description: "Convert and explain",
		Messages:    []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: text}}},
	}, nil
}
