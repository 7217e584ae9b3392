package config

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// marker stands in a case's source just before each place an error must
// point at, one marker per error, in file order.
const marker = "»"

func markers(src string) (clean string, at []Pos) {
	line, col := 1, 1
	var b strings.Builder
	for len(src) > 0 {
		if strings.HasPrefix(src, marker) {
			at = append(at, Pos{line, col})
			src = src[len(marker):]
			continue
		}
		r, n := utf8.DecodeRuneInString(src)
		b.WriteRune(r)
		src = src[n:]
		if col++; r == '\n' {
			line, col = line+1, 1
		}
	}
	return b.String(), at
}

// servers wraps server entries in a JSON file.
func servers(entries string) string { return `{"mcpServers": {` + entries + `}}` }

var errorCases = []struct {
	name string
	file string // "c.json" when empty
	src  string
	env  []string
	want []string // a part of each error's text, hint included
}{
	{"near miss in a server", "", servers(`"a": {"command": "x", »"comand": "y"}`), nil,
		[]string{`unknown key "comand" (hint: did you mean "command"?)`}},
	{"arguments for args", "", servers(`"a": {"command": "x", »"arguments": ["y"]}`), nil,
		[]string{`unknown key "arguments" (hint: did you mean "args"?)`}},
	{"cmd for command", "", servers(`"a": {»"cmd": "x"}`), nil,
		[]string{`unknown key "cmd" (hint: did you mean "command"?)`}},
	{"environment in a tenant's credentials", "", `{"mcpServers": {"a": {"command": "x"}}, "tenants": {"t": {"credentials": {"a": {»"Environment": {}}}}}}`, nil,
		[]string{`unknown key "Environment" (hint: did you mean "env"?)`}},
	{"YAML working_dir", "c.yaml", "mcpServers:\n  a:\n    command: x\n    »working_dir: /srv\n", nil,
		[]string{`unknown key "working_dir" (hint: did you mean "cwd"?)`}},
	{"unknown key in a server", "", servers(`"a": {"command": "x", »"colour": 1}`), nil,
		[]string{`unknown key "colour" (hint: the keys here are command, args, env`}},
	{"name with upper case and _", "", servers(`»"Brave_Search": {"command": "x"}`), nil,
		[]string{`server name "Brave_Search" is not 1 to 32 of a-z, 0-9 and '-' starting with a letter (hint: rename it to "brave-search")`}},
	{"name too long", "", servers(`»"` + strings.Repeat("a", 33) + `": {"command": "x"}`), nil,
		[]string{`(hint: rename it to "` + strings.Repeat("a", 32) + `")`}},
	{"name starting with a digit", "", servers(`»"1password": {"command": "x"}`), nil,
		[]string{`rename it to "mcp-1password"`}},
	{"command and url", "", servers(`"a": {"command": "x", "url": »"https://h/mcp"}`), nil,
		[]string{`both command and url are set (hint: a server is a command (stdio) or a url (HTTP): keep one)`}},
	{"neither command nor url", "", servers(`»"a": {"timeout": "5s"}`), nil,
		[]string{`server "a" has neither command nor url (hint: add "command"`}},
	{"openapi and url", "", servers(`"a": {"url": "https://h/mcp", "openapi": »{"spec": "s.yaml"}}`), nil,
		[]string{`openapi with command or url (hint: a server is a command (stdio), a url (MCP over HTTP) or an openapi description (a REST API): keep one)`}},
	{"openapi without spec", "", servers(`"a": {»"openapi": {"baseUrl": "https://api.example.com"}}`), nil,
		[]string{`openapi has no spec (hint: add "spec"`}},
	{"openapi with a malformed glob", "", servers(`"a": {"openapi": {"spec": "s.yaml", "include": »["pets[" ]}}`), nil,
		[]string{`include pattern "pets[" is malformed`}},
	{"openapi with a relative baseUrl", "", servers(`"a": {"openapi": {"spec": "s.yaml", "baseUrl": »"/v1"}}`), nil,
		[]string{`url must start with http:// or https://`}},
	{"openapi with env", "", servers(`"a": {»"openapi": {"spec": "s.yaml"}, "env": {"K": "v"}}`), nil,
		[]string{`args, env or cwd with openapi`}},
	{"openapi with the authorization_code grant and no clientId", "", servers(`"a": {"openapi": {"spec": "s.yaml"}, "oauth": »{"grant": "authorization_code"}}`), nil,
		[]string{`oauth has no clientId (hint: a REST API's authorization server registers no client for the gateway`}},
	{"authorizationUrl with client_credentials", "", servers(`"a": {"openapi": {"spec": "s.yaml"}, "oauth": {"grant": "client_credentials", "clientId": "c", "clientSecret": "s", "authorizationUrl": »"https://h/authorize"}}`), nil,
		[]string{`oauth.authorizationUrl with the "client_credentials" grant`}},
	{"authorizationUrl on an MCP server", "", servers(`"a": {"url": "https://h/mcp", "oauth": {"grant": "authorization_code", "authorizationUrl": »"https://h/authorize"}}`), nil,
		[]string{`oauth.authorizationUrl is for openapi servers`}},
	{"openapi with a relative tokenUrl", "", servers(`"a": {"openapi": {"spec": "s.yaml"}, "oauth": {"grant": "client_credentials", "clientId": "c", "clientSecret": "s", "tokenUrl": »"/token"}}`), nil,
		[]string{`url must start with http:// or https://`}},
	{"tokenUrl on an MCP server", "", servers(`"a": {"url": "https://h/mcp", "oauth": {"grant": "client_credentials", "clientId": "c", "clientSecret": "s", "tokenUrl": »"https://h/token"}}`), nil,
		[]string{`oauth.tokenUrl is for openapi servers (hint: remove it: an MCP server's authorization server is found by discovery)`}},
	{"an empty security scheme value", "", servers(`"a": {"openapi": {"spec": "s.yaml", "securitySchemes": {"key": »""}}}`), nil,
		[]string{`securitySchemes "key" is empty`}},
	{"a security scheme value on two lines", "", servers(`"a": {"openapi": {"spec": "s.yaml", "securitySchemes": {"key": »"a\nb"}}}`), nil,
		[]string{`securitySchemes "key": the value holds a line break or NUL`}},
	{"a tenant's security schemes for an MCP server", "", `{"mcpServers": {"a": {"url": "https://h/mcp"}}, "tenants": {"t": {"credentials": {"a": {»"securitySchemes": {"k": "v"}}}}}}`, nil,
		[]string{`tenant t: securitySchemes for "a", which is not an openapi server`}},
	{"a tenant's env for an openapi server", "", `{"mcpServers": {"a": {"openapi": {"spec": "s.yaml"}}}, "tenants": {"t": {"credentials": {»"a": {"env": {"K": "v"}}}}}}`, nil,
		[]string{`tenant t: env for the server "a", which is not a command`}},
	{"server not an object", "", servers(`"a": »"npx foo"`), nil,
		[]string{`a must be an object, not a string`}},
	{"type http with command", "", servers(`"a": {"command": "x", "type": »"http"}`), nil,
		[]string{`type "http" needs url, and this server has command`}},
	{"type stdio with url", "", servers(`"a": {"url": "https://h/mcp", "type": »"stdio"}`), nil,
		[]string{`type "stdio" needs command`}},
	{"unknown type", "", servers(`"a": {"url": "https://h/mcp", "type": »"htp"}`), nil,
		[]string{`type "htp" is not a transport (hint: did you mean "http"?)`}},
	{"relative url", "", servers(`"a": {"url": »"/mcp"}`), nil,
		[]string{`url must start with http:// or https://`}},
	{"ftp url", "", servers(`"a": {"url": »"ftp://h/mcp"}`), nil,
		[]string{`url must start with http:// or https://`}},
	{"url without host", "", servers(`"a": {"url": »"https:///mcp"}`), nil,
		[]string{`url has no host`}},
	{"start", "", servers(`"a": {"command": "x", "start": »"soon"}`), nil,
		[]string{`start "soon" is not lazy or eager (hint: use "lazy"`}},
	{"protocolVersion", "", servers(`"a": {"command": "x", "protocolVersion": »"2025-01-01"}`), nil,
		[]string{`protocolVersion "2025-01-01" is not a revision mcpgate speaks (hint: use 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, or "auto"`}},
	{"separator of other characters", "", `{"separator": »"::"}`, nil,
		[]string{`separator "::" is not allowed (hint: use one or two of "_", "-" and "."`}},
	{"separator too long", "", `{"separator": »"_-."}`, nil,
		[]string{`separator "_-." is not allowed`}},
	{"bad glob", "", servers(`"a": {"command": "x", "tools": {"allow": ["ok_*", »"[a-"], "deny": [»""]}}`), nil,
		[]string{`allow[1] "[a-" is not a valid pattern (hint: globs use`, `deny[0] "" is not a valid pattern`}},
	{"rename to an invalid name", "", servers(`"a": {"command": "x", "tools": {"rename": {"t": »"b c"}}}`), nil,
		[]string{`rename "t": "b c" is not a valid tool name (hint: tool names are 1 to 128 of A-Z, a-z, 0-9, '_', '-' and '.')`}},
	{"rename too long with the prefix", "", servers(`"ab": {"command": "x", "tools": {"rename": {"t": »"` + strings.Repeat("x", 126) + `"}}}`), nil,
		[]string{`rename "t": with the prefix "ab_" the tool's name is 129 characters, over 128 (hint: shorten it to 125 characters or fewer)`}},
	{"rename prefix uses the separator", "", `{"separator": "--", ` + servers(`"ab": {"command": "x", "tools": {"rename": {"t": »"` + strings.Repeat("x", 125) + `"}}}`)[1:], nil,
		[]string{`with the prefix "ab--" the tool's name is 129 characters`}},
	{"two tools renamed alike", "", servers(`"a": {"command": "x", "tools": {"rename": {"t": "z", "u": »"z"}}}`), nil,
		[]string{`rename "u": "z" is also the new name of "t"`}},
	{"meta not an object", "", servers(`"a": {"command": "x", "tools": {"meta": {"t": »5}}}`), nil,
		[]string{`meta "t" must be an object`}},
	{"oauth grant misspelt", "", servers(`"a": {"url": "https://h/mcp", "oauth": {"grant": »"client_credential", "clientId": "i", "clientSecret": "s"}}`), nil,
		[]string{`oauth grant "client_credential" is not supported (hint: did you mean "client_credentials"?)`}},
	{"oauth without grant", "", servers(`"a": {"url": "https://h/mcp", "oauth": »{"clientId": "i"}}`), nil,
		[]string{`oauth has no grant (hint: use "client_credentials"`}},
	{"client_credentials without a client", "", servers(`"a": {"url": "https://h/mcp", "oauth": »»{"grant": "client_credentials", "scopes": [»"a b"]}}`), nil,
		[]string{`oauth has no clientId`, `oauth has no clientSecret`, `scope "a b" is not valid`}},
	{"negative numbers", "", servers(`"a": {"command": "x", "maxConcurrency": »-1, "timeout": »"-5s", "idleTimeout": »-1}`), nil,
		[]string{`maxConcurrency is negative`, `timeout is negative`, `idleTimeout is negative`}},
	{"listen without port", "", `{"listen": »"localhost"}`, nil,
		[]string{`listen "localhost" is not a host and port (hint: write host:port, such as "127.0.0.1:8765"`}},
	{"listen port alone", "", `{"listen": »"9000"}`, nil,
		[]string{`listen "9000" is not a host and port (hint: write host:port, such as "127.0.0.1:9000" (this machine only); another interface needs authentication (serve's --auth-keys, --auth-users or --oauth-issuer))`}},
	{"listen port from the environment", "", `{"listen": »"${PORT}"}`, []string{"PORT", "9000"},
		[]string{`listen "[redacted]" is not a host and port (hint: write host:port, such as "127.0.0.1:8765" (this machine only); another`}},
	{"listen port out of range", "", `{"listen": »"127.0.0.1:99999"}`, nil,
		[]string{`listen "127.0.0.1:99999" is not a host and port`}},
	{"unset variable", "", servers(`"a": {"command": »"${NOPE}"}`), nil,
		[]string{`environment variable NOPE is not set (hint: set it, or give a default: ${NOPE:-value})`}},
	{"VS Code input", "", servers(`"a": {"command": "x", "args": [»"${input:key}"]}`), nil,
		[]string{`${input:key} is a VS Code prompt, which mcpgate cannot show (hint: set an environment variable and write ${NAME} instead)`}},
	{"not a variable name", "", servers(`"a": {"command": "x", "args": [»"${1x}", »"${A"]}`), nil,
		[]string{`${1x} does not name a variable (hint: write ${NAME}`, `unterminated ${ (hint: close it with }, or write $$ for a literal $)`}},
	{"stdio keys with url", "", servers(`"a": {"url": "https://h/mcp", "args": »["x"], "env": »{"A": "1"}, "cwd": »"/"}`), nil,
		[]string{`args with url (hint: it applies to command (stdio) servers only`, `env with url`, `cwd with url`}},
	{"HTTP keys with command", "", servers(`"a": {"command": "x", "headers": »{"A": "b"}, "bearerToken": »"t", "oauth": »{"grant": "authorization_code"}}`), nil,
		[]string{`headers with command (hint: it applies to url (HTTP) servers only`, `bearerToken with command`, `oauth with command`}},
	{"wrong types", "", servers(`"a": {"command": »["x"], "args": »"--x", "env": »["A=1"], "timeout": »"5 minutes", "disabled": »"yes", "maxConcurrency": »1.5}`), nil,
		[]string{`command must be a string, not a list (hint: write a single value here`, `args must be a list of strings, not a string (hint: write a list: ["a", "b"])`,
			`env must be an object, not a list`, `timeout is not a duration (hint: write a duration such as "30s" or "5m", or a number of seconds)`,
			`disabled must be true or false`, `maxConcurrency must be a whole number`}},
	{"env name", "", servers(`"a": {"command": "x", "env": {»"A=B": "1"}}`), nil,
		[]string{`env name "A=B" is not a variable name`}},
	{"duplicate key", "", servers(`"a": {"command": "x", »"command": "y"}`), nil,
		[]string{`duplicate key "command" (hint: it is also at line 1; keep one)`}},
	{"mcpServers and servers", "", `{"mcpServers": {"a": {"command": "x"}}, »"servers": {"b": {"command": "y"}}}`, nil,
		[]string{`both "mcpServers" and "servers" are set (hint: they mean the same: keep one)`}},
	{"top-level near miss", "", `{»"mcpServer": {"a": {"command": "x"}}}`, nil,
		[]string{`unknown key "mcpServer" (hint: did you mean "mcpServers"?)`}},
	{"defaults", "", `{"defaults": {»"idleTimout": "5m", "start": »"later"}}`, nil,
		[]string{`unknown key "idleTimout" (hint: did you mean "idleTimeout"?)`, `start "later" is not lazy or eager`}},
	{"builtins", "", `{"builtins": {»"task": true}}`, nil,
		[]string{`unknown key "task" (hint: did you mean "tasks"?)`}},
	{"server named tasks", "", `{"builtins": {"tasks": true}, "mcpServers": {»"tasks": {"command": "x"}}}`, nil,
		[]string{`server name "tasks" is taken by the built-in task tools`}},
	{"header value from the environment", "", servers(`"a": {"url": "https://h/mcp", "headers": {"X-Key": »"${H}"}}`), []string{"H", "top\nsecret"},
		[]string{`header "X-Key": the value holds a line break or NUL (hint: a header value is one line)`}},
	{"two credentials", "", servers(`"a": {"url": "https://h/mcp", "headers": {"authorization": "x"}, "bearerToken": »»"y z"}`), nil,
		[]string{`bearerToken holds white space`, `more than one of headers.Authorization, bearerToken and oauth`}},
	{"secrets stay out of messages", "", servers(`"a": {"url": »"ftp://user:pw-s3cret@h/?token=tok-s3cret", "start": »"${S}", "protocolVersion": »"v-${S}"}`), []string{"S", "hunter2"},
		[]string{`url must start with http:// or https://`, `start "[redacted]" is not lazy or eager`, `protocolVersion "v-[redacted]" is not`}},
	{"several servers at once", "", servers(`"a": {"command": "x", "start": »"no"}, »"B": {"command": "y"}, "c": {"url": »"ftp://x"}`), nil,
		[]string{`start "no"`, `server name "B"`, `url must start with`}},
	{"JSON syntax", "", `{"mcpServers": »x}`, nil,
		[]string{`invalid JSON: invalid character 'x' at start of value (hint: check for a missing comma`}},
	{"JSON cut short", "", `{"mcpServers": {"a": {"command": "x"}»`, nil,
		[]string{`invalid JSON: the file ends in the middle of a value`}},
	{"not an object", "", `»[1]`, nil,
		[]string{`the file must hold an object, not a list`}},

	{"YAML near miss", "c.yaml", "mcpServers:\n  a:\n    command: x\n    »comand: y\n", nil,
		[]string{`unknown key "comand" (hint: did you mean "command"?)`}},
	{"YAML url", "c.yaml", "mcpServers:\n  a:\n    url: »ftp://h\n", nil,
		[]string{`url must start with http:// or https://`}},
	{"YAML args not a list", "c.yaml", "mcpServers:\n  a:\n    command: x\n    args: »--foo\n", nil,
		[]string{`args must be a list of strings, not a string`}},
	{"names that publish the same name", "", `{"separator": "-", "mcpServers": {"a": {"command": "x"}, »"a-b": {"command": "y"}, "ab": {"command": "z"}}}`, nil,
		[]string{`server names "a" and "a-b" can publish the same name with separator "-": "a"'s tool "b-x" and "a-b"'s tool "x" are both "a-b-x" (hint: rename "a" or "a-b"`}},
	{"names with a two-character separator", "", `{"separator": "--", "mcpServers": {"a": {"command": "x"}, »"a-": {"command": "y"}}}`, nil,
		[]string{`server names "a" and "a-" can publish the same name with separator "--": "a"'s tool "-x" and "a-"'s tool "x" are both "a---x"`}},
	{"pins policy unknown", "", servers(`"a": {"command": "x", "pins": »"maybe"}`), nil,
		[]string{`pins "maybe" is not warn, block or approve (hint: use "warn"`}},
	{"client features of an unknown server", "", `{"mcpServers": {"a": {"command": "x"}}, "tenants": {"t": {"clientFeatures": {»"b": {"sampling": true}}}}}`, nil,
		[]string{`tenant t sets clientFeatures for "b", which is not configured`}},
	{"client feature not a boolean", "", servers(`"a": {"command": "x", "clientFeatures": {"sampling": »"yes"}}`), nil,
		[]string{`sampling must be`}},
	{"YAML duplicate", "c.yaml", "mcpServers:\n  a: {command: x}\n  »a: {command: y}\n", nil,
		[]string{`duplicate key "a" (hint: it is also at line 2; keep one)`}},
	{"YAML unset variable", "c.yaml", "mcpServers:\n  a:\n    command: »${NOPE}\n", nil,
		[]string{`environment variable NOPE is not set`}},
	{"YAML second document", "c.yaml", "mcpServers: {}\n»---\na: 1\n", nil,
		[]string{`a second YAML document (hint: a config is one document`}},
	{"YAML rename and name", "c.yaml", "mcpServers:\n  »My_Server:\n    command: x\n    tools:\n      rename:\n        t: »bad name\n", nil,
		[]string{`rename it to "my-server"`, `rename "t": "bad name" is not a valid tool name`}},
}

func TestErrors(t *testing.T) {
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			src, at := markers(tc.src)
			file := tc.file
			if file == "" {
				file = "c.json"
			}
			c, err := Parse([]byte(src), file, env(tc.env...))
			errs := ErrorList(err)
			if c != nil || len(errs) != len(tc.want) || len(at) != len(tc.want) {
				t.Fatalf("%d markers, %d wanted, got config %v and %d errors:\n%v", len(at), len(tc.want), c != nil, len(errs), err)
			}
			for i, d := range errs {
				if d.File != file || d.Pos != at[i] || !strings.Contains(d.Error(), tc.want[i]) || d.Hint == "" {
					t.Errorf("error %d:\ngot  %v\nwant %s:%d:%d: ...%s... with a hint", i, d, file, at[i].Line, at[i].Col, tc.want[i])
				}
				for j := 1; j < len(tc.env); j += 2 {
					for _, part := range strings.Split(tc.env[j], "\n") {
						if strings.Contains(d.Error(), part) {
							t.Errorf("error %d shows the value of %s: %v", i, tc.env[j-1], d)
						}
					}
				}
				for _, s := range []string{"s3cret", "user:"} {
					if strings.Contains(d.Error(), s) {
						t.Errorf("error %d shows a secret: %v", i, d)
					}
				}
			}
		})
	}
}

// TestYAMLSyntaxError: the YAML parser gives a line but no column.
func TestYAMLSyntaxError(t *testing.T) {
	_, err := Parse([]byte("mcpServers:\n  a:\n    command: x\n\t- y\n"), "c.yaml", env())
	if err == nil || !strings.HasPrefix(err.Error(), "c.yaml:3: invalid YAML: found a tab character") || !strings.Contains(err.Error(), "hint: YAML indents with spaces") {
		t.Errorf("%v", err)
	}
}
