#!/usr/bin/python3
"""Plans an example graph for the CPU (or, with --vulkan, for the `ci`
machine's Vulkan device alone), runs it with fuel-run on random inputs and
checks the outputs against the reference interpreter (fuel-ref).

Usage: check-example.py GRAPH.json BUILD_DIR WORKDIR [--extent N] [--bound N] [--vulkan]

Symbolic dims are bound to --extent (default 3) by the inputs and planned
with the bound --bound (default 8): the artifact runs any extent up to it. Prints the plan summary, the chosen
route and, per output, its shape and the largest difference from the
reference; exits 1 when an output differs by more than 1e-4 (relative to
the output's magnitude, or absolute near zero).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("graph")
p.add_argument("build")
p.add_argument("work")
p.add_argument("--extent", type=int, default=3)
p.add_argument("--bound", type=int, default=8)
p.add_argument("--vulkan", action="store_true")
args = p.parse_args()
machine = ["--machine", "host"]
if args.vulkan:
    machine = ["--machine", "ci", "--allow-device", "vulkan:0", "--input-residency", "vulkan:0",
               "--output-residency", "vulkan:0"]
tools = {t: os.path.join(args.build, "tools", t, t) for t in ("fuelc", "fuel-run", "fuel-ref")}
os.makedirs(args.work, exist_ok=True)
graph = json.load(open(args.graph))
rng = np.random.default_rng(42)
dtypes = {"f32": np.float32, "f64": np.float64, "f16": np.float16}
symbols, bindings = set(), []
for inp in graph["inputs"]:
    shape = [d if isinstance(d, int) else args.extent for d in inp["shape"]]
    symbols.update(d for d in inp["shape"] if isinstance(d, str))
    path = os.path.join(args.work, inp["name"] + ".npy")
    np.save(path, rng.standard_normal(shape).astype(dtypes[inp["dtype"]]))
    bindings += ["--input", f"{inp['name']}={path}"]
dims = [a for s in sorted(symbols) for a in ("--dim", f"{s}={args.bound}")]
plan = os.path.join(args.work, "plan.fplan")
outs = len(graph["outputs"])
got = [os.path.join(args.work, f"got{i}.npy") for i in range(outs)]
want = [os.path.join(args.work, f"want{i}.npy") for i in range(outs)]


def run(cmd, show=False):
    env = dict(os.environ)
    if cmd[0] == tools["fuel-run"] and os.environ.get("FUEL_VULKAN_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["FUEL_VULKAN_PRELOAD"]  # See test/lit/lit.cfg.py.
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.stderr.write(r.stderr + f"{os.path.basename(cmd[0])} failed\n")
        sys.exit(1)
    if show:
        print(r.stdout + r.stderr, end="", flush=True)


run([tools["fuelc"], "plan", args.graph, *machine, *dims, "--emit", "text"], show=True)
run([tools["fuelc"], "plan", args.graph, *machine, *dims, "-o", plan])
run([tools["fuel-run"], plan, *bindings, *[a for g in got for a in ("--output", g)]], show=True)
run([tools["fuel-ref"], args.graph, *bindings, *[a for w in want for a in ("--output", w)]])
ok = True
for name, g, w in zip(graph["outputs"], got, want):
    a, b = np.load(g).astype(np.float64), np.load(w).astype(np.float64)
    scale = max(1.0, float(np.abs(b).max()))
    diff = float(np.abs(a - b).max()) if a.shape == b.shape else float("inf")
    good = diff <= 1e-4 * scale
    ok &= good
    print(f"output {name}: shape {list(a.shape)}, max |fuel-run - fuel-ref| = {diff:.3g} "
          f"({'OK' if good else 'MISMATCH'})")
sys.exit(0 if ok else 1)
