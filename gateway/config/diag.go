package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Pos is a place in the file, 1-based. Col is 0 when only the line is
// known (the YAML parser's syntax errors), Line too when neither is.
type Pos struct {
	Line, Col int
}

// Diagnostic is one error or warning about the file, with what to do
// about it. Its text never holds a secret: values from the environment,
// env, headers and credentials are named, not quoted.
type Diagnostic struct {
	File string
	Pos
	Msg  string
	Hint string
}

// Error is the compiler-style line: FILE:LINE:COL: message (hint: ...).
func (d *Diagnostic) Error() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.File)
		b.WriteString(":")
	}
	if d.Line > 0 {
		fmt.Fprintf(&b, "%d:", d.Line)
		if d.Col > 0 {
			fmt.Fprintf(&b, "%d:", d.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	b.WriteString(d.Msg)
	if d.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(d.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Errors is every error found in a file, in file order, so that one run
// of check-config shows them all.
type Errors []*Diagnostic

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, d := range e {
		lines[i] = d.Error()
	}
	return strings.Join(lines, "\n")
}

func (e Errors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, d := range e {
		errs[i] = d
	}
	return errs
}

// sortDiags orders by place; the stable sort keeps the order of several
// findings at one place.
func sortDiags(ds []*Diagnostic) {
	slices.SortStableFunc(ds, func(a, b *Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}
