#!/usr/bin/env python3
"""A local stand-in of GitHub's REST API for GitHub Mode's tests (cli/tests/github.rs).

It serves the few operations GitHub Mode uses, from memory, on a Unix socket (for the real
`gh` program, pointed at it by `http_unix_socket`) and on 127.0.0.1 (for `via = "api"`).
Every request and every response is checked against GitHub's published OpenAPI description
(npm `@octokit/openapi`, `generated/api.github.com.json`): the operation must exist, its path
and query parameters and JSON body must fit their schemas, the response status must be one
the operation documents and the body must fit its schema. Each mismatch is recorded in
`violations`, which the test reads (`GET /_standin/state`) and requires empty.

Test controls live under `/_standin/` on the TCP port only (not GitHub's API, not checked):
  POST /_standin/comment     {"issue", "login", "body"}      a person comments
  POST /_standin/edit        {"id", "body"}                  a person edits a comment
  POST /_standin/permission  {"login", "role"}               a collaborator's role (none: 404)
  POST /_standin/ratelimit   {"count", "reset", "match"}     the next `count` requests whose
                                                             "METHOD path" contains `match` are
                                                             403 with x-ratelimit-remaining: 0
  POST /_standin/hang        {"match", "seconds"}            the next matching request is
                                                             carried out, then answered late
  POST /_standin/slow        {"match", "seconds"}            every matching request from now on
                                                             is carried out, then answered late
                                                             (GitHub listing slowly)
  POST /_standin/pagesize    {"size"}                        comments per page at most
  POST /_standin/corrupt     {"match"}                       the next matching response loses a
                                                             required field (the checker's test)
  GET  /_standin/state                                       everything, with `requests`

The token's account (`GET /user`, the author of every comment the API creates) is `tester`.

Usage: standin.py OPENAPI_JSON UNIX_SOCKET_PATH PORT_FILE  (prints nothing; writes the TCP
port to PORT_FILE once both listeners are up).
"""

import copy
import datetime
import json
import os
import re
import socketserver
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

import jsonschema

OWNER, REPO = "acme", "app"
TOKEN_PREFIXES = ("token ", "Bearer ", "bearer ")


def nullable_to_json_schema(node):
    """OpenAPI 3.0's `nullable: true` as JSON Schema: anyOf the schema and null."""
    if isinstance(node, list):
        return [nullable_to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: nullable_to_json_schema(v) for k, v in node.items() if k not in ("example", "examples")}
    if out.pop("nullable", False) is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


class Spec:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        self.doc = doc
        self.components = nullable_to_json_schema(doc["components"])
        self.ops = []
        for template, item in doc["paths"].items():
            names = re.findall(r"\{([^}]+)\}", template)
            pieces, i = [], 0
            for seg in template.split("/"):
                if seg.startswith("{") and seg.endswith("}"):
                    pieces.append(f"(?P<p{i}>[^/]+)")
                    i += 1
                else:
                    pieces.append(re.escape(seg))
            safe = "^" + "/".join(pieces) + "$"
            for method, op in item.items():
                if method in ("get", "post", "patch", "put", "delete"):
                    self.ops.append((method.upper(), re.compile(safe), names, template, op))
        self.validators = {}

    def deref(self, node):
        while isinstance(node, dict) and "$ref" in node:
            parts = node["$ref"].lstrip("#/").split("/")
            node = self.doc
            for p in parts:
                node = node[p]
        return node

    def validator(self, key, schema):
        v = self.validators.get(key)
        if v is None:
            full = {"allOf": [nullable_to_json_schema(schema)], "components": self.components}
            v = jsonschema.Draft4Validator(full)
            self.validators[key] = v
        return v

    def check(self, key, schema, value):
        errors = sorted(self.validator(key, schema).iter_errors(value), key=lambda e: list(e.path))
        return ["%s at %s: %s" % (key, "/".join(map(str, e.absolute_path)), e.message[:300]) for e in errors[:3]]

    def find(self, method, path):
        for m, regex, names, template, op in self.ops:
            if m != method:
                continue
            match = regex.match(path)
            if match:
                params = {n: urllib.parse.unquote(match.group(f"p{i}")) for i, n in enumerate(names)}
                return template, op, params
        return None

    def check_request(self, method, path, query, body):
        found = self.find(method, path)
        if not found:
            return None, None, [f"{method} {path}: no such operation in GitHub's OpenAPI description"]
        template, op, path_params = found
        problems = []
        declared = {}
        for p in op.get("parameters", []):
            p = self.deref(p)
            declared[(p["in"], p["name"])] = p
        for name, value in path_params.items():
            p = declared.get(("path", name))
            if p is None:
                problems.append(f"{template}: path parameter {name} undeclared")
                continue
            problems += self.check(f"{method} {template} path {name}", p["schema"], coerce(p["schema"], value))
        for name, values in query.items():
            p = declared.get(("query", name))
            if p is None:
                problems.append(f"{method} {template}: query parameter {name} is not one of the operation's")
                continue
            problems += self.check(f"{method} {template} query {name}", p["schema"], coerce(p["schema"], values[-1]))
        rb = op.get("requestBody")
        if rb is not None:
            rb = self.deref(rb)
            if body is None:
                if rb.get("required"):
                    problems.append(f"{method} {template}: the request body is required")
            else:
                schema = rb["content"]["application/json"]["schema"]
                problems += self.check(f"{method} {template} request", schema, body)
        elif body is not None:
            problems.append(f"{method} {template}: a body where the operation takes none")
        return template, op, problems

    def check_response(self, method, template, op, status, body, rate_limited):
        responses = op["responses"]
        resp = responses.get(str(status)) or responses.get("default")
        if resp is None:
            if rate_limited and status == 403:
                # GitHub's rate-limit answer is the same on every operation (docs: "Rate limits
                # for the REST API"); most operations do not list it. Its body is a basic-error.
                return self.check(f"{method} {template} 403 rate limit",
                                  {"$ref": "#/components/schemas/basic-error"}, body)
            return [f"{method} {template}: status {status} is not documented"]
        resp = self.deref(resp)
        content = resp.get("content", {}).get("application/json")
        if content is None:
            return [] if body is None else [f"{method} {template} {status}: a body where none is documented"]
        return self.check(f"{method} {template} {status}", content["schema"], body)


def coerce(schema, text):
    t = schema.get("type")
    if t == "integer":
        try:
            return int(text)
        except ValueError:
            return text
    return text


def now_iso(t=None):
    t = time.time() if t is None else t
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def user(login, uid):
    base = f"https://api.github.com/users/{login}"
    return {
        "login": login, "id": uid, "node_id": f"U_{uid}", "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}",
        "gravatar_id": "", "url": base, "html_url": f"https://github.com/{login}",
        "followers_url": base + "/followers", "following_url": base + "/following{/other_user}",
        "gists_url": base + "/gists{/gist_id}", "starred_url": base + "/starred{/owner}{/repo}",
        "subscriptions_url": base + "/subscriptions", "organizations_url": base + "/orgs",
        "repos_url": base + "/repos", "events_url": base + "/events{/privacy}",
        "received_events_url": base + "/received_events", "type": "User", "site_admin": False,
        "user_view_type": "public",
    }


def authenticated(login, uid):
    """`GET /user` of the token's account: a public-user (`user_view_type: public`)."""
    out = user(login, uid)
    out.update({
        "name": None, "company": None, "blog": "", "location": None, "email": None,
        "hireable": None, "bio": None, "public_repos": 0, "public_gists": 0, "followers": 0,
        "following": 0, "created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z",
    })
    return out


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.next_id = 1000
        self.comments = []  # dicts with our fields
        self.labels = {}  # issue -> [names]
        self.reactions = {}  # comment id -> [(login, content)]
        self.roles = {"tester": "admin"}
        self.users = {}
        self.requests = []
        self.violations = []
        self.ratelimits = []  # [count, reset, match]
        self.hangs = []  # [match, seconds]
        self.slow = []  # [match, seconds]: every matching request
        self.page_size = 100
        self.corrupt = []  # [match]: the next matching response loses a required field
        self.deleted = []  # ids of comments deleted through the API

    def uid(self, login):
        if login not in self.users:
            self.users[login] = 500 + len(self.users)
        return self.users[login]

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def comment_json(self, c):
        return {
            "id": c["id"], "node_id": f"IC_{c['id']}",
            "url": f"https://api.github.com/repos/{OWNER}/{REPO}/issues/comments/{c['id']}",
            "html_url": f"https://github.com/{OWNER}/{REPO}/issues/{c['issue']}#issuecomment-{c['id']}",
            "body": c["body"], "user": user(c["login"], self.uid(c["login"])),
            "created_at": c["created_at"], "updated_at": c["updated_at"],
            "issue_url": f"https://api.github.com/repos/{OWNER}/{REPO}/issues/{c['issue']}",
            "author_association": "MEMBER" if self.roles.get(c["login"]) else "NONE",
        }

    def label_json(self, name):
        return {"id": abs(hash(name)) % 100000, "node_id": "LA_x", "url": f"https://api.github.com/repos/{OWNER}/{REPO}/labels/{urllib.parse.quote(name)}",
                "name": name, "description": None, "color": "d73a4a", "default": False}

    def add_comment(self, issue, login, body):
        t = now_iso()
        c = {"id": self.new_id(), "issue": int(issue), "login": login, "body": body, "created_at": t, "updated_at": t}
        self.comments.append(c)
        return c


STATE = State()
SPEC = None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def address_string(self):
        return "local"

    def send(self, status, body, headers=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-ratelimit-limit", "5000")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if "x-ratelimit-remaining" not in {k.lower() for k in (headers or {})}:
            self.send_header("x-ratelimit-remaining", "4999")
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            # gh sends a body read from stdin in chunks.
            raw = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        return json.loads(raw)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def do_PUT(self):
        self.handle_any("PUT")

    def handle_any(self, method):
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)
        try:
            body = self.body()
        except ValueError:
            body = "<not JSON>"
        if path.startswith("/_standin/"):
            if isinstance(self.server, socketserver.UnixStreamServer):
                return self.send(404, {"message": "no controls here"})
            return self.control(method, path, body)
        self.api(method, path, query, body)

    def origin(self):
        host = self.headers.get("Host", "")
        if host in ("api.github.com", "") or isinstance(self.server, socketserver.UnixStreamServer):
            return "https://api.github.com"
        return f"http://{host}"

    def api(self, method, path, query, body):
        auth = self.headers.get("Authorization", "")
        with STATE.lock:
            index = len(STATE.requests)
            STATE.requests.append({"method": method, "path": path, "query": {k: v[-1] for k, v in query.items()},
                                   "body": body, "auth": bool(auth), "ua": self.headers.get("User-Agent", "")})
            template, op, problems = SPEC.check_request(method, path, query, body if body != "<not JSON>" else {})
            STATE.requests[index]["operation"] = f"{method} {template}"
            if body == "<not JSON>":
                problems.append(f"{method} {path}: the body is not JSON")
            if not auth.startswith(TOKEN_PREFIXES):
                problems.append(f"{method} {path}: no token (Authorization)")
            STATE.violations += problems
            limited = None
            for rl in STATE.ratelimits:
                if rl[0] > 0 and rl[2] in f"{method} {path}":
                    rl[0] -= 1
                    limited = rl[1]
                    break
            hang = 0
            for h in STATE.hangs:
                if h[0] in f"{method} {path}":
                    STATE.hangs.remove(h)
                    hang = h[1]
                    break
            for h in STATE.slow:
                if h[0] in f"{method} {path}":
                    hang = max(hang, h[1])
        if op is None:
            return self.send(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        if problems:
            return self.send(422, {"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest"})
        if limited is not None:
            status, out, headers = 403, {"message": "API rate limit exceeded for user ID 1.",
                                         "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}, \
                {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(limited))}
        else:
            with STATE.lock:
                status, out, headers = self.operate(method, template, path, query, body)
        with STATE.lock:
            for m in STATE.corrupt:
                if m in f"{method} {path}" and isinstance(out, (dict, list)):
                    STATE.corrupt.remove(m)
                    first = out[0] if isinstance(out, list) and out else out
                    if isinstance(first, dict):
                        first.pop("html_url", None)
                        first.pop("permission", None)
                    break
            STATE.violations += SPEC.check_response(method, template, op, status, out, limited is not None)
            STATE.requests[index]["status"] = status
        if hang:
            time.sleep(hang)
        self.send(status, out, headers)

    def operate(self, method, template, path, query, body):
        if template == "/user":
            return 200, authenticated("tester", STATE.uid("tester")), {}
        parts = path.strip("/").split("/")
        if parts[1] != OWNER or parts[2] != REPO:
            return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}
        nf = (404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {})
        if template == "/repos/{owner}/{repo}/issues/{issue_number}/comments":
            issue = int(parts[4])
            if method == "POST":
                c = STATE.add_comment(issue, "tester", body["body"])
                return 201, STATE.comment_json(c), {"Location": STATE.comment_json(c)["url"]}
            since = query.get("since", [None])[-1]
            per_page = min(int(query.get("per_page", ["30"])[-1]), 100, STATE.page_size)
            page = int(query.get("page", ["1"])[-1])
            items = [c for c in STATE.comments if c["issue"] == issue and (since is None or c["updated_at"] >= since)]
            chunk = items[(page - 1) * per_page: page * per_page]
            headers = {}
            if page * per_page < len(items):
                q = {k: v[-1] for k, v in query.items()}
                q.update(page=str(page + 1), per_page=str(per_page))
                last = dict(q, page=str((len(items) + per_page - 1) // per_page))
                base = f"{self.origin()}{path}?"
                headers["Link"] = f'<{base}{urllib.parse.urlencode(q)}>; rel="next", <{base}{urllib.parse.urlencode(last)}>; rel="last"'
            return 200, [STATE.comment_json(c) for c in chunk], headers
        if template == "/repos/{owner}/{repo}/issues/comments/{comment_id}" and method == "DELETE":
            cid = int(parts[5])
            STATE.comments = [c for c in STATE.comments if c["id"] != cid]
            STATE.deleted.append(cid)
            return 204, None, {}
        if template == "/repos/{owner}/{repo}/issues/comments/{comment_id}":
            cid = int(parts[5])
            for c in STATE.comments:
                if c["id"] == cid:
                    c["body"] = body["body"]
                    c["updated_at"] = now_iso()
                    return 200, STATE.comment_json(c), {}
            return 422, {"message": "Validation Failed", "documentation_url": "x"}, {}
        if template == "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions":
            cid = int(parts[5])
            if not any(c["id"] == cid for c in STATE.comments):
                return 422, {"message": "Validation Failed", "documentation_url": "x"}, {}
            rs = STATE.reactions.setdefault(cid, [])
            existing = ("tester", body["content"]) in rs
            if not existing:
                rs.append(("tester", body["content"]))
            return (200 if existing else 201), {"id": STATE.new_id(), "node_id": "REA_x", "user": user("tester", STATE.uid("tester")),
                                                "content": body["content"], "created_at": now_iso()}, {}
        if template == "/repos/{owner}/{repo}/issues/{issue_number}/labels":
            issue = int(parts[4])
            labels = STATE.labels.setdefault(issue, [])
            if method == "POST":
                for name in body["labels"]:
                    if name not in labels:
                        labels.append(name)
            return 200, [STATE.label_json(n) for n in labels], {}
        if template == "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}":
            issue = int(parts[4])
            name = urllib.parse.unquote(parts[6])
            labels = STATE.labels.setdefault(issue, [])
            if name not in labels:
                return nf
            labels.remove(name)
            return 200, [STATE.label_json(n) for n in labels], {}
        if template == "/repos/{owner}/{repo}/collaborators/{username}/permission":
            login = urllib.parse.unquote(parts[4])
            role = STATE.roles.get(login)
            if role is None:
                return nf
            legacy = {"maintain": "write", "triage": "read"}.get(role, role)
            return 200, {"permission": legacy, "role_name": role, "user": None}, {}
        return nf

    def control(self, method, path, body):
        with STATE.lock:
            if path == "/_standin/state":
                return self.send(200, {
                    "comments": STATE.comments, "labels": {str(k): v for k, v in STATE.labels.items()},
                    "reactions": {str(k): [r[1] for r in v] for k, v in STATE.reactions.items()},
                    "requests": STATE.requests, "violations": STATE.violations,
                    "deleted": STATE.deleted,
                })
            if path == "/_standin/comment":
                c = STATE.add_comment(body["issue"], body["login"], body["body"])
                return self.send(200, STATE.comment_json(c))
            if path == "/_standin/edit":
                for c in STATE.comments:
                    if c["id"] == body["id"]:
                        c["body"] = body["body"]
                        # An edit is later than the post, as on GitHub (whole seconds here).
                        created = datetime.datetime.strptime(c["created_at"], "%Y-%m-%dT%H:%M:%SZ") \
                            .replace(tzinfo=datetime.timezone.utc).timestamp()
                        c["updated_at"] = now_iso(max(time.time(), created + 1))
                return self.send(200, {})
            if path == "/_standin/permission":
                if body["role"] == "none":
                    STATE.roles.pop(body["login"], None)
                else:
                    STATE.roles[body["login"]] = body["role"]
                return self.send(200, {})
            if path == "/_standin/ratelimit":
                STATE.ratelimits.append([body["count"], body["reset"], body.get("match", "")])
                return self.send(200, {})
            if path == "/_standin/hang":
                STATE.hangs.append([body["match"], body["seconds"]])
                return self.send(200, {})
            if path == "/_standin/slow":
                STATE.slow.append([body["match"], body["seconds"]])
                return self.send(200, {})
            if path == "/_standin/corrupt":
                STATE.corrupt.append(body["match"])
                return self.send(200, {})
            if path == "/_standin/pagesize":
                STATE.page_size = body["size"]
                return self.send(200, {})
        self.send(404, {"message": "unknown control"})


class Quiet:
    """A client that went away mid-answer (a test killed it) is no error of the stand-in's."""

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class TCP(Quiet, socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class Unix(Quiet, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main():
    global SPEC
    spec_path, sock_path, port_file = sys.argv[1:4]
    SPEC = Spec(spec_path)
    if os.path.exists(sock_path):
        os.unlink(sock_path)
    unix = Unix(sock_path, Handler)
    tcp = TCP(("127.0.0.1", 0), Handler)
    for server in (unix, tcp):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(tcp.server_address[1]))
    os.rename(tmp, port_file)
    # Ends with the test: its stdin closes when the test process goes away.
    sys.stdin.read()


if __name__ == "__main__":
    main()
