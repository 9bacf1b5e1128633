#!/usr/bin/env python3
"""A loopback stand-in of Slack's Web API for the slack-app sink's tests (issue 44), checked
against the official Slack SDK for Python (PyPI `slack-sdk`).

    slack_standin.py BOT_TOKEN

Every call is `POST /<method>` with `Authorization: Bearer BOT_TOKEN` (else `invalid_auth`).
Each is checked the way Slack's own SDK reads it: the method must be one of `WebClient`'s
(`chat.postMessage` → `WebClient.chat_postMessage`), every argument one of that method's
parameters (`inspect.signature`), every block parse as a `slack_sdk.models.blocks.Block`,
validate (Slack's length and count limits) and round-trip unchanged (an unknown or misspelt
key would be dropped), and a view as a `slack_sdk.models.views.View`. A call that fails a
check is answered `{"ok": false, "error": "invalid_arguments"}` and recorded with why.

Control paths (the test's, not Slack's):
- `GET /_calls`: every call so far, `[{method, args, problem}]`.
- `POST /_interact` `{url, payload, secret, timestamp?}`: sends `payload` to `url` as Slack
  sends an interaction (form field `payload`, JSON), signed with `secret` by the SDK's
  `SignatureVerifier.generate_signature`; `timestamp` (Unix seconds) defaults to now. Answers
  `{status, body, headers}`; with `"replay": true` the same signed request is sent twice and
  both answers come back as `{first, second}`.

Prints `port <n>` first. Stops when stdin closes.
"""
import inspect
import json
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from slack_sdk import WebClient
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View
from slack_sdk.signature import SignatureVerifier

token = sys.argv[1]
lock = threading.Lock()
calls = []
posted = [0]


def problem_of(method, args):
    fn = getattr(WebClient, method.replace(".", "_"), None)
    if fn is None:
        return f"WebClient has no method {method}"
    params = set(inspect.signature(fn).parameters) - {"self", "kwargs"}
    unknown = sorted(set(args) - params)
    if unknown:
        return f"{method} takes no {unknown} (WebClient.{fn.__name__}: {sorted(params)})"
    required = [
        p.name for p in inspect.signature(fn).parameters.values()
        if p.kind == p.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    ]
    missing = [r for r in required if r not in args]
    if missing:
        return f"{method} needs {missing}"
    for b in args.get("blocks") or []:
        parsed = Block.parse(b)
        if parsed is None or parsed.to_dict() != b:
            return f"a block does not round-trip through slack_sdk: {json.dumps(b)}"
    if "view" in args:
        if View(**args["view"]).to_dict() != args["view"]:
            return "the view does not round-trip through slack_sdk's View"
    return None


def answer(method, args):
    if method == "chat.postMessage":
        with lock:
            posted[0] += 1
            n = posted[0]
        return {"ok": True, "channel": "C0AGENTX", "ts": f"1700000000.{n:06d}",
                "message": {"text": args.get("text")}}
    if method == "chat.update":
        return {"ok": True, "channel": args["channel"], "ts": args["ts"], "text": args.get("text")}
    if method == "chat.postEphemeral":
        return {"ok": True, "message_ts": "1700000000.999999"}
    if method == "views.open":
        return {"ok": True, "view": {"id": "V0AGENTX", **args["view"]}}
    return {"ok": True}


class Handler(BaseHTTPRequestHandler):
    def reply(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/_calls":
            with lock:
                self.reply(200, calls)
        else:
            self.reply(404, {})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/_interact":
            self.reply(200, interact(json.loads(body)))
            return
        method = self.path.strip("/")
        if self.headers.get("Authorization") != f"Bearer {token}":
            self.reply(200, {"ok": False, "error": "invalid_auth"})
            return
        try:
            args = json.loads(body)
            problem = problem_of(method, args)
        except Exception as e:  # a body Slack would refuse: recorded, not fatal
            args, problem = None, f"{type(e).__name__}: {e}"
        with lock:
            calls.append({"method": method, "args": args, "problem": problem})
        if problem:
            self.reply(200, {"ok": False, "error": "invalid_arguments", "problem": problem})
        else:
            self.reply(200, answer(method, args))

    def log_message(self, *_):
        pass


def send(url, data, headers):
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return {"status": r.status, "body": r.read().decode()}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": e.read().decode()}


def interact(req):
    data = urllib.parse.urlencode({"payload": json.dumps(req["payload"])}).encode()
    timestamp = str(req.get("timestamp") or int(time.time()))
    signature = SignatureVerifier(req["secret"]).generate_signature(timestamp=timestamp, body=data.decode())
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": signature,
    }
    first = send(req["url"], data, headers)
    if req.get("replay"):
        return {"first": first, "second": send(req["url"], data, headers)}
    return first


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"port {server.server_address[1]}", flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
