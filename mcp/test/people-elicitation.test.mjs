// Elicitation with people (issue 43, docs/protocol.md §37): a record assigned to people is put
// to the asking agent's client only when its token (or `agentx mcp --operator`) names the
// person who runs it and they may decide the record; the decision is then theirs. Driven by
// the official TypeScript SDK client's ElicitRequestSchema handler, over `/mcp` of
// `agentx serve` and over stdio.
import assert from "node:assert/strict";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { AGENTX, cli, workspace } from "./harness.mjs";
import { connectHttp, serve } from "./http-harness.mjs";

const FORMS = { elicitation: { form: {} } };
const PEOPLE = '[people.alice]\nroles = ["lead"]\n\n[people.bob]\n';

function withPeople(root) {
  writeFileSync(join(root, ".agentx", "people.toml"), PEOPLE);
  appendFileSync(join(root, ".agentx", "config.toml"), '\n[people]\ndefault_deciders = ["role:lead"]\n');
}

function answering(side, reply) {
  const seen = [];
  side.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    seen.push(request.params);
    return reply(request.params);
  });
  return seen;
}

async function asked(side, issue) {
  const r = await side.client.callTool({
    name: "clarify_ask",
    arguments: { issue, to: "architect", topic: "Rollout", question: "Canary or blue-green?" },
  });
  assert.equal(r.isError, false, JSON.stringify(r.structuredContent));
  return r.structuredContent.clarification.id;
}

async function escalate(side, id) {
  const up = await side.client.callTool({
    name: "clarify_escalate",
    arguments: { id, message: "the architect is away: a lead decides" },
  });
  assert.equal(up.isError, false, JSON.stringify(up.structuredContent));
  return up.structuredContent.clarification;
}

const wait = (side, id, seconds = 5) =>
  side.client.callTool({ name: "clarify_wait", arguments: { id, until: "decision", timeoutSeconds: seconds } });

const last = (root, id) => cli(root, ["clarify", "show", id]).clarification;

function mint(root, agent, operator) {
  const made = cli(root, ["tokens", "new", "--agent", agent, "--operator", operator]);
  assert.equal(made.ok, true, JSON.stringify(made));
  assert.equal(made.token.operator, operator);
  return made.token.token;
}

describe("elicitation with people over HTTP", () => {
  let ws;
  let server;
  before(async () => {
    ws = workspace();
    withPeople(ws.root);
    server = await serve(ws.root);
  });
  after(async () => {
    await server?.stop();
    ws?.cleanup();
  });

  it("an operator who is not a decider is not asked", async () => {
    const side = await connectHttp(server.url, mint(ws.root, "engineer", "bob"), { capabilities: FORMS });
    try {
      const seen = answering(side, () => ({ action: "accept", content: { answer: "Canary" } }));
      const id = await asked(side, 60);
      assert.deepEqual((await escalate(side, id)).assigned, ["alice"]);
      const waited = await wait(side, id, 2);
      assert.equal(waited.structuredContent.status, "escalated");
      assert.equal(waited.structuredContent.timedOut, true);
      assert.equal(seen.length, 0, "bob's client was not asked");
      assert.match(waited.content[0].text, /Assigned to alice/, "the agent is told whom it waits on");
      assert.equal(last(ws.root, id).status, "escalated");
    } finally {
      await side.client.close();
    }
  });

  it("a deciding operator is asked without a name field, and decides as themselves", async () => {
    // The engineer's token now says alice runs its client.
    assert.equal(cli(ws.root, ["tokens", "revoke", "engineer"]).ok, true);
    const side = await connectHttp(server.url, mint(ws.root, "engineer", "alice"), { capabilities: FORMS });
    try {
      // A name typed anyway is not who decides: the token says who the operator is.
      const seen = answering(side, () => ({ action: "accept", content: { answer: "Canary first", person: "bob" } }));
      const id = await asked(side, 61);
      await escalate(side, id);
      const waited = await wait(side, id);
      assert.equal(waited.structuredContent.status, "resolved", JSON.stringify(waited.structuredContent));
      assert.equal(seen.length, 1);
      assert.equal(seen[0].requestedSchema.properties.person, undefined, "no name asked");
      const entry = last(ws.root, id).thread.at(-1);
      assert.deepEqual([entry.type, entry.by, entry.via, entry.body], ["resolution", "alice", "elicitation", "Canary first"]);
    } finally {
      await side.client.close();
    }
  });
});

describe("elicitation with people over stdio", () => {
  const stdio = async (root, extra = []) => {
    const transport = new StdioClientTransport({
      command: AGENTX,
      args: ["mcp", "--agent", "engineer", "--root", root, ...extra],
      stderr: "pipe",
    });
    const client = new Client({ name: "stdio-people", version: "1.0.0" }, { capabilities: FORMS });
    await client.connect(transport);
    return { client, transport };
  };

  it("without --operator, an assigned record is not put to the client", async () => {
    const ws = workspace();
    withPeople(ws.root);
    const side = await stdio(ws.root);
    try {
      const seen = answering(side, () => ({ action: "accept", content: { answer: "mine", person: "alice" } }));
      const id = await asked(side, 62);
      await escalate(side, id);
      assert.equal((await wait(side, id, 2)).structuredContent.timedOut, true);
      assert.equal(seen.length, 0);
    } finally {
      await side.client.close();
      ws.cleanup();
    }
  });

  it("a name typed in the form is not taken for a person once people are defined", async () => {
    // Escalated before people.toml existed: nobody was assigned, so the client is asked; the
    // typed "alice" is no proof of being alice, so the decision is the operator's.
    const ws = workspace();
    const side = await stdio(ws.root);
    try {
      const seen = answering(side, () => ({ action: "accept", content: { answer: "Blue-green", person: "alice" } }));
      const id = await asked(side, 63);
      await escalate(side, id);
      withPeople(ws.root);
      assert.equal((await wait(side, id)).structuredContent.status, "resolved");
      assert.equal(seen.length, 1);
      const entry = last(ws.root, id).thread.at(-1);
      assert.deepEqual([entry.by, entry.via], ["operator of engineer", "elicitation"]);
    } finally {
      await side.client.close();
      ws.cleanup();
    }
  });

  it("--operator alice is asked about what alice decides, and decides as alice", async () => {
    const ws = workspace();
    withPeople(ws.root);
    const side = await stdio(ws.root, ["--operator", "alice"]);
    try {
      const seen = answering(side, () => ({ action: "accept", content: { answer: "Canary" } }));
      const id = await asked(side, 64);
      await escalate(side, id);
      assert.equal((await wait(side, id)).structuredContent.status, "resolved");
      assert.equal(seen.length, 1);
      const entry = last(ws.root, id).thread.at(-1);
      assert.deepEqual([entry.by, entry.via], ["alice", "elicitation"]);
    } finally {
      await side.client.close();
      ws.cleanup();
    }
  });
});
