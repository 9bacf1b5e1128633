// Two agents talking back and forth through `agentx mcp` and the official TypeScript SDK
// client (docs/protocol.md, "Asking back"): the engineer asks, the architect asks back with
// `askedBack` (in scope although its workflow step may not ask the engineer, and never taken
// for a deadlock), each answers the other, and the engineer waits with until: "decision" on
// an escalated question until a human decides.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { cli, connect, workspace } from "./harness.mjs";

describe("a two-agent conversation over MCP", () => {
  let ws;
  let engineer;
  let architect;

  before(async () => {
    ws = workspace();
    engineer = await connect(ws.root, "engineer", ["--issue", "60"]);
    architect = await connect(ws.root, "architect", ["--issue", "60"]);
  });

  after(async () => {
    await engineer?.client.close();
    await architect?.client.close();
    ws?.cleanup();
  });

  const call = (side, name, args = {}) => side.client.callTool({ name, arguments: args });

  it("asks, is asked back, answers, and gets its answer: no deadlock, no escalation", async () => {
    const asked = await call(engineer, "clarify_ask", {
      to: "architect",
      topic: "Cache layer",
      question: "Redis or an in-process LRU?",
    });
    assert.equal(asked.isError, false, JSON.stringify(asked.structuredContent));
    assert.equal(asked.structuredContent.clarification.id, "CLR-60-001");

    // The default workflows do not let the architect ask the engineer outright…
    const outright = await call(architect, "clarify_ask", {
      to: "engineer",
      topic: "Cache layer",
      question: "How many sessions at peak?",
    });
    assert.equal(outright.isError, true);
    assert.equal(outright.structuredContent.code, "SCOPE_VIOLATION");
    // …a wrong link is refused…
    const wrong = await call(architect, "clarify_ask", {
      to: "product-manager",
      topic: "Cache layer",
      question: "How many sessions at peak?",
      askedBack: "CLR-60-001",
    });
    assert.equal(wrong.isError, true);
    assert.equal(wrong.structuredContent.code, "INVALID_INPUT");
    // …but asking back belongs to the engineer's question.
    const back = await call(architect, "clarify_ask", {
      to: "engineer",
      topic: "Cache layer",
      question: "How many sessions at peak?",
      askedBack: "CLR-60-001",
    });
    assert.equal(back.isError, false, JSON.stringify(back.structuredContent));
    const reply = back.structuredContent.clarification;
    assert.equal(reply.id, "CLR-60-002");
    assert.equal(reply.askedBack, "CLR-60-001");
    assert.equal(reply.from, "architect");
    assert.deepEqual(back.structuredContent.monitor.deadlocks, []);
    assert.deepEqual(back.structuredContent.monitor.escalated, []);

    const inbox = await call(engineer, "clarify_inbox");
    assert.deepEqual(inbox.structuredContent.clarifications.map((r) => r.id), ["CLR-60-002"]);

    const waitingArchitect = call(architect, "clarify_wait", { id: "CLR-60-002", timeoutSeconds: 20 });
    const answeredBack = await call(engineer, "clarify_answer", { id: "CLR-60-002", body: "About 20,000." });
    assert.equal(answeredBack.structuredContent.clarification.status, "answered");
    assert.equal((await waitingArchitect).structuredContent.answer, "About 20,000.");

    const waitingEngineer = call(engineer, "clarify_wait", { id: "CLR-60-001", timeoutSeconds: 20 });
    const answered = await call(architect, "clarify_answer", {
      id: "CLR-60-001",
      body: "Redis: 20,000 sessions must survive a deploy.",
    });
    assert.deepEqual(answered.structuredContent.monitor.abandoned, []);
    const waited = await waitingEngineer;
    assert.equal(waited.structuredContent.status, "answered");
    assert.equal(waited.structuredContent.answer, "Redis: 20,000 sessions must survive a deploy.");

    const monitor = cli(ws.root, ["clarify", "monitor"]);
    assert.deepEqual(monitor.report.escalated, []);
    assert.deepEqual(monitor.report.deadlocks, []);
  });

  it("waits with until: \"decision\" on an escalated question until a human decides", async () => {
    const asked = await call(engineer, "clarify_ask", {
      to: "architect",
      topic: "Budget",
      question: "May the cache cost more than the database?",
    });
    const id = asked.structuredContent.clarification.id;
    const escalated = cli(ws.root, ["clarify", "escalate", id, "-m", "A budget decision for a person"]);
    assert.equal(escalated.clarification.status, "escalated");

    // Without `until`, an escalated record ends the wait at once.
    const atOnce = await call(engineer, "clarify_wait", { id, timeoutSeconds: 5 });
    assert.equal(atOnce.structuredContent.status, "escalated");
    assert.equal(atOnce.structuredContent.done, true);

    // A human's resolution must say something.
    const silent = cli(ws.root, ["clarify", "resolve", id]);
    assert.equal(silent.ok, false);
    assert.equal(silent.error.code, "INVALID_INPUT");
    assert.match(silent.error.message, /a decision is needed/);

    const started = Date.now();
    const waiting = call(engineer, "clarify_wait", { id, until: "decision", timeoutSeconds: 20 });
    await new Promise((r) => setTimeout(r, 400));
    const decided = cli(ws.root, ["clarify", "resolve", id, "-m", "Yes, up to twice the database."]);
    assert.equal(decided.clarification.status, "resolved");
    const waited = await waiting;
    assert.ok(Date.now() - started >= 400, "the wait lasted until the decision");
    assert.equal(waited.structuredContent.status, "resolved");
    assert.equal(waited.structuredContent.done, true);
    assert.equal(waited.structuredContent.timedOut, false);
    assert.match(waited.content[0].text, /Yes, up to twice the database\./);

    const resume = await call(engineer, "clarify_resume_prompt", { id });
    assert.match(resume.content[0].text, /Yes, up to twice the database\./);
    assert.doesNotMatch(resume.content[0].text, /resolved by human/);
  });
});
