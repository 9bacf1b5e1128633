#!/usr/bin/env python3
"""A notification receiver on 127.0.0.1 for the tests: it verifies every webhook delivery with
the official Standard Webhooks library (PyPI `standardwebhooks`) and records what arrived.

    receiver.py SECRET [--fail N [--status CODE]] [--slow SECONDS] [--stall N]

Prints `port <n>` on its first line, then one JSON line per request received:
{"path", "headers", "title", "body", "verified", "error", "status"} — `title` is the `Title`
header as the standard library's RFC 2047 decoder reads it (ntfy decodes it the same way);
with --fail N the first N
requests are answered 500, or CODE with --status (410: a receiver that says it is gone); with --slow S each request
waits S seconds before it is recorded and answered; with --stall N the first N requests are
recorded at once as {"stalled": true, "path", "headers"} and never answered (a receiver that
hangs). Stops when stdin closes.
"""
import argparse
import json
import sys
import threading
import time
from email.header import decode_header, make_header
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

parser = argparse.ArgumentParser()
parser.add_argument("secret")
parser.add_argument("--fail", type=int, default=0)
parser.add_argument("--slow", type=float, default=0)
parser.add_argument("--stall", type=int, default=0)
parser.add_argument("--status", type=int, default=500)
args = parser.parse_args()
secret, fail = args.secret, args.fail
lock = threading.Lock()
count = 0
arrived = 0
stopping = threading.Event()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        global count, arrived
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        with lock:
            arrived += 1
            stall = arrived <= args.stall
            if stall:
                headers = {k.lower(): v for k, v in self.headers.items()}
                print(json.dumps({"stalled": True, "path": self.path, "headers": headers}),
                      flush=True)
        if stall:
            stopping.wait()
            return
        if args.slow:
            time.sleep(args.slow)
        headers = {k.lower(): v for k, v in self.headers.items()}
        verified, error = False, None
        if "webhook-signature" in headers:
            try:
                Webhook(secret).verify(body, headers)
                verified = True
            except Exception as e:  # the library's WebhookVerificationError and friends
                error = f"{type(e).__name__}: {e}"
        title = None
        if "title" in headers:
            try:
                title = str(make_header(decode_header(headers["title"])))
            except Exception as e:  # an encoded word that does not decode
                title = f"undecodable: {e}"
        with lock:
            count += 1
            status = args.status if count <= fail else 200
            print(json.dumps({"path": self.path, "headers": headers, "title": title,
                              "body": body.decode("utf-8", "replace"),
                              "verified": verified, "error": error, "status": status}),
                  flush=True)
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"port {server.server_address[1]}", flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
stopping.set()
server.shutdown()
