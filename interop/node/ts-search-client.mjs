// A standard MCP client, the TypeScript SDK 1.x's (@modelcontextprotocol/sdk),
// working through the gateway's tool search: with nothing but tools/list
// and tools/call it finds tools with the search_tools meta-tool, reads
// their schemas from its result and calls them with call_tool; then, with
// client.request and a passthrough result schema, the extension methods
// (tools/discover, tools/getSchema, tools/getFullSchema). The Go test
// (toolsearch_test.go) makes the assertions.
//
// Usage: node ts-search-client.mjs PLAN, PLAN being JSON:
//
//   {transport: "http"|"stdio", url, headers, command, args, env,
//    protocolVersion, steps: [{id, op, ...}]}
//
// protocolVersion, when set, is offered in initialize instead of the
// SDK's newest (the request is rewritten on its way out, as ts-client.mjs
// does).
//
// Steps run in order; each one's outcome is reported under its id, an
// error as {error: {code, message}} (the steps after it still run):
//
//   {op: "list"} -> {tools, pages}: every page of tools/list
//   {op: "waitTools", names, via: "describe_tool"|"list", timeoutMs}
//        -> {tries, ms}: until every name is known, by calling the
//        describe_tool meta-tool (search mode) or by listing (other
//        modes); the gateway connects its upstreams in the background
//   {op: "task", query, k, values} -> {hits, chosen, schema, arguments,
//        problems, result}: what a model does with the meta-tools:
//        search_tools {query, k}, take the first hit, check the values
//        the task has against the input schema that came with it (every
//        required property given, every value of its property's type),
//        and call it through call_tool {name, arguments}; source says
//        where the schema was read: the result's structuredContent, or
//        its text (a revision before 2025-06-18 has no structured content)
//   {op: "call", name, arguments, progress} -> {result, progress, late}:
//        a plain tools/call; with progress, the progress notifications
//        (late: those the SDK reported through onerror, see below)
//   {op: "cancel", name, arguments} -> {progress, rejection}: the call
//        aborted (AbortSignal: notifications/cancelled) at its first
//        progress notification
//   {op: "request", method, params} -> {result}: any method
//
// It prints one JSON line: {ok, negotiated, serverInfo, capabilities,
// steps, clientErrors, stderr (a stdio server's, last 4,000 bytes)}, or
// {ok: false, error} when it could not connect.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import * as z from "zod";

const REQUEST_TIMEOUT_MS = 30000; // a call may start a node upstream
const CONNECT_TIMEOUT_MS = 20000;

// Any JSON object: the extension's results are checked by the Go test.
const Passthrough = z.looseObject({});

function errText(e) {
  return e instanceof Error ? e.message : String(e);
}

function errOf(e) {
  return { code: typeof e?.code === "number" ? e.code : undefined, message: errText(e) };
}

// Tap notes the revision the server chose in its initialize result.
class Tap {
  constructor(inner, offer, rec) {
    this.inner = inner;
    this.offer = offer;
    inner.onmessage = (m, extra) => {
      if (m && m.id !== undefined && m.id === this.initId && m.result) rec.negotiated = m.result.protocolVersion;
      this.onmessage?.(m, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => this.onerror?.(e);
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  setProtocolVersion(v) {
    this.inner.setProtocolVersion?.(v);
  }
  start() {
    return this.inner.start();
  }
  close() {
    return this.inner.close();
  }
  send(m, opts) {
    if (m.method === "initialize") {
      this.initId = m.id;
      if (this.offer) m = { ...m, params: { ...m.params, protocolVersion: this.offer } };
    }
    return this.inner.send(m, opts);
  }
}

// typeOf names a JSON value's type as JSON Schema does.
function typeOf(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

// conforms checks a value against the parts of a schema a model reads:
// type, required properties, items. It returns the problems.
function conforms(schema, v, at) {
  const out = [];
  if (!schema || typeof schema !== "object") return out;
  const want = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const got = typeOf(v);
  if (want.length && !want.includes(got) && !(got === "integer" && want.includes("number"))) {
    out.push(`${at || "/"}: ${got}, the schema wants ${want.join(" or ")}`);
    return out;
  }
  if (got === "object") {
    for (const r of schema.required ?? []) if (!(r in v)) out.push(`${at}/${r}: required, no value`);
    for (const [k, x] of Object.entries(v)) {
      if (schema.properties && !(k in schema.properties)) {
        if (schema.additionalProperties === false || at === "") out.push(`${at}/${k}: not in the schema`);
        continue;
      }
      out.push(...conforms(schema.properties?.[k], x, `${at}/${k}`));
    }
  }
  if (got === "array" && schema.items) v.forEach((x, i) => out.push(...conforms(schema.items, x, `${at}/${i}`)));
  return out;
}

// found reads search_tools' result: its structured content, or the JSON
// text a client without structured content would read.
function found(result) {
  if (result.structuredContent?.tools) return { tools: result.structuredContent.tools, source: "structuredContent" };
  const text = result.content?.find((c) => c.type === "text")?.text ?? "";
  try {
    return { tools: JSON.parse(text).tools ?? [], source: "text" };
  } catch {
    return { tools: [], source: "text" };
  }
}

// late collects the progress notifications the SDK reports through
// onerror: it hands notifications to their handlers in a microtask but
// settles a response at once, so when the last progress notification and
// the response arrive in one read, the notification finds its call
// finished. It did arrive, before the response.
let late = [];

async function step(client, s, opts) {
  switch (s.op) {
    case "list": {
      const tools = [];
      let cursor;
      let pages = 0;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, opts);
        tools.push(...page.tools);
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 100);
      return { tools, pages };
    }
    case "waitTools": {
      const start = Date.now();
      const deadline = start + (s.timeoutMs ?? 60000);
      let tries = 0;
      let missing = s.names;
      for (;;) {
        tries++;
        const still = [];
        if (s.via === "list") {
          const names = new Set((await step(client, { op: "list" }, opts)).tools.map((t) => t.name));
          still.push(...missing.filter((n) => !names.has(n)));
        } else {
          for (const name of missing) {
            const r = await client.callTool({ name: "describe_tool", arguments: { name } }, undefined, opts);
            if (r.isError) still.push(name);
          }
        }
        missing = still;
        if (missing.length === 0) return { tries, ms: Date.now() - start };
        if (Date.now() > deadline) throw new Error(`still unknown after ${tries} tries: ${missing.join(", ")}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    case "task": {
      const search = await client.callTool({ name: "search_tools", arguments: { query: s.query, k: s.k ?? 5 } }, undefined, opts);
      const { tools: hits, source } = found(search);
      const out = { hits: hits.map((h) => h.name), source, searchError: search.isError ?? false };
      if (hits.length === 0) {
        out.problems = ["search_tools found nothing"];
        out.searchText = search.content?.find((c) => c.type === "text")?.text;
        return out;
      }
      const chosen = hits[0];
      out.chosen = chosen.name;
      out.schema = chosen.inputSchema;
      out.problems = conforms(chosen.inputSchema, s.values ?? {}, "");
      if (!chosen.inputSchema) out.problems.unshift("search_tools gave no input schema");
      if (out.problems.length > 0) return out;
      out.arguments = s.values ?? {};
      out.result = await client.callTool({ name: "call_tool", arguments: { name: chosen.name, arguments: out.arguments } }, undefined, opts);
      return out;
    }
    case "call": {
      const progress = [];
      const o = { ...opts };
      if (s.progress) o.onprogress = (p) => progress.push(p);
      late = [];
      const result = await client.callTool({ name: s.name, arguments: s.arguments ?? {} }, undefined, o);
      await new Promise((r) => setTimeout(r, 0)); // notification handlers queued behind the response
      return { result, progress, late: late.map(({ progressToken, ...p }) => p) };
    }
    case "cancel": {
      const progress = [];
      const ac = new AbortController();
      const o = {
        ...opts,
        signal: ac.signal,
        onprogress: (p) => {
          progress.push(p);
          ac.abort(new Error("interop: cancelled by the test"));
        },
      };
      try {
        await client.callTool({ name: s.name, arguments: s.arguments ?? {} }, undefined, o);
      } catch (e) {
        if (!ac.signal.aborted) throw e;
        return { progress, rejection: errText(e) };
      }
      throw new Error("the call returned a result although it was cancelled");
    }
    case "request":
      return { result: await client.request({ method: s.method, params: s.params ?? {} }, Passthrough, opts) };
    default:
      throw new Error(`unknown op ${s.op}`);
  }
}

async function main() {
  const plan = JSON.parse(process.argv[2]);
  const rec = {};
  let inner;
  let stderr = "";
  switch (plan.transport) {
    case "stdio":
      inner = new StdioClientTransport({ command: plan.command, args: plan.args ?? [], env: { ...process.env, ...(plan.env ?? {}) }, stderr: "pipe" });
      inner.stderr?.on("data", (d) => {
        stderr = (stderr + d.toString()).slice(-4000);
      });
      break;
    case "http":
      inner = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers ?? {} } });
      break;
    default:
      throw new Error(`unknown transport ${plan.transport}`);
  }
  const clientErrors = [];
  const client = new Client({ name: "interop-ts-search-client", version: "1.0.0" }, { capabilities: {} });
  client.onerror = (e) => {
    const m = /^Received a progress notification for an unknown token: (.*)$/s.exec(errText(e));
    if (m) {
      try {
        late.push(JSON.parse(m[1]).params);
        return;
      } catch {}
    }
    clientErrors.push(errText(e));
  };
  try {
    await client.connect(new Tap(inner, plan.protocolVersion, rec), { timeout: CONNECT_TIMEOUT_MS });
  } catch (e) {
    await client.close().catch(() => {});
    return { ok: false, error: errText(e), stderr };
  }
  const steps = {};
  const opts = { timeout: REQUEST_TIMEOUT_MS };
  for (const s of plan.steps) {
    const start = Date.now();
    try {
      steps[s.id] = await step(client, s, opts);
    } catch (e) {
      steps[s.id] = { error: errOf(e) };
    }
    steps[s.id].elapsedMs = Date.now() - start;
  }
  // A response the server should not have sent (to a cancelled request)
  // arrives as a client error; give a late one a moment.
  await new Promise((r) => setTimeout(r, 100));
  const out = {
    ok: true,
    negotiated: rec.negotiated,
    serverInfo: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    steps,
    clientErrors,
  };
  if (plan.transport === "http" && inner.sessionId) {
    await inner.terminateSession().catch((e) => clientErrors.push("terminateSession: " + errText(e)));
  }
  await client.close().catch(() => {});
  out.stderr = stderr;
  return out;
}

main().then(
  (out) => {
    process.stdout.write(JSON.stringify(out) + "\n");
    process.exit(0);
  },
  (e) => {
    process.stdout.write(JSON.stringify({ ok: false, error: errText(e) }) + "\n");
    process.exit(1);
  },
);
