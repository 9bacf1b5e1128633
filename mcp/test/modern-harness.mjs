// Clients of the 2026-07-28 revision: the official TypeScript SDK's 2.x client package
// (`@modelcontextprotocol/client`), pinned to 2026-07-28 (`server/discover`, per-request
// metadata, no session), over stdio (`agentx mcp`) and streamable HTTP (`/mcp`).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

import { AGENTX } from "./harness.mjs";

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
