// An agent of cli/tests/pg_nginx.rs: the official TypeScript SDK's streamable HTTP client
// through nginx (docs/deploy/nginx.conf) to two `agentx serve` replicas. The test runs it with
// NODE_EXTRA_CA_CERTS naming its certificate, and reads one JSON line per step:
//   1. connects, asks a question, prints {asked, session};
//   2. after the line "next" on stdin (the test has killed the session's replica), calls
//      again on the same session and prints {sameSession: "ok" | the error};
//   3. opens a new session, as the MCP specification has a client do after a 404, and prints
//      {newSession, shown: the record's status}.
// Usage: node nginx-client.mjs <https://…/mcp> <agent token>
import { createInterface } from "node:readline";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, secret] = process.argv.slice(2);

async function connect() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${secret}` } },
  });
  const client = new Client({ name: "nginx-client", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
}

const say = (v) => process.stdout.write(`${JSON.stringify(v)}\n`);
const structured = (r) => r.structuredContent ?? {};

const first = await connect();
const asked = await first.client.callTool({
  name: "clarify_ask",
  arguments: { issue: 5, to: "architect", topic: "Replicas", question: "Which replica holds this?" },
});
const id = structured(asked).clarification?.id;
say({ asked: id, session: first.transport.sessionId });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line.trim() === "next") break;
}
try {
  await first.client.callTool({ name: "clarify_show", arguments: { id } });
  say({ sameSession: "ok" });
} catch (e) {
  say({ sameSession: String(e?.message ?? e) });
}
const second = await connect();
const shown = await second.client.callTool({ name: "clarify_show", arguments: { id } });
say({ newSession: second.transport.sessionId, shown: structured(shown).clarification?.status });
await second.client.close();
process.exit(0);
