package config

import (
	"slices"
	"strings"
	"testing"
)

// Issue 21: the instance settings are checked like every other key, each
// error pointing at its value with a hint.
func TestInstanceSettingsErrors(t *testing.T) {
	tenants := `, "tenants": {"t": {"principals": ["*"]}}`
	for _, tc := range []struct {
		name string
		src  string
		want []string
	}{
		{"a near miss of session", servers(`"a": {"command": "x", "instances": »"sesion"}`),
			[]string{`instances "sesion" is not shared, tenant or session (hint: did you mean "session"?)`}},
		{"another word", servers(`"a": {"command": "x", "instances": »"each"}`),
			[]string{`instances "each" is not shared, tenant or session (hint: use "shared"`}},
		{"negative caps", servers(`"a": {"command": "x", "instances": "session", "maxInstances": »-1, "maxInstancesPerPrincipal": »-2}`),
			[]string{"maxInstances is negative", "maxInstancesPerPrincipal is negative"}},
		{"tenant instances without tenants", servers(`"a": {"command": "x", "instances": »"tenant"}`),
			[]string{`instances is tenant, and no tenants are configured (hint: add a tenants section`}},
		{"tenant instances by default without tenants", `{"defaults": {"instances": »"tenant"}, "mcpServers": {"a": {"command": "x"}}}`,
			[]string{`instances is tenant, and no tenants are configured`}},
		{"the instance directory in a url", `{"mcpServers": {"a": {"url": »"https://h/${MCPGATE_INSTANCE_DIR}"}}` + tenants + `}`,
			[]string{"${MCPGATE_INSTANCE_DIR} in url (hint: write it in args, env or cwd"}},
		{"the instance id in a header", servers(`"a": {"url": "https://h/mcp", "headers": {"X-Id": »"${MCPGATE_INSTANCE_ID}"}}`),
			[]string{"${MCPGATE_INSTANCE_ID} in headers.X-Id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, at := markers(tc.src)
			c, err := Parse([]byte(src), "c.json", env())
			errs := ErrorList(err)
			if c != nil || len(errs) != len(tc.want) || len(at) != len(tc.want) {
				t.Fatalf("%d markers, %d wanted, got config %v and %d errors:\n%v", len(at), len(tc.want), c != nil, len(errs), err)
			}
			for i, d := range errs {
				if d.Pos != at[i] || !strings.Contains(d.Error(), tc.want[i]) || d.Hint == "" {
					t.Errorf("error %d:\ngot  %v\nwant c.json:%d:%d: ...%s... with a hint", i, d, at[i].Line, at[i].Col, tc.want[i])
				}
			}
		})
	}
}

// Issue 21: the per-instance variables are the gateway's to expand for
// each instance, even where the environment has a variable of that name;
// the rest of the string is interpolated as usual, and the defaults'
// instance settings reach the servers that set none.
func TestInstanceVariablesAreLeftForEachInstance(t *testing.T) {
	src := `{"defaults": {"instances": "session", "maxInstances": 3},
	  "mcpServers": {
	    "mem": {"command": "x", "args": ["--dir", "${MCPGATE_INSTANCE_DIR}/${B}"], "env": {"ID": "${MCPGATE_INSTANCE_ID}", "PLAIN": "${B}"}, "cwd": "${MCPGATE_INSTANCE_DIR}"},
	    "plain": {"command": "x", "instances": "shared"}}}`
	c, err := Parse([]byte(src), "c.json", env("MCPGATE_INSTANCE_DIR", "/from-the-environment", "B", "b"))
	if err != nil {
		t.Fatal(err)
	}
	mem, plain := c.Servers["mem"], c.Servers["plain"]
	if got := mem.Args; !slices.Equal(got, []string{"--dir", "${MCPGATE_INSTANCE_DIR}/b"}) {
		t.Errorf("args %q, want the instance directory left for the gateway", got)
	}
	if mem.Env["ID"] != "${MCPGATE_INSTANCE_ID}" || mem.Cwd != "${MCPGATE_INSTANCE_DIR}" || mem.Env["PLAIN"] != "b" {
		t.Errorf("env %q, cwd %q", mem.Env, mem.Cwd)
	}
	if mem.Instances != InstancesSession || mem.MaxInstances != 3 || plain.Instances != InstancesShared || plain.MaxInstances != 3 {
		t.Errorf("instances %q/%d and %q/%d, want the defaults' where unset", mem.Instances, mem.MaxInstances, plain.Instances, plain.MaxInstances)
	}
	if !mem.UsesInstance() || !mem.UsesInstanceDir() || plain.UsesInstance() {
		t.Errorf("UsesInstance %v, UsesInstanceDir %v, plain's UsesInstance %v", mem.UsesInstance(), mem.UsesInstanceDir(), plain.UsesInstance())
	}
	one := mem.ForInstance("/tmp/one", "id1")
	if !slices.Equal(one.Args, []string{"--dir", "/tmp/one/b"}) || one.Env["ID"] != "id1" || one.Cwd != "/tmp/one" || one.Env["PLAIN"] != "b" {
		t.Errorf("for an instance: args %q, env %q, cwd %q", one.Args, one.Env, one.Cwd)
	}
	if mem.Args[1] != "${MCPGATE_INSTANCE_DIR}/b" || mem.Env["ID"] != "${MCPGATE_INSTANCE_ID}" {
		t.Errorf("ForInstance changed the server's own settings: %q, %q", mem.Args, mem.Env)
	}
}

// Issue 21: check-config's look for commands does not warn that a cwd
// naming the instance's directory does not exist: the gateway makes it
// for each instance.
func TestLookCommandsLeavesTheInstanceDirectoryToTheGateway(t *testing.T) {
	src := `{"mcpServers": {"a": {"command": "sh", "cwd": "${MCPGATE_INSTANCE_DIR}", "instances": "session"},
	  "b": {"command": "sh", "cwd": "/nonexistent-dir"}}}`
	c, err := Parse([]byte(src), "c.json", env())
	if err != nil {
		t.Fatal(err)
	}
	warns := c.LookCommands()
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "/nonexistent-dir") {
		t.Errorf("warnings %v; want one, about b's cwd only", warns)
	}
}
