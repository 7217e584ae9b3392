package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate/mcp"
)

// maxNameLen is the longest tool name MCP allows.
const maxNameLen = 128

// sanitize maps s into the characters of a tool name: each run of other
// characters becomes one '_', and '_' is trimmed from both ends.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' {
			if pending && b.Len() > 0 {
				b.WriteByte('_')
			}
			pending = false
			b.WriteByte(c)
			continue
		}
		pending = true
	}
	return strings.Trim(b.String(), "_")
}

// fit shortens a name over maxNameLen-reserve bytes, ending it with a
// hash of the whole so that names differing only past the cut stay apart.
func fit(name string, reserve int) string {
	limit := maxNameLen - reserve
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	tail := "_" + hex.EncodeToString(sum[:4])
	return name[:limit-len(tail)] + tail
}

// methodPathName is the name of an operation without an operationId:
// the method and the path's segments, {braces} dropped, joined by '_'
// (GET /repos/{owner}/{repo} is get_repos_owner_repo).
func methodPathName(method, path string) string {
	name := sanitize(strings.ToLower(method) + "/" + path)
	for strings.Contains(name, "__") {
		name = strings.ReplaceAll(name, "__", "_")
	}
	return name
}

// nameClass orders the claims on names: an operationId that is a valid
// tool name as written wins over one that had to be sanitised to the same
// name, and both over a name made from the method and path.
type nameClass int

const (
	classExact nameClass = iota
	classSanitised
	classMethodPath
)

// baseName returns the name an operation asks for, and its class.
func baseName(operationID, method, path string) (string, nameClass) {
	if operationID != "" {
		if mcp.ValidateToolName(operationID) == nil {
			return operationID, classExact
		}
		if s := sanitize(operationID); s != "" {
			return fit(s, 0), classSanitised
		}
	}
	name := methodPathName(method, path)
	if name == "" {
		name = "operation"
	}
	return fit(name, 0), classMethodPath
}

// assignNames gives each operation a distinct tool name. Claims are
// settled class by class (see nameClass) and, within a class, in the
// operations' order (by path, then method: GET, PUT, POST, DELETE,
// OPTIONS, HEAD, PATCH, TRACE); a name already taken gets the first free
// suffix of _2, _3, and so on.
func assignNames(ops []*opInfo) {
	taken := map[string]bool{}
	for class := classExact; class <= classMethodPath; class++ {
		for _, op := range ops {
			if op.class != class {
				continue
			}
			name := op.base
			for i := 2; taken[name]; i++ {
				suffix := fmt.Sprintf("_%d", i)
				name = fit(op.base, len(suffix)) + suffix
			}
			taken[name] = true
			op.name = name
		}
	}
}
