// The MCP Inspector's CLI mode (npm @modelcontextprotocol/inspector, installed locally) lists
// the tools of `agentx mcp` and calls one.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";

import { AGENTX, workspace } from "./harness.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const INSPECTOR = join(HERE, "node_modules", ".bin", "mcp-inspector");
// The version the README's commands pin: `npx` unpinned picks 0.15 on Node 20, which has
// neither `--header` nor the portability check.
const PINNED = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8")).devDependencies[
  "@modelcontextprotocol/inspector"
];

describe("the MCP Inspector CLI against agentx mcp", () => {
  let ws;
  before(() => (ws = workspace()));
  after(() => ws?.cleanup());

  const run = (...args) => {
    const server = [AGENTX, "mcp", "--agent", "engineer", "--issue", "5", "--root", ws.root];
    return promisify(execFile)(INSPECTOR, ["--cli", ...server, ...args], { timeout: 60_000 });
  };
  const inspect = async (...args) => JSON.parse((await run(...args)).stdout);

  it("is the pinned Inspector, which checks schema portability", () => {
    const installed = JSON.parse(
      readFileSync(join(HERE, "node_modules", "@modelcontextprotocol", "inspector", "package.json"), "utf8"),
    ).version;
    assert.equal(installed, PINNED);
    assert.equal(PINNED, "2.12.0");
  });

  it("finds every tool's schema portable: 0 errors, 0 warnings", async () => {
    // Without --strict the Inspector prints one count line on stderr when it finds anything
    // ("Schema portability: 0 errors, 41 warnings across 11 tools" before the fix); with
    // --strict --format json it lists the findings in `schemaFindings`.
    const plain = await run("--method", "tools/list");
    assert.doesNotMatch(plain.stderr, /Schema portability/, plain.stderr);
    const strict = JSON.parse((await run("--method", "tools/list", "--strict", "--format", "json")).stdout);
    assert.deepEqual(strict.schemaFindings ?? [], []);
    assert.equal(strict.result.tools.length, 16);
    // And no union type or null anywhere in a schema, optional fields simply not required.
    for (const tool of strict.result.tools) {
      const text = JSON.stringify(tool.inputSchema);
      assert.doesNotMatch(text, /"type":\[/, tool.name);
      assert.doesNotMatch(text, /"null"/, tool.name);
    }
    const ask = strict.result.tools.find((t) => t.name === "clarify_ask").inputSchema;
    assert.deepEqual([...ask.required].sort(), ["question", "to", "topic"]);
    assert.equal(ask.properties.issue.type, "integer");
    assert.equal(ask.properties.severity.$ref, "#/$defs/Severity");
  });

  it("lists the tools", async () => {
    const { tools } = await inspect("--method", "tools/list");
    assert.equal(tools.length, 16);
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
