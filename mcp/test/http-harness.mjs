// `agentx serve` for the HTTP tests: a server on a free loopback port over a fresh workspace,
// agent and human tokens minted with the CLI, and SDK clients over the streamable HTTP
// transport carrying a bearer token.
import { spawn } from "node:child_process";
import http from "node:http";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { AGENTX, cli, eventually } from "./harness.mjs";

/** `agentx serve --listen 127.0.0.1:0` on `root`; resolves once it prints its address. */
export async function serve(root, extra = ["--no-worker"]) {
  const child = spawn(AGENTX, ["--root", root, "serve", "--listen", "127.0.0.1:0", ...extra], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  const base = await eventually(
    () => stdout.match(/is at (http:\/\/127\.0\.0\.1:\d+)\//)?.[1],
    `agentx serve to start (stderr: ${stderr})`,
    15_000,
  );
  return {
    base,
    url: `${base}/mcp`,
    child,
    stdout: () => stdout,
    exited,
    stderr: () => stderr,
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

/**
 * One request to the server on 127.0.0.1 under the name `origin` (the inbox's own host,
 * `agentx-<label>.localhost:<port>`, which a browser resolves to loopback and Node's resolver
 * may not): its status, headers and body text.
 */
function onLoopback(origin, method, pathname, headers = {}, body) {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: url.port, method, path: pathname, headers: { host: url.host, ...headers } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * Signs in as a browser does, by the one-time link `agentx serve` printed (on the inbox's own
 * host name, whose session cookie only that name honours): `call(op, input)` then sends
 * `/api/v1/call` as the inbox page's script does (the session cookie, the inbox's Origin and
 * the page's CSRF token) and resolves with the envelope.
 */
export async function signIn(server) {
  const found = server.stdout().match(/(http:\/\/[^\s/]+\/login\?once=\S+)/)?.[1];
  if (!found) throw new Error(`no sign-in link in: ${server.stdout()}`);
  const link = new URL(found);
  const origin = link.origin;
  const once = await onLoopback(origin, "GET", link.pathname + link.search);
  const cookie = [once.headers["set-cookie"] ?? []].flat()[0]?.split(";")[0];
  if (!cookie) throw new Error(`no session cookie (${once.status})`);
  const page = (await onLoopback(origin, "GET", "/", { cookie })).text;
  const csrf = page.match(/<meta name="csrf" content="([^"]+)"/)?.[1];
  if (!csrf) throw new Error("no CSRF token on the inbox page");
  return {
    cookie,
    call: async (op, input) => {
      const res = await onLoopback(
        origin,
        "POST",
        "/api/v1/call",
        { cookie, origin, "x-csrf-token": csrf, "content-type": "application/json" },
        JSON.stringify({ op, input }),
      );
      return JSON.parse(res.text);
    },
  };
}

/** A new token for an agent (`kind` "agent") or a person ("human"): its secret. */
export function token(root, kind, name) {
  const made = cli(root, ["tokens", "new", `--${kind}`, name]);
  if (!made.ok) throw new Error(JSON.stringify(made));
  return made.token.token;
}

/** An SDK client on `url` with `Authorization: Bearer <secret>`; `capabilities` as declared. */
export async function connectHttp(url, secret, { capabilities = {}, name = "test-http" } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${secret}` } },
  });
  const client = new Client({ name, version: "1.0.0" }, { capabilities });
  await client.connect(transport);
  return { client, transport };
}

/** A raw JSON-RPC POST to /mcp: the status, headers and body text. */
export async function post(url, body, headers = {}) {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

export const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
