package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ArgumentError is the error for arguments that do not match a tool's
// input schema, or that cannot be sent. Problems name each bad argument.
type ArgumentError struct {
	Problems []string
}

func (e *ArgumentError) Error() string {
	return "invalid arguments: " + strings.Join(e.Problems, "; ")
}

func argErrorf(format string, args ...any) *ArgumentError {
	return &ArgumentError{Problems: []string{fmt.Sprintf(format, args...)}}
}

// maxProblems bounds the problems listed for one call.
const maxProblems = 10

var printer = message.NewPrinter(language.English)

// validate checks args against the operation's input schema.
func (op *operation) validate(args map[string]any) error {
	compiled, err := op.compile()
	if err != nil {
		return fmt.Errorf("openapi: the tool's input schema does not compile: %w", err)
	}
	err = compiled.Validate(args)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ArgumentError{Problems: []string{err.Error()}}
	}
	var problems []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		where := strings.Join(e.InstanceLocation, "/")
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				problems = append(problems, join(where, m)+": required")
			}
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				problems = append(problems, join(where, p)+": not an argument of this tool")
			}
		default:
			msg := e.ErrorKind.LocalizedString(printer)
			if where == "" {
				problems = append(problems, msg)
			} else {
				problems = append(problems, where+": "+msg)
			}
		}
	}
	walk(ve)
	slices.Sort(problems)
	problems = slices.Compact(problems)
	if len(problems) > maxProblems {
		problems = append(problems[:maxProblems], fmt.Sprintf("and %d more", len(problems)-maxProblems))
	}
	return &ArgumentError{Problems: problems}
}

func join(where, name string) string {
	if where == "" {
		return name
	}
	return where + "/" + name
}

// lenientRegexp compiles a pattern with Go's regexp; a pattern it cannot
// compile (ECMA-262 lookaround, backreferences) accepts every string, so
// that one such pattern does not make a whole tool unusable. The API
// still checks it.
func lenientRegexp(s string) (jsonschema.Regexp, error) {
	re, err := regexp.Compile(s)
	if err != nil {
		return anyString(s), nil
	}
	return re, nil
}

type anyString string

func (a anyString) MatchString(string) bool { return true }
func (a anyString) String() string          { return string(a) }

// compileSchema compiles a tool's input schema for validate. Nothing is
// loaded: the schema is self-contained, its $refs all into its $defs.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(lenientRegexp)
	if err := c.AddResource("tool.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("tool.json")
}
