#!/usr/bin/env python3
"""Routing benchmarks (issue 14), reported by scripts/bench; figures in docs/benchmarks.md.

1. Routing overhead: `agentx clarify route <id>` with an instant runner (a shell script that
   reads the prompt and prints an answer), p50/p99 of the route's wall time beside the runner's
   own wall time measured alone on the same prompt; the overhead is the difference of medians
   (target p50 <= 10 ms).
2. `route --all --jobs 4` over 200 pending records with a 200 ms runner: wall time against the
   ideal 200 x 0.2 s / 4 = 10 s.

With `--baseline OTHER` (another agentx binary, e.g. main's), part 1 runs both side by side,
each route of one followed by the same route of the other in a workspace of its own, so a
before/after comparison shares the machine's load.

`--no-all` skips part 2.

`--routes N` times N routes instead of 200. Each route is timed right after its runner alone on
the same prompt, so besides the difference of the medians the script prints the median and the
99th percentile of the paired differences (route minus that runner run), which a host whose
speed drifts during the run disturbs less.

Usage: bench-routing.py AGENTX [--quick] [--routes N] [--baseline OTHER] [--no-all]
"""
import json, os, statistics, subprocess, sys, tempfile, time

agentx = os.path.abspath(sys.argv[1])
quick = "--quick" in sys.argv
baseline = None
if "--baseline" in sys.argv:
    baseline = os.path.abspath(sys.argv[sys.argv.index("--baseline") + 1])
routes = 20 if quick else 200
if "--routes" in sys.argv:
    routes = int(sys.argv[sys.argv.index("--routes") + 1])
records = 40 if quick else 200


def run(*args, stdin=None):
    out = subprocess.run(args, input=stdin, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({out.returncode}): {out.stdout}{out.stderr}")
    return out.stdout


def workspace(script_body, agentx=agentx):
    root = tempfile.mkdtemp(prefix="agentx-bench-route-")
    run(agentx, "--root", root, "init")
    script = os.path.join(root, "agent.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n" + script_body)
    os.chmod(script, 0o755)
    with open(os.path.join(root, ".agentx/config.toml"), "a") as f:
        f.write(f'\n[agents.architect]\npreset = "command"\ncommand = ["./agent.sh"]\n')
    return root, script


def ask(root, issue, agentx=agentx):
    run(agentx, "--root", root, "clarify", "ask", f"--issue={issue}", "--from=engineer",
        "--to=architect", "--topic=Cache", "--question=Redis or an in-process LRU?")


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


# 1. overhead with an instant runner
INSTANT = 'cat >/dev/null\necho "Redis."\n'
binaries = [agentx] + ([baseline] if baseline else [])
spaces = [workspace(INSTANT, b) for b in binaries]
route_ms = [[] for _ in binaries]
ask_ms = [[] for _ in binaries]
runner_ms = []
for issue in range(1, routes + 1):
    for k, (b, (root, _)) in enumerate(zip(binaries, spaces)):
        t = time.perf_counter()
        ask(root, issue, b)
        ask_ms[k].append((time.perf_counter() - t) * 1000)
    root, script = spaces[0]
    prompt = run(agentx, "--root", root, "clarify", "route", "--print-prompt", f"CLR-{issue}-001")
    t = time.perf_counter()
    run(script, stdin=prompt)
    runner_ms.append((time.perf_counter() - t) * 1000)
    for k, (b, (root, _)) in enumerate(zip(binaries, spaces)):
        t = time.perf_counter()
        v = json.loads(run(b, "--root", root, "--json", "clarify", "route", f"CLR-{issue}-001"))
        route_ms[k].append((time.perf_counter() - t) * 1000)
        if v.get("outcome") != "answered":
            sys.exit(f"route CLR-{issue}-001 did not answer: {v}")
r50, r99 = statistics.median(runner_ms), pct(runner_ms, 99)
print(f"  route <id>, instant runner ({routes} routes), load average {os.getloadavg()[0]:.2f}:")
print(f"    runner alone             p50 {r50:7.2f} ms   p99 {r99:7.2f} ms")
for k, b in enumerate(binaries):
    p50, p99 = statistics.median(route_ms[k]), pct(route_ms[k], 99)
    print(f"  {'baseline ' if k else ''}{b}:")
    print(f"    route wall time          p50 {p50:7.2f} ms   p99 {p99:7.2f} ms")
    print(f"    overhead (p50 - p50)         {p50 - r50:7.2f} ms   (target <= 10 ms)")
    paired = [r - n for r, n in zip(route_ms[k], runner_ms)]
    print(f"    overhead, paired         p50 {statistics.median(paired):7.2f} ms   p99 {pct(paired, 99):7.2f} ms")
    print(f"    a plain ask, for scale   p50 {statistics.median(ask_ms[k]):7.2f} ms")

# 2. route --all --jobs 4, 200 ms runner
if "--no-all" in sys.argv:
    sys.exit(0)
root, _ = workspace('cat >/dev/null\nsleep 0.2\necho "Redis."\n')
for issue in range(1, records + 1):
    ask(root, issue)
t = time.perf_counter()
v = json.loads(run(agentx, "--root", root, "--json", "clarify", "route", "--all", "--jobs", "4"))
wall = time.perf_counter() - t
answered = sum(1 for r in v["routed"] if r["outcome"] == "answered")
ideal = records * 0.2 / 4
print(f"  route --all --jobs 4 over {records} records, 200 ms runner:")
print(f"    answered {answered}/{records}; wall {wall:6.2f} s vs ideal {ideal:5.2f} s ({wall / ideal:4.2f}x)")
if answered != records:
    sys.exit("route --all left records unanswered")
