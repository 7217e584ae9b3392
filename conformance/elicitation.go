package conformance

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate/mcp"
)

func elicit(ctx context.Context, req *mcp.CallToolRequest, message, schema string) (*mcp.CallToolResult, any, error) {
	res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: message, RequestedSchema: json.RawMessage(schema)})
	if err != nil {
		return result(&mcp.TextContent{Text: "Elicitation not supported or error: " + err.Error()})
	}
	content, _ := json.Marshal(res.Content)
	return result(&mcp.TextContent{Text: fmt.Sprintf("User response: action=%s, content=%s", res.Action, content)})
}

func addElicitationTools(s *mcp.Server) {
	type elicitIn struct {
		Message string `json:"message" jsonschema:"description=The message to show the user"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "test_elicitation", Description: "Asks the user for a username and an email address"},
		func(ctx context.Context, req *mcp.CallToolRequest, in elicitIn) (*mcp.CallToolResult, any, error) {
			return elicit(ctx, req, in.Message, `{"type":"object","properties":{"username":{"type":"string","description":"Your username"},"email":{"type":"string","description":"Your email address","format":"email"}},"required":["username","email"]}`)
		})
	tool(s, "test_elicitation_sep1034_defaults", "Asks the user for fields that all have defaults (SEP-1034)", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		return elicit(ctx, req, "Please review and update the form fields with defaults", `{"type":"object","properties":{`+
			`"name":{"type":"string","description":"User name","default":"John Doe"},`+
			`"age":{"type":"integer","description":"User age","default":30},`+
			`"score":{"type":"number","description":"User score","default":95.5},`+
			`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},`+
			`"verified":{"type":"boolean","description":"Verification status","default":true}}}`)
	})
	tool(s, "test_elicitation_sep1330_enums", "Asks the user to choose from every kind of enum (SEP-1330)", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		return elicit(ctx, req, "Please select options from the enum fields", `{"type":"object","properties":{`+
			`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},`+
			`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},`+
			`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},`+
			`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},`+
			`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},`+
			`"required":[]}`)
	})
}
