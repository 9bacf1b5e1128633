// Issue 49: asking back wakes the asker. The engineer waits on its question; the architect
// asks back (`askedBack`); the engineer's `clarify_wait` returns at once with outcome
// "asked-back" and the question to answer first — over stdio (`agentx mcp`, one process per
// agent) and over HTTP (`/mcp` of `agentx serve`, one token per agent), with two official
// TypeScript SDK clients. And what an agent gets after a person decides in the browser:
// `decision` {by, via, value, text, at} in wait and show, `answer` its text, and the resume
// prompt naming the chosen option.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { cli, connect, workspace } from "./harness.mjs";
import { connectHttp, serve, signIn, token } from "./http-harness.mjs";

const call = (side, name, args = {}) => side.client.callTool({ name, arguments: args });

const OPTIONS = [
  { value: "20k", label: "About 20,000" },
  { value: "200k", label: "About 200,000" },
];

/** The engineer asks, waits; the architect asks back while it waits: the wait's answer. */
async function askedBackWhileWaiting(engineer, architect, issue) {
  const asked = await call(engineer, "clarify_ask", {
    issue,
    to: "architect",
    topic: "Sessions",
    question: "Must sessions survive a deploy?",
  });
  assert.equal(asked.isError, false, JSON.stringify(asked.structuredContent));
  const id = asked.structuredContent.clarification.id;
  const waiting = call(engineer, "clarify_wait", { id, timeoutSeconds: 30 });
  await new Promise((r) => setTimeout(r, 300));
  const back = await call(architect, "clarify_ask", {
    issue,
    to: "engineer",
    topic: "Sessions",
    question: "How many sessions at peak?",
    askedBack: id,
    answerKind: "choice",
    options: OPTIONS,
  });
  assert.equal(back.isError, false, JSON.stringify(back.structuredContent));
  const askedBackAt = Date.now();
  const waited = await waiting;
  return { id, backId: back.structuredContent.clarification.id, waited, ms: Date.now() - askedBackAt };
}

function assertAskedBack({ id, backId, waited, ms }) {
  assert.equal(waited.isError, false, JSON.stringify(waited.structuredContent));
  const s = waited.structuredContent;
  assert.equal(s.outcome, "asked-back", JSON.stringify(s));
  assert.ok(ms < 1000, `the wait returned ${ms} ms after the ask-back`);
  assert.equal(s.id, id);
  assert.equal(s.status, "pending");
  assert.equal(s.timedOut, false);
  assert.equal(s.done, false);
  assert.equal(s.askedBack.id, backId);
  assert.equal(s.askedBack.from, "architect");
  assert.equal(s.askedBack.question, "How many sessions at peak?");
  assert.equal(s.askedBack.answerKind, "choice");
  assert.deepEqual(s.askedBack.options, OPTIONS);
  assert.equal(s.askedBack.askedBackFrom, id);
  const text = waited.content[0].text;
  assert.match(text, new RegExp(`answer ${backId} first \\(clarify_answer\\), then wait again`));
  assert.match(text, /How many sessions at peak\?/);
  assert.match(text, /20k \(About 20,000\)/);
}

/** The engineer answers the question back; the next wait gets the architect's answer. */
async function answerBackThenWait(engineer, architect, { id, backId }) {
  // Waiting again before answering returns at once again: the architect still waits.
  const again = await call(engineer, "clarify_wait", { id, timeoutSeconds: 20 });
  assert.equal(again.structuredContent.outcome, "asked-back");
  // The architect waiting on its question back is not woken by the question it asked back
  // about: it waits for the engineer's answer.
  const architectWaits = call(architect, "clarify_wait", { id: backId, timeoutSeconds: 20 });
  await new Promise((r) => setTimeout(r, 300));
  const answered = await call(engineer, "clarify_answer", { id: backId, value: "20k" });
  assert.equal(answered.isError, false, JSON.stringify(answered.structuredContent));
  const heard = await architectWaits;
  assert.equal(heard.structuredContent.outcome, "answered", JSON.stringify(heard.structuredContent));
  assert.equal(heard.structuredContent.answer, "About 20,000");
  const waiting = call(engineer, "clarify_wait", { id, timeoutSeconds: 20 });
  await new Promise((r) => setTimeout(r, 200));
  await call(architect, "clarify_answer", { id, body: "Yes: keep 20,000 sessions in Redis." });
  const waited = await waiting;
  assert.equal(waited.structuredContent.outcome, "answered");
  assert.equal(waited.structuredContent.answer, "Yes: keep 20,000 sessions in Redis.");
}

describe("asking back wakes the asker, over stdio", () => {
  let ws;
  let engineer;
  let architect;
  before(async () => {
    ws = workspace();
    engineer = await connect(ws.root, "engineer");
    architect = await connect(ws.root, "architect");
  });
  after(async () => {
    await engineer?.client.close();
    await architect?.client.close();
    ws?.cleanup();
  });

  it("the engineer's wait returns asked-back in under a second, then the conversation goes on", async () => {
    const r = await askedBackWhileWaiting(engineer, architect, 50);
    assertAskedBack(r);
    await answerBackThenWait(engineer, architect, r);
  });

  it("a pending question to the waiter on the same issue wakes it too", async () => {
    const ask = async (topic, question) =>
      (await call(engineer, "clarify_ask", { issue: 51, to: "architect", topic, question }))
        .structuredContent.clarification.id;
    const id = await ask("Retention", "How long do we keep logs?");
    const other = await ask("Export", "Is the export in scope?");
    // The architect asks back about the engineer's other question, not the awaited one (not
    // blocking: a blocking one would close a wait-for cycle with the awaited question, which
    // the monitor escalates as a deadlock).
    const back = await call(architect, "clarify_ask", {
      issue: 51,
      to: "engineer",
      topic: "Export",
      question: "CSV only, or XLSX too?",
      askedBack: other,
      blocking: false,
    });
    assert.equal(back.isError, false, JSON.stringify(back.structuredContent));
    const waited = await call(engineer, "clarify_wait", { id, timeoutSeconds: 10 });
    assert.equal(waited.structuredContent.outcome, "asked-back");
    assert.equal(waited.structuredContent.askedBack.id, back.structuredContent.clarification.id);
    assert.equal(waited.structuredContent.askedBack.askedBackFrom, other);
    assert.equal(waited.structuredContent.askedBack.answerKind, "text");
    assert.match(waited.content[0].text, /on the same issue/);
  });
});

describe("asking back wakes the asker, over HTTP", () => {
  let ws;
  let server;
  let engineer;
  let architect;
  before(async () => {
    ws = workspace();
    const e = token(ws.root, "agent", "engineer");
    const a = token(ws.root, "agent", "architect");
    server = await serve(ws.root);
    engineer = await connectHttp(server.url, e, { name: "engineer" });
    architect = await connectHttp(server.url, a, { name: "architect" });
  });
  after(async () => {
    await engineer?.client.close();
    await architect?.client.close();
    await server?.stop();
    ws?.cleanup();
  });

  it("the engineer's wait returns asked-back in under a second, then the conversation goes on", async () => {
    const r = await askedBackWhileWaiting(engineer, architect, 52);
    assertAskedBack(r);
    await answerBackThenWait(engineer, architect, r);
  });
});

describe("what an agent gets after a person decides in the browser", () => {
  let ws;
  let server;
  let engineer;
  before(async () => {
    ws = workspace();
    const e = token(ws.root, "agent", "engineer");
    server = await serve(ws.root, ["--no-worker", "--as", "lead"]);
    engineer = await connectHttp(server.url, e, { name: "engineer" });
  });
  after(async () => {
    await engineer?.client.close();
    await server?.stop();
    ws?.cleanup();
  });

  it("decision {by, via, value, text, at} in wait and show, answer its text, the resume prompt names the option", async () => {
    const asked = await call(engineer, "clarify_ask", {
      issue: 53,
      to: "architect",
      topic: "Cache",
      question: "Which cache?",
      answerKind: "choice",
      options: [
        { value: "redis", label: "Redis" },
        { value: "lru", label: "In-process LRU" },
      ],
    });
    const id = asked.structuredContent.clarification.id;
    const escalated = await call(engineer, "clarify_escalate", { id, message: "the lead decides" });
    assert.equal(escalated.isError, false);
    const waiting = call(engineer, "clarify_wait", { id, until: "decision", timeoutSeconds: 30 });
    await new Promise((r) => setTimeout(r, 300));
    // The inbox page's own request: the session cookie, the Origin and the page's CSRF token.
    const session = await signIn(server);
    const decided = await session.call("decide", { id, value: "lru", message: "One process is enough." });
    assert.equal(decided.ok, true, JSON.stringify(decided));

    const waited = (await waiting).structuredContent;
    assert.equal(waited.status, "resolved");
    const d = waited.decision;
    assert.equal(d.by, "lead");
    assert.equal(d.via, "web");
    assert.equal(d.value, "lru");
    assert.equal(d.label, "In-process LRU");
    assert.equal(d.text, "One process is enough.");
    assert.match(d.at, /^\d{4}-\d\d-\d\dT/);
    assert.equal(waited.answer, "One process is enough.");
    const entry = waited.clarification.thread.at(-1);
    assert.equal(d.at, entry.timestamp);

    const shown = (await call(engineer, "clarify_show", { id })).structuredContent;
    assert.deepEqual(shown.decision, d);
    assert.deepEqual(cli(ws.root, ["clarify", "show", id]).decision, d);

    const resume = (await call(engineer, "clarify_resume_prompt", { id })).content[0].text;
    assert.match(resume, /Human decision: lru \(In-process LRU\)/);
    assert.match(resume, /Decided by: lead via web/);
    assert.match(resume, /Note: One process is enough\./);
    assert.doesNotMatch(resume, /no answer yet/);
  });
});
