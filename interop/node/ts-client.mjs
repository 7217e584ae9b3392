// Drives the TypeScript SDK's client (@modelcontextprotocol/sdk) for a Go
// test, which makes the assertions. It reads one JSON command a line on
// stdin and answers each with one JSON line on stdout:
//
//   {id, op: "connect", transport: "stdio"|"http"|"sse", command, args,
//        env, url, protocolVersion}   -> {negotiated, offered, serverInfo}
//   {id, op: "listTools"}             -> {result}
//   {id, op: "callTool", name, arguments, progress} -> {result, progress,
//        late: progress the SDK reported as for an unknown token, see below}
//   {id, op: "cancel", name, arguments}
//        calls the tool with an AbortSignal and aborts at the first
//        progress notification (so the server has started it), then waits
//        for the call to reject            -> {progress}
//   {id, op: "readResource", uri} / {id, op: "getPrompt", name, arguments}
//   {id, op: "ping"}
//   {id, op: "close"}                 -> {clientErrors}: what the SDK
//        reported through onerror, such as a response to a request it had
//        cancelled
// Every answer has ok, and error when ok is false. One session at a time.
//
// The SDK always offers its newest revision; to speak an older one the
// initialize request is rewritten on its way out, which is all a client
// pinned to that revision does differently in the handshake.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

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
  s.client = new Client({ name: "interop-ts-client", version: "1.0.0" }, { capabilities: {} });
  s.lateProgress = [];
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
    await s.client.connect(new Tap(s.inner, cmd.protocolVersion, rec), { timeout: CONNECT_TIMEOUT_MS });
  } catch (e) {
    await s.client.close().catch(() => {});
    const err = new Error(errText(e));
    err.stderr = s.stderr;
    throw err;
  }
  cur = s;
  return { negotiated: rec.negotiated, offered: rec.offered, serverInfo: s.client.getServerVersion() };
}

async function close() {
  const s = cur;
  cur = null;
  if (!s) return {};
  // A response the server should not have sent (to a cancelled request)
  // arrives as a client error; give a late one a moment.
  await new Promise((r) => setTimeout(r, 100));
  if (s.kind === "http") {
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
      return { result: await client.ping(opts) };
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
      const result = await client.callTool({ name: cmd.name, arguments: cmd.arguments ?? {} }, undefined, o);
      // Let notification handlers queued behind the response run.
      await new Promise((r) => setTimeout(r, 0));
      const late = cur.lateProgress.map(({ progressToken, ...p }) => p);
      cur.lateProgress = [];
      return { result, progress, late };
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
        await client.callTool({ name: cmd.name, arguments: cmd.arguments ?? {} }, undefined, o);
      } catch (e) {
        if (!ac.signal.aborted) throw e;
        return { progress, rejection: errText(e) };
      }
      throw new Error("the call returned a result although it was cancelled");
    }
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
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
