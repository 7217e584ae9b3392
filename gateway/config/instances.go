package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// How many processes of a server serve its callers
// ([ServerOptions.Instances]). A stateful server (a browser, a shell, a
// REPL, a memory) shared by several clients lets one client's state become
// another's; tenant and session give each its own.
const (
	InstancesShared  = "shared"  // one for every caller
	InstancesTenant  = "tenant"  // one for each tenant
	InstancesSession = "session" // one for each client session, started on its first use
)

// Defaults of the session instances' settings.
const (
	DefaultMaxInstances             = 16
	DefaultMaxInstancesPerPrincipal = 4
	// A session instance unused this long is stopped when the server
	// sets no idleTimeout: a client that walked away without ending its
	// session would otherwise hold a process until the session expires.
	DefaultInstanceIdleTimeout = Duration(10 * time.Minute)
)

// The per-instance variables. Interpolation leaves them as they are
// written, and the gateway expands them in a command server's args, env
// and cwd when it starts an instance: InstanceDirVar is a private
// directory (0700) made for the instance and removed when it stops,
// InstanceIDVar a name unique to the instance.
const (
	InstanceDirVar = "MCPGATE_INSTANCE_DIR"
	InstanceIDVar  = "MCPGATE_INSTANCE_ID"
)

// instanceVar reports whether name is one of the per-instance variables.
func instanceVar(name string) bool { return name == InstanceDirVar || name == InstanceIDVar }

// UsesInstance reports whether the server's args, env or cwd name a
// per-instance variable, so that each instance needs them expanded.
func (s *Server) UsesInstance() bool {
	return slices.ContainsFunc(s.instanceValues(), func(v string) bool { return instanceVarIn(v) != "" })
}

// UsesInstanceDir reports whether the server's args, env or cwd name
// ${MCPGATE_INSTANCE_DIR}: only then is a directory made for an instance.
func (s *Server) UsesInstanceDir() bool {
	return slices.ContainsFunc(s.instanceValues(), func(v string) bool { return strings.Contains(v, "${"+InstanceDirVar+"}") })
}

// instanceValues are the values where the per-instance variables apply.
func (s *Server) instanceValues() []string {
	return append(append(slices.Clone(s.Args), s.Cwd), slices.Collect(maps.Values(s.Env))...)
}

// ForInstance returns a copy of s with the per-instance variables in its
// args, env and cwd replaced by dir and id.
func (s *Server) ForInstance(dir, id string) *Server {
	r := strings.NewReplacer("${"+InstanceDirVar+"}", dir, "${"+InstanceIDVar+"}", id)
	c := *s
	c.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		c.Args[i] = r.Replace(a)
	}
	if s.Args == nil {
		c.Args = nil
	}
	c.Env = maps.Clone(s.Env)
	for k, v := range c.Env {
		c.Env[k] = r.Replace(v)
	}
	c.Cwd = r.Replace(s.Cwd)
	return &c
}

// instanceVarIn is the per-instance variable a value names, or "".
func instanceVarIn(v string) string {
	for _, name := range []string{InstanceDirVar, InstanceIDVar} {
		if strings.Contains(v, "${"+name+"}") {
			return name
		}
	}
	return ""
}

// instanceOptions checks a server's (or the defaults') instance settings.
func (v *checker) instanceOptions(o *ServerOptions, at func(string) Pos) {
	switch o.Instances {
	case "", InstancesShared, InstancesTenant, InstancesSession:
	default:
		hint := `use "shared" (one process for all), "tenant" (one for each tenant) or "session" (one for each client session)`
		if m, ok := suggest(o.Instances, []string{InstancesShared, InstancesTenant, InstancesSession}); ok {
			hint = fmt.Sprintf("did you mean %q?", m)
		}
		v.errorf(at("instances"), hint, "instances %s is not shared, tenant or session", v.src.shown(o.Instances))
	}
	if o.MaxInstances < 0 {
		v.errorf(at("maxInstances"), fmt.Sprintf("use a positive number, or leave it out for the default of %d", DefaultMaxInstances), "maxInstances is negative")
	}
	if o.MaxInstancesPerPrincipal < 0 {
		v.errorf(at("maxInstancesPerPrincipal"), fmt.Sprintf("use a positive number, or leave it out for the default of %d", DefaultMaxInstancesPerPrincipal), "maxInstancesPerPrincipal is negative")
	}
}

// instances checks what the instance settings need of the rest of the
// file: tenant instances need tenants, and the per-instance variables
// mean something only where a command's instance starts.
func (v *checker) instances(c *Config) {
	if len(c.Tenants) == 0 && c.Defaults.Instances == InstancesTenant {
		v.errorf(v.src.at("defaults", "instances"), `add a tenants section, or use "session" for one process per client session`, "instances is tenant, and no tenants are configured")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		s := c.Servers[name]
		if s == nil {
			continue
		}
		p := []string{"mcpServers", name}
		if len(c.Tenants) == 0 && s.Instances == InstancesTenant {
			v.errorf(v.src.at(append(p, "instances")...), `add a tenants section, or use "session" for one process per client session`, "instances is tenant, and no tenants are configured")
		}
		type field struct {
			path []string
			val  string
		}
		fields := []field{{[]string{"command"}, s.Command}, {[]string{"url"}, s.URL}, {[]string{"bearerToken"}, s.BearerToken}}
		for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
			fields = append(fields, field{[]string{"headers", k}, s.Headers[k]})
		}
		for _, f := range fields {
			if name := instanceVarIn(f.val); name != "" {
				v.errorf(v.src.at(append(p, f.path...)...), "write it in args, env or cwd of a command server, where each instance's process gets its own", "${%s} in %s", name, strings.Join(f.path, "."))
			}
		}
	}
}
