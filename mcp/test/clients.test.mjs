// `agentx mcp` driven by the official TypeScript SDK client: two agents' servers on one
// workspace, the CLI writing beside them.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

import { cli, connect, eventually, workspace } from "./harness.mjs";

const TOOLS = [
  "clarify_abandon",
  "clarify_answer",
  "clarify_ask",
  "clarify_audit",
  "clarify_check",
  "clarify_escalate",
  "clarify_follow_up",
  "clarify_inbox",
  "clarify_list",
  "clarify_monitor",
  "clarify_ready",
  "clarify_resolve",
  "clarify_resume_prompt",
  "clarify_search",
  "clarify_show",
  "clarify_wait",
];

describe("agentx mcp through the TypeScript SDK client", () => {
  let ws;
  let engineer;
  let architect;

  before(async () => {
    ws = workspace();
    engineer = await connect(ws.root, "engineer", ["--issue", "42"]);
    architect = await connect(ws.root, "architect");
  });

  after(async () => {
    await engineer?.client.close();
    await architect?.client.close();
    ws?.cleanup();
  });

  const call = (side, name, args = {}, options) =>
    side.client.callTool({ name, arguments: args }, undefined, options);

  it("lists the tools with input schemas derived from their inputs, and no actor field", async () => {
    const { tools } = await engineer.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, "object", tool.name);
      assert.equal(tool.inputSchema.additionalProperties, false, tool.name);
      assert.ok(tool.description.length > 40, `${tool.name} has a description for a model`);
      const props = Object.keys(tool.inputSchema.properties ?? {});
      for (const actor of ["from", "agent", "actor"]) {
        assert.ok(!props.includes(actor), `${tool.name} must not take '${actor}'`);
      }
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    const ask = byName.clarify_ask.inputSchema;
    assert.deepEqual([...ask.required].sort(), ["question", "to", "topic"]);
    assert.deepEqual(ask.properties.suggestions.items, { type: "string" });
    assert.ok([ask.properties.issue.type].flat().includes("integer"));
    const wait = byName.clarify_wait.inputSchema;
    assert.deepEqual(wait.required, ["id"]);
    assert.equal(wait.properties.timeoutSeconds.maximum, 50);
    // A typed answer may be a value alone (docs/protocol.md §22).
    assert.deepEqual(byName.clarify_answer.inputSchema.required.sort(), ["id"]);
    assert.ok("value" in byName.clarify_answer.inputSchema.properties);
    assert.ok("value" in byName.clarify_resolve.inputSchema.properties);
    for (const key of ["answerKind", "options", "allowOther", "minSelect", "maxSelect", "askAgain"]) {
      assert.ok(key in ask.properties, `clarify_ask takes ${key}`);
    }
    assert.deepEqual(Object.keys(byName.clarify_inbox.inputSchema.properties ?? {}), []);
    assert.equal(byName.clarify_show.annotations?.readOnlyHint, true);
    const list = byName.clarify_list.inputSchema;
    assert.equal(list.required, undefined, "every filter is optional");
    assert.deepEqual(list.properties.status.items.enum.sort(), [
      "abandoned", "answered", "escalated", "pending", "resolved", "stale",
    ]);
  });

  it("asks, the other side sees it in its inbox, answers, wait returns the answer, resolve and show", async () => {
    const asked = await call(engineer, "clarify_ask", {
      to: "architect",
      topic: "Cache layer",
      question: "Redis or an in-process LRU?",
      suggestions: ["redis", "lru"],
    });
    assert.equal(asked.isError, false);
    const record = asked.structuredContent.clarification;
    assert.equal(record.id, "CLR-42-001");
    assert.equal(record.from, "engineer", "the actor is the server's agent");
    assert.equal(record.status, "pending");
    assert.match(asked.content[0].text, /CLR-42-001 · issue #42 · pending/);

    const mine = await call(engineer, "clarify_inbox");
    assert.deepEqual(mine.structuredContent.clarifications, []);
    const theirs = await call(architect, "clarify_inbox");
    assert.deepEqual(
      theirs.structuredContent.clarifications.map((r) => r.id),
      ["CLR-42-001"],
    );
    assert.match(theirs.content[0].text, /Redis or an in-process LRU\?/);

    const waiting = call(engineer, "clarify_wait", { id: "CLR-42-001", timeoutSeconds: 20 });
    const answered = await call(architect, "clarify_answer", {
      id: "CLR-42-001",
      body: "Redis, see ADR-7.",
    });
    assert.equal(answered.structuredContent.clarification.status, "answered");
    const waited = await waiting;
    assert.equal(waited.isError, false);
    assert.equal(waited.structuredContent.status, "answered");
    assert.equal(waited.structuredContent.answer, "Redis, see ADR-7.");
    assert.equal(waited.structuredContent.done, true);
    assert.equal(waited.structuredContent.timedOut, false);
    assert.match(waited.content[0].text, /answered by architect:\n\nRedis, see ADR-7\./);

    const resolved = await call(engineer, "clarify_resolve", { id: "CLR-42-001", message: "Redis." });
    assert.equal(resolved.structuredContent.clarification.status, "resolved");

    // The text that resumes the engineer (seed 002's CLARIFICATION RESPONSE), as the CLI's.
    const resume = await call(engineer, "clarify_resume_prompt", { id: "CLR-42-001" });
    assert.match(resume.content[0].text, /^CLARIFICATION RESPONSE\nClarification: CLR-42-001\n/);
    assert.match(resume.content[0].text, /A1: Redis, see ADR-7\./);
    assert.equal(resume.structuredContent.text, cli(ws.root, ["clarify", "resume-prompt", "CLR-42-001"]).text);

    const shown = await call(architect, "clarify_show", { id: "CLR-42-001" });
    const thread = shown.structuredContent.clarification.thread.map((e) => [e.from, e.type]);
    assert.deepEqual(thread, [
      ["engineer", "question"],
      ["architect", "answer"],
      ["engineer", "resolution"],
    ]);
    const byIssue = await call(engineer, "clarify_show", {});
    assert.equal(byIssue.structuredContent.ledger.issueNumber, 42, "show defaults to --issue");
    const listed = await call(engineer, "clarify_list", { issue: 42, all: true });
    assert.deepEqual(listed.structuredContent.clarifications.map((r) => r.status), ["resolved"]);
    const open = await call(engineer, "clarify_list", { status: ["resolved", "pending"] });
    assert.deepEqual(open.structuredContent.clarifications.map((r) => r.id), ["CLR-42-001"]);
  });

  it("follows up: wait hears the next round's answer, not the previous one", async () => {
    const asked = await call(engineer, "clarify_ask", { to: "architect", topic: "Eviction", question: "Which policy?" });
    const id = asked.structuredContent.clarification.id;
    await call(architect, "clarify_answer", { id, body: "LRU." });
    const followed = await call(engineer, "clarify_follow_up", { id, question: "allkeys or volatile?" });
    assert.equal(followed.structuredContent.clarification.status, "pending");
    assert.equal(followed.structuredContent.clarification.round, 2);
    const early = await call(engineer, "clarify_wait", { id, timeoutSeconds: 0.2 });
    assert.equal(early.structuredContent.timedOut, true);
    assert.equal(early.structuredContent.answer, null);
    assert.match(early.content[0].text, /still pending/);
    await call(architect, "clarify_answer", { id, body: "allkeys-lru." });
    const late = await call(engineer, "clarify_wait", { id, timeoutSeconds: 5 });
    assert.equal(late.structuredContent.answer, "allkeys-lru.");
    const closed = await call(engineer, "clarify_resolve", { id });
    assert.equal(closed.structuredContent.clarification.status, "resolved");
  });

  it("refuses what the workflow forbids as an isError result with the store's code", async () => {
    // The feature workflow lets the architect ask only the product manager.
    const refused = await call(architect, "clarify_ask", {
      issue: 42,
      to: "engineer",
      topic: "Tests",
      question: "Unit or integration?",
    });
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent.code, "SCOPE_VIOLATION");
    assert.match(refused.content[0].text, /^SCOPE_VIOLATION: .*allowed: \[product-manager\]/);
  });

  it("acts only as its own agent", async () => {
    const asked = await call(engineer, "clarify_ask", { to: "architect", topic: "Auth", question: "JWT?" });
    const id = asked.structuredContent.clarification.id;
    const impostor = await call(engineer, "clarify_answer", { id, body: "yes", from: "architect" });
    assert.equal(impostor.isError, true);
    assert.equal(impostor.structuredContent.code, "INVALID_INPUT");
    assert.match(impostor.content[0].text, /unknown field `from`/);
    const notTheTarget = await call(engineer, "clarify_answer", { id, body: "yes" });
    assert.equal(notTheTarget.isError, true);
    assert.equal(notTheTarget.structuredContent.code, "NOT_PARTICIPANT");
    const withdrawn = await call(engineer, "clarify_abandon", { id, message: "found it in ADR-3" });
    assert.equal(withdrawn.structuredContent.clarification.status, "abandoned");
  });

  it("answers bad arguments with INVALID_INPUT and an unknown tool with a protocol error", async () => {
    const wrongType = await call(engineer, "clarify_wait", { id: 7 });
    assert.equal(wrongType.isError, true);
    assert.equal(wrongType.structuredContent.code, "INVALID_INPUT");
    const tooLong = await call(engineer, "clarify_wait", { id: "CLR-42-001", timeoutSeconds: 51 });
    assert.equal(tooLong.structuredContent.code, "INVALID_INPUT");
    const badId = await call(engineer, "clarify_show", { id: "CLR-x" });
    assert.equal(badId.structuredContent.code, "INVALID_ID");
    const huge = await call(engineer, "clarify_ask", {
      to: "architect",
      topic: "Huge",
      question: "x".repeat(300_000),
    });
    assert.equal(huge.structuredContent.code, "TEXT_TOO_LONG");
    await assert.rejects(call(engineer, "clarify_nothing"), /tool not found/);
  });

  it("sends progress notifications during a wait", async () => {
    const asked = await call(engineer, "clarify_ask", { to: "architect", topic: "Queue", question: "Kafka?" });
    const id = asked.structuredContent.clarification.id;
    const progress = [];
    const waited = await call(engineer, "clarify_wait", { id, timeoutSeconds: 11 }, {
      onprogress: (p) => progress.push(p),
      timeout: 30_000,
    });
    assert.equal(waited.structuredContent.timedOut, true);
    assert.equal(waited.structuredContent.status, "pending");
    // Progress goes out every 5 s; the SDK may drop the last one (TOOLCHAIN), so only the
    // first is asserted.
    assert.ok(progress.length >= 1, `progress events: ${JSON.stringify(progress)}`);
    assert.equal(progress[0].total, 11);
    assert.ok(progress[0].progress >= 4 && progress[0].progress <= 6, JSON.stringify(progress[0]));
    assert.match(progress[0].message, new RegExp(`${id} is still pending`));
  });

  it("notifies a subscriber when the CLI, another process, writes the ledger", async () => {
    const { resources } = await engineer.client.listResources();
    const uris = resources.map((r) => r.uri);
    assert.ok(uris.includes("agentx://issues/42"), uris.join(" "));
    assert.ok(uris.includes("agentx://clarifications/CLR-42-001"), uris.join(" "));

    const updated = [];
    engineer.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await engineer.client.subscribeResource({ uri: "agentx://issues/42" });
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(updated, [], "no change, no notification");

    const open = cli(ws.root, ["clarify", "list", "--issue", "42", "--status", "pending"]);
    const id = open.clarifications[0].id;
    const out = cli(ws.root, ["clarify", "answer", id, "--from", "architect", "--body", "Kafka."]);
    assert.equal(out.ok, true);
    await eventually(() => (updated.includes("agentx://issues/42") ? true : undefined), "resources/updated");

    const ledger = await engineer.client.readResource({ uri: "agentx://issues/42" });
    const doc = JSON.parse(ledger.contents[0].text);
    assert.equal(ledger.contents[0].mimeType, "application/json");
    assert.equal(doc.clarifications.find((r) => r.id === id).status, "answered");
    const thread = await engineer.client.readResource({ uri: `agentx://clarifications/${id}` });
    assert.equal(thread.contents[0].mimeType, "text/markdown");
    assert.match(thread.contents[0].text, /Kafka\./);

    await engineer.client.unsubscribeResource({ uri: "agentx://issues/42" });
    const before = updated.length;
    cli(ws.root, ["clarify", "resolve", id, "--from", "engineer"]);
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(updated.length, before, "no notification after unsubscribe");
  });

  it("checks a Layer 4 plan, checks it again after answers (ready_to_proceed) and audits the signed chain", async () => {
    for (const agent of ["agent-x", "engineer", "architect"]) {
      assert.equal(cli(ws.root, ["keys", "new", agent]).ok, true);
    }
    const plan = {
      gaps: [
        { id: "gap-001", field: "storage.ttl", severity: "BLOCK", question: "Which TTL?", blocked_operations: ["deploy"] },
        { id: "gap-002", field: "api.version", severity: "WARN", question: "v1 or v2 first?" },
      ],
    };
    const first = await call(engineer, "clarify_check", { issue: 77, to: "architect", plan });
    assert.equal(first.isError, false, first.content[0].text);
    const r = first.structuredContent;
    assert.equal(r.protocol_version, "1.0.0");
    assert.equal(r.status, "needs_clarification");
    assert.match(r.session_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, "a new UUID v4 session");
    assert.equal(r.agent_id, "engineer", "the actor is the server's agent");
    assert.deepEqual(r.gaps.map((g) => [g.id, g.clarificationId, g.status]), [
      ["gap-001", "CLR-77-001", "pending"],
      ["gap-002", "CLR-77-002", "pending"],
    ]);
    assert.deepEqual([r.accepted_gaps, r.blocking_gaps, r.warning_gaps], [0, 1, 1]);
    assert.match(first.content[0].text, /needs_clarification/);
    assert.equal(cli(ws.root, ["gate", "--issue", "77", "--operation", "deploy"]).error.code, "GATE_CLOSED");

    await call(architect, "clarify_answer", { id: "CLR-77-001", body: "One hour." });
    await call(engineer, "clarify_resolve", { id: "CLR-77-001" });
    const again = await call(engineer, "clarify_check", { issue: 77, to: "architect", plan: { ...plan, session_id: r.session_id } });
    assert.equal(again.structuredContent.status, "ready_to_proceed");
    assert.equal(again.structuredContent.idempotent, true, "nothing asked twice");
    assert.deepEqual(again.structuredContent.gaps.map((g) => g.status), ["resolved", "pending"]);
    assert.equal(cli(ws.root, ["gate", "--issue", "77", "--operation", "deploy"]).ok, true);

    const audit = await call(engineer, "clarify_audit", { id: "CLR-77-001" });
    assert.equal(audit.isError, false, audit.content[0].text);
    const a = audit.structuredContent;
    assert.equal(a.verified, true);
    assert.equal(a.session_id, r.session_id);
    assert.equal(a.chain[0].answer, "One hour.");
    assert.match(a.chain[0].ask_signature, /^ed25519:/);
    assert.match(a.chain[0].answer_signature, /^ed25519:/);
    assert.match(audit.content[0].text, /verified/);

    // A replaced public key: the audit is refused with the problem.
    const engineerPub = `${ws.root}/.agentx/keys/engineer.pub`;
    const { readFileSync, writeFileSync } = await import("node:fs");
    const saved = readFileSync(engineerPub);
    writeFileSync(engineerPub, readFileSync(`${ws.root}/.agentx/keys/architect.pub`));
    const tampered = await call(engineer, "clarify_audit", { id: "CLR-77-001" });
    writeFileSync(engineerPub, saved);
    assert.equal(tampered.isError, true);
    assert.equal(tampered.structuredContent.code, "SIGNATURE_INVALID");
    assert.equal(tampered.structuredContent.verified, false);
    assert.ok(tampered.structuredContent.problems.length > 0);
  });

  it("refuses a plan that is not Layer 4's shape, naming the gap, and writes nothing", async () => {
    const dup = await call(engineer, "clarify_check", {
      issue: 78, to: "architect",
      plan: { gaps: [
        { id: "g1", field: "a.b", severity: "BLOCK", question: "Q?" },
        { id: "g1", field: "c.d", severity: "WARN", question: "R?" },
      ] },
    });
    assert.equal(dup.isError, true);
    assert.equal(dup.structuredContent.code, "INVALID_INPUT");
    assert.match(dup.content[0].text, /gap 'g1' appears twice/);
    const severity = await call(engineer, "clarify_check", {
      issue: 78, to: "architect", plan: { gaps: [{ id: "g1", field: "a.b", severity: "CRITICAL", question: "Q?" }] },
    });
    assert.equal(severity.structuredContent.code, "INVALID_INPUT");
    const noQuestion = await call(engineer, "clarify_check", {
      issue: 78, to: "architect", plan: { gaps: [{ id: "g1", field: "a.b", severity: "BLOCK" }] },
    });
    assert.equal(noQuestion.structuredContent.code, "INVALID_INPUT");
    assert.match(noQuestion.content[0].text, /question/);
    assert.equal(cli(ws.root, ["clarify", "list", "--issue", "78", "--all"]).clarifications.length, 0);
    const audit = await call(engineer, "clarify_audit", { id: "CLR-78-001" });
    assert.equal(audit.structuredContent.code, "NOT_FOUND");
  });

  it("asks a choice, refuses a value that fits no option (INVALID_ANSWER), records a good one, and answers a re-ask from the record", async () => {
    const question = {
      issue: 42,
      to: "architect",
      topic: "Session store",
      question: "Where do sessions live?",
      answerKind: "choice",
      options: [
        { value: "redis", label: "Redis" },
        { value: "lru", label: "In-process LRU", description: "lost on deploy" },
      ],
      allowOther: false,
    };
    const asked = await call(engineer, "clarify_ask", question);
    assert.equal(asked.isError, false, asked.content[0].text);
    const record = asked.structuredContent.clarification;
    assert.equal(record.answerKind, "choice");
    assert.equal(record.options[1].description, "lost on deploy");
    assert.match(record.fingerprint, /^[0-9a-f]{64}$/);

    const bad = await call(architect, "clarify_answer", { id: record.id, value: "memcached" });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent.code, "INVALID_ANSWER");
    assert.equal(
      bad.content[0].text,
      "INVALID_ANSWER: 'memcached' is not an option; allowed: redis (Redis), lru (In-process LRU)",
    );
    const good = await call(architect, "clarify_answer", { id: record.id, value: "redis" });
    assert.equal(good.isError, false, good.content[0].text);
    const answer = good.structuredContent.clarification.thread.at(-1);
    assert.deepEqual([answer.type, answer.body, answer.value], ["answer", "Redis", "redis"]);

    // The same question again, spelled otherwise: the record that holds it, with its answer.
    const again = await call(engineer, "clarify_ask", { ...question, question: "where do sessions LIVE" });
    assert.equal(again.isError, false);
    assert.equal(again.structuredContent.reused, true);
    assert.equal(again.structuredContent.clarification.id, record.id);
    assert.equal(again.structuredContent.events[0].type, "clarification-reused");
    assert.match(again.content[0].text, /asked before/);

    const resolved = await call(engineer, "clarify_resolve", { id: record.id, value: "redis" });
    assert.equal(resolved.isError, false, resolved.content[0].text);
    assert.equal(resolved.structuredContent.clarification.thread.at(-1).value, "redis");
    const anew = await call(engineer, "clarify_ask", { ...question, askAgain: true });
    assert.equal(anew.structuredContent.reused, undefined);
    assert.notEqual(anew.structuredContent.clarification.id, record.id);
  });

  it("reports ready and monitor runs", async () => {
    const ready = await call(engineer, "clarify_ready");
    assert.equal(ready.structuredContent.ok, true);
    assert.ok(Array.isArray(ready.structuredContent.issues));
    const monitor = await call(engineer, "clarify_monitor", { dryRun: true });
    assert.equal(monitor.structuredContent.ok, true);
    assert.match(monitor.content[0].text, /dry run/);
  });
});
