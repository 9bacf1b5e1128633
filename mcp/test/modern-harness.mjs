// Clients of the 2026-07-28 revision: the official TypeScript SDK's 2.x client package
// (`@modelcontextprotocol/client`), pinned to 2026-07-28 (`server/discover`, per-request
// metadata, no session), over stdio (`agentx mcp`) and streamable HTTP (`/mcp`).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

import { AGENTX } from "./harness.mjs";
import { post } from "./http-harness.mjs";

export const MODERN = "2026-07-28";

function client(name, capabilities, options) {
  return new Client(
    { name, version: "2.0.0" },
    { versionNegotiation: { mode: { pin: MODERN } }, capabilities, ...options },
  );
}

/** A 2.x client on `agentx mcp --agent <agent>` (stderr kept for failures). */
export async function connectModern(root, agent, { capabilities = {}, options = {} } = {}) {
  const transport = new StdioClientTransport({
    command: AGENTX,
    args: ["mcp", "--agent", agent, "--root", root],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const c = client(`modern-${agent}`, capabilities, options);
  await c.connect(transport);
  return { client: c, transport, stderr: () => stderr };
}

/** A 2.x client on `url` with `Authorization: Bearer <secret>`. */
export async function connectModernHttp(url, secret, { capabilities = {}, options = {} } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${secret}` } },
  });
  const c = client("modern-http", capabilities, options);
  await c.connect(transport);
  return { client: c, transport };
}

let rawId = 0;
/**
 * A raw 2026-07-28 `tools/call` of tool `name` on `url` as `secret`, declaring `capabilities`
 * in the request's metadata: the JSON-RPC message back (for results the 2.x client will not
 * take, such as a task).
 */
export async function rawTool(url, secret, name, args, capabilities = {}) {
  rawId += 1;
  const id = rawId;
  const body = {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name,
      arguments: args,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      },
    },
  };
  const res = await post(url, body, {
    authorization: `Bearer ${secret}`,
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": name,
  });
  if (res.status !== 200) throw new Error(`${res.status}: ${res.text}`);
  const json = res.text.trimStart().startsWith("{")
    ? res.text
    : res.text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
        .find((d) => d.includes(`"id":${id}`));
  return JSON.parse(json);
}

/** The Tasks extension's capability, as a client declares it. */
export const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };

/** A result schema that takes the server's answer as it is (a Standard Schema). */
const AS_IS = { "~standard": { version: 1, vendor: "agentx-test", validate: (value) => ({ value }) } };

/** An extension request (`tasks/get`, …) through the 2.x client, its result as sent. */
export const extensionRequest = (c, method, params) => c.request({ method, params }, AS_IS);

/** `clarify_ask` with `wait: "task"` on issue `issue`: the task id (the record's). */
export async function askTask(url, secret, issue, extra = {}, capabilities = TASKS) {
  const args = { to: "architect", topic: "Cache", question: `Which cache (${issue})?`, issue, wait: "task", ...extra };
  const { result: created } = await rawTool(url, secret, "clarify_ask", args, capabilities);
  if (created?.resultType !== "task") throw new Error(`not a task: ${JSON.stringify(created)}`);
  return created;
}
