"""Checks a fuel-run --trace file and prints its structure for FileCheck:
its tracks, runs, and per run the kernels of each device and the copies.
Fails unless it is a Chrome trace whose every span lies in a run (device
timestamps within a millisecond: they are calibrated onto the host's clock),
and whose kernels on one device never overlap (a device runs its queue in
order). Usage: check-trace.py TRACE"""
import collections
import json
import sys

trace = json.load(open(sys.argv[1]))
assert trace["displayTimeUnit"] == "ms"
tracks = {}
spans = []
for e in trace["traceEvents"]:
    if e["ph"] == "M" and e["name"] == "thread_name":
        tracks[e["tid"]] = e["args"]["name"].split(" (")[0]
    elif e["ph"] == "X":
        assert e["ts"] >= 0 and e["dur"] >= 0, e
        spans.append(e)
print("tracks:", ", ".join(tracks[t] for t in sorted(tracks)))
runs = sorted((s["ts"], s["ts"] + s["dur"]) for s in spans if s["cat"] == "run")
print("runs:", len(runs))
slack = 1000.0  # Microseconds.
per_run = collections.Counter()
for s in spans:
    if s["cat"] == "run":
        continue
    inside = [i for i, (a, b) in enumerate(runs)
              if a - slack <= s["ts"] and s["ts"] + s["dur"] <= b + slack]
    assert inside, f"span outside every run: {s}"
    key = "kernels on " + tracks[s["tid"]] if s["cat"] == "kernel" else s["name"]
    per_run[key] += 1
for key in sorted(per_run):
    assert per_run[key] % len(runs) == 0, f"{key}: {per_run[key]} over {len(runs)} runs"
    print(f"{key}: {per_run[key] // len(runs)} per run")
for tid in tracks:
    kernels = sorted((s["ts"], s["ts"] + s["dur"]) for s in spans
                     if s["tid"] == tid and s["cat"] == "kernel")
    for (a0, a1), (b0, b1) in zip(kernels, kernels[1:]):
        assert b0 >= a1 - 1.0, f"kernels overlap on {tracks[tid]}: {a0}-{a1}, {b0}-{b1}"
