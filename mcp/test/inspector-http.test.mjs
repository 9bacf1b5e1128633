// The MCP Inspector's CLI mode over streamable HTTP (`--transport http` with the bearer
// header) against `/mcp` of `agentx serve`: it lists the tools and asks as the token's agent.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";

import { workspace } from "./harness.mjs";
import { serve, token } from "./http-harness.mjs";

const INSPECTOR = join(dirname(fileURLToPath(import.meta.url)), "node_modules", ".bin", "mcp-inspector");

describe("the MCP Inspector CLI against /mcp over HTTP", () => {
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

  const inspect = async (...args) => {
    const target = [server.url, "--transport", "http", "--header", `Authorization: Bearer ${secret}`];
    const { stdout } = await promisify(execFile)(INSPECTOR, ["--cli", ...target, ...args], {
      timeout: 60_000,
    });
    return JSON.parse(stdout);
  };

  it("lists the tools", async () => {
    const { tools } = await inspect("--method", "tools/list");
    assert.equal(tools.length, 16);
    assert.ok(tools.some((t) => t.name === "clarify_ask" && t.inputSchema.required.includes("question")));
  });

  it("calls clarify_ask as the token's agent", async () => {
    const asked = await inspect(
      "--method", "tools/call",
      "--tool-name", "clarify_ask",
      "--tool-arg", "issue=5",
      "--tool-arg", "to=architect",
      "--tool-arg", "topic=Schema",
      "--tool-arg", "question=Which migration tool?",
    );
    assert.equal(asked.isError, false, JSON.stringify(asked));
    assert.equal(asked.structuredContent.clarification.id, "CLR-5-001");
    assert.equal(asked.structuredContent.clarification.from, "engineer");
  });
});
