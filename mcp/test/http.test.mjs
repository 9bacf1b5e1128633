// `/mcp` on `agentx serve` (docs/protocol.md §24) driven by the official TypeScript SDK's
// StreamableHTTPClientTransport: two agents with two tokens on one server, each acting only as
// the agent its token names; the token/session/Origin matrix; resource updates when the CLI
// writes; Layer 4 fields on clarify_ask; what a bad client sends (malformed JSON-RPC, a body
// over 1 MiB, leaving mid-wait) leaves the server up and the ledgers intact.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

import { cli, eventually, workspace } from "./harness.mjs";
import { connectHttp, INIT, post, serve, token } from "./http-harness.mjs";

describe("MCP over HTTP: two agents, two tokens, one server", () => {
  let ws;
  let server;
  let secrets;
  let engineer;
  let architect;

  before(async () => {
    ws = workspace();
    writeFileSync(
      join(ws.root, ".agentx", "config.toml"),
      '[serve]\nallowed_origins = ["https://tools.example.com"]\n',
    );
    secrets = {
      engineer: token(ws.root, "agent", "engineer"),
      architect: token(ws.root, "agent", "architect"),
      human: token(ws.root, "human", "alice"),
    };
    server = await serve(ws.root);
    engineer = await connectHttp(server.url, secrets.engineer);
    architect = await connectHttp(server.url, secrets.architect);
  });

  after(async () => {
    await engineer?.client.close().catch(() => {});
    await architect?.client.close().catch(() => {});
    await server?.stop();
    ws?.cleanup();
  });

  const call = (side, name, args = {}) => side.client.callTool({ name, arguments: args });

  it("ask → the other's inbox → answer → wait returns it, each acting as its token's agent", async () => {
    const asked = await call(engineer, "clarify_ask", {
      issue: 70,
      to: "architect",
      topic: "Cache layer",
      question: "Redis or an in-process LRU?",
    });
    assert.equal(asked.isError, false, JSON.stringify(asked.structuredContent));
    const id = asked.structuredContent.clarification.id;
    assert.equal(id, "CLR-70-001");
    assert.equal(asked.structuredContent.clarification.from, "engineer");

    const inbox = await call(architect, "clarify_inbox");
    assert.equal(inbox.structuredContent.agent, "architect");
    assert.deepEqual(inbox.structuredContent.clarifications.map((r) => r.id), [id]);
    const own = await call(engineer, "clarify_inbox");
    assert.deepEqual(own.structuredContent.clarifications, []);

    const waiting = call(engineer, "clarify_wait", { id, timeoutSeconds: 20 });
    const answered = await call(architect, "clarify_answer", { id, body: "Redis: sessions are shared." });
    assert.equal(answered.isError, false, JSON.stringify(answered.structuredContent));
    const waited = await waiting;
    assert.equal(waited.structuredContent.status, "answered");
    assert.equal(waited.structuredContent.answer, "Redis: sessions are shared.");

    const shown = cli(ws.root, ["clarify", "show", id]);
    const thread = shown.clarification.thread;
    assert.deepEqual(
      thread.map((e) => [e.type, e.from]),
      [["question", "engineer"], ["answer", "architect"]],
    );
  });

  it("refuses what the token's agent may not do, as isError with the code", async () => {
    // The engineer cannot answer the question it asked the architect…
    const asked = await call(engineer, "clarify_ask", {
      issue: 71,
      to: "architect",
      topic: "Queue",
      question: "Which broker?",
    });
    const id = asked.structuredContent.clarification.id;
    const selfAnswer = await call(engineer, "clarify_answer", { id, body: "Kafka" });
    assert.equal(selfAnswer.isError, true);
    assert.match(selfAnswer.content[0].text, /^[A-Z_]+: /);
    assert.equal(selfAnswer.structuredContent.code, "NOT_PARTICIPANT");
    // …nor can the architect close the engineer's question.
    const foreign = await call(architect, "clarify_abandon", { id, message: "not needed" });
    assert.equal(foreign.isError, true);
    assert.equal(foreign.structuredContent.code, "NOT_PARTICIPANT");
    // No input names the actor: an unknown field is refused, never used.
    const impostor = await call(architect, "clarify_answer", { id, body: "Kafka", from: "engineer" });
    assert.equal(impostor.isError, true);
    assert.equal(impostor.structuredContent.code, "INVALID_INPUT");
    assert.equal(cli(ws.root, ["clarify", "show", id]).clarification.status, "pending");
  });

  it("takes Layer 4's severity, context and blockedOperations on clarify_ask", async () => {
    const asked = await call(engineer, "clarify_ask", {
      issue: 72,
      to: "architect",
      topic: "Retention",
      question: "How long do we keep logs?",
      severity: "WARN",
      context: "GDPR review pending; 30 days assumed",
      blockedOperations: ["deploy"],
    });
    assert.equal(asked.isError, false, JSON.stringify(asked.structuredContent));
    const r = asked.structuredContent.clarification;
    assert.equal(r.severity, "WARN");
    assert.equal(r.blocking, false);
    assert.equal(r.context, "GDPR review pending; 30 days assumed");
    assert.deepEqual(r.blockedOperations, ["deploy"]);
    const tools = await engineer.client.listTools();
    assert.equal(tools.tools.length, 16);
    const ask = tools.tools.find((t) => t.name === "clarify_ask");
    for (const f of ["severity", "context", "blockedOperations"]) assert.ok(ask.inputSchema.properties[f], f);
  });

  it("tells a subscriber when the CLI writes its ledger", async () => {
    const updates = [];
    engineer.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
    await engineer.client.subscribeResource({ uri: "agentx://issues/73" });
    const read = await engineer.client.readResource({ uri: "agentx://issues/72" });
    assert.match(read.contents[0].text, /Retention/);
    cli(ws.root, ["clarify", "ask", "--issue", "73", "--from", "engineer", "--to", "architect", "--topic", "T", "--question", "Q?"]);
    await eventually(() => (updates.includes("agentx://issues/73") ? true : undefined), "the update", 5000);
    assert.ok(!updates.includes("agentx://issues/72"));
  });

  it("the auth matrix: none, unknown, revoked, a human's token, another token's session, a foreign Origin", async () => {
    const none = await post(server.url, INIT);
    assert.equal(none.status, 401);
    assert.equal(none.headers.get("www-authenticate"), 'Bearer realm="agentx"');
    assert.equal(JSON.parse(none.text).error.code, "UNAUTHORIZED");
    const unknown = await post(server.url, INIT, { authorization: "Bearer axt_notatoken" });
    assert.equal(unknown.status, 401);
    assert.equal(unknown.headers.get("www-authenticate"), 'Bearer realm="agentx"');
    const human = await post(server.url, INIT, { authorization: `Bearer ${secrets.human}` });
    assert.equal(human.status, 403);
    assert.equal(JSON.parse(human.text).error.code, "FORBIDDEN");

    // A session opened with the engineer's token is not the architect's.
    const opened = await post(server.url, INIT, { authorization: `Bearer ${secrets.engineer}` });
    assert.equal(opened.status, 200);
    const sid = opened.headers.get("mcp-session-id");
    assert.ok(sid);
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    const session = (secret) => ({
      authorization: `Bearer ${secret}`,
      "mcp-session-id": sid,
      "mcp-protocol-version": "2025-11-25",
    });
    await post(server.url, { jsonrpc: "2.0", method: "notifications/initialized" }, session(secrets.engineer));
    const stolen = await post(server.url, list, session(secrets.architect));
    assert.equal(stolen.status, 404);
    const mine = await post(server.url, list, session(secrets.engineer));
    assert.equal(mine.status, 200);
    assert.match(mine.text, /clarify_ask/);

    // Origin: the server's own and [serve] allowed_origins pass; any other is refused.
    const auth = { authorization: `Bearer ${secrets.engineer}` };
    assert.equal((await post(server.url, INIT, { ...auth, origin: "https://evil.example" })).status, 403);
    assert.equal((await post(server.url, INIT, { ...auth, origin: "https://tools.example.com" })).status, 200);
    assert.equal((await post(server.url, INIT, { ...auth, origin: server.base })).status, 200);

    // Revoked: the very next request of an open session is refused.
    const tester = token(ws.root, "agent", "tester");
    const t = await connectHttp(server.url, tester);
    assert.equal((await t.client.callTool({ name: "clarify_inbox", arguments: {} })).isError, false);
    assert.equal(cli(ws.root, ["tokens", "revoke", "tester"]).ok, true);
    await assert.rejects(t.client.callTool({ name: "clarify_inbox", arguments: {} }), /401|Unauthorized/i);
    const revoked = await post(server.url, INIT, { authorization: `Bearer ${tester}` });
    assert.equal(revoked.status, 401);
    await t.client.close().catch(() => {});
  });

  it("malformed JSON-RPC, a body over 1 MiB and a client leaving mid-wait leave the server up and the ledgers intact", async () => {
    const auth = { authorization: `Bearer ${secrets.engineer}` };
    const garbage = await post(server.url, "{not json", auth);
    assert.ok(garbage.status >= 400 && garbage.status < 500, `status ${garbage.status}`);
    const wrongShape = await post(server.url, { jsonrpc: "2.0", id: 5, method: 42 }, auth);
    assert.ok(wrongShape.status >= 400 && wrongShape.status < 500, `status ${wrongShape.status}`);
    const huge = await post(
      server.url,
      { ...INIT, params: { ...INIT.params, pad: "x".repeat(1_100_000) } },
      auth,
    );
    assert.equal(huge.status, 413);
    // The same without a Content-Length (chunked): cut off at 1 MiB too.
    const big = JSON.stringify({ ...INIT, params: { ...INIT.params, pad: "x".repeat(1_100_000) } });
    const chunked = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...auth },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < big.length; i += 65536) c.enqueue(new TextEncoder().encode(big.slice(i, i + 65536)));
          c.close();
        },
      }),
      duplex: "half",
    });
    assert.equal(chunked.status, 413);
    await chunked.text();

    // A wait whose client goes away (the HTTP request aborted) ends without harm.
    const asked = await call(engineer, "clarify_ask", {
      issue: 74,
      to: "architect",
      topic: "Leaving",
      question: "Still there?",
    });
    const id = asked.structuredContent.clarification.id;
    const leaver = await connectHttp(server.url, secrets.engineer);
    const abort = new AbortController();
    const waiting = leaver.client
      .callTool({ name: "clarify_wait", arguments: { id, timeoutSeconds: 30 } }, undefined, { signal: abort.signal })
      .catch((e) => e);
    await new Promise((r) => setTimeout(r, 300));
    abort.abort();
    await leaver.transport.close();
    assert.ok((await waiting) instanceof Error);

    assert.ok(server.alive(), server.stderr());
    assert.equal((await fetch(`${server.base}/healthz`)).status, 200);
    const answered = await call(architect, "clarify_answer", { id, body: "yes" });
    assert.equal(answered.isError, false);
    const verified = cli(ws.root, ["clarify", "verify"]);
    assert.equal(verified.ok, true, JSON.stringify(verified));
    assert.equal(cli(ws.root, ["clarify", "show", id]).clarification.status, "answered");
  });
});
