// subscriptions/listen (2026-07-28) and the agentx://inbox resource (docs/protocol.md §24):
// a 2.x client listens to an issue's ledger, a clarification and its inbox; the CLI, as
// another process, answers and asks back; each change arrives within a second. A 1.x client
// subscribes to the inbox with the legacy resources/subscribe.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

import { cli, connect, eventually, workspace } from "./harness.mjs";
import { serve, token } from "./http-harness.mjs";
import { connectModern, connectModernHttp } from "./modern-harness.mjs";

const INBOX = "agentx://inbox";

/** The updates `client` receives: `{ uri, at }` each (the 1.x SDK names the method by its schema). */
function updates(client, legacy = false) {
  const got = [];
  const method = legacy ? ResourceUpdatedNotificationSchema : "notifications/resources/updated";
  client.setNotificationHandler(method, (n) => {
    got.push({ uri: n.params.uri, at: Date.now() });
  });
  return got;
}

/** Resolves with the ms from `since` to the first update of `uri` after it. */
async function arrival(got, uri, since) {
  const hit = await eventually(() => got.find((u) => u.uri === uri && u.at >= since), `an update of ${uri}`, 3000);
  return hit.at - since;
}

async function listens(side, root, issue) {
  const c = side.client;
  const got = updates(c);
  const asked = await c.callTool({
    name: "clarify_ask",
    arguments: { to: "architect", topic: "Sessions", question: "Must sessions survive a deploy?", issue },
  });
  const id = asked.structuredContent.clarification.id;
  const ledger = `agentx://issues/${issue}`;
  const thread = `agentx://clarifications/${id}`;
  const sub = await c.listen({ resourceSubscriptions: [ledger, thread, INBOX, "https://example.com/x"] });
  try {
    assert.deepEqual([...sub.honoredFilter.resourceSubscriptions].sort(), [INBOX, thread, ledger].sort());

    // The architect asks back with the CLI: the ledger, the thread's issue and the inbox change.
    let since = Date.now();
    const back = cli(root, [
      "clarify", "ask", "--issue", String(issue), "--from", "architect", "--to", "engineer",
      "--topic", "Sessions", "--question", "How many sessions at peak?", "--asked-back-from", id,
    ]);
    assert.equal(back.ok, true, JSON.stringify(back));
    const toLedger = await arrival(got, ledger, since);
    const toInbox = await arrival(got, INBOX, since);
    assert.ok(toLedger < 1000, `ledger update after ${toLedger} ms`);
    assert.ok(toInbox < 1000, `inbox update after ${toInbox} ms`);
    const inbox = JSON.parse((await c.readResource({ uri: INBOX }, { cacheMode: "bypass" })).contents[0].text);
    const listed = inbox.clarifications.find((r) => r.id === back.clarification.id);
    assert.ok(listed, JSON.stringify(inbox));
    assert.equal(listed.from, "architect");

    // The architect answers the first question: the clarification's update.
    since = Date.now();
    const answered = cli(root, ["clarify", "answer", id, "--from", "architect", "--body", "Yes"]);
    assert.equal(answered.ok, true, JSON.stringify(answered));
    const toThread = await arrival(got, thread, since);
    assert.ok(toThread < 1000, `clarification update after ${toThread} ms`);
    console.log(`listen: ledger ${toLedger} ms, inbox ${toInbox} ms, clarification ${toThread} ms`);
  } finally {
    await sub.close();
  }
}

describe("subscriptions/listen over stdio", () => {
  let ws;
  before(() => (ws = workspace()));
  after(() => ws?.cleanup());

  it("a CLI write reaches the listening 2.x client within a second", async () => {
    const side = await connectModern(ws.root, "engineer");
    try {
      await listens(side, ws.root, 500);
    } finally {
      await side.client.close();
    }
  });

  it("a 1.x client subscribes to agentx://inbox with resources/subscribe", async () => {
    const old = await connect(ws.root, "engineer");
    try {
      const got = updates(old.client, true);
      const listed = await old.client.listResources();
      assert.ok(listed.resources.some((r) => r.uri === INBOX));
      const mine = await old.client.callTool({
        name: "clarify_ask",
        arguments: { to: "architect", topic: "Budget", question: "Spend more?", issue: 501 },
      });
      const id = mine.structuredContent.clarification.id;
      await old.client.subscribeResource({ uri: INBOX });
      const since = Date.now();
      const asked = cli(ws.root, [
        "clarify", "ask", "--issue", "501", "--from", "architect", "--to", "engineer",
        "--topic", "Budget", "--question", "How much?", "--asked-back-from", id,
      ]);
      assert.equal(asked.ok, true, JSON.stringify(asked));
      const ms = await arrival(got, INBOX, since);
      assert.ok(ms < 1000, `inbox update after ${ms} ms`);
    } finally {
      await old.client.close();
    }
  });
});

describe("subscriptions/listen over streamable HTTP", () => {
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

  it("a CLI write reaches the listening 2.x client within a second", async () => {
    const side = await connectModernHttp(server.url, secret);
    try {
      await listens(side, ws.root, 510);
    } finally {
      await side.client.close();
    }
  });
});
