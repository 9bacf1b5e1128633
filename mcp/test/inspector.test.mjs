// The MCP Inspector's CLI mode (npm @modelcontextprotocol/inspector, installed locally) lists
// the tools of `agentx mcp` and calls one.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";

import { AGENTX, workspace } from "./harness.mjs";

const INSPECTOR = join(dirname(fileURLToPath(import.meta.url)), "node_modules", ".bin", "mcp-inspector");

describe("the MCP Inspector CLI against agentx mcp", () => {
  let ws;
  before(() => (ws = workspace()));
  after(() => ws?.cleanup());

  const inspect = async (...args) => {
    const server = [AGENTX, "mcp", "--agent", "engineer", "--issue", "5", "--root", ws.root];
    const { stdout } = await promisify(execFile)(INSPECTOR, ["--cli", ...server, ...args], {
      timeout: 60_000,
    });
    return JSON.parse(stdout);
  };

  it("lists the tools", async () => {
    const { tools } = await inspect("--method", "tools/list");
    assert.equal(tools.length, 15);
    assert.ok(tools.some((t) => t.name === "clarify_ask" && t.inputSchema.required.includes("question")));
  });

  it("calls a tool", async () => {
    const asked = await inspect(
      "--method", "tools/call",
      "--tool-name", "clarify_ask",
      "--tool-arg", "to=architect",
      "--tool-arg", "topic=Schema",
      "--tool-arg", "question=Which migration tool?",
    );
    assert.equal(asked.isError, false);
    assert.equal(asked.structuredContent.clarification.id, "CLR-5-001");
    assert.equal(asked.structuredContent.clarification.from, "engineer");
  });
});
