// A clarification as an MCP task (docs/protocol.md §24): the 2.x client declares the Tasks
// extension, clarify_ask with wait: "task" answers with a task whose id is the record's, and
// tasks/get reads the ledger — across an `agentx serve` restart — until the CLI's answer and
// resolution complete it; tasks/update decides an escalated one; tasks/cancel abandons one.
// Over stdio, a task made by one `agentx mcp` process is read and cancelled from another.
// The 2.x client's own tools/call refuses a `resultType: "task"` answer (its codec knows only
// complete and input_required; `@modelcontextprotocol/ext-tasks` wants a raw dispatcher for
// 2026-07-28), so the ask that creates a task is a raw HTTP call, and the tasks/* requests go
// through the 2.x client (`request` with a result schema, as the SDK does extension methods).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { cli, rawServer, workspace } from "./harness.mjs";
import { serve, token } from "./http-harness.mjs";
import {
  MODERN,
  TASKS,
  askTask as createTask,
  connectModern,
  connectModernHttp,
  extensionRequest,
  rawTool,
} from "./modern-harness.mjs";

const FORMS = { elicitation: { form: {} } };
const raw = extensionRequest;

async function askTask(url, secret, issue, extra = {}, capabilities = TASKS) {
  const created = await createTask(url, secret, issue, extra, capabilities);
  assert.match(created.taskId, /^CLR-\d+-\d{3}$/);
  assert.equal(created.status, "working");
  assert.equal(created.ttlMs, null, "the ledger keeps the record: no TTL");
  return created.taskId;
}

const record = (root, id) => cli(root, ["clarify", "show", id]).clarification;

describe("clarify_ask as an MCP task, 2.x client over HTTP", () => {
  let ws;
  let server;
  let secret;
  before(async () => {
    ws = workspace();
    secret = token(ws.root, "agent", "engineer");
    server = await serve(ws.root);
  });
  after(async () => {
    await server?.stop();
    ws?.cleanup();
  });

  it("is created, read from the ledger across a restart, completed after the CLI's answer", async () => {
    let side = await connectModernHttp(server.url, secret, { capabilities: TASKS });
    const id = await askTask(server.url, secret, 61);
    assert.equal(record(ws.root, id).status, "pending");
    const got = await raw(side.client, "tasks/get", { taskId: id });
    assert.equal(got.taskId, id);
    assert.equal(got.status, "working");
    assert.equal(got.ttlMs, null);
    assert.ok(got.pollIntervalMs > 0);
    await side.client.close();

    await server.stop();
    server = await serve(ws.root);
    side = await connectModernHttp(server.url, secret, { capabilities: TASKS });
    const again = await raw(side.client, "tasks/get", { taskId: id });
    assert.equal(again.status, "working", "a restarted server reads the same task from the ledger");
    assert.equal(again.createdAt, got.createdAt);

    const answered = cli(ws.root, ["clarify", "answer", id, "--from", "architect", "--body", "LRU, 512 entries"]);
    assert.equal(answered.ok, true, JSON.stringify(answered));
    const open = await raw(side.client, "tasks/get", { taskId: id });
    assert.equal(open.status, "working", "an answer open to a follow-up keeps the task working");
    assert.match(open.statusMessage, /LRU, 512 entries/);
    cli(ws.root, ["clarify", "resolve", id, "--from", "engineer"]);
    const done = await raw(side.client, "tasks/get", { taskId: id });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal(done.result.isError, false);
    assert.equal(done.result.structuredContent.clarification.id, id);
    assert.equal(done.result.structuredContent.clarification.status, "resolved");
    await side.client.close();
  });

  it("is cancelled by tasks/cancel: the record is abandoned by its asker", async () => {
    const side = await connectModernHttp(server.url, secret, { capabilities: TASKS });
    const id = await askTask(server.url, secret, 62);
    await raw(side.client, "tasks/cancel", { taskId: id });
    const shown = record(ws.root, id);
    assert.equal(shown.status, "abandoned");
    assert.equal(shown.thread.at(-1).from, "engineer");
    const got = await raw(side.client, "tasks/get", { taskId: id });
    assert.equal(got.status, "cancelled");
    await assert.rejects(raw(side.client, "tasks/cancel", { taskId: id }), /already/);
    await side.client.close();
  });

  it("asks its person through input_required and tasks/update decides via elicitation", async () => {
    const side = await connectModernHttp(server.url, secret, { capabilities: { ...TASKS, ...FORMS } });
    const options = [
      { value: "redis", label: "Redis" },
      { value: "lru", label: "In-process LRU" },
    ];
    const id = await askTask(server.url, secret, 63, { answerKind: "choice", options }, { ...TASKS, ...FORMS });
    const up = await side.client.callTool({ name: "clarify_escalate", arguments: { id, message: "the architect is away" } });
    assert.equal(up.isError, false, JSON.stringify(up.structuredContent));
    const asking = await raw(side.client, "tasks/get", { taskId: id });
    assert.equal(asking.status, "input_required", JSON.stringify(asking));
    const form = asking.inputRequests.decision;
    assert.equal(form.method, "elicitation/create");
    assert.deepEqual(form.params.requestedSchema.properties.choice.oneOf.map((o) => o.const), ["redis", "lru"]);

    const length = record(ws.root, id).thread.length;
    await raw(side.client, "tasks/update", { taskId: id, inputResponses: { decision: { action: "decline" } } });
    assert.equal(record(ws.root, id).thread.length, length, "a decline writes nothing");
    assert.equal((await raw(side.client, "tasks/get", { taskId: id })).status, "working", "nor is asked again");
    await side.client.close();

    const other = await connectModernHttp(server.url, secret, { capabilities: { ...TASKS, ...FORMS } });
    const second = await askTask(server.url, secret, 64, { answerKind: "choice", options }, { ...TASKS, ...FORMS });
    await other.client.callTool({ name: "clarify_escalate", arguments: { id: second, message: "away" } });
    await raw(other.client, "tasks/update", {
      taskId: second,
      inputResponses: { decision: { action: "accept", content: { choice: "lru", message: "small data" } } },
    });
    const last = record(ws.root, second).thread.at(-1);
    assert.equal(last.type, "resolution");
    assert.equal(last.via, "elicitation");
    assert.equal(last.value, "lru");
    assert.equal((await raw(other.client, "tasks/get", { taskId: second })).status, "completed");
    await assert.rejects(
      raw(other.client, "tasks/update", { taskId: second, inputResponses: { decision: { action: "decline" } } }),
      /waits for no input/,
    );
    await other.client.close();
  });

  it("is the asker's only, and needs the client to declare the extension", async () => {
    const side = await connectModernHttp(server.url, secret, { capabilities: TASKS });
    const id = await askTask(server.url, secret, 65);
    const stranger = await connectModernHttp(server.url, token(ws.root, "agent", "architect"), { capabilities: TASKS });
    await assert.rejects(raw(stranger.client, "tasks/get", { taskId: id }), /no task/);
    await assert.rejects(raw(stranger.client, "tasks/cancel", { taskId: id }), /no task/);
    assert.equal(record(ws.root, id).status, "pending");
    await stranger.client.close();
    await side.client.close();

    const before = cli(ws.root, ["clarify", "show", "--issue", "66"]);
    const args = { to: "architect", topic: "Cache", question: "Which?", issue: 66, wait: "task" };
    const { result: refused } = await rawTool(server.url, secret, "clarify_ask", args, {});
    assert.equal(refused.isError, true, JSON.stringify(refused));
    assert.match(refused.content[0].text, /io\.modelcontextprotocol\/tasks/);
    assert.deepEqual(cli(ws.root, ["clarify", "show", "--issue", "66"]), before, "nothing was written");
    const plain = await connectModernHttp(server.url, secret);
    await assert.rejects(raw(plain.client, "tasks/get", { taskId: id }), /Missing required client capability/);
    await plain.client.close();
  });
});

describe("clarify_ask as an MCP task over stdio", () => {
  let ws;
  before(() => (ws = workspace()));
  after(() => ws?.cleanup());

  it("is created by one `agentx mcp`, then read and cancelled by the 2.x client on another", async () => {
    const s = rawServer(ws.root);
    s.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "clarify_ask",
        arguments: { to: "architect", topic: "Cache", question: "Which cache?", issue: 70, wait: "task" },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": TASKS,
        },
      },
    });
    const { result: created } = await s.response(1, 15_000);
    assert.equal(created?.resultType, "task", JSON.stringify(created));
    const id = created.taskId;
    s.child.stdin.end();
    await s.exited;

    const side = await connectModern(ws.root, "engineer", { capabilities: TASKS });
    const got = await raw(side.client, "tasks/get", { taskId: id });
    assert.equal(got.status, "working", "another process reads the task from the ledger");
    await raw(side.client, "tasks/cancel", { taskId: id });
    assert.equal(record(ws.root, id).status, "abandoned");
    assert.equal((await raw(side.client, "tasks/get", { taskId: id })).status, "cancelled");
    await side.client.close();
  });
});

