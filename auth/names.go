package auth

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// maxNameLen bounds user and key names: they end up in logs, metrics
// labels and configuration files.
const maxNameLen = 256

// checkName says why name cannot name a user or an API key, or returns
// nil. Names are refused the characters other parts of the system use as
// separators ('#' before a tenant, ':' after a method, '/' in paths),
// white space and anything unprintable: a user named "alice#globex" must
// not look like alice acting for globex anywhere a name is written.
func checkName(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the %s name is empty", kind)
	case len(name) > maxNameLen:
		return fmt.Errorf("the %s name is longer than %d bytes", kind, maxNameLen)
	}
	if bad := nameFault(name); bad != "" {
		return fmt.Errorf("%s name %q contains %s; names may not contain '#', ':', '/', white space or unprintable characters", kind, name, bad)
	}
	return nil
}

// nameFault names the first character checkName refuses in name, or
// returns "".
func nameFault(name string) string {
	if !utf8.ValidString(name) {
		return "bytes that are not UTF-8"
	}
	for _, r := range name {
		switch {
		case r == '#' || r == ':' || r == '/':
			return fmt.Sprintf("%q", r)
		case unicode.IsSpace(r):
			return fmt.Sprintf("white space (%U)", r)
		case !unicode.IsPrint(r):
			return fmt.Sprintf("the unprintable character %U", r)
		}
	}
	return ""
}
