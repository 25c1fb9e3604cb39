"""Checks a fuel-run --trace file and prints its structure for FileCheck:
its tracks, runs, per run the kernels of each device and the copies, and
the kernels split over threads. Fails unless it is a Chrome trace whose
every span lies in a run (device timestamps within a millisecond: they are
calibrated onto the host's clock), whose kernels on one device never overlap
(a device runs its queue in order), and whose slices (a split kernel's part
on one thread, on that thread's track) each lie inside a kernel of their
name on their device's track, never overlapping on one thread.
Usage: check-trace.py TRACE"""
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
# Which threads ran slices depends on scheduling (a late thread's slice is
# taken by one that is done): their tracks are printed apart.
print("tracks:", ", ".join(tracks[t] for t in sorted(tracks) if " thread " not in tracks[t]))
runs = sorted((s["ts"], s["ts"] + s["dur"]) for s in spans if s["cat"] == "run")
print("runs:", len(runs))
slack = 1000.0  # Microseconds.
per_run = collections.Counter()
for s in spans:
    if s["cat"] in ("run", "slice"):
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
slices = [s for s in spans if s["cat"] == "slice"]
split = set()
for s in slices:
    track = tracks[s["tid"]]
    device = track.split(" thread ")[0]
    kernels = [k for k in spans if k["cat"] == "kernel" and tracks[k["tid"]] == device and
               k["name"] == s["name"] and k["ts"] - 1.0 <= s["ts"] and
               s["ts"] + s["dur"] <= k["ts"] + k["dur"] + 1.0]
    assert len(kernels) == 1, f"slice outside a kernel of its name on {device}: {s}"
    split.add((kernels[0]["ts"], s["name"]))
for tid in tracks:
    on_thread = sorted((s["ts"], s["ts"] + s["dur"]) for s in slices if s["tid"] == tid)
    for (a0, a1), (b0, b1) in zip(on_thread, on_thread[1:]):
        assert b0 >= a1 - 1.0, f"slices overlap on {tracks[tid]}: {a0}-{a1}, {b0}-{b1}"
if slices:
    print("split kernels:", ", ".join(sorted({name for _, name in split})))
    threads = sorted({tracks[s["tid"]] for s in slices})
    print("slices on threads:", ", ".join(t.split(" thread ")[1] for t in threads))
