// Elicitation for 2026-07-28 clients (docs/protocol.md §24): clarify_wait on the agent's own
// escalated record returns an InputRequiredResult (one form, a sealed requestState); the
// 2.x client fills the form through its elicitation/create handler and retries. Accept
// decides via elicitation, decline writes nothing; a raw HTTP client sends the states no
// client should: altered, expired (re-signed with the server's own key, read from the state
// store as its operator could), replayed, another agent's, another record's.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { cli, workspace } from "./harness.mjs";
import { post, serve, token } from "./http-harness.mjs";
import { MODERN, connectModern, connectModernHttp } from "./modern-harness.mjs";

const FORMS = { elicitation: { form: {} } };
const OPTIONS = [
  { value: "redis", label: "Redis" },
  { value: "lru", label: "In-process LRU" },
];

/** Every form the client's user saw; each answered with `reply(params)`. */
function answering(side, reply) {
  const seen = [];
  side.client.setRequestHandler("elicitation/create", async (request) => {
    seen.push(request.params);
    return reply(request.params);
  });
  return seen;
}

async function escalated(c, issue, extra = {}) {
  const asked = await c.callTool({
    name: "clarify_ask",
    arguments: { to: "architect", topic: "Cache", question: `Which cache (${issue})?`, issue, ...extra },
  });
  assert.equal(asked.isError, false, JSON.stringify(asked.structuredContent));
  const id = asked.structuredContent.clarification.id;
  const up = await c.callTool({ name: "clarify_escalate", arguments: { id, message: "the architect is away" } });
  assert.equal(up.isError, false, JSON.stringify(up.structuredContent));
  return id;
}

const record = (root, id) => cli(root, ["clarify", "show", id]).clarification;

/** Accept resolves via elicitation; decline writes nothing and is not asked again. */
async function roundTrips(side, root, issue) {
  const c = side.client;
  let reply = () => ({ action: "accept", content: { choice: "lru", message: "small data" } });
  const seen = answering(side, (p) => reply(p));
  const id = await escalated(c, issue, { answerKind: "choice", options: OPTIONS });
  const waited = await c.callTool({ name: "clarify_wait", arguments: { id, timeoutSeconds: 5 } });
  assert.equal(waited.structuredContent.status, "resolved", JSON.stringify(waited.structuredContent));
  assert.equal(seen.length, 1);
  assert.equal(seen[0].mode, "form");
  assert.match(seen[0].message, /the architect is away/);
  assert.deepEqual(seen[0].requestedSchema.properties.choice.oneOf.map((o) => o.const), ["redis", "lru"]);
  const last = record(root, id).thread.at(-1);
  assert.equal(last.type, "resolution");
  assert.equal(last.via, "elicitation");
  assert.equal(last.by, "operator of engineer");
  assert.equal(last.value, "lru");

  reply = () => ({ action: "decline" });
  const other = await escalated(c, issue + 1, { answerKind: "confirm" });
  const length = record(root, other).thread.length;
  const first = await c.callTool({ name: "clarify_wait", arguments: { id: other, timeoutSeconds: 1 } });
  assert.equal(first.structuredContent.status, "escalated");
  const again = await c.callTool({ name: "clarify_wait", arguments: { id: other, timeoutSeconds: 1 } });
  assert.equal(again.structuredContent.status, "escalated");
  assert.equal(seen.length, 2, "a declined form is not offered again while the record is as it was");
  assert.equal(record(root, other).thread.length, length, "a decline writes nothing");
}

describe("input-required elicitation, 2.x client over stdio", () => {
  let ws;
  before(() => (ws = workspace()));
  after(() => ws?.cleanup());

  it("accept decides via elicitation, decline writes nothing", async () => {
    const side = await connectModern(ws.root, "engineer", { capabilities: FORMS });
    try {
      await roundTrips(side, ws.root, 400);
    } finally {
      await side.client.close();
    }
  });

  it("[mcp] elicit = \"never\" offers no form to a 2026-07-28 client either", async () => {
    const own = workspace();
    writeFileSync(join(own.root, ".agentx", "config.toml"), '[mcp]\nelicit = "never"\n');
    const side = await connectModern(own.root, "engineer", { capabilities: FORMS });
    try {
      const seen = answering(side, () => ({ action: "accept", content: { answer: "anything" } }));
      const id = await escalated(side.client, 405);
      const waited = await side.client.callTool({ name: "clarify_wait", arguments: { id, timeoutSeconds: 1 } });
      assert.equal(waited.structuredContent.status, "escalated");
      assert.equal(seen.length, 0);
    } finally {
      await side.client.close();
      own.cleanup();
    }
  });

  it("a 2026-07-28 client without form elicitation gets the plain wait", async () => {
    const side = await connectModern(ws.root, "engineer");
    try {
      const id = await escalated(side.client, 410);
      const waited = await side.client.callTool({ name: "clarify_wait", arguments: { id, timeoutSeconds: 1 } });
      assert.equal(waited.structuredContent.status, "escalated");
    } finally {
      await side.client.close();
    }
  });
});

describe("input-required elicitation over streamable HTTP", () => {
  let ws;
  let server;
  let engineer;
  let architect;
  before(async () => {
    ws = workspace();
    engineer = token(ws.root, "agent", "engineer");
    architect = token(ws.root, "agent", "architect");
    server = await serve(ws.root);
  });
  after(async () => {
    await server?.stop();
    ws?.cleanup();
  });

  it("2.x client: accept decides via elicitation, decline writes nothing", async () => {
    const side = await connectModernHttp(server.url, engineer, { capabilities: FORMS });
    try {
      await roundTrips(side, ws.root, 420);
    } finally {
      await side.client.close();
    }
  });

  let n = 0;
  /** A raw 2026-07-28 `tools/call` of clarify_wait as `secret`: the JSON-RPC message back. */
  async function rawWait(secret, id, retry = {}) {
    n += 1;
    const body = {
      jsonrpc: "2.0",
      id: n,
      method: "tools/call",
      params: {
        name: "clarify_wait",
        arguments: { id, timeoutSeconds: 0.5 },
        ...retry,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": FORMS,
        },
      },
    };
    const res = await post(server.url, body, {
      authorization: `Bearer ${secret}`,
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": "clarify_wait",
    });
    assert.equal(res.status, 200, res.text);
    const json = res.text.trimStart().startsWith("{")
      ? res.text
      : res.text
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .find((d) => d.includes(`"id":${n}`));
    return JSON.parse(json);
  }

  /** A fresh form and state for the engineer's escalated record `id`. */
  async function offered(id) {
    const got = await rawWait(engineer, id);
    assert.equal(got.result?.resultType, "input_required", JSON.stringify(got));
    assert.deepEqual(Object.keys(got.result.inputRequests), ["decision"]);
    assert.equal(got.result.inputRequests.decision.method, "elicitation/create");
    return got.result.requestState;
  }

  const accept = (state) => ({
    requestState: state,
    inputResponses: { decision: { action: "accept", content: { answer: "forged" } } },
  });

  function refusedAndUnchanged(got, id, length) {
    assert.equal(got.error?.code, -32602, JSON.stringify(got));
    const now = record(ws.root, id);
    assert.equal(now.status, "escalated");
    assert.equal(now.thread.length, length, "a refused state writes nothing");
  }

  /** `state` re-signed with the server's key after `change(body)` (its expiry, its claims). */
  function resigned(state, change) {
    const [version, kidB64, bodyB64] = state.split(".");
    assert.equal(version, "rs2");
    const kid = Buffer.from(kidB64, "base64url");
    const keys = JSON.parse(readFileSync(join(ws.root, ".agentx", "state", "mcp-state-keys.json"), "utf8"));
    const key = keys.keys.find((k) => k.kid === kid.toString());
    const body = change(Buffer.from(bodyB64, "base64url"));
    const ad = Buffer.from(`agentx/mrtr-elicitation/v1\nengineer\n${JSON.parse(body.subarray(8)).id}`);
    const len = (b) => {
      const out = Buffer.alloc(8);
      out.writeBigUInt64BE(BigInt(b.length));
      return out;
    };
    const mac = createHmac("sha256", Buffer.from(key.secret, "base64url"));
    mac.update("rmcp/mrtr/request-state/v2");
    for (const part of [len(kid), kid, len(ad), ad, body]) mac.update(part);
    return [version, kidB64, body.toString("base64url"), mac.digest().toString("base64url")].join(".");
  }

  it("refuses altered, expired, replayed, another agent's and another record's states", async () => {
    const side = await connectModernHttp(server.url, engineer);
    const a = await escalated(side.client, 430);
    const b = await escalated(side.client, 431);
    await side.client.close();
    const length = record(ws.root, a).thread.length;

    // The untouched state, re-signed unchanged, is still good: the forger's arithmetic is right.
    const state = await offered(a);
    const same = resigned(state, (body) => body);
    assert.equal(same, state);

    // Altered: one character of the tag.
    const tail = state.at(-2) === "A" ? "B" : "A";
    refusedAndUnchanged(await rawWait(engineer, a, accept(state.slice(0, -2) + tail + state.at(-1))), a, length);
    // Altered claims under the old tag.
    const parts = state.split(".");
    const claims = JSON.parse(Buffer.from(parts[2], "base64url").subarray(8));
    const bumped = Buffer.concat([
      Buffer.from(parts[2], "base64url").subarray(0, 8),
      Buffer.from(JSON.stringify({ ...claims, entries: claims.entries + 1 })),
    ]);
    parts[2] = bumped.toString("base64url");
    refusedAndUnchanged(await rawWait(engineer, a, accept(parts.join("."))), a, length);
    // Expired: a correct signature over an expiry in the past.
    const expired = resigned(state, (body) => {
      const out = Buffer.from(body);
      out.writeBigInt64BE(BigInt(Date.now() - 1000), 0);
      return out;
    });
    refusedAndUnchanged(await rawWait(engineer, a, accept(expired)), a, length);
    // Another agent (the architect may read the record) presenting the engineer's state.
    refusedAndUnchanged(await rawWait(architect, a, accept(state)), a, length);
    // Another record's wait.
    refusedAndUnchanged(await rawWait(engineer, b, accept(state)), b, record(ws.root, b).thread.length);

    // Declined once: the state is spent, and the same state with an accept is a replay.
    const declined = await rawWait(engineer, a, { requestState: state, inputResponses: { decision: { action: "decline" } } });
    assert.equal(declined.result?.structuredContent?.status, "escalated", JSON.stringify(declined));
    refusedAndUnchanged(await rawWait(engineer, a, accept(state)), a, length);

    // A fresh state for the other record, accepted: decided once; its replay is refused.
    const fresh = await offered(b);
    const decided = await rawWait(engineer, b, {
      requestState: fresh,
      inputResponses: { decision: { action: "accept", content: { answer: "Redis" } } },
    });
    assert.equal(decided.result?.structuredContent?.status, "resolved", JSON.stringify(decided));
    const after = record(ws.root, b).thread.length;
    const replay = await rawWait(engineer, b, accept(fresh));
    assert.equal(replay.error?.code, -32602, JSON.stringify(replay));
    assert.equal(record(ws.root, b).thread.length, after);
  });
});
