module github.com/mcpgate/mcpgate

go 1.26

require github.com/go-json-experiment/json v0.0.0-20260820222146-c27c302e5fc3
