// Preloaded into the TypeScript reference server (node -r) by the
// benchmark driver: server-everything listens on PORT of every interface,
// and this binds its listener to 127.0.0.1 instead, so that the benchmark
// never opens a port beyond loopback.
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    const port = Number(args[0]);
    const rest = args.slice(1).filter((a) => typeof a === "function");
    return listen.call(this, { port, host: "127.0.0.1" }, ...rest);
  }
  if (args[0] && typeof args[0] === "object" && !args[0].host && args[0].port !== undefined) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
