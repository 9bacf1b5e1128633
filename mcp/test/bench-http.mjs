// Benchmarks of MCP over HTTP (`/mcp` of `agentx serve`) against stdio (`agentx mcp`) and the
// CLI, through the official TypeScript SDK client (reported, never asserted):
//  - tools/call clarify_show and clarify_ask round trips, p50/p99, HTTP vs stdio
//    (targets: show p50 <= 2 ms over HTTP; ask p50 over HTTP <= 1.5x stdio's);
//  - 32 agents (32 tokens) x 50 asks each on their own issues, all at once: over HTTP against
//    one server, vs 32 stdio servers, vs 32 CLI processes at a time: throughput and p99.
//   node bench-http.mjs [--calls 300] [--agents 32] [--asks 50]
// AGENTX_BIN picks the binary (default: the release build, target/release/agentx).
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
process.env.AGENTX_BIN ??= resolve(here, "../../target/release/agentx");
const { AGENTX, connect, workspace } = await import("./harness.mjs");
const { connectHttp, serve, token } = await import("./http-harness.mjs");

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const CALLS = arg("calls", 300);
const AGENTS = arg("agents", 32);
const ASKS = arg("asks", 50);

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return { n: ms.length, p50: quantile(s, 0.5), p99: quantile(s, 0.99), mean: ms.reduce((a, b) => a + b, 0) / ms.length };
};
const fmt = (x) => x.toFixed(2);
const name = (i) => `a${String(i + 1).padStart(2, "0")}`;

/** A workflow in which every bench agent may ask the architect. */
function benchWorkflow(root) {
  const steps = ["engineer", ...Array.from({ length: AGENTS }, (_, i) => name(i))]
    .map((agent) => `[[steps]]\nid = "step-${agent}"\nagent = "${agent}"\ncan_clarify = ["architect"]\nclarify_max_rounds = 3\n`)
    .join("\n");
  mkdirSync(join(root, ".agentx", "workflows"), { recursive: true });
  writeFileSync(join(root, ".agentx", "workflows", "bench.toml"), steps);
}

const ask = (issue, i) => ({
  name: "clarify_ask",
  arguments: {
    issue,
    to: "architect",
    topic: `Question ${i}`,
    question: `Redis or an in-process LRU for the session cache (${i})?`,
    workflow: "bench",
  },
});

async function timeCalls(side, count, call) {
  const ms = [];
  for (let i = 0; i < count; i++) {
    const { name, arguments: args } = call(i);
    const t0 = performance.now();
    const r = await side.client.callTool({ name, arguments: args });
    ms.push(performance.now() - t0);
    if (r.isError) throw new Error(`${name} ${i} failed: ${r.content[0].text}`);
  }
  return ms;
}

/** Every side asks ASKS questions on its own issue at once: wall time and every ask's latency. */
async function swarm(sides, firstIssue) {
  const t0 = performance.now();
  const all = await Promise.all(sides.map((side, k) => timeCalls(side, ASKS, (i) => ask(firstIssue + k, i))));
  return { wall: performance.now() - t0, lat: summary(all.flat()) };
}

async function cliSwarm(root, firstIssue) {
  const run = promisify(execFile);
  const t0 = performance.now();
  const lat = [];
  await Promise.all(
    Array.from({ length: AGENTS }, async (_, k) => {
      for (let i = 0; i < ASKS; i++) {
        const a = ask(firstIssue + k, i).arguments;
        const s = performance.now();
        await run(AGENTX, ["--root", root, "--json", "clarify", "ask", "--issue", String(a.issue), "--from", name(k),
          "--to", "architect", "--topic", a.topic, "--question", a.question, "--workflow", "bench"]);
        lat.push(performance.now() - s);
      }
    }),
  );
  return { wall: performance.now() - t0, lat: summary(lat) };
}

const ws = workspace();
let server;
const open = [];
try {
  benchWorkflow(ws.root);
  const secrets = Object.fromEntries(["engineer", ...Array.from({ length: AGENTS }, (_, i) => name(i))]
    .map((agent) => [agent, token(ws.root, "agent", agent)]));
  server = await serve(ws.root);

  // One agent, calls in a row: stdio on issues 1-10, HTTP on issues 11-20 (same ledger sizes).
  const stdio = await connect(ws.root, "engineer");
  const http = await connectHttp(server.url, secrets.engineer);
  open.push(stdio, http);
  const rows = [];
  for (const [label, side, base] of [["stdio", stdio, 1], ["HTTP", http, 11]]) {
    await timeCalls(side, 20, (i) => ask(base + (i % 10), 100_000 + i)); // warm-up
    const asks = summary(await timeCalls(side, CALLS, (i) => ask(base + (i % 10), i)));
    const shows = summary(
      await timeCalls(side, CALLS, (i) => ({ name: "clarify_show", arguments: { id: `CLR-${base + (i % 10)}-001` } })),
    );
    rows.push([`clarify_ask over ${label} (${CALLS} calls)`, asks], [`clarify_show over ${label} (${CALLS} calls)`, shows]);
  }

  // 32 agents at once.
  const httpSides = await Promise.all(Array.from({ length: AGENTS }, (_, k) => connectHttp(server.url, secrets[name(k)])));
  open.push(...httpSides);
  const overHttp = await swarm(httpSides, 1000);
  const stdioSides = await Promise.all(Array.from({ length: AGENTS }, (_, k) => connect(ws.root, name(k))));
  open.push(...stdioSides);
  const overStdio = await swarm(stdioSides, 2000);
  const overCli = await cliSwarm(ws.root, 3000);

  console.log(`binary: ${AGENTX}`);
  console.log("| one agent, calls in a row | p50 ms | p99 ms | mean ms |");
  console.log("|---|---|---|---|");
  for (const [label, s] of rows) console.log(`| ${label} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(s.mean)} |`);
  const total = AGENTS * ASKS;
  console.log(`\n| ${AGENTS} agents x ${ASKS} asks, own issues, at once | wall s | asks/s | ask p50 ms | ask p99 ms |`);
  console.log("|---|---|---|---|---|");
  for (const [label, r] of [
    [`HTTP, one agentx serve, ${AGENTS} tokens`, overHttp],
    [`stdio, ${AGENTS} agentx mcp servers`, overStdio],
    [`CLI, ${AGENTS} processes at a time`, overCli],
  ]) {
    console.log(`| ${label} | ${fmt(r.wall / 1000)} | ${(total / (r.wall / 1000)).toFixed(0)} | ${fmt(r.lat.p50)} | ${fmt(r.lat.p99)} |`);
  }
  const [stdioAsk, stdioShow, httpAsk, httpShow] = rows.map((r) => r[1]);
  console.log(
    `\nshow p50 over HTTP ${fmt(httpShow.p50)} ms (target <= 2); ask p50 HTTP/stdio ${fmt(httpAsk.p50 / stdioAsk.p50)}x (target <= 1.5); stdio show p50 ${fmt(stdioShow.p50)} ms`,
  );
  console.log(JSON.stringify({ rows, overHttp, overStdio, overCli }));
} finally {
  for (const side of open) await side.client.close().catch(() => {});
  await server?.stop();
  ws.cleanup();
}
