package mcp

import (
	"encoding/json"
)

// Meta is the _meta member that requests, results and most definitions
// may carry. Keys the engine does not know are passed through untouched.
type Meta map[string]any

// Icon is an image a client may show for a server, tool, resource or prompt.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"` // "light" or "dark"
}

// Implementation names a client or server program.
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
}

// forRevision drops the fields a client of revision r does not know.
func (impl *Implementation) forRevision(r revision) *Implementation {
	c := *impl
	if !r.titles() {
		c.Title = ""
	}
	if !r.implementationExtra() {
		c.Description, c.Icons, c.WebsiteURL = "", nil, ""
	}
	return &c
}

// ClientCapabilities are what a client declares it supports.
type ClientCapabilities struct {
	Roots        *RootsCapability           `json:"roots,omitzero"`
	Sampling     *SamplingCapability        `json:"sampling,omitzero"`
	Elicitation  *ElicitationCapability     `json:"elicitation,omitzero"`
	Tasks        json.RawMessage            `json:"tasks,omitzero"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// RootsCapability is present when the client can list its roots.
type RootsCapability struct {
	ListChanged bool `json:"listChanged,omitzero"`
}

// SamplingCapability is present when the client can sample a model.
type SamplingCapability struct {
	Context *struct{} `json:"context,omitzero"`
	Tools   *struct{} `json:"tools,omitzero"`
}

// ElicitationCapability is present when the client can ask its user for
// input. An empty object means form mode only.
type ElicitationCapability struct {
	Form *struct{} `json:"form,omitzero"`
	URL  *struct{} `json:"url,omitzero"`
}

func (e *ElicitationCapability) form() bool { return e != nil && (e.Form != nil || e.URL == nil) }
func (e *ElicitationCapability) url() bool  { return e != nil && e.URL != nil }

// ServerCapabilities are what a server declares it supports.
type ServerCapabilities struct {
	Tools        *ToolCapabilities          `json:"tools,omitzero"`
	Resources    *ResourceCapabilities      `json:"resources,omitzero"`
	Prompts      *PromptCapabilities        `json:"prompts,omitzero"`
	Logging      *struct{}                  `json:"logging,omitzero"`
	Completions  *struct{}                  `json:"completions,omitzero"`
	Tasks        *TasksCapability           `json:"tasks,omitzero"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// TasksCapability declares the 2025-11-25 tasks a server runs.
type TasksCapability struct {
	List     *struct{}               `json:"list,omitzero"`
	Cancel   *struct{}               `json:"cancel,omitzero"`
	Requests *TaskRequestsCapability `json:"requests,omitzero"`
}

// TaskRequestsCapability lists the requests that may run as tasks.
type TaskRequestsCapability struct {
	Tools *TaskToolsCapability `json:"tools,omitzero"`
}

// TaskToolsCapability is present when tools/call may run as a task.
type TaskToolsCapability struct {
	Call *struct{} `json:"call,omitzero"`
}

// ToolCapabilities describes the server's tools feature.
type ToolCapabilities struct {
	ListChanged bool `json:"listChanged,omitzero"`
}

// ResourceCapabilities describes the server's resources feature.
type ResourceCapabilities struct {
	Subscribe   bool `json:"subscribe,omitzero"`
	ListChanged bool `json:"listChanged,omitzero"`
}

// PromptCapabilities describes the server's prompts feature.
type PromptCapabilities struct {
	ListChanged bool `json:"listChanged,omitzero"`
}

// InitializeParams are the params of the initialize request.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      *Implementation    `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// Role is the speaker of a message, or the audience of content.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Annotations tell a client how content is meant to be used.
type Annotations struct {
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitzero"`
	LastModified string   `json:"lastModified,omitempty"`
}

// ProgressToken is the token of a request whose progress is reported: the
// exact JSON text (a string or an integer) the client sent.
type ProgressToken = json.RawMessage

// ProgressNotificationParams are the params of notifications/progress.
type ProgressNotificationParams struct {
	ProgressToken ProgressToken `json:"progressToken"`
	Progress      float64       `json:"progress"`
	Total         float64       `json:"total,omitzero"`
	Message       string        `json:"message,omitempty"`
}

// CancelledNotificationParams are the params of notifications/cancelled.
type CancelledNotificationParams struct {
	RequestID json.RawMessage `json:"requestId,omitzero"`
	Reason    string          `json:"reason,omitempty"`
}

// PaginatedParams carry the cursor of a list request.
type PaginatedParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// emptyResult is the {} result of ping, setLevel and subscribe.
type emptyResult struct{}
