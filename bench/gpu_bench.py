#!/usr/bin/python3
"""GPU benchmarks run by scripts/gpu-check.sh on a machine with an NVIDIA
GPU, from artifacts planned elsewhere (no compiler needed), each against a
reference measured in the same run with PyTorch (cuBLAS, the device copy
engine), medians, printed as a Markdown table.

Usage: gpu_bench.py ARTIFACT_DIR FUEL_RUN WORKDIR

  1. CUDA: a fused 4-op elementwise chain over 256M floats: bandwidth
     (bytes read + written, kernel time) against torch's device-to-device
     copy (target >= 0.8).
  2. CUDA: sgemm 4096 (the generated kernel) against torch.matmul in f32
     with TF32 off (cuBLAS).
  3. CUDA: per-launch overhead of a chain of 200 tiny unfused kernels.
  4. Vulkan on the same GPU (when chain-vulkan.fplan loads): the chain's
     bandwidth against the same copy.
"""
import os
import re
import subprocess
import sys

import numpy as np

ARTIFACTS, FUEL_RUN, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
rows = []


def median(xs):
    return sorted(xs)[len(xs) // 2]


def fuel_run(artifact, inputs, runs):
    """(median latency ms, {kernel label: ms per call}) or None with why."""
    cmd = [FUEL_RUN, "-q", os.path.join(ARTIFACTS, artifact), "--bench", str(runs), "--profile"]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip()
    kernels = {}
    for line in r.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 5 and parts[2].isdigit():
            kernels[parts[0]] = float(parts[3]) / int(parts[2])
    return (float(re.search(r"median ([\d.]+) ms", r.stdout).group(1)), kernels), ""


def save(name, array):
    path = os.path.join(WORK, name + ".npy")
    np.save(path, array)
    return path


try:
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
except ImportError:
    torch = None


def torch_ms(fn, runs=10):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end))
    return median(samples)


rng = np.random.default_rng(0)
shape = (16384, 16384)  # 256M floats, 1 GiB each.
x = rng.standard_normal(shape, dtype=np.float32)
y = rng.standard_normal(shape, dtype=np.float32)
chain_inputs = {"x": save("x", x), "y": save("y", y)}
copy_gbs = None
if torch is not None:
    src = torch.from_numpy(x).cuda()
    dst = torch.empty_like(src)
    copy_gbs = 2 * x.nbytes / (torch_ms(lambda: dst.copy_(src)) / 1e3) / 1e9
for artifact, label in (("chain-cuda.fplan", "CUDA"), ("chain-vulkan.fplan", "Vulkan")):
    result, why = fuel_run(artifact, chain_inputs, 5)
    if result is None:
        rows.append((f"{label}: fused mul+add+relu+mul, 256M f32", "did not run", why[:120], None))
        continue
    gbs = 3 * x.nbytes / (result[1]["mul+add+relu+mul"] / 1e3) / 1e9
    rows.append((f"{label}: fused mul+add+relu+mul, 256M f32", f"{gbs:.0f} GB/s",
                 f"torch D2D copy {copy_gbs:.0f} GB/s" if copy_gbs else "",
                 gbs / copy_gbs if copy_gbs else None))

n = 4096
a = rng.standard_normal((n, n), dtype=np.float32)
b = rng.standard_normal((n, n), dtype=np.float32)
result, why = fuel_run("sgemm-cuda.fplan", {"a": save("a", a), "b": save("b", b)}, 3)
if result is None:
    rows.append((f"CUDA: sgemm {n}", "did not run", why[:120], None))
else:
    tflops = 2 * n ** 3 / (result[1]["matmul"] / 1e3) / 1e12
    ref = None
    if torch is not None:
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        ref = 2 * n ** 3 / (torch_ms(lambda: ta @ tb) / 1e3) / 1e12
    rows.append((f"CUDA: sgemm {n} (generated)", f"{tflops:.1f} TFLOP/s",
                 f"cuBLAS f32 {ref:.1f} TFLOP/s" if ref else "", tflops / ref if ref else None))

steps = 200
result, why = fuel_run("tiny-cuda.fplan", {"x": save("tiny", np.ones((1, 16), np.float32))}, 50)
rows.append((f"CUDA: {steps} tiny kernels, per launch",
             f"{result[0] * 1e3 / steps:.1f} us" if result else "did not run",
             "" if result else why[:120], None))

print("| benchmark | fuelc | reference (same run) | ratio |")
print("|---|---|---|---|")
for name, ours, ref, ratio in rows:
    print(f"| {name} | {ours} | {ref} | {'' if ratio is None else f'{ratio:.2f}'} |")
