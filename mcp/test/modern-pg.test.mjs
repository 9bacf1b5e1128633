// Sealed request states on PostgreSQL (docs/protocol.md §24): two `agentx serve` on one
// database. The form offered by one server is answered on the other (the key is in the state
// store, not in a process), and the replay on the first is refused (the struck-off nonce is
// there too). A real server: AGENTX_TEST_PG_URL, or a throwaway cluster from
// scripts/pg-cluster for this process. A task (a clarification asked with wait: "task") made
// on one server is read and answered on the other: its state is the ledger's.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";

import { AGENTX, cli, workspace } from "./harness.mjs";
import { post, serve, token } from "./http-harness.mjs";
import { MODERN, TASKS, askTask, connectModernHttp, extensionRequest } from "./modern-harness.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const FORMS = { elicitation: { form: {} } };
const psql = (url, sql) =>
  execFileSync("psql", ["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql]).toString().trim();

let cluster;
async function serverUrl() {
  if (process.env.AGENTX_TEST_PG_URL) return process.env.AGENTX_TEST_PG_URL;
  const dir = join(tmpdir(), `agentx-pg-mcp-${process.pid}`);
  cluster = spawn(join(REPO, "scripts/pg-cluster"), ["supervise", dir], { stdio: ["pipe", "pipe", "inherit"] });
  const line = await new Promise((ok, fail) => {
    let text = "";
    cluster.stdout.on("data", (d) => {
      text += d;
      if (text.includes("\n")) ok(text.split("\n")[0]);
    });
    cluster.on("exit", (code) => fail(new Error(`scripts/pg-cluster exited with ${code} (is postgresql installed?)`)));
  });
  assert.match(line, /^postgres:\/\//);
  return line;
}

let n = 0;
async function rawWait(url, secret, id, retry = {}) {
  n += 1;
  const body = {
    jsonrpc: "2.0",
    id: n,
    method: "tools/call",
    params: {
      name: "clarify_wait",
      arguments: { id, timeoutSeconds: 0.5 },
      ...retry,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": FORMS,
      },
    },
  };
  const res = await post(url, body, {
    authorization: `Bearer ${secret}`,
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "clarify_wait",
  });
  assert.equal(res.status, 200, res.text);
  const text = res.text.trimStart().startsWith("{")
    ? res.text
    : res.text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).find((d) => d.includes(`"id":${n}`));
  return JSON.parse(text);
}

describe("sealed request states across two servers on PostgreSQL", () => {
  let ws;
  let a;
  let b;
  let url;
  let secret;
  before(async () => {
    const server = await serverUrl();
    const db = `mcp_sealed_${process.pid}`;
    psql(server, `CREATE DATABASE ${db}`);
    url = server.replace(/\/[^/?]*\?/, `/${db}?`);
    ws = workspace();
    writeFileSync(join(ws.root, ".agentx", "config.toml"), `[store]\nurl = "${url}"\n`);
    execFileSync(AGENTX, ["--root", ws.root, "store", "init"]);
    secret = token(ws.root, "agent", "engineer");
    a = await serve(ws.root);
    b = await serve(ws.root);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    ws?.cleanup();
    cluster?.stdin.end();
  });

  it("a form offered by one server is answered on the other, once", async () => {
    const side = await connectModernHttp(a.url, secret);
    const asked = await side.client.callTool({
      name: "clarify_ask",
      arguments: { to: "architect", topic: "Region", question: "Which region?", issue: 600 },
    });
    const id = asked.structuredContent.clarification.id;
    await side.client.callTool({ name: "clarify_escalate", arguments: { id, message: "away" } });
    await side.client.close();

    const offered = await rawWait(a.url, secret, id);
    assert.equal(offered.result?.resultType, "input_required", JSON.stringify(offered));
    const state = offered.result.requestState;
    const answer = {
      requestState: state,
      inputResponses: { decision: { action: "accept", content: { answer: "eu-west-1" } } },
    };
    const decided = await rawWait(b.url, secret, id, answer);
    assert.equal(decided.result?.structuredContent?.status, "resolved", JSON.stringify(decided));
    const last = cli(ws.root, ["clarify", "show", id]).clarification.thread.at(-1);
    assert.equal(last.via, "elicitation");
    assert.equal(last.body, "eu-west-1");
    const length = cli(ws.root, ["clarify", "show", id]).clarification.thread.length;

    const replay = await rawWait(a.url, secret, id, answer);
    assert.equal(replay.error?.code, -32602, JSON.stringify(replay));
    assert.equal(cli(ws.root, ["clarify", "show", id]).clarification.thread.length, length);

    // The key and the struck-off nonce are rows of the database, not files.
    const docs = psql(url, "SELECT name FROM agentx.state_docs ORDER BY name").split("\n");
    assert.ok(docs.includes("mcp-state-keys") && docs.includes("mcp-state-used"), docs.join(","));
    assert.equal(existsSync(join(ws.root, ".agentx", "state", "mcp-state-keys.json")), false);
  });

  it("a task created on one server is read and updated on the other", async () => {
    const caps = { ...TASKS, ...FORMS };
    const created = await askTask(a.url, secret, 601, { answerKind: "confirm" }, caps);
    const id = created.taskId;
    const other = await connectModernHttp(b.url, secret, { capabilities: caps });
    const working = await extensionRequest(other.client, "tasks/get", { taskId: id });
    assert.equal(working.status, "working");
    assert.equal(working.createdAt, created.createdAt);
    const up = await other.client.callTool({ name: "clarify_escalate", arguments: { id, message: "away" } });
    assert.equal(up.isError, false, JSON.stringify(up.structuredContent));
    const first = await connectModernHttp(a.url, secret, { capabilities: caps });
    const asking = await extensionRequest(first.client, "tasks/get", { taskId: id });
    assert.equal(asking.status, "input_required", JSON.stringify(asking));
    await extensionRequest(other.client, "tasks/update", {
      taskId: id,
      inputResponses: { decision: { action: "accept", content: { decision: true } } },
    });
    const done = await extensionRequest(first.client, "tasks/get", { taskId: id });
    assert.equal(done.status, "completed", JSON.stringify(done));
    const last = cli(ws.root, ["clarify", "show", id]).clarification.thread.at(-1);
    assert.equal(last.via, "elicitation");
    assert.equal(last.value, true);
    await first.client.close();
    await other.client.close();
  });
});
