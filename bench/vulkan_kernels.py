#!/usr/bin/python3
"""Vulkan kernel benchmarks on whatever Vulkan device the loader offers
(Mesa lavapipe on the build machines: a CPU, so these are regression
figures, not GPU figures), each against a reference measured in the same
run (interleaved, medians), written as a Markdown table.

Usage: vulkan_kernels.py BUILD_DIR WORKDIR [MACHINE]

MACHINE is the fuelc machine with a `vulkan:0` device (default `ci`). Every
graph runs on vulkan:0 alone, inputs and outputs resident there, so kernel
times (`fuel-run --profile`, which waits for each kernel) exclude copies.
  1. A fused chain of 4 elementwise ops: bandwidth against numpy's memcpy
     (numpy.copyto, the same accounting: bytes read + written).
  2. softmax over rows of 1024 (three workgroup reductions per row): the
     same bandwidth accounting.
  3. sgemm 512: the GLSL tiled library kernel and the generated one-thread-
     per-element kernel against OpenBLAS (one thread).
  4. Dispatch overhead: a chain of 200 tiny unfused kernels, per step.
"""
import os
import sys
import tempfile

os.environ.pop("OPENBLAS_L2_SIZE", None)
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402  (after the BLAS environment is set)

from benchlib import Bench, median, timed  # noqa: E402

BUILD, WORK = sys.argv[1], sys.argv[2]
MACHINE = sys.argv[3] if len(sys.argv) > 3 else "ci"
bench = Bench(BUILD, WORK, ["--machine", MACHINE, "--allow-device", "vulkan:0",
                            "--input-residency", "vulkan:0", "--output-residency", "vulkan:0"])
rng = np.random.default_rng(0)


def bandwidth(bytes_moved, ms):
    return bytes_moved / (ms / 1e3) / 1e9


# 1. Fused elementwise chain vs memcpy.
shape = [2048, 2048]
x, y = rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32)
chain = bench.plan(bench.write_graph("chain", [("x", shape), ("y", shape)],
                                     [{"id": "a", "op": "mul", "inputs": ["x", "y"]},
                                      {"id": "b", "op": "add", "inputs": ["a", "x"]},
                                      {"id": "c", "op": "relu", "inputs": ["b"]},
                                      {"id": "d", "op": "mul", "inputs": ["c", "y"]}], ["d"]))
inputs = {"x": bench.save("chain_x", x), "y": bench.save("chain_y", y)}
dst = np.empty_like(x)
ours, memcpy = [], []
for _ in range(3):
    memcpy.append(bandwidth(2 * x.nbytes, timed(lambda: np.copyto(dst, x))))
    kernels = bench.run(chain, inputs, 1, runs=3, profile=True).kernels
    ours.append(bandwidth(3 * x.nbytes, kernels["mul+add+relu+mul"]))
bench.add("fused mul+add+relu+mul, 4M f32", f"{median(ours):.1f} GB/s",
          f"memcpy {median(memcpy):.1f} GB/s", median(ours) / median(memcpy))

# 2. softmax rows: workgroup reductions.
rows_shape = [4096, 1024]
s = rng.standard_normal(rows_shape, dtype=np.float32)
softmax = bench.plan(bench.write_graph("softmax", [("s", rows_shape)],
                                       [{"id": "p", "op": "softmax", "inputs": ["s"]}], ["p"]))
ours, memcpy = [], []
dst = np.empty_like(s)
for _ in range(3):
    memcpy.append(bandwidth(2 * s.nbytes, timed(lambda: np.copyto(dst, s))))
    kernels = bench.run(softmax, {"s": bench.save("softmax_s", s)}, 1, runs=3, profile=True).kernels
    ours.append(bandwidth(2 * s.nbytes, kernels["softmax"]))
bench.add("softmax, 4096 rows of 1024 f32", f"{median(ours):.1f} GB/s",
          f"memcpy {median(memcpy):.1f} GB/s", median(ours) / median(memcpy))

# 3. sgemm: the library kernel, then the generated one (no manifests).
size = 512
a = rng.standard_normal((size, size), dtype=np.float32)
b = rng.standard_normal((size, size), dtype=np.float32)
c = np.empty((size, size), np.float32)
graph = bench.write_graph("mm", [("a", [size, size]), ("b", [size, size])],
                          [{"id": "c", "op": "matmul", "inputs": ["a", "b"]}], ["c"])
library = bench.plan(graph)
generated = bench.plan(graph, "--kernels", tempfile.mkdtemp(dir=WORK))
mm_inputs = {"a": bench.save("mm_a", a), "b": bench.save("mm_b", b)}
flop = 2 * size ** 3
for label, artifact in (("library sgemm_tiled", library), ("generated", generated)):
    ours, blas = [], []
    for _ in range(3):
        blas.append(flop / (timed(lambda: np.matmul(a, b, out=c)) / 1e3) / 1e9)
        kernels = bench.run(artifact, mm_inputs, 1, runs=3, profile=True).kernels
        ours.append(flop / (kernels["matmul"] / 1e3) / 1e9)
    bench.add(f"sgemm {size}, {label}", f"{median(ours):.1f} GFLOP/s",
              f"OpenBLAS (1 thread) {median(blas):.0f} GFLOP/s", median(ours) / median(blas))

# 4. Dispatch overhead.
steps = 200
nodes = [{"id": f"r{i}", "op": "neg", "inputs": [f"r{i - 1}" if i else "x"]} for i in range(steps)]
tiny = bench.plan(bench.write_graph("tiny", [("x", [1, 16])], nodes, [f"r{steps - 1}"]),
                  "--no-fusion")
latency, load, *_ = bench.run(tiny, {"x": bench.save("tiny_x", np.ones((1, 16), np.float32))}, 1,
                             runs=50)
bench.add(f"dispatch: {steps} tiny kernels, per step", f"{latency * 1e3 / steps:.2f} us", "", None)
bench.add(f"artifact load ({steps} kernels, pipelines made while running)", f"{load:.1f} ms", "",
          None)

bench.print_table()
print()
print("Ratios: throughput / reference. lavapipe runs shaders on the CPU (LLVM, its own threads),")
print("so the figures track fuelc's SPIR-V and runtime, not a GPU.")
