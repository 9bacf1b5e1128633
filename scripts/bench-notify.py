#!/usr/bin/env python3
"""Notification benchmarks (docs/benchmarks.md, "Notifications"), side by side in one run:

1. `clarify ask` p50 in a workspace with one webhook sink configured against one without
   (target <= 1.2x): the two binaries' runs alternate, each ask on its own issue.
2. Delivery throughput: 1,000 escalated records owed to a webhook on loopback (the test
   receiver, which verifies each signature with the official `standardwebhooks` library);
   one `notify send` pass delivers them: events/s, and p50/p99 from the pass's start to each
   delivery's arrival.

Usage: scripts/bench-notify.py [--quick] [BIN]   (BIN: default target/release/agentx)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

quick = "--quick" in sys.argv
args = [a for a in sys.argv[1:] if a != "--quick"]
root_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = args[0] if args else os.path.join(root_dir, "target/release/agentx")
RECEIVER = os.path.join(root_dir, "tests/notify/receiver.py")
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
ASKS = 10 if quick else 40
EVENTS = 100 if quick else 1000


def agentx(root, *argv, check=True):
    out = subprocess.run([BIN, "--root", root, "--json", *argv], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise SystemExit(f"agentx {' '.join(argv)} failed: {out.stdout}{out.stderr}")
    return out


def workspace(config):
    d = tempfile.mkdtemp(prefix="agentx-bench-notify-")
    agentx(d, "init")
    if config:
        with open(os.path.join(d, ".agentx/config.toml"), "w") as f:
            f.write(config)
    return d


def ask(root, issue):
    t = time.perf_counter()
    agentx(root, "clarify", "ask", "--issue", str(issue), "--from", "engineer", "--to", "architect",
           "--topic", "Cache", "--question", f"Redis or LRU for {issue}?")
    return (time.perf_counter() - t) * 1000


def start_receiver():
    p = subprocess.Popen([sys.executable, RECEIVER, SECRET], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    port = int(p.stdout.readline().split()[1])
    return p, port


def main():
    # 1. ask with and without a sink.
    sink = ('[[notify]]\nname = "team"\nkind = "webhook"\nurl = "http://127.0.0.1:9/h"\n'
            f'secret = "{SECRET}"\n')
    plain, with_sink = workspace(""), workspace(sink)
    a, b = [], []
    for i in range(1, ASKS + 1):
        a.append(ask(plain, i))
        b.append(ask(with_sink, i))
    pa, pb = statistics.median(a), statistics.median(b)
    print("== clarify ask p50 (ms), alternating, each ask on its own issue")
    print(f"  no sink            {pa:8.2f}")
    print(f"  one webhook sink   {pb:8.2f}")
    print(f"  ratio              {pb / pa:8.2f}x   (target <= 1.2)")

    # 2. delivery throughput.
    receiver, port = start_receiver()
    ws = workspace(sink.replace("http://127.0.0.1:9/h", f"http://127.0.0.1:{port}/h"))
    agentx(ws, "notify", "send")  # the sink is seen: it is told of what follows
    for i in range(1, EVENTS + 1):
        agentx(ws, "clarify", "ask", "--issue", str(i), "--from", "engineer", "--to", "architect",
               "--topic", "Cache", "--question", "Redis?")
        agentx(ws, "clarify", "escalate", f"CLR-{i}-001", "-m", "a human decides")
    # The receiver's lines are read as they come (a full pipe would stall the receiver).
    arrivals = []

    def drain():
        for line in receiver.stdout:
            arrivals.append((time.time(), json.loads(line)))

    import threading
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    start = time.time()
    out = json.loads(agentx(ws, "notify", "send").stdout)
    took = time.time() - start
    time.sleep(0.2)
    assert all(line["verified"] for _, line in arrivals), "every signature verifies"
    lat = sorted((t - start) * 1000 for t, _ in arrivals)
    receiver.stdin.close()
    receiver.wait()
    print(f"== delivery: {EVENTS} escalations owed to one webhook on loopback, one notify send pass")
    print(f"  delivered          {out['delivered']} (failed {len(out['failed'])})")
    print(f"  pass               {took * 1000:8.1f} ms   ({out['delivered'] / took:,.0f} events/s)")
    if lat:
        p50 = lat[len(lat) // 2]
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        print(f"  pass start -> arrival   p50 {p50:8.1f} ms   p99 {p99:8.1f} ms")


if __name__ == "__main__":
    main()
