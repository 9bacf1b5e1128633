// Issue 47's benchmarks (reported, never asserted; scripts/bench-wake runs this):
//  - answer → wake: from the answering command's ledger commit (its monotonic clock, appended
//    to AGENTX_BENCH_COMMIT_LOG by the store once the rename and its directory fsync, or the
//    COMMIT, returned: a reader may see the rename before that, so a figure can be negative)
//    to the waiting client's
//    response: MCP stdio `clarify_wait`, MCP HTTP `clarify_wait` (`/mcp` of `agentx serve`)
//    and the inbox's SSE `change` event (`/events`), p50/p99, on files and on PostgreSQL
//    (BENCH_PG_URL names a fresh database's server URL template; unset: files only);
//  - durable floor: two durable writes (write + fsync + rename + directory fsync, twice,
//    measured here on the workspace's disk), `agentx --version` (process start), a CLI
//    `clarify ask` and MCP stdio `clarify_ask`; the ratios ask / floor.
//  - HTTP throughput: 32 agents (32 tokens) asking on 32 issues for --seconds (30) against one
//    `agentx serve` on files: asks/s.
//   node bench-wake.mjs [--rounds 60] [--asks 40] [--seconds 30]
// AGENTX_BIN picks the binary (default: the release build, target/release/agentx).
import { execFile, execFileSync } from "node:child_process";
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
process.env.AGENTX_BIN ??= resolve(here, "../../target/release/agentx");
const { AGENTX, cli, connect, workspace } = await import("./harness.mjs");
const { connectHttp, serve, token } = await import("./http-harness.mjs");
const run = promisify(execFile);

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = arg("rounds", 60);
const ASKS = arg("asks", 40);
const SECONDS = arg("seconds", 30);
const label = process.env.BENCH_LABEL ?? "agentx";

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return { n: ms.length, p50: quantile(s, 0.5), p99: quantile(s, 0.99) };
};
const fmt = (x) => x.toFixed(2);
// The machine's monotonic clock (CLOCK_MONOTONIC), the one the store writes at each commit.
const wallMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The answering process: `clarify answer`, with the store appending its commit time to `log`. */
async function answerFrom(root, id, log) {
  writeFileSync(log, "");
  answerFrom.started = wallMs();
  await run(AGENTX, ["--root", root, "--json", "clarify", "answer", "--from", "architect", "--body", "Redis.", id], {
    env: { ...process.env, AGENTX_BENCH_COMMIT_LOG: log },
  });
  answerFrom.exited = wallMs();
  const first = readFileSync(log, "utf8").split("\n")[0];
  // A binary without the commit log (before issue 47): timed from the process's exit.
  return first ? Number(BigInt(first) / 1000n) / 1000 : NaN; // ms, µs resolution
}

/** Both figures of one round: from the commit (NaN without the log) and from the exit. */
const both = (woke, committed) => [woke - committed, woke - answerFrom.exited];
const summaries = (pairs) => {
  const commit = pairs.map((p) => p[0]).filter((x) => !Number.isNaN(x));
  return { commit: commit.length ? summary(commit) : null, exit: summary(pairs.map((p) => p[1])) };
};

async function askTool(client, issue, i) {
  const r = await client.callTool({
    name: "clarify_ask",
    arguments: { issue, to: "architect", topic: `Wake ${i}`, question: `Redis or LRU (${i})?`, blocking: false },
  });
  return r.structuredContent.clarification.id;
}

/** answer → wake through an MCP client's `clarify_wait`. */
async function viaWait(client, root, log, issue) {
  const ms = [];
  for (let i = 0; i < ROUNDS; i++) {
    const id = await askTool(client, issue, i);
    let woke = 0;
    const waiting = client
      .callTool({ name: "clarify_wait", arguments: { id, timeoutSeconds: 30 } })
      .then((r) => {
        woke = wallMs();
        if (r.structuredContent.status !== "answered") throw new Error(JSON.stringify(r.structuredContent));
      });
    await sleep(30); // the wait has read the record and is waiting
    const committed = await answerFrom(root, id, log);
    await waiting;
    ms.push(both(woke, committed));
  }
  return summaries(ms);
}

/** answer → the inbox's `change` event on `/events`. */
async function viaEvents(base, human, root, log, issue) {
  const res = await fetch(`${base}/events`, { headers: { Authorization: `Bearer ${human}` } });
  if (res.status !== 200) throw new Error(`/events: ${res.status} ${await res.text()}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const arrivals = []; // [wall ms, data]
  let buffer = "";
  (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const t = wallMs();
      buffer += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith("data:")) arrivals.push([t, line]);
      }
    }
  })();
  await sleep(300);
  const ms = [];
  for (let i = 0; i < ROUNDS; i++) {
    const asked = cli(root, ["clarify", "ask", `--issue=${issue}`, "--from=engineer", "--to=architect", `--topic=Event ${i}`, `--question=Which (${i})?`, "--non-blocking"]);
    await sleep(60);
    const committed = await answerFrom(root, asked.clarification.id, log);
    for (let k = 0; ; k++) {
      // The rename is seen before its directory fsync returns: an event may precede the
      // commit's time (negative figures), never the answering process's start.
      const hit = arrivals.find(([t, d]) => t >= answerFrom.started && d.includes(`${issue}`));
      if (hit) {
        ms.push(both(hit[0], committed));
        break;
      }
      if (k > 2000) throw new Error(`no change event after ${committed}: ${JSON.stringify(arrivals)}`);
      await sleep(1);
    }
    arrivals.length = 0;
  }
  await reader.cancel();
  return summaries(ms);
}

/** Two durable writes as the store makes them (temp file, fsync, rename, directory fsync). */
function twoDurableWrites(dir) {
  const t = performance.now();
  for (const name of ["floor-a.json", "floor-b.json"]) {
    const tmp = join(dir, `.floor-tmp-${name}`);
    const fd = openSync(tmp, "w");
    writeSync(fd, JSON.stringify({ floor: name, pad: "x".repeat(900) }));
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, join(dir, name));
    const d = openSync(dir, "r");
    fsyncSync(d);
    closeSync(d);
  }
  return performance.now() - t;
}

async function floor(root) {
  const state = join(root, ".agentx", "state");
  const writes = summary(Array.from({ length: ASKS * 2 }, () => twoDurableWrites(state)));
  const time = async (argv) => {
    const t = performance.now();
    await run(AGENTX, argv);
    return performance.now() - t;
  };
  const start = [];
  const asks = [];
  for (let i = 0; i < ASKS; i++) {
    start.push(await time(["--version"]));
    asks.push(await time(["--root", root, "--json", "clarify", "ask", `--issue=${100 + i}`, "--from=engineer", "--to=architect", `--topic=Floor ${i}`, "--question=Which?", "--non-blocking"]));
  }
  const { client } = await connect(root, "engineer");
  const mcp = [];
  for (let i = 0; i < ASKS; i++) {
    const t = performance.now();
    await askTool(client, 300 + i, i);
    mcp.push(performance.now() - t);
  }
  await client.close();
  return { writes, start: summary(start), ask: summary(asks), mcp: summary(mcp) };
}

function pgWorkspace(name) {
  const root = workspace().root;
  const url = process.env.BENCH_PG_URL.replace("/agentx?", `/${name}?`);
  execFileSync("psql", ["-X", "-q", "-d", process.env.BENCH_PG_URL, "-c", `CREATE DATABASE ${name}`]);
  writeFileSync(join(root, ".agentx", "config.toml"), `[store]\nurl = "${url}"\n`);
  cli(root, ["store", "init"]);
  return root;
}

const stores = [["files", () => workspace().root]];
if (process.env.BENCH_PG_URL) stores.push(["postgres", () => pgWorkspace(`wake_${label.replace(/\W/g, "_")}_${process.pid}`)]);
const rows = [];
for (const [store, make] of stores) {
  const root = make();
  const log = join(root, "commit.log");
  const stdio = await connect(root, "engineer");
  rows.push([store, "MCP stdio clarify_wait", await viaWait(stdio.client, root, log, 8)]);
  await stdio.client.close();
  const server = await serve(root, ["--no-worker"]);
  const agent = token(root, "agent", "engineer");
  const human = token(root, "human", "alice");
  const http = await connectHttp(server.url, agent);
  rows.push([store, "MCP HTTP clarify_wait", await viaWait(http.client, root, log, 9)]);
  await http.client.close();
  rows.push([store, "inbox SSE change event", await viaEvents(server.base, human, root, log, 10)]);
  await server.stop();
}
console.log(`answer → wake (${label}; from the answering process's ledger commit to the client's response, ${ROUNDS} rounds)`);
const cell = (s) => (s ? `p50 ${fmt(s.p50).padStart(7)} ms  p99 ${fmt(s.p99).padStart(7)} ms` : "(no commit log in this binary)");
for (const [store, path, s] of rows)
  console.log(`  ${store.padEnd(9)} ${path.padEnd(24)} from the commit: ${cell(s.commit)}   from the answerer's exit: ${cell(s.exit)}`);
const f = await floor(workspace().root);
console.log(`durable floor (${label}; files, ${ASKS} each, p50)`);
console.log(`  two durable writes          ${fmt(f.writes.p50)} ms (p99 ${fmt(f.writes.p99)})`);
console.log(`  agentx --version            ${fmt(f.start.p50)} ms`);
console.log(`  clarify ask (CLI)           ${fmt(f.ask.p50)} ms  / (start + two writes) = ${fmt(f.ask.p50 / (f.start.p50 + f.writes.p50))}x  (target <= 1.5)`);
console.log(`  clarify_ask (MCP stdio)     ${fmt(f.mcp.p50)} ms  / two writes = ${fmt(f.mcp.p50 / f.writes.p50)}x  (target <= 1.5)`);

/** 32 agents asking on their own issues for SECONDS over HTTP: asks per second. */
async function httpThroughput() {
  const root = workspace().root;
  const agents = Array.from({ length: 32 }, (_, i) => `a${String(i + 1).padStart(2, "0")}`);
  const steps = agents
    .map((a) => `[[steps]]\nid = "step-${a}"\nagent = "${a}"\ncan_clarify = ["architect"]\nclarify_max_rounds = 3\n`)
    .join("\n");
  writeFileSync(join(root, ".agentx", "workflows", "bench.toml"), steps);
  const secrets = agents.map((a) => token(root, "agent", a));
  const server = await serve(root, ["--no-worker"]);
  const sides = await Promise.all(secrets.map((s) => connectHttp(server.url, s)));
  const end = performance.now() + SECONDS * 1000;
  let asks = 0;
  const t0 = performance.now();
  await Promise.all(
    sides.map(async (side, k) => {
      for (let i = 0; performance.now() < end; i++) {
        const r = await side.client.callTool({
          name: "clarify_ask",
          arguments: { issue: 5000 + k, to: "architect", topic: `T ${i}`, question: `Which one (${k}/${i})?`, workflow: "bench" },
        });
        if (r.isError) throw new Error(r.content[0].text);
        asks++;
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  for (const side of sides) await side.client.close();
  await server.stop();
  console.log(`HTTP throughput (${label}; 32 agents on 32 issues, one agentx serve, files): ${asks} asks in ${fmt(wall)} s = ${(asks / wall).toFixed(0)} asks/s`);
}
if (SECONDS > 0) await httpThroughput();
