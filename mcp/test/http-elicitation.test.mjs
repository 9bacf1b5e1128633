// Elicitation (docs/protocol.md §24): when an agent waits on its own escalated record, the hub asks the
// person running the agent's client with a form built from the answer kind. Driven by the
// TypeScript SDK client's ElicitRequestSchema handler, over HTTP (`/mcp` of `agentx serve`)
// and over stdio (`agentx mcp`).
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { AGENTX, cli, workspace } from "./harness.mjs";
import { connectHttp, serve, token } from "./http-harness.mjs";

const FORMS = { elicitation: { form: {} } };

/** A client whose user answers every form with `reply(request)`; the forms it saw. */
function answering(side, reply) {
  const seen = [];
  side.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    seen.push(request.params);
    return reply(request.params);
  });
  return seen;
}

/** Asks `args` as `asker`, then escalates it: an escalated record without a decision. */
async function escalated(asker, args) {
  const asked = await asker.client.callTool({
    name: "clarify_ask",
    arguments: { to: "architect", topic: "Decision", ...args },
  });
  assert.equal(asked.isError, false, JSON.stringify(asked.structuredContent));
  const id = asked.structuredContent.clarification.id;
  const up = await asker.client.callTool({
    name: "clarify_escalate",
    arguments: { id, message: "the architect is away: the product owner decides" },
  });
  assert.equal(up.isError, false, JSON.stringify(up.structuredContent));
  return id;
}

const wait = (side, id) =>
  side.client.callTool({ name: "clarify_wait", arguments: { id, timeoutSeconds: 5 } });

const resolution = (root, id) => {
  const r = cli(root, ["clarify", "show", id]).clarification;
  return { status: r.status, entry: r.thread.at(-1), length: r.thread.length };
};

describe("elicitation over HTTP", () => {
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

  const OPTIONS = [
    { value: "redis", label: "Redis" },
    { value: "lru", label: "In-process LRU" },
    { value: "memcached" },
  ];
  const cases = [
    { kind: "confirm", args: { answerKind: "confirm" }, content: { decision: true }, value: true, body: "yes" },
    { kind: "choice", args: { answerKind: "choice", options: OPTIONS }, content: { choice: "lru" }, value: "lru" },
    {
      kind: "multi_choice",
      args: { answerKind: "multi_choice", options: OPTIONS, maxSelect: 2 },
      content: { choices: ["redis", "memcached"] },
      value: ["redis", "memcached"],
    },
    { kind: "text", args: {}, content: { answer: "Postgres, with a read replica" }, body: "Postgres, with a read replica" },
  ];

  for (const [n, c] of cases.entries()) {
    it(`accept on a ${c.kind} question resolves the record via elicitation`, async () => {
      const side = await connectHttp(server.url, secret, { capabilities: FORMS });
      try {
        const seen = answering(side, () => ({ action: "accept", content: c.content }));
        const id = await escalated(side, { issue: 80 + n, question: `The ${c.kind} question?`, ...c.args });
        const waited = await wait(side, id);
        assert.equal(waited.isError, false, JSON.stringify(waited.structuredContent));
        assert.equal(waited.structuredContent.status, "resolved");
        assert.equal(seen.length, 1);
        assert.match(seen[0].message, new RegExp(`The ${c.kind} question`));
        assert.match(seen[0].message, /the product owner decides/);
        const schema = seen[0].requestedSchema;
        assert.equal(schema.type, "object");
        if (c.kind === "confirm") assert.equal(schema.properties.decision.type, "boolean");
        if (c.kind === "choice") {
          assert.deepEqual(schema.properties.choice.oneOf.map((o) => o.const), ["redis", "lru", "memcached"]);
          assert.equal(schema.properties.choice.oneOf[1].title, "In-process LRU");
          assert.equal(schema.properties.other.type, "string");
        }
        if (c.kind === "multi_choice") {
          assert.equal(schema.properties.choices.type, "array");
          assert.equal(schema.properties.choices.maxItems, 2);
          assert.equal(schema.properties.choices.minItems, 1);
        }
        if (c.kind === "text") assert.equal(schema.properties.answer.type, "string");

        const { status, entry } = resolution(ws.root, id);
        assert.equal(status, "resolved");
        assert.equal(entry.type, "resolution");
        assert.equal(entry.from, "human");
        assert.equal(entry.by, "operator of engineer");
        assert.equal(entry.via, "elicitation");
        if ("value" in c) assert.deepEqual(entry.value, c.value);
        if (c.body) assert.equal(entry.body, c.body);
      } finally {
        await side.client.close();
      }
    });
  }

  it("decline writes nothing, and the record is not asked twice in a session", async () => {
    const side = await connectHttp(server.url, secret, { capabilities: FORMS });
    try {
      const seen = answering(side, () => ({ action: "decline" }));
      const id = await escalated(side, { issue: 90, question: "Ship on Friday?", answerKind: "confirm" });
      const before = resolution(ws.root, id);
      const first = await wait(side, id);
      assert.equal(first.structuredContent.status, "escalated");
      const second = await wait(side, id);
      assert.equal(second.structuredContent.status, "escalated");
      assert.equal(seen.length, 1);
      const now = resolution(ws.root, id);
      assert.equal(now.status, "escalated");
      assert.equal(now.length, before.length);
    } finally {
      await side.client.close();
    }
  });

  it("cancel writes nothing either", async () => {
    const side = await connectHttp(server.url, secret, { capabilities: FORMS });
    try {
      const seen = answering(side, () => ({ action: "cancel" }));
      const id = await escalated(side, { issue: 91, question: "Which region?" });
      assert.equal((await wait(side, id)).structuredContent.status, "escalated");
      assert.equal(seen.length, 1);
      assert.equal(resolution(ws.root, id).status, "escalated");
    } finally {
      await side.client.close();
    }
  });

  it("a client without the capability gets no form: the wait behaves as before", async () => {
    const side = await connectHttp(server.url, secret);
    try {
      const id = await escalated(side, { issue: 92, question: "Which CDN?" });
      const waited = await wait(side, id);
      assert.equal(waited.structuredContent.status, "escalated");
      assert.equal(waited.structuredContent.timedOut, false);
      assert.equal(resolution(ws.root, id).status, "escalated");
    } finally {
      await side.client.close();
    }
  });
});

describe("elicitation over stdio, and [mcp] elicit = false", () => {
  const stdio = async (root) => {
    const transport = new StdioClientTransport({
      command: AGENTX,
      args: ["mcp", "--agent", "engineer", "--root", root],
      stderr: "pipe",
    });
    const client = new Client({ name: "stdio-forms", version: "1.0.0" }, { capabilities: FORMS });
    await client.connect(transport);
    return { client, transport };
  };

  it("accept over stdio resolves the record via elicitation", async () => {
    const ws = workspace();
    const side = await stdio(ws.root);
    try {
      const seen = answering(side, () => ({ action: "accept", content: { answer: "Blue-green" } }));
      const id = await escalated(side, { issue: 93, question: "Which rollout?" });
      assert.equal((await wait(side, id)).structuredContent.status, "resolved");
      assert.equal(seen.length, 1);
      const { entry } = resolution(ws.root, id);
      assert.equal(entry.by, "operator of engineer");
      assert.equal(entry.via, "elicitation");
      assert.equal(entry.body, "Blue-green");
    } finally {
      await side.client.close();
      ws.cleanup();
    }
  });

  it("[mcp] elicit = \"never\" asks nobody, though the client declares the capability", async () => {
    const ws = workspace();
    writeFileSync(join(ws.root, ".agentx", "config.toml"), '[mcp]\nelicit = "never"\n');
    const side = await stdio(ws.root);
    try {
      const seen = answering(side, () => ({ action: "accept", content: { answer: "anything" } }));
      const id = await escalated(side, { issue: 95, question: "Which rollout?" });
      const waited = await side.client.callTool({
        name: "clarify_wait",
        arguments: { id, until: "decision", timeoutSeconds: 2 },
      });
      assert.equal(waited.structuredContent.timedOut, true);
      assert.equal(seen.length, 0);
      assert.equal(resolution(ws.root, id).status, "escalated");
    } finally {
      await side.client.close();
      ws.cleanup();
    }
  });

  it("an escalation a person made is never elicited back to the requester's client", async () => {
    // Issue 48 item 8: the asking agent's operator could decide what a person had escalated
    // to someone else, as `from: "human"`, ~60 ms later.
    const ws = workspace();
    const side = await stdio(ws.root);
    try {
      const seen = answering(side, () => ({ action: "accept", content: { answer: "mine" } }));
      const asked = await side.client.callTool({
        name: "clarify_ask",
        arguments: { issue: 96, to: "architect", topic: "Budget", question: "Spend more?" },
      });
      const id = asked.structuredContent.clarification.id;
      const byPerson = cli(ws.root, ["clarify", "escalate", id, "-m", "the lead decides this"]);
      assert.equal(byPerson.clarification.status, "escalated");
      assert.equal(byPerson.clarification.thread.at(-1).from, "human");
      const waited = await side.client.callTool({
        name: "clarify_wait",
        arguments: { id, until: "decision", timeoutSeconds: 2 },
      });
      assert.equal(waited.structuredContent.timedOut, true);
      assert.equal(seen.length, 0);
      assert.equal(resolution(ws.root, id).status, "escalated");
    } finally {
      await side.client.close();
      ws.cleanup();
    }
  });

  it("records the person's name when the form gives it", async () => {
    const ws = workspace();
    const side = await stdio(ws.root);
    try {
      const seen = answering(side, () => ({
        action: "accept",
        content: { answer: "Canary first", person: "alice" },
      }));
      const id = await escalated(side, { issue: 97, question: "Which rollout?" });
      const waited = await wait(side, id);
      assert.equal(waited.structuredContent.status, "resolved");
      assert.equal(seen[0].requestedSchema.properties.person.type, "string");
      const { entry } = resolution(ws.root, id);
      assert.equal(entry.by, "alice");
      assert.equal(entry.via, "elicitation");
      assert.equal(waited.structuredContent.decision.by, "alice");
      assert.equal(waited.structuredContent.decision.via, "elicitation");
    } finally {
      await side.client.close();
      ws.cleanup();
    }
  });

  it("[mcp] elicit = false asks nobody", async () => {
    const ws = workspace();
    writeFileSync(join(ws.root, ".agentx", "config.toml"), "[mcp]\nelicit = false\n");
    const side = await stdio(ws.root);
    try {
      const seen = answering(side, () => ({ action: "accept", content: { answer: "anything" } }));
      const id = await escalated(side, { issue: 94, question: "Which rollout?" });
      assert.equal((await wait(side, id)).structuredContent.status, "escalated");
      assert.equal(seen.length, 0);
      assert.equal(resolution(ws.root, id).status, "escalated");
    } finally {
      await side.client.close();
      ws.cleanup();
    }
  });
});
