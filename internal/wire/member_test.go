package wire

import "testing"

func TestMember(t *testing.T) {
	tests := []struct {
		obj, name, want string
	}{
		{`{"a":1,"b":{"c":[2]}}`, "b", `{"c":[2]}`},
		{`{"a":1,"a":2}`, "a", `1`},           // the first of repeated names counts
		{`{"\u0061":"x"}`, "a", `"x"`},        // an escaped name is its unquoted text
		{"{\"a\":\"\xff\"}", "a", "\"\xff\""}, // invalid UTF-8 is tolerated
		{`{"a":1}`, "b", ``},                  // absent
		{`[{"a":1}]`, "a", ``},                // not an object
		{`{"a":1,"b":}`, "b", ``},             // broken JSON before the value
		{`{"b":{"a":1}}`, "a", ``},            // only top-level members
		{`{"a":1} trailing`, "a", `1`},        // text after the member is not checked
	}
	for _, tt := range tests {
		got := Member([]byte(tt.obj), tt.name)
		if string(got) != tt.want || (tt.want == "") != (got == nil) {
			t.Errorf("Member(%s, %q) = %q, want %q", tt.obj, tt.name, got, tt.want)
		}
	}
}
