// What a well-behaved client never sends, on raw pipes: malformed lines, wrong shapes, an
// oversized message, and a client that leaves in the middle of a wait.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { INITIALIZE, cli, rawServer, workspace } from "./harness.mjs";

describe("agentx mcp on raw stdio", () => {
  let ws;
  before(() => (ws = workspace()));
  after(() => ws?.cleanup());

  it("survives malformed JSON-RPC lines, answers wrong shapes with errors, and exits 0 at end of input", async () => {
    const s = rawServer(ws.root);
    s.send("not json at all");
    s.send("{");
    s.send("\u0000\u00ff\u0001binary");
    s.send("[]");
    s.send(`{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"${"a".repeat(5 * 1024 * 1024)}"}}`);
    s.send(INITIALIZE);
    const init = await s.response(0);
    assert.equal(init.result.serverInfo.name, "agentx-clarify");
    s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    s.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: "oops" });
    s.send({ jsonrpc: "2.0", id: 2, method: "no/such/method" });
    s.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "clarify_list", arguments: [1] } });
    s.send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "clarify_list", arguments: { all: "yes" } } });
    s.send({ jsonrpc: "2.0", id: 5, method: "resources/read", params: { uri: "file:///etc/passwd" } });
    s.send({ jsonrpc: "2.0", id: 6, method: "ping" });
    assert.deepEqual((await s.response(6)).result, {});
    assert.equal((await s.response(2)).error.code, -32601);
    assert.equal((await s.response(4)).result.structuredContent.code, "INVALID_INPUT");
    assert.equal((await s.response(5)).error.code, -32602);
    s.child.stdin.end();
    const { code } = await s.exited;
    assert.equal(code, 0, s.stderr());
    const messages = s.lines.map((l) => JSON.parse(l));
    for (const m of messages) assert.equal(m.jsonrpc, "2.0", "stdout holds protocol messages only");
    // The oversized message was dropped before it was buffered: no answer to it.
    assert.ok(!messages.some((m) => m.id === "big"));
    assert.match(s.stderr(), /maximum line length/);
    // Well-formed JSON of the wrong shape gets an Invalid Request error (without an id).
    assert.ok(messages.some((m) => m.error?.code === -32600), JSON.stringify(messages));
  });

  it("exits cleanly when the client leaves in the middle of a wait, with every ledger intact", async () => {
    const s = rawServer(ws.root);
    s.send(INITIALIZE);
    await s.response(0);
    s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const ask = (n) => ({
      jsonrpc: "2.0",
      id: n,
      method: "tools/call",
      params: { name: "clarify_ask", arguments: { issue: 7, to: "architect", topic: `Leaving ${n}`, question: `Still there (${n})?` } },
    });
    s.send(ask(1));
    s.send(ask(2));
    const waited = (await s.response(1)).result.structuredContent.clarification.id;
    const dropped = (await s.response(2)).result.structuredContent.clarification.id;
    s.send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "clarify_wait", arguments: { id: waited, timeoutSeconds: 50 } },
    });
    await new Promise((r) => setTimeout(r, 200));
    // A write sent just before the client leaves still completes (or never starts): no
    // ledger is left half-written.
    s.send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "clarify_abandon", arguments: { id: dropped } } });
    const left = Date.now();
    s.child.stdin.end();
    const { code, signal } = await s.exited;
    console.log(`# exited ${Date.now() - left} ms after the client left mid-wait`);
    assert.equal(signal, null);
    assert.equal(code, 0, s.stderr());
    const verified = cli(ws.root, ["clarify", "verify"]);
    assert.equal(verified.ok, true, JSON.stringify(verified));
    assert.equal(cli(ws.root, ["clarify", "show", waited]).clarification.status, "pending");
    assert.equal(cli(ws.root, ["clarify", "show", dropped]).clarification.status, "abandoned");
  });

  it("refuses a reserved or malformed agent name at launch, before any protocol output", async () => {
    for (const [agent, why] of [
      ["human", /reserved/],
      ["Bad Name", /lowercase/],
    ]) {
      const s = rawServer(ws.root, agent);
      const { code } = await s.exited;
      assert.equal(code, 3);
      assert.deepEqual(s.lines, []);
      assert.match(s.stderr(), /INVALID_AGENT/);
      assert.match(s.stderr(), why);
    }
  });
});
