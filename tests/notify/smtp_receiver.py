#!/usr/bin/env python3
"""An SMTP server on 127.0.0.1 for the email sink's tests (PyPI `aiosmtpd`), STARTTLS required
with the certificate and key given (self-signed by the test, which the sink trusts through its
`ca_file`).

    smtp_receiver.py CERT KEY [--port N]

Prints `port <n>` on its first line, then one JSON line per mail, parsed with Python's `email`
package: {"tls", "mail_from", "rcpt_to", "from", "to", "subject", "message_id", "in_reply_to",
"references", "content_type", "text", "html"}. Stops when stdin closes.
"""
import argparse
import json
import socket
import ssl
import sys
from email import message_from_bytes
from email.policy import default

from aiosmtpd.controller import Controller

parser = argparse.ArgumentParser()
parser.add_argument("cert")
parser.add_argument("key")
parser.add_argument("--port", type=int, default=0)
args = parser.parse_args()

port = args.port
if port == 0:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(args.cert, args.key)


class Handler:
    async def handle_DATA(self, server, session, envelope):
        mail = message_from_bytes(envelope.original_content or envelope.content, policy=default)
        text = mail.get_body(preferencelist=("plain",))
        html = mail.get_body(preferencelist=("html",))
        print(json.dumps({
            "tls": session.ssl is not None,
            "mail_from": envelope.mail_from,
            "rcpt_to": envelope.rcpt_tos,
            "from": str(mail["From"]),
            "to": str(mail["To"]),
            "subject": str(mail["Subject"]),
            "message_id": str(mail["Message-ID"]),
            "in_reply_to": str(mail["In-Reply-To"]),
            "references": str(mail["References"]),
            "content_type": mail.get_content_type(),
            "text": text.get_content() if text else None,
            "html": html.get_content() if html else None,
        }), flush=True)
        return "250 OK"


controller = Controller(Handler(), hostname="127.0.0.1", port=port,
                        tls_context=context, require_starttls=True)
controller.start()
print(f"port {port}", flush=True)
sys.stdin.read()
controller.stop()
