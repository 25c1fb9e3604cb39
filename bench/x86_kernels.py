#!/usr/bin/python3
"""CPU kernel and runtime benchmarks, each against a reference measured in
the same run (interleaved, medians), written as a Markdown table.

Usage: x86_kernels.py BUILD_DIR WORKDIR

  1. A fused chain of 4 elementwise ops over 64M floats: achieved bandwidth
     (bytes read + written per second, warm kernel time) against memcpy's
     (numpy.copyto of 64M floats, the same accounting), one thread; and its
     cold start (artifact load + first run) against numpy computing the
     chain once (allocating and faulting in its temporaries).
  2. sgemm 512/1024/2048: fuelc's kernel (kernels.x86.sgemm) against
     OpenBLAS (numpy.matmul), both single-threaded; the int8 GEMM
     (kernels.x86.igemm, each build this CPU runs: u8 x s8 -> i32, a
     quantized layer's product) against OpenBLAS's sgemm on the same
     shape, the f32 product it replaces; a 3x3 conv2d (the
     library conv2d, kernels/x86/conv.cpp) against OpenBLAS on the GEMM an
     im2col convolution of the same shape runs.
Kernel times are warm: `fuel-run --profile` over the --bench runs only.
  3. The MLP and transformer-block examples: fuel-run latency against a
     numpy implementation with the same weights, 1 and 2 threads.
  4. Dispatch overhead: a chain of 400 tiny kernels (latency per step), and
     artifact load time.
OpenBLAS runs the kernels scripts/bench.sh picks (OPENBLAS_CORETYPE: its
SkylakeX AVX-512 kernels on AVX-512 CPUs, which Debian's 0.3.21 does not
pick itself on Sapphire Rapids: 15 instead of 86 GFLOP/s on a 512x576x3136
sgemm there).
"""
import json
import os
import struct
import subprocess
import sys
import time

os.environ.pop("OPENBLAS_L2_SIZE", None)
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402  (after the BLAS environment is set)

from benchlib import Bench, median, timed  # noqa: E402

BUILD, WORK = sys.argv[1], sys.argv[2]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUELC = os.path.join(BUILD, "tools", "fuelc", "fuelc")
bench = Bench(BUILD, WORK, ["--machine", "host"])
save, write_graph, plan, fuel_run = bench.save, bench.write_graph, bench.plan, bench.run
rng = np.random.default_rng(0)

rows = bench.rows

# 1. Fused elementwise chain vs memcpy.
n = 64 * 1024 * 1024
shape = [8192, 8192]
x, y = rng.standard_normal(shape, dtype=np.float32), rng.standard_normal(shape, dtype=np.float32)
chain = plan(write_graph("chain", [("x", shape), ("y", shape)],
                         [{"id": "a", "op": "mul", "inputs": ["x", "y"]},
                          {"id": "b", "op": "add", "inputs": ["a", "x"]},
                          {"id": "c", "op": "relu", "inputs": ["b"]},
                          {"id": "d", "op": "mul", "inputs": ["c", "y"]}], ["d"]))
inputs = {"x": save("chain_x", x), "y": save("chain_y", y)}
dst = np.empty_like(x)
ours, memcpy = [], []
for _ in range(3):
    memcpy.append(2 * x.nbytes / (timed(lambda: np.copyto(dst, x)) / 1e3) / 1e9)
    kernels = fuel_run(chain, inputs, 1, runs=3, profile=True).kernels
    ours.append(3 * x.nbytes / (kernels["mul+add+relu+mul"] / 1e3) / 1e9)
kernels2 = fuel_run(chain, inputs, 2, runs=3, profile=True).kernels
rows.append(("fused mul+add+relu+mul, 64M f32, 1 thread", f"{median(ours):.1f} GB/s",
             f"memcpy {median(memcpy):.1f} GB/s", median(ours) / median(memcpy)))
rows.append(("the same, 2 threads", f"{3 * x.nbytes / (kernels2['mul+add+relu+mul'] / 1e3) / 1e9:.1f} GB/s",
             f"memcpy (1 thread) {median(memcpy):.1f} GB/s",
             3 * x.nbytes / (kernels2["mul+add+relu+mul"] / 1e3) / 1e9 / median(memcpy)))
cold, fresh = [], []
for _ in range(3):
    run = fuel_run(chain, inputs, 1, runs=1)
    cold.append(run.load + run.first)
    start = time.perf_counter()
    np.maximum(x * y + x, 0) * y
    fresh.append((time.perf_counter() - start) * 1e3)
rows.append(("the same, cold start: artifact load + first run", f"{median(cold):.0f} ms",
             f"numpy, fresh temporaries {median(fresh):.0f} ms", median(fresh) / median(cold)))

# 2. sgemm against OpenBLAS.
for size in (512, 1024, 2048):
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    c = np.empty((size, size), np.float32)
    mm = plan(write_graph(f"mm{size}", [("a", [size, size]), ("b", [size, size])],
                          [{"id": "c", "op": "matmul", "inputs": ["a", "b"]}], ["c"]))
    mm_inputs = {"a": save(f"mm{size}_a", a), "b": save(f"mm{size}_b", b)}
    flop = 2 * size ** 3
    ours, blas = [], []
    for _ in range(3):
        blas.append(flop / (timed(lambda: np.matmul(a, b, out=c)) / 1e3) / 1e9)
        kernels = fuel_run(mm, mm_inputs, 1, runs=3, profile=True).kernels
        ours.append(flop / (kernels["matmul"] / 1e3) / 1e9)
    rows.append((f"sgemm {size}, 1 thread", f"{median(ours):.0f} GFLOP/s",
                 f"OpenBLAS {median(blas):.0f} GFLOP/s", median(ours) / median(blas)))


# The int8 GEMM (kernels/x86/igemm.cpp), each build this CPU runs, on a
# quantized layer's product (u8 activations x constant s8 weights -> i32),
# against OpenBLAS's sgemm on the same shape: the f32 product it replaces.
host = json.loads(subprocess.run([FUELC, "targets", "--print", "host"], check=True,
                                 capture_output=True, text=True).stdout)
host_level, *host_extensions = host["devices"][0]["target"].split("+")
for build, target in [("avx2", "x86-64-v3"), ("avxvnni", "x86-64-v3+avxvnni"),
                      ("avx512vnni", "x86-64-v4+avx512vnni")]:
    level, *extensions = target.split("+")
    if level > host_level or not set(extensions) <= set(host_extensions):
        continue
    host["devices"][0]["target"] = target
    machine = os.path.join(WORK, f"{build}.machine.json")
    json.dump(host, open(machine, "w"))
    for m, k, n in ((1024, 1024, 1024), (1, 4096, 4096)):
        a = rng.integers(0, 256, (m, k), dtype=np.uint8)
        w = rng.integers(-128, 128, (k, n), dtype=np.int8)
        name = f"igemm_{build}_{m}"
        graph = os.path.join(WORK, name + ".json")
        json.dump({"format": "fuel.graph", "version": 1, "name": name,
                   "inputs": [{"name": "a", "dtype": "u8", "shape": [m, k]}],
                   "constants": [{"name": "w", "dtype": "i8", "shape": [k, n],
                                  "data": {"file": bench.save(name + "_w", w)}}],
                   "nodes": [{"id": "c", "op": "matmul", "inputs": ["a", "w"]}],
                   "outputs": ["c"]}, open(graph, "w"))
        igemm = Bench(BUILD, WORK, ["--machine", machine]).plan(graph)
        fa, fw = a.astype(np.float32), w.astype(np.float32)
        fc = np.empty((m, n), np.float32)
        flop = 2 * m * k * n
        ours, blas = [], []
        for _ in range(3):
            blas.append(flop / (timed(lambda: np.matmul(fa, fw, out=fc)) / 1e3) / 1e9)
            kernels = fuel_run(igemm, {"a": save(name + "_a", a)}, 1, runs=3, profile=True).kernels
            ours.append(flop / (kernels["matmul"] / 1e3) / 1e9)
        rows.append((f"int8 GEMM {m}x{k}x{n} ({build}), 1 thread", f"{median(ours):.0f} GOP/s",
                     f"OpenBLAS sgemm {median(blas):.0f} GFLOP/s", median(ours) / median(blas)))

# The library conv2d, against OpenBLAS on the GEMM of the same shape (what an
# im2col convolution over OpenBLAS would run). conv-bench has every layer of
# ResNet-18 and MobileNetV2.
img = rng.standard_normal((1, 64, 56, 56), dtype=np.float32)
conv = plan(write_graph("conv", [("img", [1, 64, 56, 56])],
                        [{"id": "y", "op": "conv2d", "inputs": ["img", "k"],
                          "attrs": {"pads": [1, 1, 1, 1]}}], ["y"],
                        constants=[("k", rng.standard_normal((64, 64, 3, 3), dtype=np.float32))]))
rows_k = rng.standard_normal((64, 576), dtype=np.float32)
cols = rng.standard_normal((576, 3136), dtype=np.float32)
out = np.empty((64, 3136), np.float32)
flop = 2 * 64 * 576 * 3136
ours, blas = [], []
for _ in range(3):
    blas.append(flop / (timed(lambda: np.matmul(rows_k, cols, out=out)) / 1e3) / 1e9)
    kernels = fuel_run(conv, {"img": save("conv_img", img)}, 1, runs=3, profile=True).kernels
    ours.append(flop / (kernels["conv2d"] / 1e3) / 1e9)
rows.append(("conv2d 3x3, 64 -> 64 channels, 56x56, 1 thread", f"{median(ours):.0f} GFLOP/s",
             f"OpenBLAS GEMM 64x576x3136 {median(blas):.0f} GFLOP/s", median(ours) / median(blas)))

# 3. Examples against numpy.
def load_weights(graph_path):
    graph = json.load(open(graph_path))
    base = os.path.dirname(graph_path)
    weights = {}
    for c in graph.get("constants", []):
        data, dtype = c["data"], np.dtype(np.float32)
        if isinstance(data, list):
            weights[c["name"]] = np.array(data, dtype).reshape(c["shape"])
            continue
        path = os.path.join(base, data["file"])
        if path.endswith(".safetensors"):
            raw = open(path, "rb").read()
            size = struct.unpack("<Q", raw[:8])[0]
            entry = json.loads(raw[8:8 + size])[data["tensor"]]
            begin, end = entry["data_offsets"]
            arr = np.frombuffer(raw[8 + size + begin:8 + size + end], dtype)
        elif path.endswith(".npy"):
            arr = np.load(path)
        else:
            count = int(np.prod(c["shape"]))
            arr = np.fromfile(path, dtype, count, offset=data.get("offset", 0))
        weights[c["name"]] = arr.reshape(c["shape"])
    return graph, weights


def erf(v):
    # numpy has no erf: Abramowitz & Stegun 7.1.26 (error < 1.5e-7), vectorized.
    s, a = np.sign(v), np.abs(v)
    t = 1 / (1 + np.float32(0.3275911) * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return (s * (1 - poly * np.exp(-a * a))).astype(np.float32)


def mlp_numpy(w, x):
    h = x @ w["fc1.weight"].T + w["fc1.bias"]
    h = 0.5 * h * (1 + erf(h / np.float32(np.sqrt(2))))
    z = h @ w["fc2.weight"].T + w["fc2.bias"]
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(v, scale, bias):
    mean = v.mean(-1, keepdims=True)
    var = ((v - mean) ** 2).mean(-1, keepdims=True)
    return (v - mean) / np.sqrt(var + np.float32(1e-5)) * scale + bias


def encoder_numpy(w, x):
    B, T, _ = x.shape
    h = layer_norm(x, w["ln1.scale"], w["ln1.bias"])
    q, k, v = (np.ascontiguousarray((h @ w[n].T).reshape(B, T, 4, 16).transpose(0, 2, 1, 3))
               for n in ("wq", "wk", "wv"))
    s = (q @ k.transpose(0, 1, 3, 2)) * w["attn_scale"]
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    ctx = (p @ v).transpose(0, 2, 1, 3).reshape(B, T, 64)
    r = x + ctx @ w["wo"].T + w["bo"]
    g = layer_norm(r, w["ln2.scale"], w["ln2.bias"])
    f = g @ w["ff1.weight"].T + w["ff1.bias"]
    f = 0.5 * f * (1 + np.tanh(np.float32(np.sqrt(2 / np.pi)) * (f + np.float32(0.044715) * f ** 3)))
    return r + f @ w["ff2.weight"].T + w["ff2.bias"]


for name, rel, dims, fn, shape in [
        ("MLP, B=64", "examples/mlp/mlp.json", {"B": 64}, mlp_numpy, (64, 64)),
        ("transformer block, B=8 T=128", "examples/transformer/encoder_block.json",
         {"B": 8, "T": 128}, encoder_numpy, (8, 128, 64))]:
    path = os.path.join(ROOT, rel)
    graph, w = load_weights(path)
    xin = rng.standard_normal(shape, dtype=np.float32)
    art = os.path.join(WORK, os.path.basename(path).replace(".json", ".fplan"))
    subprocess.run([FUELC, "plan", path, "--machine", "host", "-o", art,
                    *[a for s, v in dims.items() for a in ("--dim", f"{s}={v}")]], check=True)
    inp = {graph["inputs"][0]["name"]: save(name.split(",")[0] + "_x", xin)}
    for threads in (1, 2):
        os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
        ours, ref = [], []
        for _ in range(3):
            ours.append(fuel_run(art, inp, threads, runs=20)[0])
            ref.append(timed(lambda: fn(w, xin), runs=20))
        rows.append((f"{name}, {threads} thread{'s' if threads > 1 else ''}",
                     f"{median(ours):.3f} ms", f"numpy {median(ref):.3f} ms",
                     median(ref) / median(ours)))
os.environ["OPENBLAS_NUM_THREADS"] = "1"

# 4. Dispatch overhead and load time.
steps = 400
nodes = [{"id": f"r{i}", "op": "reduce_max", "inputs": [f"r{i - 1}" if i else "x"],
          "attrs": {"axes": [1], "keepdims": True}} for i in range(steps)]
tiny = plan(write_graph("tiny", [("x", [1, 1])], nodes, [f"r{steps - 1}"]))
latency, load, *_ = fuel_run(tiny, {"x": save("tiny_x", np.ones((1, 1), np.float32))}, 1, runs=200)
rows.append((f"dispatch: {steps} tiny kernels, per step", f"{latency * 1e3 / steps:.3f} us",
             "target 1 us", 1 / (latency * 1e3 / steps)))
_, load_tf, *_ = fuel_run(os.path.join(WORK, "encoder_block.fplan"), {"x": save("tf_x", rng.standard_normal((8, 128, 64), dtype=np.float32))}, 1, runs=1)
rows.append(("artifact load (transformer block, 12 kernels)", f"{load_tf:.2f} ms", "", None))
rows.append((f"artifact load ({steps} kernels)", f"{load:.2f} ms", "", None))

bench.print_table()
print()
print("Ratios: throughput / reference for bandwidth and GFLOP/s; reference time / fuelc time for")
print("latencies (above 1: fuelc is faster); for dispatch, 1 us / measured.")
