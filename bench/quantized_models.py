#!/usr/bin/python3
"""Quantized models on the CPU: ResNet-18 and the GPT-style decoder block
statically quantized by PyTorch (examples/pytorch/export.py quantized(),
deployment sizes, batch 1, exported as QDQ), run by fuelc and by ONNX Runtime
(npm onnxruntime-node, CPU provider, all graph optimizations, sequential
execution, intra-op threads = T) on the same file, interleaved in rounds,
medians; beside them fuelc on the float model, and each quantized model's
accuracy against the float model and against PyTorch's quantized one.

Usage: quantized_models.py BUILD_DIR WORKDIR ORT_DIR [--quick]
--quick: one round of 5 runs (a smoke run, not figures to publish).
"""
import math
import os
import subprocess
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # As onnx_models.py.

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "pytorch"))
import export  # noqa: E402

from benchlib import Bench, median, ort_latency  # noqa: E402

build, work, ort_dir = sys.argv[1:4]
ROUNDS, RUNS = (1, 5) if "--quick" in sys.argv else (3, 20)

bench = Bench(build, work, ["--machine", "host"])
rows, accuracy, cold_rows = [], [], []
for name, quantized, original, x in export.quantized(bench=True):
    label = f"{name} {list(x.shape)}"
    raw = os.path.join(work, name + ".f32")
    x.numpy().tofile(raw)
    npy = bench.save(name + ".input", x.numpy())
    artifacts = {}
    for kind, module in (("qdq", quantized), ("float", original)):
        path = os.path.join(work, f"{name}.{kind}.onnx")
        export.export(module, x, path)
        artifacts[kind] = (path, path.replace(".onnx", ".fplan"))
        subprocess.run([bench.fuelc, "plan", path, "--machine", "host", "--dim", "B=1",
                        "-o", artifacts[kind][1]], check=True)
    # Accuracy: fuelc's output on the quantized file against PyTorch's.
    got = os.path.join(work, name + ".got.npy")
    subprocess.run([bench.fuel_run, "-q", artifacts["qdq"][1], "--input", f"x={npy}",
                    "--output", got], check=True)
    have = np.load(got)
    with torch.no_grad():
        want_q, want_f = quantized(x).numpy(), original(x).numpy()

    def relative(a, b):
        return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))

    same = float(np.mean(have.reshape(-1, have.shape[-1]).argmax(-1) ==
                         want_f.reshape(-1, want_f.shape[-1]).argmax(-1)))
    accuracy.append((label, relative(have, want_q), relative(have, want_f), same))
    for threads in (1, 2):
        ours, theirs, ours_float, ours_cold, theirs_cold = [], [], [], [], []
        for _ in range(ROUNDS):
            run = bench.run(artifacts["qdq"][1], {"x": npy}, threads, runs=RUNS)
            ours.append(run.latency)
            ours_cold.append(run.load + run.first)
            warm, cold = ort_latency(ort_dir, artifacts["qdq"][0], raw, x.shape, threads, RUNS)
            theirs.append(warm)
            theirs_cold.append(cold)
            ours_float.append(
                bench.run(artifacts["float"][1], {"x": npy}, threads, runs=RUNS).latency)
        rows.append((label, threads, median(ours), median(theirs), median(ours_float)))
        if threads == 1:
            cold_rows.append((label, median(ours_cold), median(theirs_cold)))

print(f"Warm latency: medians of {ROUNDS} rounds of {RUNS} runs each.")
print()
print("| model (input) | threads | fuelc ms (QDQ) | ONNX Runtime ms (QDQ) "
      "| ONNX Runtime / fuelc | fuelc ms (float model) | float / QDQ in fuelc |")
print("|---|---|---|---|---|---|---|")
for label, threads, ours, theirs, ours_float in rows:
    print(f"| {label} | {threads} | {ours:.3f} | {theirs:.3f} | {theirs / ours:.2f} "
          f"| {ours_float:.3f} | {ours_float / ours:.2f} |")
for threads in (1, 2):
    ratios = [theirs / ours for _, t, ours, theirs, _ in rows if t == threads]
    print(f"| geometric mean | {threads} | | | "
          f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} | | |")
print()
print("Cold start, 1 thread: fuelc's artifact load + first run against ONNX Runtime's session")
print("creation + first run, medians of the same rounds.")
print()
print("| model (input) | fuelc ms | ONNX Runtime ms | ONNX Runtime / fuelc |")
print("|---|---|---|---|")
for label, ours, theirs in cold_rows:
    print(f"| {label} | {ours:.1f} | {theirs:.1f} | {theirs / ours:.2f} |")
print()
print("Accuracy of fuelc's output on the QDQ file: max |difference| / max |reference|, and the")
print("share of rows (images, tokens) whose largest output is the float model's.")
print()
print("| model (input) | against PyTorch's quantized model | against the float model "
      "| same top class as the float model |")
print("|---|---|---|---|")
for label, to_quantized, to_float, same in accuracy:
    print(f"| {label} | {to_quantized:.1e} | {to_float:.1e} | {same:.0%} |")
