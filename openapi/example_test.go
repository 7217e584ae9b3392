package openapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/mcpgate/mcpgate/openapi"
)

const issues = `
openapi: 3.0.3
info: {title: Repositories, version: "1"}
paths:
  /repos/{owner}/{repo}/issues:
    get:
      operationId: issues/list
      summary: List a repository's issues
      parameters:
        - {name: owner, in: path, required: true, schema: {type: string}}
        - {name: repo, in: path, required: true, schema: {type: string}}
        - {name: labels, in: query, explode: false, schema: {type: array, items: {type: string}}}
      responses:
        "200":
          description: The issues.
          content: {application/json: {schema: {type: array, items: {type: object}}}}
`

// A call from the arguments to the tool result, against a server of the
// example's own.
func Example() {
	doc, err := openapi.Load(context.Background(), "issues.yaml", openapi.LoadOptions{Data: []byte(issues)})
	if err != nil {
		fmt.Println(err)
		return
	}
	tools, skipped := openapi.Tools(doc, openapi.MapOptions{})
	tool := tools[0]
	fmt.Println(tool.Tool.Name, "-", tool.Tool.Title, "-", len(skipped), "skipped")

	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `[{"title": %q}]`, r.URL.RequestURI())
	}))
	defer api.Close()
	base, _ := url.Parse(api.URL + "/v3")
	req, err := tool.BuildRequest(context.Background(), base, map[string]any{
		"owner": "mcpgate", "repo": "mcpgate", "labels": []any{"bug", "good first issue"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	req.Header.Set("Authorization", "Bearer the gateway's credential")
	client := &http.Client{CheckRedirect: openapi.CheckRedirect}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	result, err := openapi.ResultFromResponse(resp, 1<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(result.IsError, result.StructuredContent)

	_, err = tool.BuildRequest(context.Background(), base, map[string]any{"owner": "mcpgate", "labels": "bug"})
	fmt.Println(err)
	// Output:
	// issues_list - List a repository's issues - 0 skipped
	// false map[result:[map[title:/v3/repos/mcpgate/mcpgate/issues?labels=bug,good%20first%20issue]]]
	// invalid arguments: labels: got string, want array; repo: required
}

func ExampleTool_BuildRequest() {
	doc, err := openapi.Load(context.Background(), "", openapi.LoadOptions{Data: []byte(`
openapi: 3.0.3
info: {title: Repositories, version: "1"}
paths:
  /repos/{owner}/{repo}/issues:
    get:
      summary: List a repository's issues
      parameters:
        - {name: owner, in: path, required: true, schema: {type: string}}
        - {name: repo, in: path, required: true, schema: {type: string}}
        - {name: labels, in: query, explode: false, schema: {type: array, items: {type: string}}}
      responses:
        "200":
          description: The issues.
          content: {application/json: {schema: {type: array, items: {type: object}}}}
`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	tools, _ := openapi.Tools(doc, openapi.MapOptions{})
	tool := tools[0]
	fmt.Println(tool.Tool.Name, tool.Tool.Annotations.ReadOnlyHint)
	base, _ := url.Parse("https://api.example.invalid/v3")
	req, err := tool.BuildRequest(context.Background(), base, map[string]any{
		"owner": "mcpgate", "repo": "../admin", "labels": []any{"bug", "good first issue"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(req.Method, req.URL)
	// Output:
	// get_repos_owner_repo_issues true
	// GET https://api.example.invalid/v3/repos/mcpgate/..%2Fadmin/issues?labels=bug,good%20first%20issue
}
