package mcphttp

import (
	"encoding/json"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// The member readers of the routing headers agree with encoding/json,
// which they replaced on the common path.
func TestMemberReadersMatchEncodingJSON(t *testing.T) {
	slowMember := func(params []byte, name string) (string, bool) {
		var p map[string]jsontext.Value
		if json.Unmarshal(params, &p) != nil {
			return "", false
		}
		var s string
		if v, ok := p[name]; !ok || json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	}
	for _, params := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"name":"echo"}`, `{"name":null}`, `{"name":7}`, `{"name":{"a":1}}`,
		`{"name":"e\u0063ho"}`, `{"n\u0061me":"echo"}`, `{"Name":"echo"}`, `{"NAME":"x","name":"y"}`,
		`{"name":"a","name":"b"}`, `{"name":"\ud800"}`, `{"name":"\u00e9t\u00e9"}`, `{"name":"été"}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"_meta":null}`, `{"_meta":"x"}`, `{"_meta":[]}`, `{"_meta":{}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"_Meta":{"io.modelcontextprotocol/protocolVersion":"x"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolversion":"y"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVerſion":"k","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-\u00307-28"}}`,
		`{"_m\u0065ta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"a":[1,{"b":2}],"_meta":{"x":{"y":[]},"io.modelcontextprotocol/protocolVersion":"v"},"z":true}`,
	} {
		for _, name := range []string{"name", "uri", "_meta"} {
			gs, gok := stringMember([]byte(params), name)
			ws, wok := slowMember([]byte(params), name)
			if gs != ws || gok != wok {
				t.Errorf("stringMember(%s, %q) = %q, %v; encoding/json: %q, %v", params, name, gs, gok, ws, wok)
			}
		}
		if got, want := claimedVersion([]byte(params)), claimedVersionSlow([]byte(params)); got != want {
			t.Errorf("claimedVersion(%s) = %q; encoding/json: %q", params, got, want)
		}
	}
}
