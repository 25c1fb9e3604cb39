#!/usr/bin/python3
"""End-to-end CPU latency of the PyTorch-exported example models
(examples/pytorch/export.py --bench): fuelc (import, plan for the `host`
machine, fuel-run --bench) against ONNX Runtime (npm onnxruntime-node, CPU
provider, all graph optimizations) and PyTorch eager (no_grad), same
machine, same thread count, in one run, medians.

Usage: onnx_models.py BUILD_DIR WORKDIR ORT_DIR
ORT_DIR holds node_modules/onnxruntime-node (scripts/bench.sh installs it).
"""
import os
import subprocess
import sys

# PyTorch's OpenMP workers otherwise spin after each run, taking the cores
# from whatever is measured next in this process's children.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "pytorch"))
import export  # noqa: E402

from benchlib import Bench, timed  # noqa: E402

RUNS = 20
build, work, ort_dir = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
bench = Bench(build, work, ["--machine", "host"])
rows = []
for name, module, x in export.models(bench=True):
    module.eval()
    path = os.path.join(work, name + ".onnx")
    export.export(module, x, path)
    raw = os.path.join(work, name + ".f32")
    x.numpy().tofile(raw)
    npy = bench.save(name + ".input", x.numpy())
    artifact = os.path.join(work, name + ".fplan")
    subprocess.run([bench.fuelc, "plan", path, "--machine", "host", "--dim", f"B={x.shape[0]}",
                    "-o", artifact], check=True)
    for threads in (1, os.cpu_count()):
        ours = bench.run(artifact, {"x": npy}, threads, runs=RUNS)[0]
        ort = float(subprocess.run(
            ["node", os.path.join(HERE, "ort_latency.js"), path, raw,
             ",".join(map(str, x.shape)), str(threads), str(RUNS)],
            check=True, capture_output=True, text=True,
            env={**os.environ, "NODE_PATH": os.path.join(ort_dir, "node_modules")}).stdout)
        torch.set_num_threads(threads)
        with torch.no_grad():
            eager = timed(lambda: module(x), runs=RUNS)
        rows.append((f"{name} {list(x.shape)}", threads, ours, ort, eager))

print("| model (input) | threads | fuelc ms | ONNX Runtime ms | PyTorch eager ms "
      "| ONNX Runtime / fuelc | PyTorch / fuelc |")
print("|---|---|---|---|---|---|---|")
for model, threads, ours, ort, eager in rows:
    print(f"| {model} | {threads} | {ours:.3f} | {ort:.3f} | {eager:.3f} "
          f"| {ort / ours:.2f} | {eager / ours:.2f} |")
