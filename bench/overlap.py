"""Devices running at once, run with fuel-run --trace; per warm run, from
the trace: the makespan, each device's busy time and the time both were
busy.
- Branches: two independent branches, one on the CPU (a chain of sgemms)
  and one on Vulkan (an sgemm on lavapipe). Reference, in the same run:
  each branch planned and run alone, whose latencies add up to what the
  mixed plan would take with its devices in turn.
- Hand-off: Vulkan's first result goes to the CPU, which computes on it
  while Vulkan goes on with a long sgemm: the host waits for the event
  after the copy, not for Vulkan's later work.
Usage: overlap.py BUILD_DIR WORKDIR"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from benchlib import Bench, median  # noqa: E402

SIZE, CPU_MATMULS, RUNS = 256, 24, 9
bench = Bench(sys.argv[1], sys.argv[2], ["--machine", "ci"])
x = bench.save("x", np.random.default_rng(0).standard_normal((SIZE, SIZE)).astype(np.float32) / 16)
shape = [SIZE, SIZE]

vulkan_nodes = [{"id": "a", "op": "tanh", "inputs": ["x"], "placement": "vulkan:0"},
                {"id": "b", "op": "matmul", "inputs": ["a", "a"], "placement": "vulkan:0"}]
cpu_nodes = [{"id": "c", "op": "tanh", "inputs": ["x"], "placement": "cpu:0"}]
for i in range(CPU_MATMULS):
    previous = "c" if i == 0 else f"d{i - 1}"
    cpu_nodes.append({"id": f"d{i}", "op": "matmul", "inputs": [previous, "c"],
                      "placement": "cpu:0"})
last = f"d{CPU_MATMULS - 1}"
graphs = {
    "mixed": bench.write_graph("mixed", [("x", shape)], vulkan_nodes + cpu_nodes, ["b", last]),
    "vulkan-alone": bench.write_graph("vulkan_alone", [("x", shape)], vulkan_nodes, ["b"]),
    "cpu-alone": bench.write_graph("cpu_alone", [("x", shape)], cpu_nodes, [last]),
}
# Hand-off: a = tanh(x) on Vulkan, then b = a a on Vulkan while the CPU
# computes the chain on a.
handoff_nodes = [{"id": "a", "op": "tanh", "inputs": ["x"], "placement": "vulkan:0"},
                 {"id": "b", "op": "matmul", "inputs": ["a", "a"], "placement": "vulkan:0"}]
for i in range(CPU_MATMULS):
    previous = "a" if i == 0 else f"d{i - 1}"
    handoff_nodes.append({"id": f"d{i}", "op": "matmul", "inputs": [previous, "a"],
                          "placement": "cpu:0"})
graphs["hand-off"] = bench.write_graph("handoff", [("x", shape)], handoff_nodes, ["b", last])
plans = {name: bench.plan(graph) for name, graph in graphs.items()}


def union(spans):
    """Disjoint intervals covering `spans`."""
    out = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(intervals):
    return sum(b - a for a, b in intervals)


def intersect(xs, ys):
    out, i, j = [], 0, 0
    while i < len(xs) and j < len(ys):
        a, b = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if a < b:
            out.append([a, b])
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return out


def traced_runs(plan):
    """Per warm run of `plan`: (makespan, CPU busy, Vulkan busy, both busy), ms."""
    trace = os.path.join(bench.work, "trace.json")
    subprocess.run([bench.fuel_run, "-q", plan, "--threads", "1", "--input", f"x={x}",
                    "--bench", str(RUNS), "--trace", trace], check=True, capture_output=True)
    events = json.load(open(trace))["traceEvents"]
    tracks = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    rows = []
    for run in (e for e in spans if e["cat"] == "run"):
        start, end = run["ts"], run["ts"] + run["dur"]
        busy = {}
        for device in ("cpu:0", "vulkan:0"):
            busy[device] = union([(e["ts"], e["ts"] + e["dur"]) for e in spans
                                  if e["cat"] == "kernel" and tracks[e["tid"]].startswith(device)
                                  and start - 1000 <= e["ts"] <= end])
        rows.append((run["dur"] / 1e3, length(busy["cpu:0"]) / 1e3,
                     length(busy["vulkan:0"]) / 1e3,
                     length(intersect(busy["cpu:0"], busy["vulkan:0"])) / 1e3))
    return rows


os.environ["LP_NUM_THREADS"] = "1"  # lavapipe on one thread, the CPU kernels on the other.
rounds = {name: [] for name in plans}
for _ in range(3):  # Interleaved rounds: the machine's noise hits all alike.
    for name in plans:
        rounds[name] += traced_runs(plans[name])

mixed = [median([r[i] for r in rounds["mixed"]]) for i in range(4)]
handoff = [median([r[i] for r in rounds["hand-off"]]) for i in range(4)]
cpu_alone = median([r[0] for r in rounds["cpu-alone"]])
vulkan_alone = median([r[0] for r in rounds["vulkan-alone"]])
print(f"Graph: x [{SIZE}, {SIZE}]; vulkan:0: tanh, sgemm; cpu:0: tanh, {CPU_MATMULS} chained "
      f"sgemms; outputs from both. One CPU thread, lavapipe on one thread (LP_NUM_THREADS=1),")
print(f"medians of {3 * RUNS} warm runs in 3 interleaved rounds.")
print()
print("| figure | ms |")
print("|---|---|")
print(f"| mixed plan: makespan (run span) | {mixed[0]:.2f} |")
print(f"| mixed plan: cpu:0 busy | {mixed[1]:.2f} |")
print(f"| mixed plan: vulkan:0 busy (device timestamps) | {mixed[2]:.2f} |")
print(f"| mixed plan: both busy at once | {mixed[3]:.2f} |")
print(f"| reference: CPU branch alone | {cpu_alone:.2f} |")
print(f"| reference: Vulkan branch alone | {vulkan_alone:.2f} |")
print()
serial = cpu_alone + vulkan_alone
print(f"Overlap: both devices busy for {mixed[3] / min(mixed[1], mixed[2]):.0%} of the shorter "
      f"branch's busy time. The branches one after the other take {serial:.2f} ms, the mixed "
      f"plan {mixed[0]:.2f} ms ({serial / mixed[0]:.2f}x); the longer branch alone takes "
      f"{max(cpu_alone, vulkan_alone):.2f} ms, the bound for any schedule (within the noise of "
      "the machine).")
print()
print(f"Hand-off: x [{SIZE}, {SIZE}]; vulkan:0: a = tanh(x), then b = a a; cpu:0: {CPU_MATMULS} "
      "chained sgemms on a, copied from vulkan:0; outputs from both.")
print()
print("| figure | ms |")
print("|---|---|")
print(f"| hand-off plan: makespan (run span) | {handoff[0]:.2f} |")
print(f"| hand-off plan: cpu:0 busy | {handoff[1]:.2f} |")
print(f"| hand-off plan: vulkan:0 busy (device timestamps) | {handoff[2]:.2f} |")
print(f"| hand-off plan: both busy at once | {handoff[3]:.2f} |")
print()
print(f"Both devices busy for {handoff[3] / min(handoff[1], handoff[2]):.0%} of the shorter "
      f"device's busy time: Vulkan's sgemm runs while the CPU computes on the copy of a. The "
      f"devices' busy times add up to {handoff[1] + handoff[2]:.2f} ms, the plan takes "
      f"{handoff[0]:.2f} ms.")
