#!/usr/bin/python3
"""Checks an implementation of fuelc's ops against numpy, op by op.

Usage: check-ops.py FUEL_REF WORKDIR
       check-ops.py --compiled FUELC FUEL_RUN WORKDIR
       check-ops.py --compiled-vulkan FUELC FUEL_RUN WORKDIR
       check-ops.py --compiled-ptx FUELC FUEL_RUN WORKDIR

The first form checks the reference interpreter; the second plans each case
for the CPU (`fuelc plan -o`) and runs the generated kernels (`fuel-run`);
the third plans for the `ci` machine's Vulkan device alone, with the
validation layer on (a message fails the case), and counts the cases whose
op or dtype has no Vulkan kernel (planning fails with NoBackendForOp); the
fourth compiles each case for the `h200` machine's CUDA device alone (PTX,
assembled by ptxas for sm_90) without running it (no GPU here).
Each case is one small graph with random inputs (fixed seed); numpy computes
the expected result independently. Symbolic dims are planned at twice the
extent the inputs bind, so the kernels run below their planned bounds.
Prints one line per failure and a final "N passed, M failed" line; exits 1
on any failure.
"""
import json
import math
import os
import subprocess
import sys

import numpy as np

COMPILED = sys.argv[1] in ("--compiled", "--compiled-vulkan", "--compiled-ptx")
PLAN_ONLY = sys.argv[1] == "--compiled-ptx"
# FUEL_EXPORT_CASES=1: every compiled case also saves a case.json.
EXPORT = os.environ.get("FUEL_EXPORT_CASES") == "1"
MACHINE_ARGS = ["--machine", "host"]
if PLAN_ONLY:
    MACHINE_ARGS = ["--machine", "h200", "--allow-device", "cuda:0",
                    "--input-residency", "cuda:0", "--output-residency", "cuda:0"]
if sys.argv[1] == "--compiled-vulkan":
    # FUEL_CHECK_MACHINE: another machine with a vulkan:0 (scripts/gpu-check.sh).
    MACHINE_ARGS = ["--machine", os.environ.get("FUEL_CHECK_MACHINE", "ci"), "--allow-device", "vulkan:0",
                    "--input-residency", "vulkan:0", "--output-residency", "vulkan:0"]
    os.environ["FUEL_VULKAN_VALIDATION"] = "1"
if COMPILED:
    FUELC, FUEL_RUN, WORK = sys.argv[2:5]
else:
    FUEL_REF, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(1234)
DTYPES = {np.float32: "f32", np.float64: "f64", np.float16: "f16", np.int8: "i8",
          np.int32: "i32", np.int64: "i64", np.uint8: "u8", np.bool_: "bool"}
erf = np.vectorize(math.erf)


def rand(*shape, dtype=np.float32, low=-2.0, high=2.0):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


passed, failed, not_on_device = 0, 0, 0


def run_graph(name, gpath, args, inputs, symbolic):
    """Runs the graph at `gpath` with the tool under test; False after
    printing why it failed."""
    if COMPILED:
        dims = []
        for iname, arr in inputs:
            for d, extent in zip((symbolic or {}).get(iname, []), np.shape(arr)):
                if isinstance(d, str):
                    dims += ["--dim", f"{d}={2 * extent}"]
        plan = gpath.replace(".json", ".fplan")
        steps = [[FUELC, "plan", gpath, *MACHINE_ARGS, *dims, "-o", plan],
                 [FUEL_RUN, "-q", plan, *args]][:1 if PLAN_ONLY else 2]
    else:
        steps = [[FUEL_REF, gpath, *args]]
    for cmd in steps:
        env = dict(os.environ)
        if COMPILED and cmd[0] == FUEL_RUN and os.environ.get("FUEL_VULKAN_PRELOAD"):
            env["LD_PRELOAD"] = os.environ["FUEL_VULKAN_PRELOAD"]  # See lit.cfg.py.
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if "NoBackendForOp" in r.stderr and "--allow-device" in MACHINE_ARGS:
            return None
        if "ptxas was not found" in r.stderr:
            print(f"FAIL {name}: PTX not verified: {r.stderr.strip()}")
            return False
        if "vulkan validation" in r.stderr:
            print(f"FAIL {name}: validation messages: {r.stderr.strip()}")
            return False
        if r.returncode != 0:
            tool = os.path.basename(cmd[0])
            print(f"FAIL {name}: {tool} exited {r.returncode}: {r.stderr.strip()}")
            return False
    return True


def write_case(d, args, expected, rtol, atol):
    """Saves a planned case to run elsewhere (scripts/gpu-cases.py):
    fuel-run's arguments relative to the case folder, the expected outputs
    and tolerances."""
    rel = [a.replace(d + os.sep, "") for a in args if not a.startswith(os.path.join(d, "out"))]
    rel = [a for a in rel if a != "--output"]
    for i, want in enumerate(expected):
        np.save(os.path.join(d, f"want{i}.npy"), want)
    json.dump({"artifact": "g.fplan", "args": rel, "run_args": [],
               "tolerances": [[rtol, atol] if np.issubdtype(w.dtype, np.floating) else None
                              for w in expected],
               "expected": [f"want{i}.npy" for i in range(len(expected))]},
              open(os.path.join(d, "case.json"), "w"))


def case(name, op, inputs, expected, attrs=None, outputs=None, rtol=1e-5,
         atol=1e-6, symbolic=None, operands=None):
    """Runs node `y = op(inputs...)` and compares with `expected` (a list for
    several outputs). `symbolic` gives some inputs a declared shape with
    symbols (bound by the array's extents); `operands` names the inputs the
    node reads (default: all)."""
    global passed, failed, not_on_device
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    graph_inputs, args = [], []
    for i, (iname, arr) in enumerate(inputs):
        arr = np.asarray(arr)
        path = os.path.join(d, iname + ".npy")
        np.save(path, arr)
        shape = (symbolic or {}).get(iname, list(arr.shape))
        graph_inputs.append({"name": iname, "dtype": DTYPES[arr.dtype.type], "shape": shape})
        args += ["--input", f"{iname}={path}"]
    node = {"id": "y", "op": op, "inputs": operands or [n for n, _ in inputs]}
    if attrs:
        node["attrs"] = attrs
    outs = outputs or ["y"]
    graph = {"format": "fuel.graph", "version": 1, "inputs": graph_inputs,
             "nodes": [node], "outputs": outs}
    gpath = os.path.join(d, "g.json")
    json.dump(graph, open(gpath, "w"))
    expected = expected if isinstance(expected, list) else [expected]
    out_paths = [os.path.join(d, f"out{i}.npy") for i in range(len(outs))]
    for p in out_paths:
        args += ["--output", p]
    ran = run_graph(name, gpath, args, inputs, symbolic)
    if ran is None:
        not_on_device += 1
        return
    if not ran:
        failed += 1
        return
    if PLAN_ONLY or EXPORT:
        # What scripts/gpu-cases.py runs elsewhere (where there is a GPU).
        write_case(d, args, [np.asarray(w) for w in expected], rtol, atol)
    if PLAN_ONLY:
        passed += 1
        return
    for p, want in zip(out_paths, expected):
        got = np.load(p)
        want = np.asarray(want)
        ok = got.shape == want.shape and got.dtype == want.dtype
        if ok:
            if np.issubdtype(want.dtype, np.floating):
                ok = np.allclose(got.astype(np.float64), want.astype(np.float64),
                                 rtol=rtol, atol=atol, equal_nan=True)
            else:
                ok = np.array_equal(got, want)
        if not ok:
            print(f"FAIL {name}: got {got.dtype}{list(got.shape)} {got.ravel()[:6]}, "
                  f"want {want.dtype}{list(want.shape)} {want.ravel()[:6]}")
            failed += 1
            return
    passed += 1


x = rand(3, 4)
pos = rand(3, 4, low=0.1, high=3.0)
f32 = np.float32

# Elementwise unary.
UNARY = [("neg", np.negative, x), ("abs", np.abs, x), ("exp", np.exp, x),
                    ("log", np.log, pos), ("sqrt", np.sqrt, pos),
                    ("rsqrt", lambda a: 1 / np.sqrt(a), pos), ("tanh", np.tanh, x),
                    ("sigmoid", lambda a: 1 / (1 + np.exp(-a)), x),
                    ("relu", lambda a: np.maximum(a, 0), x),
                    ("gelu", lambda a: 0.5 * a * (1 + erf(a / np.sqrt(2))), x),
                    ("silu", lambda a: a / (1 + np.exp(-a)), x), ("erf", erf, x),
                    ("sin", np.sin, x), ("cos", np.cos, x), ("recip", lambda a: 1 / a, pos),
                    ("floor", np.floor, x * 3), ("ceil", np.ceil, x * 3),
                    ("round", np.round, np.concatenate([x * 3, [[-2.5, -0.5, 0.5, 1.5]]]).astype(f32))]
for op, fn, arr in UNARY:
    case(op, op, [("x", arr)], fn(arr.astype(np.float64)).astype(f32))
case("gelu_tanh", "gelu", [("x", x)],
     (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))).astype(f32),
     {"approximate": "tanh"})
b = rand(3, 4, dtype=np.bool_)
case("not", "not", [("b", b)], np.logical_not(b))
case("cast_f32_i32", "cast", [("x", x * 10)], (x * 10).astype(np.int32), {"to": "i32"})
case("cast_f32_f16", "cast", [("x", x)], x.astype(np.float16), {"to": "f16"})
i32 = rand(5, dtype=np.int32, low=-100, high=100)
case("cast_i32_f64", "cast", [("i", i32)], i32.astype(np.float64), {"to": "f64"})
case("clamp", "clamp", [("x", x)], np.clip(x, -0.5, 1.0), {"min": -0.5, "max": 1.0})

# Elementwise binary with broadcasting.
row = rand(4)
col = rand(3, 1)
BINARY = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
          ("div", np.divide), ("max", np.maximum), ("min", np.minimum)]
for op, fn in BINARY:
    case(op, op, [("a", x), ("b", row)], fn(x, row))
    case(op + "_outer", op, [("a", col), ("b", row)], fn(col, row))
case("pow", "pow", [("a", pos), ("b", row)], np.power(pos.astype(np.float64), row).astype(f32), rtol=1e-4)
COMPARE = [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
           ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]
for op, fn in COMPARE:
    case(op, op, [("a", np.round(x)), ("b", np.round(row))], fn(np.round(x), np.round(row)))
b2 = rand(4, dtype=np.bool_)
case("and", "and", [("a", b), ("b", b2)], np.logical_and(b, b2))
case("or", "or", [("a", b), ("b", b2)], np.logical_or(b, b2))
# On integers and, or and not are bitwise (ONNX's Bitwise* ops); i64 within
# +-2^40 (the reference interpreter holds values as doubles).
for dt in (np.int32, np.uint8, np.int8, np.int64):
    lo, hi = (-2 ** 40, 2 ** 40) if dt == np.int64 else (np.iinfo(dt).min, np.iinfo(dt).max)
    ba = rng.integers(lo, hi, size=(3, 4), endpoint=True).astype(dt)
    bb = rng.integers(lo, hi, size=(4,), endpoint=True).astype(dt)
    name = np.dtype(dt).name
    case("and_" + name, "and", [("a", ba), ("b", bb)], np.bitwise_and(ba, bb))
    case("or_" + name, "or", [("a", ba), ("b", bb)], np.bitwise_or(ba, bb))
    case("not_" + name, "not", [("a", ba)], np.invert(ba))
ia, ib = rand(6, dtype=np.int32, low=-50, high=50), rand(6, dtype=np.int32, low=1, high=7)
case("div_i32", "div", [("a", ia), ("b", ib)], (np.trunc(ia / ib)).astype(np.int32))
# Remainders of mixed signs, floored (numpy.mod) and truncated (numpy.fmod);
# integer remainders by 0 are 0.
fa, fb = x * 7, np.where(np.abs(row) < 0.1, 0.5, row) * 3
case("mod", "mod", [("a", fa), ("b", fb)], np.mod(fa, fb))
case("fmod", "fmod", [("a", fa), ("b", fb)], np.fmod(fa, fb))
sb = ib * np.array([1, -1, 1, -1, 1, -1], np.int32)
zb = np.where(np.arange(6) == 2, 0, sb).astype(np.int32)
with np.errstate(divide="ignore"):
    case("mod_i32", "mod", [("a", ia), ("b", zb)], np.where(zb == 0, 0, np.mod(ia, np.where(zb == 0, 1, zb))).astype(np.int32))
    case("fmod_i32", "fmod", [("a", ia), ("b", zb)], np.where(zb == 0, 0, np.fmod(ia, np.where(zb == 0, 1, zb))).astype(np.int32))
case("add_i8_wraps", "add", [("a", np.array([100, -100], np.int8)), ("b", np.array([100, -100], np.int8))],
     np.array([-56, 56], np.int8))
case("where", "where", [("c", col > 0), ("a", x), ("b", row)], np.where(col > 0, x, row))

# Contractions.
A, B = rand(2, 3, 4), rand(4, 5)
case("matmul", "matmul", [("a", A), ("b", B)], A @ B, rtol=1e-5)
Bb = rand(3, 1, 4, 5)
case("matmul_batch_broadcast", "matmul", [("a", A), ("b", Bb)], A @ Bb)
Bt = rand(5, 4)
case("matmul_transpose_b", "matmul", [("a", A), ("b", Bt)], A @ Bt.T, {"transpose_b": True})
At = rand(4, 3)
case("matmul_transpose_a", "matmul", [("a", At), ("b", B)], At.T @ B, {"transpose_a": True})
v = rand(4)
case("matmul_vector", "matmul", [("a", v), ("b", B)], v @ B)
case("matmul_matrix_vector", "matmul", [("a", A), ("b", v)], A @ v)
W, bias = rand(5, 4), rand(5)
case("linear", "linear", [("x", A), ("w", W), ("bias", bias)], A @ W.T + bias)


def conv2d(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (h + pad[0] + pad[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pad[1] + pad[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oo in range(o):
        g = oo // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * stride[0]:i * stride[0] + dil[0] * (kh - 1) + 1:dil[0],
                           j * stride[1]:j * stride[1] + dil[1] * (kw - 1) + 1:dil[1]]
                out[:, oo, i, j] = (patch * w[oo]).sum(axis=(1, 2, 3)) + b[oo]
    return out.astype(f32)


img = rand(2, 4, 7, 6)
wk = rand(6, 2, 3, 3)
bk = rand(6)
case("conv2d", "conv2d", [("x", img), ("w", wk), ("b", bk)],
     conv2d(img, wk, bk, (2, 1), (1, 0, 2, 1), (1, 2), 2),
     {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2], "groups": 2}, rtol=1e-4, atol=1e-5)


def pool(x, k, s, p, mode, include_pad=False, ceil=False):
    n, c, h, w = x.shape
    def extent(size, kk, ss, lo, hi):
        steps = size + lo + hi - kk
        return (-(-steps // ss) if ceil else steps // ss) + 1
    oh, ow = extent(h, k[0], s[0], p[0], p[2]), extent(w, k[1], s[1], p[1], p[3])
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * s[0] - p[0], j * s[1] - p[1]
            ys = [y for y in range(y0, y0 + k[0]) if 0 <= y < h]
            xs = [xx for xx in range(x0, x0 + k[1]) if 0 <= xx < w]
            win = x[:, :, ys][:, :, :, xs].astype(np.float64)
            if mode == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                if include_pad:
                    cy = len([y for y in range(y0, y0 + k[0]) if -p[0] <= y < h + p[2]])
                    cx = len([xx for xx in range(x0, x0 + k[1]) if -p[1] <= xx < w + p[3]])
                    count = cy * cx
                else:
                    count = len(ys) * len(xs)
                out[:, :, i, j] = win.sum(axis=(2, 3)) / count
    return out.astype(f32)


case("max_pool2d", "max_pool2d", [("x", img)], pool(img, (3, 2), (2, 2), (1, 1, 1, 0), "max"),
     {"kernel": [3, 2], "strides": [2, 2], "pads": [1, 1, 1, 0]})
case("avg_pool2d", "avg_pool2d", [("x", img)], pool(img, (2, 2), (2, 2), (0, 0, 0, 0), "avg", ceil=True),
     {"kernel": [2, 2], "strides": [2, 2], "ceil_mode": True})
case("avg_pool2d_include_pad", "avg_pool2d", [("x", img)],
     pool(img, (3, 3), (1, 1), (1, 1, 1, 1), "avg", include_pad=True),
     {"kernel": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": True})

# Reductions and normalizations.
T = rand(2, 3, 4)
REDUCE = [("reduce_sum", np.sum), ("reduce_mean", np.mean), ("reduce_max", np.max),
          ("reduce_min", np.min), ("reduce_prod", np.prod)]
for op, fn in REDUCE:
    case(op, op, [("x", T)], fn(T.astype(np.float64), axis=(0, 2), keepdims=True).astype(f32),
         {"axes": [0, -1], "keepdims": True})
    case(op + "_all", op, [("x", T)], np.asarray(fn(T.astype(np.float64))).astype(f32))
case("argmax", "argmax", [("x", T)], np.argmax(T, axis=1), {"axis": 1})
case("argmin_keepdims", "argmin", [("x", T)], np.argmin(T, axis=-1)[..., None],
     {"axis": -1, "keepdims": True})


def softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


case("softmax", "softmax", [("x", T)], softmax(T.astype(np.float64), -1).astype(f32))
case("softmax_axis1", "softmax", [("x", T)], softmax(T.astype(np.float64), 1).astype(f32), {"axis": 1})
case("log_softmax", "log_softmax", [("x", T)], np.log(softmax(T.astype(np.float64), -1)).astype(f32))
Th = T.astype(np.float16)
case("softmax_f16", "softmax", [("x", Th)], softmax(Th.astype(np.float64), -1).astype(np.float16),
     rtol=2e-3, atol=2e-3)
scale, shift = rand(3, 4), rand(3, 4)


def layer_norm(a):
    """Over axes 1 and 2 of a [2, 3, 4] tensor, then scale and shift."""
    m = a.astype(np.float64).reshape(2, -1)
    ln = ((m - m.mean(1, keepdims=True)) / np.sqrt(m.var(1, keepdims=True) + 1e-5)).reshape(a.shape)
    return (ln * scale + shift).astype(f32)


case("layer_norm", "layer_norm", [("x", T), ("s", scale), ("b", shift)], layer_norm(T),
     {"axis": 1}, rtol=1e-4, atol=1e-5)
r = T.astype(np.float64)
rms = r / np.sqrt((r ** 2).mean(-1, keepdims=True) + 1e-6)
case("rms_norm", "rms_norm", [("x", T), ("s", scale[0])], (rms * scale[0]).astype(f32),
     {"eps": 1e-6}, rtol=1e-4, atol=1e-5)

# Views.
case("reshape", "reshape", [("x", T)], T.reshape(6, -1), {"shape": [6, -1]})
case("transpose", "transpose", [("x", T)], T.transpose(2, 0, 1), {"perm": [2, 0, 1]})
case("transpose_default", "transpose", [("x", T)], T.transpose())
case("transpose_negative_axes", "transpose", [("x", T)], T.transpose(2, 0, 1), {"perm": [-1, 0, 1]})
case("broadcast_to", "broadcast_to", [("x", col)], np.broadcast_to(col, (2, 3, 5)), {"shape": [2, 3, 5]})
case("expand", "expand", [("x", col)], col * np.ones((1, 4), f32), {"shape": [1, 4]})
case("slice", "slice", [("x", T)], T[:, ::-2, 1:3],
     {"starts": [-1, 1], "ends": [-100, 3], "axes": [1, 2], "steps": [-2, 1]})
case("squeeze", "squeeze", [("x", col)], col.squeeze(1))
case("unsqueeze", "unsqueeze", [("x", row)], row[None, :, None], {"axes": [0, 2]})

# Data movement.
case("concat", "concat", [("a", T), ("b", T[:, :1])], np.concatenate([T, T[:, :1]], axis=1), {"axis": 1})
case("split", "split", [("x", T)], [T[..., :1], T[..., 1:]], {"axis": 2, "sizes": [1, 3]},
     outputs=["y#0", "y#1"])
idx = np.array([[0, -1], [2, 1]], np.int64)
case("gather", "gather", [("x", T), ("i", idx)], np.take(T, np.where(idx < 0, idx + 3, idx), axis=1),
     {"axis": 1})
for mode in ["constant", "reflect", "edge"]:
    attrs = {"pads": [0, 1, 2, 1, 2, 0], "mode": mode}
    if mode == "constant":
        attrs["value"] = 7.5
    want = np.pad(T, ((0, 1), (1, 2), (2, 0)), mode=mode,
                  **({"constant_values": 7.5} if mode == "constant" else {}))
    case("pad_" + mode, "pad", [("x", T)], want, attrs)

# Residency ops and a symbolic offset: P is bound by the shape of `p`.
cache, step = rand(2, 6, 3), rand(2, 1, 3)
want = cache.copy()
want[:, 4:5] = step
case("write_slice", "write_slice", [("c", cache), ("s", step), ("p", np.zeros(4, f32))], want,
     {"axis": 1, "offset": "P"}, symbolic={"p": ["P"]}, operands=["c", "s"])

# NaN and infinities propagate as numpy (and ONNX's reference) has them:
# max-based activations, max/min, pooling and reductions keep a NaN; an
# infinity turns into NaN where arithmetic says so (inf - inf, 0 * inf).


def special(a, every=3):
    """`a` with NaN, +inf and -inf in turn at every `every`-th element."""
    s = a.copy()
    flat = s.reshape(-1)
    flat[::every] = np.resize(np.array([np.nan, np.inf, -np.inf], a.dtype), flat[::every].shape)
    return s


with np.errstate(all="ignore"):
    for op, fn, arr in UNARY:
        sx = special(arr)
        case(op + "_special", op, [("x", sx)], fn(sx.astype(np.float64)).astype(f32))
    sx = special(x)
    case("clamp_special", "clamp", [("x", sx)], np.clip(sx, -0.5, 1.0), {"min": -0.5, "max": 1.0})
    for op, fn in BINARY:
        case(op + "_special", op, [("a", special(x)), ("b", special(row, 2))],
             fn(special(x), special(row, 2)))
    for op, fn in COMPARE:
        case(op + "_special", op, [("a", special(x)), ("b", special(row, 2))],
             fn(special(x), special(row, 2)))
    case("where_special", "where", [("c", col > 0), ("a", special(x)), ("b", row)],
         np.where(col > 0, special(x), row))
    # One special value per row of A (or column of B) keeps the expected
    # result exact: a NaN row, a +inf row (inf plus finite terms of either
    # sign is inf or -inf) and a row of finite values.
    sA = A.copy()
    sA[0, 0, 1], sA[0, 1, 2], sA[1, 2, 0] = np.nan, np.inf, -np.inf
    case("matmul_special", "matmul", [("a", sA), ("b", B)], (sA.astype(np.float64) @ B).astype(f32), rtol=1e-5)
    simg = img.copy()
    simg[0, 0, 2, 3], simg[1, 3, 0, 0], simg[1, 1, 6, 5] = np.nan, np.inf, -np.inf
    case("conv2d_special", "conv2d", [("x", simg), ("w", wk), ("b", bk)],
         conv2d(simg, wk, bk, (2, 1), (1, 0, 2, 1), (1, 2), 2),
         {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2], "groups": 2}, rtol=1e-4, atol=1e-5)
    case("max_pool2d_special", "max_pool2d", [("x", simg)],
         pool(simg, (3, 2), (2, 2), (1, 1, 1, 0), "max"),
         {"kernel": [3, 2], "strides": [2, 2], "pads": [1, 1, 1, 0]})
    case("avg_pool2d_special", "avg_pool2d", [("x", simg)],
         pool(simg, (2, 2), (2, 2), (0, 0, 0, 0), "avg", ceil=True),
         {"kernel": [2, 2], "strides": [2, 2], "ceil_mode": True})
    sT = T.copy()
    sT[0, 1, 2], sT[1, 0, 3], sT[1, 2, 1] = np.nan, np.inf, -np.inf
    for op, fn in REDUCE:
        case(op + "_special", op, [("x", sT)],
             fn(sT.astype(np.float64), axis=(0, 2), keepdims=True).astype(f32),
             {"axes": [0, -1], "keepdims": True})
    case("argmax_special", "argmax", [("x", sT)], np.argmax(sT, axis=1), {"axis": 1})
    case("argmin_special", "argmin", [("x", sT)], np.argmin(sT, axis=1), {"axis": 1})
    case("softmax_special", "softmax", [("x", sT)], softmax(sT.astype(np.float64), -1).astype(f32))
    case("log_softmax_special", "log_softmax", [("x", sT)],
         np.log(softmax(sT.astype(np.float64), -1)).astype(f32))
    case("layer_norm_special", "layer_norm", [("x", sT), ("s", scale), ("b", shift)],
         layer_norm(sT), {"axis": 1})

if not_on_device:
    print(f"{not_on_device} cases have no kernel on the device")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
