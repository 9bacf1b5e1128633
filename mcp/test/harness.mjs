// Shared by the client tests and the benchmark: the agentx binary, a fresh workspace, MCP
// clients connected to `agentx mcp`, the CLI as a separate process, and a raw stdio session
// for what a well-behaved client never sends.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const here = dirname(fileURLToPath(import.meta.url));

/** The binary under test: AGENTX_BIN, else the workspace's debug build. */
export const AGENTX = process.env.AGENTX_BIN
  ? resolve(process.env.AGENTX_BIN)
  : resolve(here, "../../target/debug/agentx");

/** A fresh workspace with `agentx init` run in it; `cleanup()` removes it. */
export function workspace() {
  const root = mkdtempSync(join(tmpdir(), "agentx-mcp-"));
  cli(root, ["init"]);
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Runs the CLI as its own process with --json and returns the parsed document. */
export function cli(root, args) {
  try {
    return JSON.parse(execFileSync(AGENTX, ["--root", root, "--json", ...args], { encoding: "utf8" }));
  } catch (e) {
    if (e.stdout) return JSON.parse(e.stdout);
    throw e;
  }
}

/** An SDK client connected to `agentx mcp --agent <agent>` (stderr kept for failures). */
export async function connect(root, agent, extra = []) {
  const transport = new StdioClientTransport({
    command: AGENTX,
    args: ["mcp", "--agent", agent, "--root", root, ...extra],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: `test-${agent}`, version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/** Resolves with the first value `poll()` returns that is not undefined, or rejects. */
export async function eventually(poll, what, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await poll();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `agentx mcp` on raw pipes: write lines, read the JSON lines it prints, see how it exits. */
export function rawServer(root, agent = "engineer") {
  const child = spawn(AGENTX, ["mcp", "--agent", agent, "--root", root], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines = [];
  let buffer = "";
  let stderr = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buffer += d;
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
  });
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    send: (obj) => child.stdin.write((typeof obj === "string" ? obj : JSON.stringify(obj)) + "\n"),
    /** The response to request `id`, once it arrives. */
    response: (id, ms) =>
      eventually(
        () => lines.map((l) => JSON.parse(l)).find((m) => m.id === id && !m.method),
        `response ${id}`,
        ms,
      ),
  };
}

export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
