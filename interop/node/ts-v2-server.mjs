// An MCP server built on the TypeScript SDK v2 (@modelcontextprotocol/server),
// for our client to talk to. Its surface is the one every peer server in
// interop/peers offers:
//
//   tools      echo {text}, fail {} (always a tool error), count {steps}
//              (progress), slow {key} (runs until cancelled),
//              cancel_state {key, waitMs}, session
//   resource   interop://greeting
//   prompt     greet {name}
//
//   node ts-v2-server.mjs --stdio              serveStdio: both eras on stdin/stdout
//   node ts-v2-server.mjs --addr 127.0.0.1:0   createMcpHandler on node:http at /mcp:
//                                              2026-07-28 requests, and 2025-era ones
//                                              through its stateless legacy fallback;
//                                              the URL goes to stderr
//
// One factory builds the server for both eras, as the SDK intends; the HTTP
// entry calls it once per request, so the state the tools share (how each
// slow call ended) lives in this module.
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import * as z from "zod";

const slowCalls = new Map(); // key -> {state, cause}
const changed = new Set(); // resolvers waiting for a change

function setState(key, state, cause = "") {
  slowCalls.set(key, { state, cause });
  for (const f of changed) f();
  changed.clear();
}

function json(v) {
  return { content: [{ type: "text", text: JSON.stringify(v) }] };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function newServer({ era }) {
  const s = new McpServer({ name: "interop-ts-v2", version: "1.0.0" });
  s.registerTool("echo", { description: "Echo the text", inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  s.registerTool("fail", { description: "Always fails, as a tool error" }, async () => ({
    content: [{ type: "text", text: "this tool always fails" }],
    isError: true,
  }));
  s.registerTool(
    "count",
    { description: "Report progress steps times, then answer", inputSchema: z.object({ steps: z.number().int() }) },
    async ({ steps }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
          });
        }
        await sleep(20);
      }
      return json({ counted: steps });
    },
  );
  s.registerTool(
    "slow",
    { description: "Report progress once, then run until cancelled (at most 10 s)", inputSchema: z.object({ key: z.string() }) },
    async ({ key }, ctx) => {
      setState(key, "running");
      const token = ctx.mcpReq._meta?.progressToken;
      if (token !== undefined) {
        await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: 1, message: "started" } });
      }
      const signal = ctx.mcpReq.signal;
      const outcome = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve("finished"), 10000);
        const onAbort = () => {
          clearTimeout(timer);
          resolve("cancelled");
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      });
      if (outcome === "cancelled") {
        setState(key, "cancelled", String(signal.reason?.message ?? signal.reason ?? "aborted"));
        throw new Error("cancelled");
      }
      setState(key, "finished");
      return json({ state: "finished" });
    },
  );
  s.registerTool(
    "cancel_state",
    {
      description: "How a slow call ended; waits up to waitMs for it to be cancelled",
      inputSchema: z.object({ key: z.string(), waitMs: z.number().int().optional() }),
    },
    async ({ key, waitMs }) => {
      const deadline = Date.now() + (waitMs > 0 ? waitMs : 3000);
      for (;;) {
        const st = slowCalls.get(key) ?? { state: "unknown", cause: "" };
        const left = deadline - Date.now();
        if (st.state === "cancelled" || left <= 0) return json(st);
        await new Promise((r) => {
          changed.add(r);
          setTimeout(r, left);
        });
      }
    },
  );
  // A tool without an input schema gets the context as its only argument.
  s.registerTool("session", { description: "The revision the client offered and its name" }, async (ctx) => {
    // A 2026-07-28 request names its revision and client in its _meta
    // envelope; a 2025-era stdio connection has its initialize; a 2025-era
    // HTTP request, served statelessly by a fresh instance, has only its
    // MCP-Protocol-Version header, and no client name.
    const env = ctx.mcpReq.envelope ?? {};
    const out = { era };
    out.offered =
      env["io.modelcontextprotocol/protocolVersion"] ??
      ctx.http?.req?.headers.get("mcp-protocol-version") ??
      s.server.getNegotiatedProtocolVersion() ??
      "";
    out.clientName = env["io.modelcontextprotocol/clientInfo"]?.name ?? s.server.getClientVersion()?.name ?? "";
    return json(out);
  });
  s.registerResource("greeting", "interop://greeting", { mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "hello from ts-v2" }],
  }));
  s.registerPrompt("greet", { description: "Greets someone", argsSchema: z.object({ name: z.string() }) }, ({ name }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Say hello to ${name}` } }],
  }));
  return s;
}

function onerror(e) {
  process.stderr.write(`ts-v2-server: ${e?.stack ?? e}\n`);
}

// serveHTTP mounts the handler's web-standard fetch face on node:http: the
// request becomes a Request (aborted when the client goes away, which is
// how a 2026-07-28 call is cancelled over HTTP), the Response is streamed
// back as it comes.
function serveHTTP(addr) {
  const handler = createMcpHandler(newServer, { onerror });
  const [host, port] = [addr.slice(0, addr.lastIndexOf(":")), Number(addr.slice(addr.lastIndexOf(":") + 1))];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, `http://${req.headers.host}`);
    if (url.pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    const ac = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) ac.abort(new Error("the client went away"));
    });
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
      else if (v !== undefined) headers.set(k, v);
    }
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : Readable.toWeb(req);
    try {
      const resp = await handler.fetch(new Request(url, { method: req.method, headers, body, duplex: "half", signal: ac.signal }));
      res.writeHead(resp.status, Object.fromEntries(resp.headers));
      if (!resp.body) {
        res.end();
        return;
      }
      const nodeBody = Readable.fromWeb(resp.body);
      nodeBody.on("error", () => res.destroy());
      res.on("close", () => nodeBody.destroy());
      nodeBody.pipe(res);
    } catch (e) {
      onerror(e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(port, host, () => {
    const a = server.address();
    process.stderr.write(`listening on http://${a.address}:${a.port}/mcp\n`);
  });
  const stop = () => {
    handler.close().finally(() => server.close(() => process.exit(0)));
    setTimeout(() => process.exit(0), 1000).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

const args = process.argv.slice(2);
if (args[0] === "--stdio") {
  serveStdio(newServer, { onerror });
} else if (args[0] === "--addr" && args[1]) {
  serveHTTP(args[1]);
} else {
  process.stderr.write("usage: ts-v2-server.mjs --stdio | --addr HOST:PORT\n");
  process.exit(2);
}
