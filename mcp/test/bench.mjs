// Benchmarks of `agentx mcp` through the official TypeScript SDK client (reported in
// docs/benchmarks.md, never asserted): server start to the first tools/list answer, and the
// round trip of tools/call clarify_ask (and of a read, clarify_show) on a small workspace.
//   node bench.mjs [--calls 500] [--starts 30]
// AGENTX_BIN picks the binary (default: the release build, target/release/agentx).
import { execFileSync } from "node:child_process";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
process.env.AGENTX_BIN ??= resolve(here, "../../target/release/agentx");
const { AGENTX, connect, workspace } = await import("./harness.mjs");

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const CALLS = arg("calls", 500);
const STARTS = arg("starts", 30);

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  return { n: ms.length, p50: quantile(s, 0.5), p99: quantile(s, 0.99), min: s[0], max: s.at(-1), mean };
};
const fmt = (x) => x.toFixed(2);

async function timeStarts(root) {
  const ms = [];
  for (let i = 0; i < STARTS; i++) {
    const t0 = performance.now();
    const side = await connect(root, "engineer");
    await side.client.listTools();
    ms.push(performance.now() - t0);
    await side.client.close();
  }
  return summary(ms);
}

async function timeCalls(side, count, args) {
  const ms = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const r = await side.client.callTool({ name: args(i).name, arguments: args(i).arguments });
    ms.push(performance.now() - t0);
    if (r.isError) throw new Error(`call ${i} failed: ${r.content[0].text}`);
  }
  return summary(ms);
}

function timeCli(root, count) {
  const ms = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    execFileSync(AGENTX, ["--root", root, "--json", "clarify", "ask", "--issue", "900", "--from",
      "engineer", "--to", "architect", "--topic", `CLI ${i}`, "--question", "Redis?"]);
    ms.push(performance.now() - t0);
  }
  return summary(ms);
}

const ws = workspace();
try {
  const starts = await timeStarts(ws.root);
  const engineer = await connect(ws.root, "engineer", ["--issue", "1"]);
  // Ten issues, so no ledger grows past a small size; the workspace ends with CALLS records.
  const ask = (i) => ({
    name: "clarify_ask",
    arguments: {
      issue: (i % 10) + 1,
      to: "architect",
      topic: `Question ${i}`,
      question: "Redis or an in-process LRU for the session cache?",
      suggestions: ["redis", "lru"],
    },
  });
  await timeCalls(engineer, 20, (i) => ask(100_000 + i)); // warm-up (page cache, allocator)
  const asks = await timeCalls(engineer, CALLS, ask);
  const shows = await timeCalls(engineer, CALLS, (i) => ({
    name: "clarify_show",
    arguments: { id: `CLR-${(i % 10) + 1}-001` },
  }));
  await engineer.client.close();
  const cli = timeCli(ws.root, 50);
  const rows = [
    ["start → first tools/list (spawn, initialize, list)", starts],
    [`tools/call clarify_ask (${CALLS} calls, 10 issues)`, asks],
    [`tools/call clarify_show (${CALLS} calls)`, shows],
    ["for comparison: agentx clarify ask as a process (50)", cli],
  ];
  console.log(`binary: ${AGENTX}`);
  console.log("| measurement | p50 ms | p99 ms | min ms | mean ms |");
  console.log("|---|---|---|---|---|");
  for (const [name, s] of rows) {
    console.log(`| ${name} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(s.min)} | ${fmt(s.mean)} |`);
  }
  console.log(JSON.stringify({ starts, asks, shows, cli }));
} finally {
  ws.cleanup();
}
