// Drives a TypeScript SDK client for a Go test, which makes the
// assertions: the SDK 1.x client (@modelcontextprotocol/sdk) by default, or
// with --v2 the SDK v2 client (@modelcontextprotocol/client). It reads one
// JSON command a line on stdin and answers each with one JSON line on
// stdout:
//
//   {id, op: "connect", transport: "stdio"|"http"|"sse", command, args,
//        env, url, protocolVersion, negotiation, elicit}
//        -> {negotiated, offered, era, serverInfo}
//        negotiation (v2 only): "legacy" (its default), "auto" (a
//        server/discover probe, then 2026-07-28 or initialize) or "pin"
//        (2026-07-28 or nothing)
//        elicit (1.x only): the client declares the elicitation
//        capability and answers every elicitation/create with this
//        result ({action, content})
//   {id, op: "listTools"}             -> {result}
//   {id, op: "callTool", name, arguments, progress} -> {result, progress,
//        late: progress the SDK reported as for an unknown token, see below,
//        elicitations: the params of the elicitation/create requests the
//        server sent during the call}
//   {id, op: "cancel", name, arguments}
//        calls the tool with an AbortSignal and aborts at the first
//        progress notification (so the server has started it), then waits
//        for the call to reject            -> {progress}
//   {id, op: "readResource", uri} / {id, op: "getPrompt", name, arguments}
//   {id, op: "ping"}                  -> {method}: ping, or server/discover
//        on a v2 connection at 2026-07-28, which has no ping
//   {id, op: "close"}                 -> {clientErrors}: what the SDK
//        reported through onerror, such as a response to a request it had
//        cancelled
//
// The 1.x SDK's experimental tasks API (client.experimental.tasks, the
// 2025-11-25 tasks):
//
//   {id, op: "taskStream", name, arguments, ttl, cancel, ready}
//        callToolStream with params.task: every message it yields, in
//        order -> {result: {events: [{type, taskId, status, statusMessage,
//        pollInterval, result, error}]}}. With cancel, once the task is
//        created the driver first calls the tool ready names (if any; a
//        tool that waits until the task's handler runs), then sends
//        tasks/cancel -> also result.readyResult and result.cancelResult,
//        and lets the stream run to its end.
//   {id, op: "taskGet", taskId} / {id, op: "taskResult", taskId} /
//   {id, op: "taskList"} / {id, op: "taskCancel", taskId} -> {result}
//
// Every answer has ok, and error when ok is false. One session at a time.
//
// The 1.x SDK always offers its newest revision; to speak an older one the
// initialize request is rewritten on its way out, which is all a client
// pinned to that revision does differently in the handshake. The v2 client
// is left as it is: its transport is not wrapped, so that its own stdio
// probe (on a sibling process) runs as in real use, and it says itself
// which revision it negotiated.
import { createInterface } from "node:readline";

const V2 = process.argv.includes("--v2");
const sdk = V2
  ? { ...(await import("@modelcontextprotocol/client")), ...(await import("@modelcontextprotocol/client/stdio")) }
  : {
      ...(await import("@modelcontextprotocol/sdk/client/index.js")),
      ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
      ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
      ...(await import("@modelcontextprotocol/sdk/client/sse.js")),
      ...(await import("@modelcontextprotocol/sdk/types.js")),
    };
const { Client, StdioClientTransport, StreamableHTTPClientTransport, SSEClientTransport } = sdk;

const REQUEST_TIMEOUT_MS = 10000;
// initialize may wait for a bridge (mcp-remote) to reach the server first.
const CONNECT_TIMEOUT_MS = 20000;

// Tap wraps a transport: it rewrites the offered revision and notes the
// one the server chose.
class Tap {
  constructor(inner, offer, rec) {
    this.inner = inner;
    this.offer = offer;
    this.rec = rec;
    inner.onmessage = (m, extra) => {
      if (m && m.id !== undefined && m.id === this.initId && m.result) {
        rec.negotiated = m.result.protocolVersion;
      }
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
      this.rec.offered = m.params.protocolVersion;
    }
    return this.inner.send(m, opts);
  }
}

function errText(e) {
  return e instanceof Error ? e.message : String(e);
}

let cur = null; // {client, inner, transport, clientErrors, stderr}

async function connect(cmd) {
  const rec = {};
  const s = { clientErrors: [], stderr: "", kind: cmd.transport };
  switch (cmd.transport) {
    case "stdio":
      s.inner = new StdioClientTransport({
        command: cmd.command,
        args: cmd.args ?? [],
        env: { ...process.env, ...(cmd.env ?? {}) },
        stderr: "pipe",
      });
      s.inner.stderr?.on("data", (d) => {
        s.stderr = (s.stderr + d.toString()).slice(-4000);
      });
      break;
    case "http":
      s.inner = new StreamableHTTPClientTransport(new URL(cmd.url));
      break;
    case "sse":
      s.inner = new SSEClientTransport(new URL(cmd.url));
      break;
    default:
      throw new Error(`unknown transport ${cmd.transport}`);
  }
  const options = { capabilities: {} };
  if (cmd.elicit) {
    if (V2) throw new Error("this driver answers elicitation with the 1.x client only");
    options.capabilities.elicitation = {};
  }
  if (V2) {
    const mode = { legacy: "legacy", auto: "auto", pin: { pin: "2026-07-28" } }[cmd.negotiation ?? "legacy"];
    if (!mode) throw new Error(`unknown negotiation ${cmd.negotiation}`);
    options.versionNegotiation = { mode };
  }
  s.client = new Client({ name: V2 ? "interop-ts-v2-client" : "interop-ts-client", version: "1.0.0" }, options);
  s.lateProgress = [];
  s.elicitations = [];
  if (cmd.elicit) {
    s.client.setRequestHandler(sdk.ElicitRequestSchema, async (req) => {
      s.elicitations.push(req.params);
      return cmd.elicit;
    });
  }
  s.client.onerror = (e) => {
    // The SDK hands notifications to their handlers in a microtask but
    // settles a response at once, so when the last progress notification
    // and the response arrive in one read, the notification finds its call
    // already finished and is reported here. It did arrive, before the
    // response; keep it apart from real errors.
    const m = /^Received a progress notification for an unknown token: (.*)$/s.exec(errText(e));
    if (m) {
      try {
        s.lateProgress.push(JSON.parse(m[1]).params);
        return;
      } catch {}
    }
    s.clientErrors.push(errText(e));
  };
  try {
    await s.client.connect(V2 ? s.inner : new Tap(s.inner, cmd.protocolVersion, rec), { timeout: CONNECT_TIMEOUT_MS });
  } catch (e) {
    await s.client.close().catch(() => {});
    const err = new Error(errText(e));
    err.stderr = s.stderr;
    throw err;
  }
  cur = s;
  if (V2) {
    s.era = s.client.getProtocolEra();
    rec.negotiated = s.client.getNegotiatedProtocolVersion();
  }
  return { negotiated: rec.negotiated, offered: rec.offered, era: s.era, serverInfo: s.client.getServerVersion() };
}

async function close() {
  const s = cur;
  cur = null;
  if (!s) return {};
  // A response the server should not have sent (to a cancelled request)
  // arrives as a client error; give a late one a moment.
  await new Promise((r) => setTimeout(r, 100));
  // A 2026-07-28 connection has no session to end.
  if (s.kind === "http" && s.inner.sessionId) {
    try {
      await s.inner.terminateSession();
    } catch (e) {
      s.clientErrors.push("terminateSession: " + errText(e));
    }
  }
  await s.client.close().catch(() => {});
  return { clientErrors: s.clientErrors, late: s.lateProgress, stderr: s.stderr };
}

async function handle(cmd) {
  if (cmd.op === "connect") return connect(cmd);
  if (cmd.op === "close") return close();
  if (!cur) throw new Error("not connected");
  const client = cur.client;
  const opts = { timeout: REQUEST_TIMEOUT_MS };
  switch (cmd.op) {
    case "ping":
      if (cur.era === "modern") return { method: "server/discover", result: await client.discover(opts) };
      return { method: "ping", result: await client.ping(opts) };
    case "listTools":
      return { result: await client.listTools(undefined, opts) };
    case "readResource":
      return { result: await client.readResource({ uri: cmd.uri }, opts) };
    case "getPrompt":
      return { result: await client.getPrompt({ name: cmd.name, arguments: cmd.arguments ?? {} }, opts) };
    case "callTool": {
      const progress = [];
      const o = { ...opts };
      if (cmd.progress) o.onprogress = (p) => progress.push(p);
      cur.lateProgress = [];
      cur.elicitations = [];
      const result = await callTool(client, { name: cmd.name, arguments: cmd.arguments ?? {} }, o);
      // Let notification handlers queued behind the response run.
      await new Promise((r) => setTimeout(r, 0));
      const late = cur.lateProgress.map(({ progressToken, ...p }) => p);
      cur.lateProgress = [];
      const elicitations = cur.elicitations;
      cur.elicitations = [];
      return { result, progress, late, elicitations };
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
        await callTool(client, { name: cmd.name, arguments: cmd.arguments ?? {} }, o);
      } catch (e) {
        if (!ac.signal.aborted) throw e;
        return { progress, rejection: errText(e) };
      }
      throw new Error("the call returned a result although it was cancelled");
    }
    case "taskStream":
      return taskStream(client, cmd, opts);
    case "taskGet":
      return { result: await tasksAPI(client).getTask(cmd.taskId, opts) };
    case "taskResult":
      return { result: await tasksAPI(client).getTaskResult(cmd.taskId, sdk.CallToolResultSchema, opts) };
    case "taskList":
      return { result: await tasksAPI(client).listTasks(undefined, opts) };
    case "taskCancel":
      return { result: await tasksAPI(client).cancelTask(cmd.taskId, opts) };
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

// callTool: the v2 client takes no result schema.
function callTool(client, params, opts) {
  return V2 ? client.callTool(params, opts) : client.callTool(params, undefined, opts);
}

function tasksAPI(client) {
  const api = client.experimental?.tasks;
  if (V2 || !api) throw new Error("this client has no experimental tasks API");
  return api;
}

// taskStream runs callToolStream to its end, recording what it yields.
async function taskStream(client, cmd, opts) {
  const api = tasksAPI(client);
  const events = [];
  const out = { events };
  const task = cmd.ttl ? { ttl: cmd.ttl } : {};
  const stream = api.callToolStream({ name: cmd.name, arguments: cmd.arguments ?? {} }, sdk.CallToolResultSchema, { ...opts, task });
  for await (const m of stream) {
    const ev = { type: m.type };
    if (m.task) Object.assign(ev, { taskId: m.task.taskId, status: m.task.status, statusMessage: m.task.statusMessage, pollInterval: m.task.pollInterval });
    if (m.type === "result") ev.result = m.result;
    if (m.type === "error") ev.error = errText(m.error);
    events.push(ev);
    if (cmd.cancel && m.type === "taskCreated") {
      // The generator waits here: nothing is polled until the next turn.
      if (cmd.ready) out.readyResult = await callTool(client, { name: cmd.ready.name, arguments: cmd.ready.arguments ?? {} }, opts);
      out.cancelResult = await api.cancelTask(m.task.taskId, opts);
    }
  }
  return { result: out };
}

const rl = createInterface({ input: process.stdin });
// Commands run one at a time, in order.
let chain = Promise.resolve();
rl.on("line", (line) => {
  chain = chain.then(async () => {
    let cmd;
    try {
      cmd = JSON.parse(line);
    } catch {
      return;
    }
    let out;
    try {
      out = { id: cmd.id, ok: true, ...(await handle(cmd)) };
    } catch (e) {
      out = { id: cmd.id, ok: false, error: errText(e) };
      const stderr = e?.stderr ?? cur?.stderr;
      if (stderr) out.stderr = stderr;
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  });
});
rl.on("close", () => {
  chain.then(() => close()).then(() => process.exit(0));
});
