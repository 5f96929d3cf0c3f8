// The official Node SDK client's own ceiling against the instant echo server (stdio), to decide
// which client drives the throughput figures. Usage: node bench/sdk_ceiling.mjs ECHO_BINARY [N]
// Uses the pinned SDK from tools/node_modules (scripts/install.sh). Prints one JSON object.
import path from "node:path";
import { createRequire } from "node:module";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const require = createRequire(path.join(root, "tools/package.json"));
const { Client } = await import(require.resolve("@modelcontextprotocol/sdk/client/index.js"));
const { StdioClientTransport } = await import(require.resolve("@modelcontextprotocol/sdk/client/stdio.js"));

const echo = process.argv[2];
const n = Number(process.argv[3] || 5000);
const client = new Client({ name: "sdk-ceiling", version: "1.0" });
await client.connect(new StdioClientTransport({ command: echo, args: [], stderr: "ignore" }));
const out = {};
for (const c of [1, 8, 64]) {
  const lat = [];
  let next = 0;
  const deadline = Date.now() + 5000;
  const t0 = process.hrtime.bigint();
  const worker = async () => {
    while (next < n && Date.now() < deadline) {
      next++;
      const s = process.hrtime.bigint();
      await client.callTool({ name: "echo", arguments: {} });
      lat.push(Number(process.hrtime.bigint() - s) / 1000);
    }
  };
  await Promise.all(Array.from({ length: c }, worker));
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  lat.sort((a, b) => a - b);
  out[`c${c}`] = { p50_us: lat[Math.floor(lat.length / 2)], throughput_rps: lat.length / wall, n: lat.length };
}
await client.close();
console.log(JSON.stringify(out));
