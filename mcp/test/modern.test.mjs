// Both revisions from one server (docs/protocol.md §24): a 2026-07-28 client (the TypeScript
// SDK's 2.x client package) negotiates through `server/discover`, lists the tools with cache
// hints, asks and waits, over stdio and streamable HTTP; a 2025-11-25 client on the same
// server keeps its `initialize` session (the 1.x tests run unchanged beside this file).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { cli, connect, workspace } from "./harness.mjs";
import { connectHttp, serve, token } from "./http-harness.mjs";
import { MODERN, connectModern, connectModernHttp } from "./modern-harness.mjs";

/** What a 2026-07-28 client sees of the server, asked and waited through `side`. */
async function lifecycle(side, root, issue) {
  const c = side.client;
  assert.equal(c.getProtocolEra(), "modern");
  assert.equal(c.getNegotiatedProtocolVersion(), MODERN);
  const discovered = c.getDiscoverResult();
  assert.ok(discovered.supportedVersions.includes(MODERN), JSON.stringify(discovered));
  assert.ok(discovered.supportedVersions.includes("2025-11-25"));
  assert.equal(discovered._meta["io.modelcontextprotocol/serverInfo"].name, "agentx-clarify");
  // Resource subscriptions, by subscriptions/listen on this revision (modern-listen.test.mjs).
  assert.equal(discovered.capabilities.resources.subscribe, true);

  const listed = await c.listTools(undefined, { cacheMode: "bypass" });
  const names = listed.tools.map((t) => t.name);
  for (const n of ["clarify_ask", "clarify_wait", "clarify_inbox", "clarify_answer"]) {
    assert.ok(names.includes(n), names.join(","));
  }
  assert.equal(typeof listed.ttlMs, "number");
  assert.ok(["public", "private"].includes(listed.cacheScope), listed.cacheScope);

  const asked = await c.callTool({
    name: "clarify_ask",
    arguments: { to: "architect", topic: "Cache", question: "Redis or LRU?", issue },
  });
  assert.equal(asked.isError, false, JSON.stringify(asked.structuredContent));
  const id = asked.structuredContent.clarification.id;
  const waited = await c.callTool({ name: "clarify_wait", arguments: { id, timeoutSeconds: 0.2 } });
  assert.equal(waited.structuredContent.outcome, "timed-out");

  // The architect answers with the CLI; the wait returns the answer.
  const pending = c.callTool({ name: "clarify_wait", arguments: { id, timeoutSeconds: 20 } });
  const answered = cli(root, ["clarify", "answer", id, "--from", "architect", "--body", "LRU, 512 entries"]);
  assert.equal(answered.ok, true, JSON.stringify(answered));
  const got = await pending;
  assert.equal(got.structuredContent.status, "answered");
  assert.equal(got.structuredContent.answer, "LRU, 512 entries");
}

describe("2026-07-28 over stdio", () => {
  let ws;
  before(() => (ws = workspace()));
  after(() => ws?.cleanup());

  it("discovers, lists the tools with cache hints, asks and waits", async () => {
    const side = await connectModern(ws.root, "engineer");
    try {
      await lifecycle(side, ws.root, 301);
    } finally {
      await side.client.close();
    }
  });

  it("a 2025-11-25 client of the same binary still initializes a session", async () => {
    const old = await connect(ws.root, "engineer");
    try {
      assert.equal(old.client.getServerCapabilities().resources.subscribe, true);
      const listed = await old.client.listTools();
      assert.equal(listed.ttlMs, undefined);
      assert.ok(listed.tools.some((t) => t.name === "clarify_wait"));
    } finally {
      await old.client.close();
    }
  });
});

describe("2026-07-28 over streamable HTTP", () => {
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

  it("discovers, lists the tools with cache hints, asks and waits, without a session", async () => {
    const side = await connectModernHttp(server.url, secret);
    try {
      assert.equal(side.transport.sessionId, undefined);
      await lifecycle(side, ws.root, 302);
    } finally {
      await side.client.close();
    }
  });

  it("a 2025-11-25 client on the same /mcp keeps its session", async () => {
    const old = await connectHttp(server.url, secret);
    try {
      assert.ok(old.transport.sessionId);
      assert.equal(old.client.getServerCapabilities().resources.subscribe, true);
    } finally {
      await old.client.close();
    }
  });

  it("refuses a 2026-07-28 request without a bearer token", async () => {
    await assert.rejects(connectModernHttp(server.url, "not-a-token"));
  });
});
