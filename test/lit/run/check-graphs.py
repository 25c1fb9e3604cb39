#!/usr/bin/python3
"""Checks compiled plans (fuelc plan + fuel-run) against the reference
interpreter (fuel-ref, itself checked against numpy) on multi-node graphs:
fusion patterns, strided views feeding kernels, every dtype, symbolic dims,
several outputs with a shared subgraph, and multithreaded splitting.

Usage: check-graphs.py FUELC FUEL_RUN FUEL_REF WORKDIR [TARGET]

TARGET `host` (the default) plans for the host CPU. TARGET `ptx` compiles
every case for the `h200` machine's CUDA device alone (PTX assembled by
ptxas for sm_90) and stops there (no GPU here). TARGET `vulkan` plans
every case for the `ci` machine's Vulkan device alone (cases with an op or a
dtype Vulkan kernels lack fail to plan with NoBackendForOp and are counted) (inputs and outputs resident there, so copies in and out
run too), with the Khronos validation layer on (any message fails the case),
and adds mixed CPU + Vulkan plans split by pins.

Inputs are random (fixed seed). Tolerances, by output dtype (relative and
absolute, as numpy.allclose): f64 1e-12/1e-12, f32 2e-5/2e-6 (polynomial
transcendental approximations, reassociated reductions), f16 4e-3/4e-3,
bf16 (checked through a cast to f32) 2e-2/2e-2; integers and bool exact.
Prints one line per failure and "N passed, M failed"; exits 1 on failure.
"""
import json
from functools import partial
import os
import re
import subprocess
import sys

import numpy as np

FUELC, FUEL_RUN, FUEL_REF, WORK = sys.argv[1:5]
TARGET = sys.argv[5] if len(sys.argv) > 5 else "host"
os.makedirs(WORK, exist_ok=True)
MACHINE_ARGS = {
    "host": ["--machine", "host"],
    "vulkan": ["--machine", "ci", "--allow-device", "vulkan:0", "--input-residency", "vulkan:0",
               "--output-residency", "vulkan:0"],
    "ptx": ["--machine", "h200", "--allow-device", "cuda:0", "--input-residency", "cuda:0",
            "--output-residency", "cuda:0"],
}[TARGET]
os.environ["FUEL_VULKAN_VALIDATION"] = "1"
rng = np.random.default_rng(7)
DTYPES = {np.float32: "f32", np.float64: "f64", np.float16: "f16", np.int8: "i8",
          np.int32: "i32", np.int64: "i64", np.uint8: "u8", np.bool_: "bool"}
# The integers only the CPU has kernels for; their cases cast among all.
CPU_DTYPES = {np.int16: "i16", np.uint16: "u16", np.uint32: "u32", np.uint64: "u64"}
DTYPES.update(CPU_DTYPES)
TOLERANCE = {"f64": (1e-12, 1e-12), "f32": (2e-5, 2e-6), "f16": (4e-3, 4e-3)}
passed, failed, not_on_gpu = 0, 0, 0


def rand(shape, dtype=np.float32, low=-2.0, high=2.0):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def run(cmd):
    env = dict(os.environ)
    if cmd[0] == FUEL_RUN and os.environ.get("FUEL_VULKAN_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["FUEL_VULKAN_PRELOAD"]  # See lit.cfg.py.
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return r.returncode, r.stderr.strip()


def check(name, inputs, nodes, outputs, constants=(), symbolic=None, dims=None,
          plan_args=(), run_args=(), tolerance=None, machine_args=None, refused_for=None,
          close=None):
    """Plans and runs the graph, compares every output with fuel-ref.
    `symbolic` declares some inputs with symbolic shapes; `dims` gives the
    planned bound of each symbol; `machine_args` replace the target's;
    `refused_for`: this CPU lacks that feature, which the plan needs, so
    fuel-run must refuse it, naming the feature; `close(got, want, rtol,
    atol)` replaces numpy.allclose for floating outputs."""
    global passed, failed, not_on_gpu
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    graph_inputs, args = [], []
    for iname, arr in inputs:
        path = os.path.join(d, iname + ".npy")
        np.save(path, arr)
        shape = (symbolic or {}).get(iname, list(arr.shape))
        graph_inputs.append({"name": iname, "dtype": DTYPES[arr.dtype.type], "shape": shape})
        args += ["--input", f"{iname}={path}"]
    graph_constants = [{"name": c, "dtype": DTYPES[a.dtype.type], "shape": list(a.shape),
                        "data": a.ravel().tolist()} for c, a in constants]
    graph = {"format": "fuel.graph", "version": 1, "name": name, "inputs": graph_inputs,
             "constants": graph_constants, "nodes": nodes, "outputs": outputs}
    gpath = os.path.join(d, "g.json")
    json.dump(graph, open(gpath, "w"))
    plan = os.path.join(d, "g.fplan")
    got = [os.path.join(d, f"got{i}.npy") for i in range(len(outputs))]
    want = [os.path.join(d, f"want{i}.npy") for i in range(len(outputs))]
    dim_args = [a for s, v in (dims or {}).items() for a in ("--dim", f"{s}={v}")]
    machine = MACHINE_ARGS if machine_args is None else machine_args
    commands = [[FUELC, "plan", gpath, *machine, *dim_args, *plan_args, "-o", plan],
                [FUEL_RUN, "-q", plan, *run_args, *args, *[a for p in got for a in ("--output", p)]],
                [FUEL_REF, gpath, *args, *[a for p in want for a in ("--output", p)]]]
    if TARGET == "ptx":  # Nothing runs without a GPU: the case is saved.
        del commands[1]
    for cmd in commands:
        code, err = run(cmd)
        if cmd[0] == FUEL_RUN and refused_for:
            if code != 0 and f"this CPU lacks" in err and refused_for in err:
                passed += 1
            else:
                print(f"FAIL {name}: fuel-run exited {code} on a CPU without {refused_for}: {err}")
                failed += 1
            return
        if cmd[0] == FUELC and TARGET != "host" and machine_args is None and \
                "NoBackendForOp" in err:
            not_on_gpu += 1  # Counted: the test checks how many there are.
            return
        if "ptxas was not found" in err:
            code = "0 without ptxas"
        if "vulkan validation" in err:
            code = "0 with validation messages"
        if code != 0:
            print(f"FAIL {name}: {os.path.basename(cmd[0])} exited {code}: {err}")
            failed += 1
            return
    if TARGET == "ptx" or os.environ.get("FUEL_EXPORT_CASES") == "1":
        # What scripts/gpu-cases.py runs elsewhere (where there is a GPU).
        wants = [np.load(w) for w in want]
        tolerances = [list(tolerance or TOLERANCE[DTYPES[b.dtype.type]])
                      if np.issubdtype(b.dtype, np.floating) else None for b in wants]
        json.dump({"artifact": "g.fplan", "args": [a.replace(d + os.sep, "") for a in args],
                   "run_args": list(run_args), "tolerances": tolerances,
                   "expected": [os.path.basename(w) for w in want]},
                  open(os.path.join(d, "case.json"), "w"))
    if TARGET == "ptx":
        passed += 1
        return
    for g, w in zip(got, want):
        a, b = np.load(g), np.load(w)
        ok = a.shape == b.shape and a.dtype == b.dtype
        if ok and np.issubdtype(b.dtype, np.floating):
            rtol, atol = tolerance or TOLERANCE[DTYPES[b.dtype.type]]
            ok = (close or partial(np.allclose, equal_nan=True))(
                a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol)
        elif ok:
            ok = np.array_equal(a, b)
        if not ok:
            diff = (np.abs(a.astype(np.float64) - b.astype(np.float64)).max()
                    if a.shape == b.shape else "n/a")
            print(f"FAIL {name}: {os.path.basename(g)} {a.dtype}{list(a.shape)} vs "
                  f"{b.dtype}{list(b.shape)}, max abs diff {diff}")
            failed += 1
            return
    passed += 1


def node(id, op, inputs, **attrs):
    n = {"id": id, "op": op, "inputs": inputs}
    if attrs:
        n["attrs"] = attrs
    return n


# Fusion: an elementwise chain of 5 ops with broadcasting (one kernel).
x, a, b = rand((8, 64)), rand((64,)), rand((1, 64))
check("chain_broadcast", [("x", x), ("a", a), ("b", b)],
      [node("m", "mul", ["x", "a"]), node("s", "add", ["m", "b"]),
       node("t", "tanh", ["s"]), node("e", "exp", ["t"]), node("y", "mul", ["e", "x"])], ["y"])
# Trailing axes that every operand reads whole or broadcasts collapse into
# one loop: an image's 9x11 pixels scaled per channel, plus a [9, 11] map
# and a scalar (one loop of 99); then a [11] row, which reads the last
# axis but broadcasts the one before, stops the run at the last axis.
img, chan, pix, one, row = rand((2, 6, 9, 11)), rand((1, 6, 1, 1)), rand((9, 11)), rand((1,)), rand((11,))
check("chain_collapsed_axes", [("x", img), ("c", chan), ("p", pix), ("o", one)],
      [node("m", "mul", ["x", "c"]), node("s", "add", ["m", "p"]), node("y", "mul", ["s", "o"])],
      ["y"])
check("chain_collapse_stops", [("x", img), ("c", chan), ("r", row)],
      [node("m", "mul", ["x", "c"]), node("y", "sub", ["m", "r"])], ["y"])
# Through views: a transposed and a sliced operand (strided reads).
t = rand((64, 8))
check("chain_strided_views", [("x", x), ("t", t)],
      [node("tt", "transpose", ["t"]), node("s", "slice", ["x"], starts=[0], ends=[8], steps=[2], axes=[0]),
       node("st", "slice", ["tt"], starts=[1], ends=[8], steps=[2], axes=[0]),
       node("y", "add", ["s", "st"]), node("z", "relu", ["y"])], ["z"])
# Reductions over views and with elementwise producers.
check("reduce_of_chain", [("x", x)],
      [node("sq", "mul", ["x", "x"]), node("y", "reduce_sum", ["sq"], axes=[-1], keepdims=True),
       node("r", "rsqrt", ["y"])], ["r"])
# Prologues: the reduction or normalization computes its input in place.
check("layer_norm_of_residual", [("x", x), ("r", rand((8, 64))), ("g", rand((64,)))],
      [node("s", "add", ["x", "r"]), node("n", "layer_norm", ["s", "g"])], ["n"])
check("softmax_of_scaled_f16", [("x", rand((4, 8, 32), np.float16)), ("c", rand((32,), np.float16))],
      [node("m", "mul", ["x", "c"]), node("e", "tanh", ["m"]), node("p", "softmax", ["e"], axis=1)], ["p"])
check("rms_norm_of_broadcast_chain", [("x", rand((6, 16))), ("b", rand((1, 16)))],
      [node("s", "sub", ["x", "b"]), node("q", "mul", ["s", "s"]), node("n", "rms_norm", ["q"])], ["n"])
check("reduce_epilogue", [("x", rand((8, 64), low=0.5, high=2)), ("c", rand((8, 1)))],
      [node("m", "reduce_mean", ["x"], axes=[1], keepdims=True), node("r", "rsqrt", ["m"]),
       node("y", "mul", ["r", "c"])], ["y"])
check("reduce_strided", [("t", t)],
      [node("tt", "transpose", ["t"]), node("y", "reduce_max", ["tt"], axes=[0])], ["y"])
# Epilogues: linear + bias + gelu, matmul + add + relu, conv + relu,
# layer_norm + mul.
w, bias = rand((32, 64)), rand((32,))
check("linear_gelu", [("x", x)], [node("l", "linear", ["x", "w", "bias"]), node("y", "gelu", ["l"])],
      ["y"], constants=[("w", w), ("bias", bias)])
m2 = rand((64, 16))
check("matmul_add_relu", [("x", x), ("m", m2), ("c", rand((16,)))],
      [node("p", "matmul", ["x", "m"]), node("q", "add", ["p", "c"]), node("y", "relu", ["q"])], ["y"])
img, k = rand((2, 3, 9, 9)), rand((4, 3, 3, 3))
check("conv_relu", [("img", img)],
      [node("c", "conv2d", ["img", "k"], pads=[1, 1, 1, 1]), node("y", "relu", ["c"])], ["y"],
      constants=[("k", k)])
check("layer_norm_mul", [("x", x), ("g", rand((64,)))],
      [node("n", "layer_norm", ["x"]), node("y", "mul", ["n", "g"])], ["y"])
check("softmax_of_scaled_scores", [("q", rand((2, 4, 8, 16))), ("k", rand((2, 4, 8, 16)))],
      [node("s", "matmul", ["q", "k"], transpose_b=True), node("c", "mul", ["s", "scale"]),
       node("p", "softmax", ["c"])], ["p"], constants=[("scale", np.array([0.25], np.float32))])
# A diamond fused into one kernel: the head (matmul) comes after an
# elementwise member in graph order.
check("diamond_fused", [("x", rand((16, 16)))],
      [node("light", "neg", ["x"]), node("heavy", "matmul", ["x", "w16"]),
       node("join", "add", ["heavy", "light"])], ["join"], constants=[("w16", rand((16, 16)))])
# A transposed operand read by matmul (strided descriptor).
check("matmul_strided_operand", [("t", rand((16, 8))), ("m", rand((16, 5)))],
      [node("tt", "transpose", ["t"]), node("y", "matmul", ["tt", "m"])], ["y"])
# Batched rows through a transposed batch of one ([1, T, E] -> [T, 1, E], as
# PyTorch's batch-first attention): the unit axis's stride is not the rows'.
check("matmul_unit_batch_view", [("t", rand((1, 40, 24))), ("m", rand((24, 20)))],
      [node("tt", "transpose", ["t"], perm=[1, 0, 2]), node("y", "matmul", ["tt", "m"])], ["y"])
# Batches whose axes do not nest with the rows ([B, T, E] -> [T, B, E], as
# a sequence-first attention's projection): the library gathers the rows
# into one product against the shared weight, a constant one and one
# computed.
check("matmul_gathered_rows", [("t", rand((3, 7, 24))), ("u", rand((5, 2, 9))),
                               ("m", rand((9, 11)))],
      [node("tt", "transpose", ["t"], perm=[1, 0, 2]), node("y", "matmul", ["tt", "w"]),
       node("ut", "transpose", ["u"], perm=[1, 0, 2]), node("z", "matmul", ["ut", "m"])],
      ["y", "z"], constants=[("w", rand((24, 20)))])
# A reversed view (negative stride) read by a reduction: Vulkan binds the
# buffer from the lowest element the view reaches, not its first.
check("reduce_reversed_view", [("x", rand((2, 3, 40)))],
      [node("r", "slice", ["x"], starts=[-1], ends=[-2**63], steps=[-1], axes=[0]),
       node("y", "reduce_max", ["r"], axes=[0], keepdims=True)], ["y"])
# One constant weight read by three products (2-D, batched, and through a
# transposed view): the library packs a weight once and reuses the panels
# in the later calls.
shared = rand((96, 96))
check("matmul_shared_weight", [("x", rand((8, 96))), ("xb", rand((2, 5, 96)))],
      [node("m1", "matmul", ["x", "w"]), node("r", "relu", ["m1"]),
       node("m2", "matmul", ["r", "w"]), node("wt", "transpose", ["w"]),
       node("m3", "matmul", ["xb", "wt"]), node("m4", "matmul", ["m2", "w"])],
      # Three chained 96-term products reach 4e3 and cancel to ~1: f32
      # rounding of the terms (numpy's too) is ~1e-3 there.
      ["m3", "m4"], constants=[("w", shared)], tolerance=(1e-4, 1e-2))
# Several outputs sharing a subgraph (computed once), one output a view.
check("shared_outputs", [("x", x), ("a", a)],
      [node("s", "add", ["x", "a"]), node("r", "relu", ["s"]), node("n", "neg", ["s"]),
       node("v", "transpose", ["s"])], ["r", "n", "v"])
NUMERIC = [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8, *CPU_DTYPES]
# Every dtype through elementwise ops, a reduction and casts.
for dt in NUMERIC:
    name = DTYPES[dt]
    u, v = rand((6, 10), dt, 0, 9), rand((10,), dt, 1, 9)
    check(f"dtype_{name}", [("u", u), ("v", v)],
          [node("s", "add", ["u", "v"]), node("p", "mul", ["s", "v"]), node("q", "max", ["p", "u"]),
           node("c", "gt", ["q", "s"]), node("w", "where", ["c", "q", "u"]),
           node("r", "reduce_sum", ["w"], axes=[1]), node("f", "cast", ["w"], to="f64")],
          ["r", "f", "c"])
    check(f"dtype_{name}_matmul", [("u", u), ("m", rand((10, 4), dt, 0, 3))],
          [node("y", "matmul", ["u", "m"])], ["y"],
          tolerance=(4e-3, 4e-2) if dt == np.float16 else None)
# 8-bit matmuls, exact in i32, in each build of the int8 library GEMM
# (kernels/x86/igemm.cpp: vpmaddwd on AVX2, vpdpbusd with AVX-VNNI and
# AVX512-VNNI, the last two with sign-bit flips corrected after): every
# signedness pair over full-range values, extents off the register tiles,
# one row (its 1-row tile), odd K, K over one packed block, transposes,
# batches, constant weights. A build this CPU cannot run must be refused.
BYTE_RANGE = {np.uint8: (0, 255), np.int8: (-128, 127)}
HOST_TARGET = json.loads(subprocess.run([FUELC, "targets", "--print", "host"], check=True,
                                        capture_output=True, text=True).stdout)["devices"][0]["target"]
HOST_LEVEL, *HOST_EXTENSIONS = HOST_TARGET.split("+")


def int8_cases(variant, target, feature):
    """The 8-bit cases planned for `target`, whose `feature` selects the
    int8 GEMM's `variant` build."""
    suffix, machine, refused = "", None, None
    if TARGET == "host":
        suffix = "_" + variant
        machine = os.path.join(WORK, f"{variant}.machine.json")
        with open(machine, "w") as f:
            f.write(re.sub(r'"target": "x86-64[^"]*"', f'"target": "{target}"', subprocess.run(
                [FUELC, "targets", "--print", "host"], check=True, capture_output=True,
                text=True).stdout))
        level = target.split("+")[0]
        if level > HOST_LEVEL or (feature.endswith("vnni") and feature not in HOST_EXTENSIONS):
            refused = feature
        machine = ["--machine", machine]
    kw = dict(machine_args=machine, refused_for=refused)
    for ta, tb in [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8),
                   (np.int8, np.uint8)]:
        check(f"int8_matmul_{DTYPES[ta]}_{DTYPES[tb]}{suffix}",
              [("a", rand((29, 37), ta, *BYTE_RANGE[ta])),
               ("b", rand((37, 35), tb, *BYTE_RANGE[tb]))],
              [node("y", "matmul", ["a", "b"])], ["y"], **kw)
    check(f"int8_matmul_constant_weights{suffix}", [("x", rand((2, 7, 35), np.uint8, 0, 255))],
          [node("y", "matmul", ["x", "w"])], ["y"],
          constants=[("w", rand((35, 70), np.int8, -128, 127))], **kw)
    check(f"int8_matmul_constant_signed{suffix}", [("x", rand((13, 35), np.int8, -128, 127))],
          [node("y", "matmul", ["x", "w"])], ["y"],
          constants=[("w", rand((35, 70), np.uint8, 0, 255))], **kw)
    check(f"int8_matmul_gathered_rows{suffix}", [("x", rand((3, 5, 35), np.uint8, 0, 255))],
          [node("xt", "transpose", ["x"], perm=[1, 0, 2]), node("y", "matmul", ["xt", "w"])],
          ["y"], constants=[("w", rand((35, 70), np.int8, -128, 127))], **kw)
    check(f"int8_matmul_transposed{suffix}", [("x", rand((40, 9), np.uint8, 0, 255)),
                                               ("w", rand((50, 40), np.int8, -128, 127))],
          [node("y", "matmul", ["x", "w"], transpose_a=True, transpose_b=True)], ["y"], **kw)
    check(f"int8_matmul_long_k{suffix}", [("x", rand((3, 4101), np.int8, -128, 127)),
                                           ("w", rand((4101, 17), np.uint8, 0, 255))],
          [node("y", "matmul", ["x", "w"])], ["y"], **kw)
    check(f"int8_matmul_one_row{suffix}", [("x", rand((301,), np.uint8, 0, 255))],
          [node("y", "matmul", ["x", "w"])], ["y"],
          constants=[("w", rand((301, 21), np.int8, -128, 127))], **kw)
    check(f"int8_matmul_batched{suffix}", [("x", rand((3, 5, 20), np.int8, -128, 127)),
                                            ("w", rand((1, 20, 18), np.uint8, 0, 255))],
          [node("y", "matmul", ["x", "w"])], ["y"], **kw)
    # 8-bit convolutions (kernels/x86/iconv.cpp: taps of a channels-last
    # image through the int8 GEMM): channel counts off the 16-byte copies,
    # padding, strides, dilations, groups, depthwise, batches, pixels over
    # one block, taps over one packed block, a 1x1 layer read in place,
    # weights that are inputs, and a fused float epilogue.
    u8_image = lambda shape: rand(shape, np.uint8, 0, 255)  # noqa: E731
    i8_filter = lambda shape: rand(shape, np.int8, -128, 127)  # noqa: E731
    check(f"int8_conv_padded{suffix}", [("x", u8_image((2, 19, 9, 11)))],
          [node("y", "conv2d", ["x", "w"], pads=[1, 1, 1, 1])], ["y"],
          constants=[("w", i8_filter((7, 19, 3, 3)))], **kw)
    check(f"int8_conv_strided_grouped{suffix}", [("x", rand((1, 6, 13, 12), np.int8, -128, 127))],
          [node("y", "conv2d", ["x", "w"], strides=[2, 3], dilations=[2, 1], pads=[2, 0, 1, 1],
                groups=2)], ["y"], constants=[("w", rand((4, 3, 3, 2), np.uint8, 0, 255))], **kw)
    check(f"int8_conv_depthwise{suffix}", [("x", u8_image((1, 8, 10, 10)))],
          [node("y", "conv2d", ["x", "w"], pads=[1, 1, 1, 1], groups=8)], ["y"],
          constants=[("w", i8_filter((8, 1, 3, 3)))], **kw)
    check(f"int8_conv_pointwise{suffix}", [("x", u8_image((2, 37, 6, 7)))],
          [node("y", "conv2d", ["x", "w"])], ["y"],
          constants=[("w", i8_filter((35, 37, 1, 1)))], **kw)
    check(f"int8_conv_many_pixels{suffix}", [("x", u8_image((1, 3, 80, 80)))],
          [node("y", "conv2d", ["x", "w"], pads=[1, 1, 1, 1])], ["y"],
          constants=[("w", i8_filter((5, 3, 3, 3)))], **kw)
    check(f"int8_conv_long_taps{suffix}", [("x", u8_image((1, 250, 4, 5)))],
          [node("y", "conv2d", ["x", "w"], pads=[1, 1, 1, 1])], ["y"],
          constants=[("w", i8_filter((3, 250, 3, 3)))], **kw)
    check(f"int8_conv_weights_input{suffix}", [("x", rand((1, 5, 7, 7), np.int8, -128, 127)),
                                                ("w", rand((6, 5, 3, 3), np.uint8, 0, 255))],
          [node("y", "conv2d", ["x", "w"])], ["y"], **kw)
    check(f"int8_conv_float_epilogue{suffix}", [("x", u8_image((1, 16, 8, 8)))],
          [node("c", "conv2d", ["x", "w"], pads=[1, 1, 1, 1]), node("f", "cast", ["c"], to="f32"),
           node("s", "mul", ["f", "scale"]), node("y", "relu", ["s"])], ["y"],
          constants=[("w", i8_filter((24, 16, 3, 3))),
                     ("scale", np.array([1e-4], np.float32))], **kw)


if TARGET == "host":
    for variant, target, feature in [("avx2", "x86-64-v3", "avx2"),
                                     ("avxvnni", "x86-64-v3+avxvnni", "avxvnni"),
                                     ("avx512vnni", "x86-64-v4+avx512vnni", "avx512vnni")]:
        int8_cases(variant, target, feature)
else:
    int8_cases("", None, "")
# The generated kernel where the library cannot run (an x86-64-v2 CPU):
# 8-bit operands extended by their signedness.
if TARGET == "host":
    sse = os.path.join(WORK, "sse.machine.json")
    with open(sse, "w") as f:
        f.write(re.sub(r"x86-64-v\d[^\"]*", "x86-64-v2", subprocess.run(
            [FUELC, "targets", "--print", "host"], check=True, capture_output=True,
            text=True).stdout))
    check("int8_matmul_generated", [("x", rand((6, 37), np.uint8, 0, 255)),
                                    ("w", rand((37, 11), np.int8, -128, 127))],
          [node("y", "matmul", ["x", "w"])], ["y"], machine_args=["--machine", sse])
# Every elementwise op and reduction in every dtype it accepts: one graph per
# dtype, one output per op.
FLOAT_UNARY = ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "gelu", "silu", "erf",
               "sin", "cos", "recip"]
POSITIVE = {"log", "sqrt", "rsqrt", "recip"}
for dt in NUMERIC:
    name, fp = DTYPES[dt], np.issubdtype(dt, np.floating)
    unsigned = np.issubdtype(dt, np.unsignedinteger)
    # uint64 stays below u - v's wrap: the reference computes in doubles.
    u = rand((5, 12), dt, 5 if dt == np.uint64 else 0 if unsigned else -3, 9)
    v = rand((12,), dt, 1, 5)  # Non-zero divisors, small exponents.
    p = rand((5, 12), dt, 1, 4)
    nodes = [node("abs_", "abs", ["u"]), node("relu_", "relu", ["u"]),
             node("clamp_", "clamp", ["u"], min=1, max=5)]
    nodes += [node("neg_", "neg", ["u"])] if dt != np.uint64 else []
    nodes += [node(f"{op}_", op, ["p" if op in POSITIVE else "u"]) for op in FLOAT_UNARY if fp]
    nodes += [node(f"{op}_", op, ["u", "v"]) for op in
              ["add", "sub", "mul", "div", "pow", "max", "min"]]
    # Comparisons, inside a where so the output keeps u's dtype.
    for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
        nodes += [node(f"{op}_c", op, ["u", "v"]), node(f"{op}_", "where", [f"{op}_c", "u", "p"])]
    nodes += [node(f"{op}_", op, ["u"], axes=[1]) for op in
              ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"] + (["reduce_mean"] if fp else [])]
    outputs = [n["id"] for n in nodes if not n["id"].endswith("_c")]
    check(f"every_op_{name}", [("u", u), ("v", v), ("p", p)], nodes, outputs,
          tolerance=(4e-3, 4e-3) if dt == np.float16 else None)
    # Bool and index results, and casts to every dtype.
    nodes = [node(f"{op}_", op, ["u", "v"]) for op in ["eq", "ne", "lt", "le", "gt", "ge"]]
    nodes += [node("argmax_", "argmax", ["u"], axis=1), node("argmin_", "argmin", ["u"], axis=0)]
    # Vulkan runs the others' cases: they cast to the dtypes it has. A
    # negative value cast to uint64 wraps near 2^64, which the reference's
    # doubles cannot hold.
    targets = [t for t in DTYPES if t != dt and (dt in CPU_DTYPES or t not in CPU_DTYPES)
               and not (t == np.uint64 and (u < 0).any())]
    nodes += [node(f"to_{DTYPES[t]}", "cast", ["u"], to=DTYPES[t]) for t in targets]
    check(f"every_result_dtype_{name}", [("u", u), ("v", v)], nodes, [n["id"] for n in nodes])
# Float to integer: toward zero, then wrapped to the width (out of range too).
check("cast_wraps", [("f", np.array([-2.5, 300.7, -129.9, 255.5, 1e6, -0.5], np.float32))],
      [node(f"to_{t}", "cast", ["f"], to=t) for t in ["u8", "i8", "i32", "i64"]],
      [f"to_{t}" for t in ["u8", "i8", "i32", "i64"]])
check("dtype_bool", [("p", rand((5, 7), np.bool_)), ("q", rand((7,), np.bool_))],
      [node("a", "and", ["p", "q"]), node("o", "or", ["a", "q"]), node("n", "not", ["o"]),
       node("e", "eq", ["n", "p"])], ["e"])
# bf16 has no numpy dtype: compute in bf16 between casts from and to f32.
bx = rand((4, 32))
check("dtype_bf16", [("x", bx), ("m", rand((32, 8)))],
      [node("h", "cast", ["x"], to="bf16"), node("hm", "cast", ["m"], to="bf16"),
       node("e", "exp", ["h"]), node("s", "softmax", ["e"]), node("p", "matmul", ["h", "hm"]),
       node("r", "reduce_sum", ["h"], axes=[1]), node("y", "cast", ["s"], to="f32"),
       node("z", "cast", ["p"], to="f32"), node("w", "cast", ["r"], to="f32")],
      ["y", "z", "w"], tolerance=(2e-2, 2e-2))
# Symbolic dims: one plan (bounds B<=16, T<=12) run below its bounds.
for batch, seq in [(1, 12), (5, 3), (16, 7)]:
    check(f"symbolic_B{batch}_T{seq}", [("x", rand((batch, seq, 64)))],
          [node("n", "layer_norm", ["x"]), node("l", "linear", ["n", "w", "bias"]),
           node("g", "gelu", ["l"], approximate="tanh"), node("s", "softmax", ["g"], axis=1),
           node("r", "reshape", ["s"], shape=["B", "T", 4, 8])],
          ["r"], constants=[("w", w), ("bias", bias)],
          symbolic={"x": ["B", "T", 64]}, dims={"B": 16, "T": 12})
# Attention heads folded into the batch, as PyTorch's batch-first attention
# does ([T, B, E] -> [T, 4*B, E/4]): a product of symbols, run below its
# bounds by one plan.
for batch, seq in [(1, 5), (3, 7)]:
    check(f"heads_in_batch_B{batch}_T{seq}", [("x", rand((seq, batch, 32)))],
          [node("h", "reshape", ["x"], shape=["T", "4*B", 8]),
           node("t", "transpose", ["h"], perm=[1, 0, 2]),
           node("s", "matmul", ["t", "t"], transpose_b=True), node("p", "softmax", ["s"]),
           node("o", "matmul", ["p", "t"]), node("b", "transpose", ["o"], perm=[1, 0, 2]),
           node("y", "reshape", ["b"], shape=["T", "B", 32])],
          ["y"], symbolic={"x": ["T", "B", 32]}, dims={"B": 4, "T": 8})
# Large enough to split over threads: results must not depend on the split.
big = rand((4096, 256))
for threads in ["1", "2", "3"]:
    check(f"threads_{threads}", [("x", big)],
          [node("e", "exp", ["x"]), node("s", "softmax", ["e"]), node("y", "reduce_mean", ["s"], axes=[1])],
          ["s", "y"], run_args=["--threads", threads])
# A batch of one (static, or a symbol bound to 1) splits a later axis: an
# attention's heads for its scores' product, the softmax with its masking
# prologue and the weighted sum; a layer norm's rows.
heads, mask, tokens = rand((1, 4, 256, 32)), rand((256, 256)), rand((1, 256, 64))
for threads in ["2", "3"]:
    for symbolic in [None, {"q": ["B", 4, 256, 32], "t": ["B", 256, 64]}]:
        check(f"batch_of_one_split_{threads}{'_symbolic' if symbolic else ''}",
              [("q", heads), ("t", tokens)],
              [node("s", "matmul", ["q", "q"], transpose_b=True), node("a", "add", ["s", "m"]),
               node("p", "softmax", ["a"]), node("o", "matmul", ["p", "q"]),
               node("n", "layer_norm", ["t"])],
              ["o", "n"], constants=[("m", mask)], run_args=["--threads", threads],
              symbolic=symbolic, dims=symbolic and {"B": 1})
# Weights split over threads by output channel or column (one image, a
# short and wide product, a symbolic batch), with fused epilogues reading
# per-channel and per-column operands; a pointwise convolution of few
# channels splits its rows, as does its residual.
image, filters, channel_bias = rand((1, 16, 32, 32)), rand((64, 16, 3, 3)), rand((64, 1, 1))
rows, wide, column_bias = rand((2, 5, 128)), rand((128, 512)), rand((512,))
weights_nk, linear_bias = rand((512, 128)), rand((512,))
pointwise, pointwise_bias, residual = rand((40, 16, 1, 1)), rand((40,)), rand((1, 40, 32, 32))
for threads in ["1", "2", "3"]:
    check(f"inner_split_{threads}", [("img", image), ("r", rows), ("s", rows), ("res", residual)],
          [node("c", "conv2d", ["img", "f"], pads=[1, 1, 1, 1]), node("cb", "add", ["c", "fb"]),
           node("y", "relu", ["cb"]), node("m", "matmul", ["r", "w"]),
           node("z", "add", ["m", "wb"]), node("l", "linear", ["s", "wl", "lb"]),
           node("p", "conv2d", ["img", "pw", "pb"]), node("q", "add", ["p", "res"])],
          ["y", "z", "l", "q"],
          constants=[("f", filters), ("fb", channel_bias), ("w", wide), ("wb", column_bias),
                     ("wl", weights_nk), ("lb", linear_bias), ("pw", pointwise),
                     ("pb", pointwise_bias)],
          symbolic={"r": ["B", 5, 128], "s": ["B", 5, 128]}, dims={"B": 4},
          run_args=["--threads", threads], tolerance=(1e-4, 1e-4))
    # Library sgemm on every thread, then unloaded cleanly.
    check(f"threads_{threads}_linear", [("x", rand((2048, 64)))],
          [node("l", "linear", ["x", "w", "bias"]), node("g", "gelu", ["l"])], ["g"],
          constants=[("w", w), ("bias", bias)], run_args=["--threads", threads],
          tolerance=(2e-5, 1e-4))  # 64-term dot products of values up to 2.

# The library conv2d's algorithms (kernels/x86/conv.cpp: phase planes and a
# register-tiled GEMM; depthwise.cpp: rows read in place, or phase planes)
# across what changes their indexing: channel counts off the vector width,
# asymmetric pads, strides 1-3, dilations, kernels 1x1 to 7x7, groups,
# depthwise with and without a multiplier, batches, weights that are inputs,
# channel slices on threads, last tiles of the columns one vector wide
# (60 columns: 48 + 12) and two (270: 240 + 30), and a result large enough
# to be prefetched as it is computed (2.7 MB, a stem of stride 2).
CONV_CASES = [  # (N, C, H, W, O, kh, kw, strides, pads, dilations, groups)
    (1, 3, 23, 19, 13, 7, 7, [2, 2], [3, 3, 3, 3], [1, 1], 1),
    (2, 17, 15, 16, 29, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
    (1, 24, 9, 11, 40, 3, 3, [2, 1], [0, 1, 2, 0], [1, 1], 1),
    (1, 8, 14, 13, 72, 3, 5, [3, 2], [2, 1, 0, 2], [2, 1], 1),
    (3, 16, 7, 7, 20, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 1),
    (1, 20, 12, 12, 36, 1, 1, [2, 2], [0, 0, 0, 0], [1, 1], 1),
    (2, 12, 10, 9, 18, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 3),
    (1, 33, 17, 17, 33, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 33),
    (2, 19, 16, 15, 19, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 19),
    (1, 10, 13, 13, 10, 5, 5, [1, 1], [4, 4, 4, 4], [2, 2], 10),
    (1, 8, 11, 12, 16, 3, 3, [1, 1], [1, 0, 1, 0], [1, 1], 8),
    (1, 3, 230, 226, 52, 3, 3, [2, 2], [0, 1, 1, 0], [1, 1], 1),
    # Depthwise: the unrolled 5x5 windows (strides 1 and 2, rows wider than
    # a vector, asymmetric pads), windows of any shape, row steps of 2 and
    # strides of 3 (through the phase planes).
    (2, 17, 9, 23, 17, 5, 5, [1, 1], [2, 1, 2, 3], [1, 1], 17),
    (1, 20, 15, 14, 20, 5, 5, [2, 2], [2, 2, 2, 2], [1, 1], 20),
    (1, 12, 11, 40, 12, 3, 2, [2, 1], [0, 1, 1, 0], [1, 1], 12),
    (1, 9, 10, 37, 9, 2, 3, [1, 2], [1, 1, 0, 1], [1, 2], 9),
    (1, 18, 20, 37, 18, 3, 3, [3, 3], [1, 1, 1, 1], [1, 1], 18),
    # Depthwise layers of narrow outputs, by blocks of channels with their
    # pixels transposed: 40 channels (the last block overlapping the one
    # before), a batch; 6x6 outputs (AVX2's blocks too), dilation and
    # asymmetric pads, also of stride 2 (3x3 outputs); stride 2 from an
    # image of 182 pixels (blocks of a vector of pixels and a ragged one)
    # to 7x7.
    (2, 40, 7, 7, 40, 5, 5, [1, 1], [2, 2, 2, 2], [1, 1], 40),
    (1, 24, 8, 8, 24, 3, 3, [1, 1], [1, 0, 1, 0], [2, 2], 24),
    (1, 24, 8, 8, 24, 3, 3, [2, 2], [1, 0, 1, 0], [2, 2], 24),
    (1, 20, 14, 13, 20, 3, 3, [2, 2], [1, 1, 1, 1], [1, 1], 20),
]
# The AVX2 build of the library too, planned for an x86-64-v3 CPU (this one
# runs its code).
avx2 = os.path.join(WORK, "avx2.machine.json")
with open(avx2, "w") as f:
    f.write(re.sub(r"x86-64-v\d[^\"]*", "x86-64-v3", subprocess.run(
        [FUELC, "targets", "--print", "host"], check=True, capture_output=True,
        text=True).stdout))
def check_convs(name, cases, tolerance=(1e-4, 1e-4)):
    """Each case on 1 and 2 threads, with weights that are an input, and on
    the AVX2 build."""
    for i, (n, c, h, wd, o, kh, kw, strides, pads, dilations, groups) in enumerate(cases):
        attrs = dict(strides=strides, pads=pads, dilations=dilations, groups=groups)
        f, fb = rand((o, c // groups, kh, kw)), rand((o,))
        for threads in ["1", "2"]:
            check(f"{name}_{i}_{threads}", [("img", rand((n, c, h, wd)))],
                  [node("c", "conv2d", ["img", "f", "fb"], **attrs),
                   node("y", "clamp", ["c"], min=0.0, max=6.0)],
                  ["y"], constants=[("f", f), ("fb", fb)], run_args=["--threads", threads],
                  tolerance=tolerance)
        check(f"{name}_{i}_weights_input", [("img", rand((n, c, h, wd))), ("f", f)],
              [node("y", "conv2d", ["img", "f"], **attrs)], ["y"], tolerance=tolerance)
        if TARGET == "host":
            check(f"{name}_{i}_avx2", [("img", rand((n, c, h, wd)))],
                  [node("c", "conv2d", ["img", "f", "fb"], **attrs), node("y", "relu", ["c"])],
                  ["y"], constants=[("f", f), ("fb", fb)], machine_args=["--machine", avx2],
                  tolerance=tolerance)


check_convs("conv", CONV_CASES)
# A residual added to the conv (either operand order) before ReLU, which
# the library applies as it writes the result, on both threads' channels:
# rows narrower than a vector (copied out from a tile), rows wider (stored
# from registers, a vector's columns in one or two rows), a 1x1 window (rows
# that follow each other: one run); also on the AVX2 build.
for i, (size, k) in enumerate([(10, 3), (10, 3), (23, 3), (9, 1)]):
    image, f, fb = rand((2, 16, size, size + 2)), rand((24, 16, k, k)), rand((24,))
    for suffix, machine_args in [("", None), ("_avx2", ["--machine", avx2])]:
        if suffix and TARGET != "host":
            continue
        check(f"conv_residual_relu_{i}{suffix}",
              [("img", image), ("res", rand((2, 24, size, size + 2)))],
              [node("c", "conv2d", ["img", "f", "fb"], pads=[k // 2] * 4),
               node("s", "add", [["c", "res"], ["res", "c"]][i % 2]), node("y", "relu", ["s"])],
              ["y"], constants=[("f", f), ("fb", fb)], run_args=["--threads", str(i % 2 + 1)],
              machine_args=machine_args, tolerance=(1e-4, 1e-4))
# SiLU (x * sigmoid(x): both readers in one group) after a convolution and
# a depthwise one, which the library applies as it writes the result; with
# infinities and NaN among the inputs of the activation, and activations
# of hundreds (exp past its overflow and into the subnormals); also on the
# AVX2 build, which makes exp's power of two without scalef.
for i, (groups, size, scale) in enumerate([(1, 12, 1), (24, 10, 1), (24, 20, 1), (24, 20, 60)]):
    image = rand((2, 24, size, size)) * scale
    image[0, 0, 0, :4] = [np.inf, -np.inf, np.nan, 1e30]
    for suffix, machine_args in [("", None), ("_avx2", ["--machine", avx2])]:
        if suffix and TARGET != "host":
            continue
        check(f"conv_silu_{i}{suffix}", [("img", image)],
              [node("c", "conv2d", ["img", "fs"], pads=[1, 1, 1, 1], groups=groups),
               node("s", "sigmoid", ["c"]), node("y", "mul", ["c", "s"])], ["y"],
              constants=[("fs", rand((24, 24 // groups, 3, 3)))], tolerance=(1e-4, 1e-4),
              run_args=["--threads", str(1 + i % 2)], machine_args=machine_args)
# The same after depthwise layers, whose rows are read in place, on images
# narrower and wider than a vector.
for size in (10, 20):
    check(f"depthwise_residual_relu_{size}",
          [("img", rand((2, 24, size, size))), ("res", rand((2, 24, size, size)))],
          [node("c", "conv2d", ["img", "fd", "fb"], pads=[1, 1, 1, 1], groups=24),
           node("s", "add", ["c", "res"]), node("y", "relu", ["s"])], ["y"],
          constants=[("fd", rand((24, 1, 3, 3))), ("fb", rand((24,)))], tolerance=(1e-4, 1e-4))
# The library max_pool2d (kernels/x86/pool.cpp: rows read in place for
# row steps 1 and 2, 2x2 and 3x3 windows unrolled, 3x3 windows of stride 2
# by their rows' maxima, a scalar loop for the rest and for channels with a
# NaN in a window): widths off the vector width and several vectors wide,
# asymmetric pads, ceil mode, dilations, strides 1-3, a window of more taps
# than the row loops list, batches, channel slices on threads, NaN and
# infinities.
POOL_CASES = [  # (N, C, H, W, kernel, strides, pads, dilations, ceil_mode)
    (1, 5, 17, 23, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], False),
    (2, 3, 14, 14, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], False),
    (1, 4, 55, 55, [3, 3], [2, 2], [0, 0, 0, 0], [1, 1], True),
    (1, 6, 12, 40, [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], False),
    (1, 3, 11, 37, [3, 2], [1, 2], [1, 0, 1, 1], [2, 1], False),
    (2, 4, 13, 13, [3, 3], [3, 3], [1, 1, 1, 1], [1, 1], True),
    (1, 2, 12, 12, [9, 9], [1, 1], [4, 4, 4, 4], [1, 1], False),
    (2, 3, 9, 70, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True),
]
for i, (n, c, h, wd, kernel, strides, pads, dilations, ceil) in enumerate(POOL_CASES):
    image = rand((n, c, h, wd))
    image[0, 0, h // 2, :3] = [np.nan, np.inf, -np.inf]
    image[n - 1, c - 1, 0, 0] = np.nan  # A NaN only a corner window reads.
    attrs = dict(kernel=kernel, strides=strides, pads=pads, dilations=dilations, ceil_mode=ceil)
    pool = [node("y", "max_pool2d", ["img"], **attrs)]
    check(f"max_pool_{i}", [("img", image)], pool, ["y"], run_args=["--threads", str(1 + i % 2)])
    if TARGET == "host":
        check(f"max_pool_{i}_avx2", [("img", image)], pool, ["y"],
              machine_args=["--machine", avx2])
# Concats run in place (their operands' kernels write slices of the
# result): an Inception module's four branches (library convs, a pooling,
# a generated kernel) on 1 and 2 threads; a batch symbol bound to 1; an
# operand read again after the concat; the concat's result a graph output;
# a value given to two concats (only the first takes it as a slice); a
# concat of a concat's result.
image, f1, f3, fc = rand((1, 8, 9, 9)), rand((6, 8, 1, 1)), rand((5, 8, 3, 3)), rand((4, 25, 1, 1))
inception = [node("b1", "conv2d", ["img", "f1"]), node("r1", "relu", ["b1"]),
             node("b2", "conv2d", ["img", "f3"], pads=[1, 1, 1, 1]),
             node("b3", "max_pool2d", ["img"], kernel=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
             node("b4", "tanh", ["r1"]),
             node("cat", "concat", ["r1", "b2", "b3", "b4"], axis=1),
             node("y", "conv2d", ["cat", "fc"])]
for threads in ("1", "2"):
    check(f"in_place_concat_{threads}", [("img", image)], inception, ["y"],
          constants=[("f1", f1), ("f3", f3), ("fc", fc)], run_args=["--threads", threads],
          tolerance=(1e-4, 1e-4))
check("in_place_concat_symbolic", [("img", image)], inception, ["y"],
      constants=[("f1", f1), ("f3", f3), ("fc", fc)], symbolic={"img": ["B", 8, 9, 9]},
      dims={"B": 1}, tolerance=(1e-4, 1e-4))
a, b = rand((1, 3, 16)), rand((1, 5, 16))
check("in_place_concat_reuse", [("a", a), ("b", b)],
      [node("ea", "exp", ["a"]), node("sb", "sigmoid", ["b"]),
       node("cat", "concat", ["ea", "sb"], axis=1), node("cat2", "concat", ["sb", "ea"], axis=1),
       node("nested", "concat", ["cat", "cat2"], axis=2),
       node("later", "mul", ["ea", "ea"]), node("y", "softmax", ["nested"])],
      ["y", "cat", "later"])
# NaN and infinities through whole models' patterns: a NaN input row of an
# MLP stays NaN to its softmax (ReLU keeps NaN), other rows stay finite; a
# NaN pixel before a library conv + ReLU and a max pool.
mlp_x = rand((4, 32))
mlp_x[1, :] = np.nan
mlp_x[2, 5] = np.inf
check("mlp_nan_rows", [("x", mlp_x)],
      [node("h", "linear", ["x", "w1", "b1"]), node("r", "relu", ["h"]),
       node("l", "linear", ["r", "w2"]), node("y", "softmax", ["l"])], ["y"],
      constants=[("w1", rand((64, 32))), ("b1", rand((64,))), ("w2", rand((10, 64)))],
      tolerance=(1e-4, 1e-5))
image = rand((2, 16, 12, 12))
image[0, 3, 4, 4], image[1, 0, 0, 0] = np.nan, -np.inf
check("conv_relu_pool_nan", [("img", image)],
      [node("c", "conv2d", ["img", "f", "fb"], pads=[1, 1, 1, 1]), node("r", "relu", ["c"]),
       node("y", "max_pool2d", ["r"], kernel=[2, 2], strides=[2, 2])], ["y"],
      constants=[("f", rand((24, 16, 3, 3))), ("fb", rand((24,)))], tolerance=(1e-4, 1e-4))

# Reduced trailing axes read as one run of memory (a global average pool):
# a contiguous image, with keepdims or not, three axes, an elementwise
# prologue (SiLU), f16 in a wide accumulator, split over threads, symbolic
# extents; a transposed view and a reduced middle axis keep their loops.
# The sum of 18480 terms in [-2, 2] may cancel to about 1, where the order
# of its terms (Vulkan's tree against the reference's loop) moves it by
# a few 1e-5.
for i, (shape, dt, threads, symbolic) in enumerate([
        ((2, 5, 7, 9), np.float32, "1", None),
        ((3, 6, 5, 11), np.float16, "1", None),
        ((4, 16, 33, 35), np.float32, "2", None),
        ((2, 3, 6, 5), np.float32, "1", {"x": ["B", 3, "H", "W"]})]):
    check(f"reduce_trailing_axes_{i}", [("x", rand(shape, dt))],
          [node("m", "reduce_mean", ["x"], axes=[2, 3], keepdims=True),
           node("s", "reduce_sum", ["x"], axes=[1, 2, 3]),
           node("q", "sigmoid", ["x"]), node("p", "mul", ["x", "q"]),
           node("g", "reduce_mean", ["p"], axes=[-2, -1]),
           node("tx", "transpose", ["x"], perm=[0, 1, 3, 2]),
           node("t", "reduce_max", ["tx"], axes=[2, 3], keepdims=True),
           node("h", "reduce_max", ["x"], axes=[1, 3])], ["m", "s", "g", "t", "h"],
          run_args=["--threads", threads], symbolic=symbolic,
          dims=symbolic and {"B": shape[0], "H": shape[2], "W": shape[3]},
          tolerance=(4e-3, 4e-3) if dt == np.float16 else (1e-5, 1e-4 if i == 2 else 1e-5))

# An elementwise kernel of one image (batch 1, or a symbolic batch bound
# to 1) splits its channels, which a broadcast scale follows.
for i, batch in enumerate([1, "B"]):
    check(f"elementwise_channel_split_{i}", [("x", rand((1, 32, 48, 48))), ("s", rand((1, 32, 1, 1)))],
          [node("g", "sigmoid", ["s"]), node("y", "mul", ["x", "g"])], ["y"],
          symbolic={"x": [batch, 32, 48, 48]}, dims={"B": 1}, run_args=["--threads", "2"])

# The library conv2d's tiling with output channels in vectors
# (kernels/x86/channels.cpp), which it runs when its tiles waste fewer
# multiplies: each register tile shape of the AVX-512 build (7x4, 12x2,
# 8x3, 6x4, 7x3, 7x2) and of the AVX2 one (6x2, 4x3); channels off the
# vector width; many blocks of taps; two blocks of pixels (520 channels);
# a 1x1 window read in place whose last tile runs past the image (13 and 7
# pixels a row); stride and dilation through the phase planes; groups and
# a batch; and a residual before ReLU. (3x3 stride-1 windows of enough
# channels are Winograd's, below.)
CHANNEL_TILE_CASES = [  # (N, C, H, W, O, kh, kw, strides, pads, dilations, groups)
    (1, 64, 7, 7, 100, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
    (1, 400, 5, 13, 64, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 1),
    (1, 64, 12, 12, 520, 3, 2, [1, 1], [1, 1, 1, 0], [1, 1], 1),
    (1, 48, 15, 15, 64, 3, 3, [2, 2], [1, 1, 1, 1], [2, 2], 1),
    (2, 64, 7, 7, 128, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 2),
    (1, 128, 14, 14, 96, 2, 3, [1, 1], [1, 1, 0, 1], [1, 1], 1),
    (1, 96, 7, 7, 160, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 1),
    (1, 64, 16, 16, 48, 3, 3, [1, 1], [1, 2, 1, 2], [1, 2], 1),
    (1, 32, 6, 6, 64, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
]


def check_residual_relu(name, n, c, size, o):
    """A 3x3 pad-1 conv2d + residual + ReLU on 2 threads."""
    image, f, fb = rand((n, c, size, size)), rand((o, c, 3, 3)), rand((o,))
    check(name, [("img", image), ("res", rand((n, o, size, size)))],
          [node("c", "conv2d", ["img", "f", "fb"], pads=[1, 1, 1, 1]),
           node("s", "add", ["c", "res"]), node("y", "relu", ["s"])], ["y"],
          constants=[("f", f), ("fb", fb)], run_args=["--threads", "2"], tolerance=(2e-4, 2e-4))
    return f, fb


check_convs("channel_tiles", CHANNEL_TILE_CASES, tolerance=(2e-4, 2e-4))
check_residual_relu("channel_tiles_residual_relu", 2, 64, 7, 96)

# 3x3 stride-1 layers of enough channels by Winograd's F(2x2, 3x3)
# (kernels/x86/winograd.cpp): odd heights and widths (tiles past the
# image), channels off the vector width, asymmetric and no pads, a batch,
# groups, two blocks of input channels (130), and two
# blocks of tile rows (39x41); a residual before ReLU; NaN inputs, which
# reach the results whose windows hold them and no others. Images of
# enough 4x4 tiles run by F(4x4, 3x3) instead (39x41 and the cases after
# it): heights and widths of each remainder by 4 (tiles past the image),
# 16 channels in (on an image larger than 32x32 too), channels off the
# vector width, asymmetric pads, a batch, groups, and slices of rows on
# two threads.
WINOGRAD_CASES = [  # (N, C, H, W, O, kh, kw, strides, pads, dilations, groups)
    (1, 16, 11, 13, 40, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
    (2, 48, 12, 10, 64, 3, 3, [1, 1], [0, 1, 2, 1], [1, 1], 1),
    (1, 130, 10, 10, 36, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
    (1, 64, 12, 12, 64, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 2),
    (1, 24, 14, 14, 48, 3, 3, [1, 1], [0, 0, 0, 0], [1, 1], 1),
    (1, 64, 39, 41, 64, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
    (1, 16, 29, 30, 40, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
    (2, 48, 27, 27, 64, 3, 3, [1, 1], [0, 1, 2, 1], [1, 1], 1),
    (1, 64, 31, 26, 64, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 2),
    (1, 40, 24, 28, 36, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
    (1, 16, 45, 43, 32, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 1),
]
check_convs("winograd", WINOGRAD_CASES, tolerance=(2e-4, 2e-4))
f, fb = check_residual_relu("winograd_residual_relu", 2, 32, 10, 32)


def nan_within_tiles(image, m):
    """For a 3x3 pad-1 conv2d of `image` by Winograd's F(m x m, 3x3): the
    results whose windows hold a NaN are NaN; the others of the m x m tiles
    whose patches hold one may be too; all others are close."""
    def close(got, want, rtol, atol):
        touched = np.zeros(want.shape[2:], bool)
        for r, q in zip(*np.nonzero(np.isnan(image).any(axis=(0, 1)))):
            for ty in range(0, want.shape[2], m):
                for tx in range(0, want.shape[3], m):
                    if ty - 1 <= r <= ty + m and tx - 1 <= q <= tx + m:
                        touched[ty:ty + m, tx:tx + m] = True
        return bool((np.isnan(got) >= np.isnan(want)).all()) and np.allclose(
            got[..., ~touched], want[..., ~touched], rtol=rtol, atol=atol)
    return close


# F(2x2, 3x3)'s transforms reach each result from the inputs of its own
# window alone; F(4x4, 3x3)'s mix a patch's inner rows and columns.
for name, (h, w), m in [("winograd_nan", (12, 11), 2), ("winograd_4x4_nan", (26, 27), 4)]:
    image = rand((1, 32, h, w))
    image[0, 3, 0, 0], image[0, 7, 5, 6], image[0, 31, h - 1, w - 1] = np.nan, np.nan, np.nan
    check(name, [("img", image)],
          [node("y", "conv2d", ["img", "f", "fb"], pads=[1, 1, 1, 1])], ["y"],
          constants=[("f", f), ("fb", fb)], tolerance=(2e-4, 2e-4),
          close=None if m == 2 else nan_within_tiles(image, m))

# One image's convolutions whose input is at least half their weights split
# their output rows over threads, each slice reading its rows of the whole
# input, halo included (KernelSpec::takesSliceOrigin); a max pooling of one
# splits its rows too. Three threads put slices at odd first rows:
# Winograd's tiles start there, strides and pads shift, the bottom pad is
# the last slice's.
ROW_SPLIT_CASES = [  # (C, H, W, O, kh, kw, strides, pads, dilations)
    (16, 63, 61, 24, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1]),
    (32, 45, 47, 40, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1]),
    (8, 96, 98, 16, 3, 3, [2, 2], [0, 1, 2, 1], [1, 1]),
    (8, 70, 70, 12, 5, 5, [1, 1], [4, 4, 4, 4], [2, 2]),
    (3, 120, 118, 16, 7, 7, [2, 2], [3, 3, 3, 3], [1, 1]),
    (32, 60, 60, 64, 1, 1, [2, 2], [0, 0, 0, 0], [1, 1]),
]
for i, (c, h, wd, o, kh, kw, strides, pads, dilations) in enumerate(ROW_SPLIT_CASES):
    f, fb = rand((o, c, kh, kw)), rand((o,))
    for threads in ["2", "3"]:
        check(f"row_split_{i}_{threads}", [("img", rand((1, c, h, wd)))],
              [node("c", "conv2d", ["img", "f", "fb"], strides=strides, pads=pads,
                    dilations=dilations),
               node("r", "relu", ["c"]),
               node("y", "max_pool2d", ["r"], kernel=[3, 3], strides=[2, 2],
                    pads=[1, 1, 1, 1])],
              ["r", "y"], constants=[("f", f), ("fb", fb)], run_args=["--threads", threads],
              tolerance=(2e-4, 2e-4))
check_residual_relu("row_split_residual_relu", 1, 16, 60, 24)
# A fire module (SqueezeNet): a pointwise and a 3x3 layer, both split by
# rows, concatenated, then pooled by rows.
f1, f3 = rand((32, 16, 1, 1)), rand((32, 16, 3, 3))
for threads in ["2", "3"]:
    check(f"row_split_fire_{threads}", [("img", rand((1, 16, 55, 55)))],
          [node("e1", "conv2d", ["img", "f1"]), node("r1", "relu", ["e1"]),
           node("e3", "conv2d", ["img", "f3"], pads=[1, 1, 1, 1]), node("r3", "relu", ["e3"]),
           node("k", "concat", ["r1", "r3"], axis=1),
           node("y", "max_pool2d", ["k"], kernel=[3, 3], strides=[2, 2])],
          ["y"], constants=[("f1", f1), ("f3", f3)], run_args=["--threads", threads],
          tolerance=(2e-4, 2e-4))
# Depthwise layers of images wide enough (kernels/x86/window.h's
# kPrefetchWidth) that the unrolled windows prefetch their next block's
# input rows: strides 1 and 2, 3x3 and 5x5, widths off the vector width.
# Then stride-2 layers whose rows end one past whole vectors of outputs
# (of AVX-512 and AVX2 alike): the last output's last taps, read from the
# row's third vector, are padding. Each on 1 and 2 threads and the AVX2 build.
DEPTHWISE_WIDE_CASES = [  # (C, H, W, kernel, stride)
    (5, 21, 70, 3, 1),
    (6, 19, 61, 3, 2),
    (3, 23, 57, 5, 2),
    (7, 9, 63, 3, 2),
    (5, 11, 31, 3, 2),
    (4, 9, 63, 5, 2),
]
if TARGET == "host":
    for i, (c, h, wd, k, stride) in enumerate(DEPTHWISE_WIDE_CASES):
        f, fb = rand((c, 1, k, k)), rand((c,))
        for variant, args in [("1", ["--threads", "1"]), ("2", ["--threads", "2"]),
                              ("avx2", ["--machine", avx2])]:
            check(f"depthwise_wide_{i}_{variant}", [("img", rand((1, c, h, wd)))],
                  [node("y", "conv2d", ["img", "f", "fb"], strides=[stride, stride],
                        pads=[k // 2] * 4, groups=c)],
                  ["y"], constants=[("f", f), ("fb", fb)],
                  run_args=args if variant != "avx2" else [],
                  machine_args=args if variant == "avx2" else None, tolerance=(1e-4, 1e-4))
# Products whose last panel of rows is shorter than the register tile (12
# rows on AVX-512, 6 on AVX2) runs as its own rows: 29 = 2 x 12 + 5 rows
# over three K blocks (k = 1100) with an edge of 13 columns, against a
# constant and a computed B; 64 rows (32 per thread on 2 threads: 2 x 12 +
# 8). Each on 1 and 2 threads and the AVX2 build.
if TARGET == "host":
    w, m = rand((1100, 45)), rand((1100, 45))
    for variant, args in [("1", ["--threads", "1"]), ("2", ["--threads", "2"]),
                          ("avx2", ["--machine", avx2])]:
        check(f"matmul_row_remainders_{variant}",
              [("x", rand((29, 1100))), ("m", m), ("t", rand((64, 70)))],
              [node("c", "matmul", ["x", "w"]), node("p", "matmul", ["x", "m"]),
               node("q", "matmul", ["t", "v"])],
              ["c", "p", "q"], constants=[("w", w), ("v", rand((70, 300)))],
              run_args=args if variant != "avx2" else [],
              machine_args=args if variant == "avx2" else None, tolerance=(1e-4, 1e-4))
# A bias over the product's columns and a ReLU applied by the library sgemm
# as it writes the result (kernels/x86/gemm.cpp's epilogue): 29 rows over
# three K blocks with an edge of 13 columns, a batched product with a bias
# of shape [1, 1, N] and a NaN row (ReLU keeps NaN), a linear's own bias;
# each on 1 and 2 threads (slices of the bias) and the AVX2 build.
if TARGET == "host":
    xb = rand((2, 7, 70))
    xb[1, 3, :] = np.nan
    w, v, wl = rand((1100, 45)), rand((70, 300)), rand((40, 1100))
    bias, bias3, biasl = rand((45,)), rand((1, 1, 300)), rand((40,))
    for variant, args in [("1", ["--threads", "1"]), ("2", ["--threads", "2"]),
                          ("avx2", ["--machine", avx2])]:
        check(f"matmul_epilogue_{variant}", [("x", rand((29, 1100))), ("xb", xb)],
              [node("p", "matmul", ["x", "w"]), node("y", "add", ["p", "bias"]),
               node("q", "matmul", ["xb", "v"]), node("s", "add", ["bias3", "q"]),
               node("z", "relu", ["s"]), node("l", "linear", ["x", "wl", "biasl"]),
               node("r", "relu", ["l"])],
              ["y", "z", "r"],
              constants=[("w", w), ("v", v), ("wl", wl), ("bias", bias), ("bias3", bias3),
                         ("biasl", biasl)],
              run_args=args if variant != "avx2" else [],
              machine_args=args if variant == "avx2" else None, tolerance=(1e-4, 1e-4))
# Softmax and log-softmax over the last axis of contiguous memory run a
# block of rows at a time (16 KiB of them, EmitReductions.cpp): 111 rows of
# 300 (blocks of 13, the last of 7), rows of a symbolic length, half
# precision, and slices of 2 threads.
if TARGET == "host":
    for op in ["softmax", "log_softmax"]:
        check(f"{op}_row_blocks", [("x", rand((3, 37, 300))), ("h", rand((5, 70)).astype(np.float16)),
                                   ("s", rand((6, 45)))],
              [node("y", op, ["x"]), node("z", op, ["h"]), node("w", op, ["s"])], ["y", "z", "w"],
              symbolic={"s": ["B", "L"]}, dims={"B": 8, "L": 64}, run_args=["--threads", "2"])
# A symbolic first axis bound to more than 1 while a later, static one is
# split: the slices keep the whole tensor's strides, so a softmax's rows
# must not be collapsed across the split axis (they were, and read the
# wrong rows on two threads); the other row-wise kernels alike.
for threads in ["2", "3"]:
    check(f"split_after_symbolic_axis_{threads}", [("x", rand((3, 64, 512))), ("y", rand((512,)))],
          [node("p", "softmax", ["x"]), node("l", "log_softmax", ["x"]), node("e", "exp", ["x"]),
           node("a", "add", ["e", "y"]), node("n", "layer_norm", ["x"]),
           node("r", "reduce_mean", ["x"], axes=[2]), node("m", "reduce_max", ["x"], axes=[2])],
          ["p", "l", "a", "n", "r", "m"], symbolic={"x": ["B", 64, 512]}, dims={"B": 3},
          run_args=["--threads", threads])
# Scaled dot-product attention as one library kernel (kernels/x86/
# attention.cpp): heads read through transposed views with a division, a
# causal mask after the scale, a product by the scale with rank-2 cross
# attention (keys past one block of queries), batch axes broadcast, a
# symbolic batch, and query rows split over threads with the mask's.
causal = np.triu(np.full((20, 20), -1e9, np.float32), 1)
heads = {"q": rand((8, 37, 24)), "k": rand((37, 8, 24)), "v": rand((37, 8, 24))}
check("attention_heads_of_views", list(heads.items()),
      [node("kt", "transpose", ["k"], perm=[1, 2, 0]), node("vt", "transpose", ["v"], perm=[1, 0, 2]),
       node("s", "matmul", ["q", "kt"]), node("d", "div", ["s", "root"]),
       node("p", "softmax", ["d"], axis=2), node("o", "matmul", ["p", "vt"])], ["o"],
      constants=[("root", np.array(np.sqrt(24), np.float32))])
for threads in ["1", "2"]:
    check(f"attention_causal_{threads}", [("q", rand((2, 3, 20, 16))), ("k", rand((1, 3, 20, 16))),
                                         ("v", rand((2, 1, 20, 16)))],
          [node("s", "matmul", ["q", "k"], transpose_b=True), node("d", "div", ["s", "root"]),
           node("a", "add", ["d", "m"]), node("p", "softmax", ["a"]), node("o", "matmul", ["p", "v"])],
          ["o"], constants=[("root", np.array([4.0], np.float32)), ("m", causal)],
          run_args=["--threads", threads])
check("attention_cross_scaled", [("q", rand((5, 33))), ("k", rand((700, 33))), ("v", rand((700, 19))),
                                 ("w", rand((5, 700)))],
      [node("s", "matmul", ["q", "k"], transpose_b=True), node("c", "mul", ["scale", "s"]),
       node("a", "add", ["c", "w"]), node("p", "softmax", ["a"]), node("o", "matmul", ["p", "v"])],
      ["o"], constants=[("scale", np.array([0.17], np.float32))])
for threads in ["2", "3"]:
    check(f"attention_symbolic_batch_{threads}", [("q", rand((3, 40, 16))), ("v", rand((3, 40, 16)))],
          [node("s", "matmul", ["q", "q"], transpose_b=True), node("p", "softmax", ["s"]),
           node("o", "matmul", ["p", "v"])], ["o"],
          symbolic={"q": ["B", 40, 16], "v": ["B", 40, 16]}, dims={"B": 4},
          run_args=["--threads", threads])
    check(f"attention_rows_split_{threads}", [("q", rand((1, 300, 32))), ("k", rand((1, 300, 32))),
                                             ("v", rand((1, 300, 32))), ("m", rand((300, 300)))],
          [node("s", "matmul", ["q", "k"], transpose_b=True), node("a", "add", ["s", "m"]),
           node("p", "softmax", ["a"]), node("o", "matmul", ["p", "v"])], ["o"],
          run_args=["--threads", threads], tolerance=(2e-5, 2e-5))  # Sums of 300 terms.
if TARGET == "host":  # No keys: every weighted sum is empty, 0.
    check("attention_no_keys", [("q", rand((2, 5, 16))), ("k", rand((2, 0, 16))), ("v", rand((2, 0, 7)))],
          [node("s", "matmul", ["q", "k"], transpose_b=True), node("p", "softmax", ["s"]),
           node("o", "matmul", ["p", "v"])], ["o"])
# Global poolings of one image (reductions over an image's rows and
# columns) split over threads by channels, as the convolutions that wrote
# them were: with keepdims and without, after a prologue, a max, and a batch
# symbol bound to 1.
for threads in ["2", "3"]:
    check(f"global_pooling_split_{threads}", [("x", rand((1, 97, 30, 30))), ("z", rand((1, 97, 30, 30)))],
          [node("m", "reduce_mean", ["x"], axes=[2, 3], keepdims=True),
           node("r", "relu", ["x"]), node("p", "reduce_mean", ["r"], axes=[2, 3]),
           node("h", "reduce_max", ["x"], axes=[-1, -2], keepdims=True),
           node("s", "reduce_sum", ["z"], axes=[2, 3], keepdims=True)],
          ["m", "p", "h", "s"], symbolic={"z": ["B", 97, 30, 30]}, dims={"B": 1},
          run_args=["--threads", threads])
# Blocked depthwise layers (7x7 outputs) of a batch of two writing their
# results as slices of a concat's (each image's channels a slice of the
# result's), a residual and ReLU on depthwise_residual_relu_10's.
check("depthwise_blocked_concat", [("img", rand((2, 20, 7, 7)))],
      [node("a", "conv2d", ["img", "fa", "ba"], pads=[1, 1, 1, 1], groups=20),
       node("b", "conv2d", ["img", "fb"], pads=[2, 2, 2, 2], groups=20),
       node("y", "concat", ["a", "b"], axis=1)], ["y"],
      constants=[("fa", rand((20, 1, 3, 3))), ("ba", rand((20,))), ("fb", rand((20, 1, 5, 5)))],
      tolerance=(1e-4, 1e-4))
# A convolution whose result (its epilogue applied) only a max pooling reads
# is one kernel (lib/Planner/PoolFusion.cpp, kernels/x86/convpool.cpp): the
# convolution rows of each band of pooled rows computed into scratch, the
# rows that windows of consecutive bands share kept. Stems (3x3 stride 2
# unpadded, 7x7 stride 2 padded, a band of 64 channels of 100-wide rows
# several bands high), channel counts off the vector width, ceil mode, a
# pooling stride past its window (rows no window reads), a dilated window,
# ReLU, a clamp, SiLU or nothing; NaN and infinities in the image. Each on
# 1, 2 and 3 threads (slices of pooled rows from odd origins), batches of
# two split by images, and the AVX2 build.
POOLED_CONV_CASES = [  # (N, C, H, W, O, k, stride, pad, pool kernel, strides, pads, dilations, ceil, act)
    (1, 3, 45, 47, 16, 3, 2, 0, [3, 3], [2, 2], [0, 0, 0, 0], [1, 1], False, "relu"),
    (1, 3, 61, 58, 20, 7, 2, 3, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], False, "relu"),
    (1, 3, 200, 200, 64, 3, 2, 1, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], False, "relu"),
    (2, 5, 33, 29, 24, 3, 1, 1, [3, 3], [2, 2], [0, 0, 0, 0], [1, 1], True, "clamp"),
    (1, 4, 40, 41, 9, 3, 1, 0, [2, 2], [3, 3], [0, 0, 0, 0], [1, 1], False, "silu"),
    (2, 3, 30, 30, 8, 5, 1, 2, [3, 3], [1, 1], [1, 1, 1, 1], [2, 2], False, "none"),
]
for i, (n, c, h, wd, o, k, stride, pad, pk, ps, pp, pd, ceil, act) in enumerate(POOLED_CONV_CASES):
    image = rand((n, c, h, wd))
    image[0, 0, h // 3, 4:7] = [np.nan, np.inf, -np.inf]
    graph = [node("c", "conv2d", ["img", "f", "fb"], strides=[stride, stride], pads=[pad] * 4)]
    if act == "relu":
        graph.append(node("a", "relu", ["c"]))
    elif act == "clamp":
        graph.append(node("a", "clamp", ["c"], min=0.0, max=6.0))
    elif act == "silu":
        graph += [node("s", "sigmoid", ["c"]), node("a", "mul", ["c", "s"])]
    graph.append(node("y", "max_pool2d", ["c" if act == "none" else "a"], kernel=pk, strides=ps,
                      pads=pp, dilations=pd, ceil_mode=ceil))
    weights = [("f", rand((o, c, k, k))), ("fb", rand((o,)))]
    for threads in ["1", "2", "3"]:
        check(f"pooled_conv_{i}_{threads}", [("img", image)], graph, ["y"], constants=weights,
              run_args=["--threads", threads], tolerance=(1e-4, 1e-4))
    if TARGET == "host":
        check(f"pooled_conv_{i}_avx2", [("img", image)], graph, ["y"], constants=weights,
              machine_args=["--machine", avx2], tolerance=(1e-4, 1e-4))
# A symbolic batch of three images: each slice of pooled rows pools them all.
check("pooled_conv_symbolic_batch", [("img", rand((3, 3, 40, 40)))],
      [node("c", "conv2d", ["img", "f"], strides=[2, 2], pads=[1, 1, 1, 1]),
       node("a", "relu", ["c"]),
       node("y", "max_pool2d", ["a"], kernel=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])],
      ["y"], constants=[("f", rand((32, 3, 3, 3)))], symbolic={"img": ["B", 3, 40, 40]},
      dims={"B": 3}, run_args=["--threads", "2"], tolerance=(1e-4, 1e-4))
# A max pooling of a channel concat pools each part (distribute-pooling):
# fire modules (1x1 and 3x3 expansions of one squeeze), a part that is no
# convolution's, a pooling read twice, and a symbolic batch.
def fire(extra_part):
    graph = [node("s", "conv2d", ["img", "fs"]), node("sa", "relu", ["s"]),
             node("e1", "conv2d", ["sa", "f1", "b1"]), node("e1a", "relu", ["e1"]),
             node("e3", "conv2d", ["sa", "f3", "b3"], pads=[1, 1, 1, 1]),
             node("e3a", "clamp", ["e3"], min=0.0, max=6.0)]
    parts = ["e1a", "e3a"] + (["img"] if extra_part else [])
    return graph + [node("cat", "concat", parts, axis=1),
                    node("p", "max_pool2d", ["cat"], kernel=[3, 3], strides=[2, 2], ceil_mode=True),
                    node("y", "relu", ["p"]), node("z", "add", ["p", "p"])]
fire_weights = [("fs", rand((6, 5, 1, 1))), ("f1", rand((13, 6, 1, 1))), ("b1", rand((13,))),
                ("f3", rand((19, 6, 3, 3))), ("b3", rand((19,)))]
for extra in [False, True]:
    for threads in ["1", "2"]:
        check(f"pooled_concat_{int(extra)}_{threads}", [("img", rand((2, 5, 29, 31)))],
              fire(extra), ["y", "z"], constants=fire_weights, run_args=["--threads", threads],
              tolerance=(1e-4, 1e-4))
check("pooled_concat_symbolic_batch", [("img", rand((3, 5, 29, 31)))], fire(False), ["y", "z"],
      constants=fire_weights, symbolic={"img": ["B", 5, 29, 31]}, dims={"B": 3},
      run_args=["--threads", "2"], tolerance=(1e-4, 1e-4))
if TARGET != "host":
    print(f"{not_on_gpu} cases need ops or dtypes without kernels on the device")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
