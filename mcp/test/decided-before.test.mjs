// "Decided before" over MCP with the official TypeScript SDK client (issue 45, docs/protocol.md
// §36): an agent asks a question another issue already decided and receives `related` with
// that decision; `clarify_search` finds it; `reuse` takes it, resolving the new record at once
// with a resolution that cites the decision it relied on.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { cli, connect, workspace } from "./harness.mjs";

describe("decided before, over MCP", () => {
  let ws;
  let engineer;

  before(async () => {
    ws = workspace();
    const ask = cli(ws.root, [
      "clarify", "ask", "--issue", "70", "--from", "engineer", "--to", "architect",
      "--topic", "Cache layer", "--question", "Redis or in-process?", "--field", "cache.layer",
    ]);
    assert.equal(ask.ok, true, JSON.stringify(ask));
    assert.equal(cli(ws.root, ["clarify", "answer", "CLR-70-001", "--from", "architect", "--body", "Redis."]).ok, true);
    assert.equal(cli(ws.root, ["clarify", "resolve", "CLR-70-001", "--from", "engineer"]).ok, true);
    engineer = await connect(ws.root, "engineer", ["--issue", "71"]);
  });

  after(async () => {
    await engineer?.client.close();
    ws?.cleanup();
  });

  const call = (name, args = {}) => engineer.client.callTool({ name, arguments: args });

  it("clarify_search finds the decision, with who took it", async () => {
    const found = await call("clarify_search", { query: "redis cache" });
    assert.equal(found.isError, false, JSON.stringify(found.structuredContent));
    const hit = found.structuredContent.hits[0];
    assert.equal(hit.id, "CLR-70-001");
    assert.equal(hit.decision.text, "Redis.");
    assert.equal(hit.decision.by, "engineer");
  });

  it("an ask of the same field returns related with the decision", async () => {
    const asked = await call("clarify_ask", {
      to: "architect",
      topic: "Cache",
      question: "Redis or in-process for the session cache?",
      field: "cache.layer",
    });
    assert.equal(asked.isError, false, JSON.stringify(asked.structuredContent));
    assert.equal(asked.structuredContent.clarification.id, "CLR-71-001");
    const related = asked.structuredContent.related;
    assert.equal(related.length, 1, JSON.stringify(related));
    assert.equal(related[0].id, "CLR-70-001");
    assert.equal(related[0].issue, 70);
    assert.equal(related[0].decision.text, "Redis.");
    assert.equal(related[0].sameField, true);
    // It is a suggestion: the new record waits for its answer.
    assert.equal(asked.structuredContent.clarification.status, "pending");
  });

  it("reuse resolves the new record at once, citing the decision", async () => {
    const taken = await call("clarify_ask", {
      to: "architect",
      topic: "Cache TTL",
      question: "Redis for the rate limiter too?",
      field: "cache.layer",
      reuse: "CLR-70-001",
    });
    assert.equal(taken.isError, false, JSON.stringify(taken.structuredContent));
    const record = taken.structuredContent.clarification;
    assert.equal(record.id, "CLR-71-002");
    assert.equal(record.status, "resolved");
    // A reuse took its decision: no related suggestions beside it.
    assert.equal(taken.structuredContent.related, undefined);
    const shown = cli(ws.root, ["clarify", "show", "CLR-71-002"]);
    const last = shown.clarification.thread.at(-1);
    assert.equal(last.type, "resolution");
    assert.equal(last.ref, "CLR-70-001");
    assert.equal(last.via, "reuse");
    const cited = cli(ws.root, ["clarify", "show", "CLR-70-001"]).clarification.thread.at(-1);
    assert.equal(last.refHash, cited.hash);
    assert.equal(last.body, "Redis.");
  });
});
