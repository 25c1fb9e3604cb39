#!/usr/bin/python3
"""ONNX models (built with onnx.helper) imported by fuelc, planned for the
CPU and run by fuel-run, against numpy on random inputs.

Usage: check-onnx.py FUELC FUEL_RUN WORKDIR

Prints one line per failure and "N passed, M failed"; exits 1 on failure.
"""
import math

import numpy as np
from onnx import TensorProto

from onnx_case import ELEM, F, case, finish, n, rand, rng

x = rand(3, 4)
row = rand(4)
erf = np.vectorize(math.erf)
for op, fn in [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply), ("Div", np.divide),
               ("Max", np.maximum), ("Min", np.minimum)]:
    case(op, [n(op, ["a", "b"], ["y0"])], [("a", x, None), ("b", row, None)], [fn(x, row)])
for op, fn, arr in [("Relu", lambda a: np.maximum(a, 0), x), ("Exp", np.exp, x), ("Tanh", np.tanh, x),
                    ("Sigmoid", lambda a: 1 / (1 + np.exp(-a)), x), ("Neg", np.negative, x),
                    ("Abs", np.abs, x), ("Sqrt", np.sqrt, np.abs(x) + 0.1),
                    ("Log", np.log, np.abs(x) + 0.1), ("Erf", lambda a: erf(a).astype(np.float32), x),
                    ("Reciprocal", lambda a: 1 / a, np.abs(x) + 0.5)]:
    case(op, [n(op, ["a"], ["y0"])], [("a", arr, None)], [fn(arr).astype(np.float32)])
case("LeakyRelu", [n("LeakyRelu", ["a"], ["y0"], alpha=0.1)], [("a", x, None)],
     [np.where(x > 0, x, 0.1 * x)])
case("Clip", [n("Clip", ["a", "lo", "hi"], ["y0"])], [("a", x, None)], [np.clip(x, -0.5, 1.0)],
     initializers=[("lo", np.array(-0.5, np.float32)), ("hi", np.array(1.0, np.float32))])
w, b = rand(5, 4), rand(5)
case("Gemm_transB_alpha_beta", [n("Gemm", ["a", "w", "c"], ["y0"], transB=1, alpha=0.5, beta=2.0)],
     [("a", x, None)], [0.5 * x @ w.T + 2.0 * b], initializers=[("w", w), ("c", b)])
A, M = rand(2, 3, 4), rand(4, 6)
case("MatMul_batched", [n("MatMul", ["a", "m"], ["y0"])], [("a", A, None)], [A @ M],
     initializers=[("m", M)])
img, k, kb = rand(1, 2, 6, 6), rand(3, 2, 3, 3), rand(3)


def conv(xx, ww, bb, pad):
    xp = np.pad(xx, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((xx.shape[0], ww.shape[0], xp.shape[2] - 2, xp.shape[3] - 2), np.float32)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", xp[:, :, i:i + 3, j:j + 3], ww)
    return out + bb[None, :, None, None]


case("Conv_pad", [n("Conv", ["a", "k", "kb"], ["y0"], pads=[1, 1, 1, 1])], [("a", img, None)],
     [conv(img, k, kb, 1)], initializers=[("k", k), ("kb", kb)], tolerance=(1e-4, 1e-5))
case("MaxPool", [n("MaxPool", ["a"], ["y0"], kernel_shape=[2, 2], strides=[2, 2])],
     [("a", img, None)], [img.reshape(1, 2, 3, 2, 3, 2).max(axis=(3, 5))])
def max_pool(xx, kernel, strides, pads, dilations=(1, 1), ceil=False):
    """numpy max pooling, NaN propagating; pads (top, left, bottom, right)."""
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    size = [xx.shape[2 + a] + pads[a] + pads[a + 2] - extent[a] for a in range(2)]
    out = [(-(-v // s) if ceil else v // s) + 1 for v, s in zip(size, strides)]
    grow = [max(0, (o - 1) * s + e - (xx.shape[2 + a] + pads[a] + pads[a + 2]))
            for a, (o, s, e) in enumerate(zip(out, strides, extent))]
    xp = np.pad(xx, ((0, 0), (0, 0), (pads[0], pads[2] + grow[0]), (pads[1], pads[3] + grow[1])),
                constant_values=-np.inf)
    y = np.full(xx.shape[:2] + tuple(out), -np.inf, xx.dtype)
    for i in range(out[0]):
        for j in range(out[1]):
            r, c = i * strides[0], j * strides[1]
            window = xp[:, :, r:r + extent[0]:dilations[0], c:c + extent[1]:dilations[1]]
            y[:, :, i, j] = window.max(axis=(2, 3))
    return y


# The x86 kernel pads a plane copy and runs each tap over the whole plane
# (equal strides); unequal strides keep the generic form. NaNs propagate.
feature = rand(2, 3, 9, 11)
feature[0, 1, 4, 5] = np.nan
for name, attrs, args in [
        ("MaxPool_same_nan", dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         ([3, 3], [1, 1], [1, 1, 1, 1])),
        ("MaxPool_strided_ceil", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 0, 1],
                                      ceil_mode=1), ([3, 3], [2, 2], [1, 0, 0, 1], (1, 1), True)),
        ("MaxPool_dilated", dict(kernel_shape=[2, 3], strides=[3, 3], dilations=[2, 2],
                                 pads=[2, 1, 2, 1]), ([2, 3], [3, 3], [2, 1, 2, 1], (2, 2))),
        ("MaxPool_unequal_strides", dict(kernel_shape=[3, 2], strides=[1, 2], pads=[1, 0, 1, 0]),
         ([3, 2], [1, 2], [1, 0, 1, 0]))]:
    case(name, [n("MaxPool", ["a"], ["y0"], **attrs)], [("a", feature, None)],
         [max_pool(feature, *args)])
half = feature.astype(np.float16)
case("MaxPool_f16", [n("MaxPool", ["a"], ["y0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
     [("a", half, None)], [max_pool(half, [3, 3], [1, 1], [1, 1, 1, 1])],
     out_type=TensorProto.FLOAT16)
case("GlobalAveragePool", [n("GlobalAveragePool", ["a"], ["y0"])], [("a", img, None)],
     [img.mean(axis=(2, 3), keepdims=True)])
scale, shift, mean, var = rand(2), rand(2), rand(2), rand(2, low=0.5, high=2)
bn = (img - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) \
    * scale[None, :, None, None] + shift[None, :, None, None]
case("BatchNormalization", [n("BatchNormalization", ["a", "s", "sh", "m", "v"], ["y0"])],
     [("a", img, None)], [bn.astype(np.float32)],
     initializers=[("s", scale), ("sh", shift), ("m", mean), ("v", var)], tolerance=(1e-4, 1e-5))


def softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


T = rand(2, 3, 4)
case("Softmax_axis1", [n("Softmax", ["a"], ["y0"], axis=1)], [("a", T, None)], [softmax(T, 1)])
case("Softmax_opset11_last", [n("Softmax", ["a"], ["y0"], axis=2)], [("a", T, None)],
     [softmax(T, 2)], opset=11)
case("ReduceMean_keepdims", [n("ReduceMean", ["a"], ["y0"], axes=[1])], [("a", T, None)],
     [T.mean(axis=1, keepdims=True)])
case("ReduceSum_axes_input", [n("ReduceSum", ["a", "ax"], ["y0"], keepdims=0)], [("a", T, None)],
     [T.sum(axis=(0, 2))], initializers=[("ax", np.array([0, 2], np.int64))])
case("ArgMax", [n("ArgMax", ["a"], ["y0"], axis=2, keepdims=0)], [("a", T, None)],
     [T.argmax(axis=2)], out_type=TensorProto.INT64)
case("Reshape_zero_and_infer", [n("Reshape", ["a", "s"], ["y0"])], [("a", T, None)],
     [T.reshape(2, -1)], initializers=[("s", np.array([0, -1], np.int64))])
case("Flatten", [n("Flatten", ["a"], ["y0"], axis=2)], [("a", T, None)], [T.reshape(6, 4)])
case("Transpose", [n("Transpose", ["a"], ["y0"], perm=[2, 0, 1])], [("a", T, None)],
     [T.transpose(2, 0, 1)])
case("Unsqueeze_Squeeze", [n("Unsqueeze", ["a", "ax"], ["u"]), n("Squeeze", ["u", "ax"], ["y0"])],
     [("a", T, None)], [T], initializers=[("ax", np.array([1], np.int64))])
case("Concat", [n("Concat", ["a", "b"], ["y0"], axis=1)], [("a", T, None), ("b", T, None)],
     [np.concatenate([T, T], axis=1)])
case("Split", [n("Split", ["a", "sp"], ["y0", "y1"], axis=2)], [("a", T, None)],
     [T[..., :1], T[..., 1:]], initializers=[("sp", np.array([1, 3], np.int64))])
case("Gather", [n("Gather", ["a", "i"], ["y0"], axis=1)], [("a", T, None)],
     [np.take(T, [2, 0], axis=1)], initializers=[("i", np.array([2, 0], np.int64))])
case("Slice", [n("Slice", ["a", "st", "en", "ax", "sp"], ["y0"])], [("a", T, None)],
     [T[:, ::-2, 1:3]],
     initializers=[("st", np.array([-1, 1], np.int64)), ("en", np.array([-100, 3], np.int64)),
                   ("ax", np.array([1, 2], np.int64)), ("sp", np.array([-2, 1], np.int64))])
case("Pad_reflect", [n("Pad", ["a", "p"], ["y0"], mode="reflect")], [("a", T, None)],
     [np.pad(T, ((0, 0), (1, 1), (2, 0)), mode="reflect")],
     initializers=[("p", np.array([0, 1, 2, 0, 1, 0], np.int64))])
e_in = rand(3, 1)
case("Expand", [n("Expand", ["a", "s"], ["y0"])], [("a", e_in, None)],
     [e_in * np.ones((2, 3, 4), np.float32)], initializers=[("s", np.array([2, 1, 4], np.int64))])
case("Where_Greater", [n("Greater", ["a", "b"], ["c"]), n("Where", ["c", "a", "b"], ["y0"])],
     [("a", x, None), ("b", row, None)], [np.where(x > row, x, row)])
ln_s, ln_b = rand(4), rand(4)
mu = T.mean(-1, keepdims=True)
ln = (T - mu) / np.sqrt(((T - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * ln_s + ln_b
case("LayerNormalization", [n("LayerNormalization", ["a", "s", "b"], ["y0"])], [("a", T, None)],
     [ln.astype(np.float32)], initializers=[("s", ln_s), ("b", ln_b)], opset=17, tolerance=(1e-4, 1e-5))
# Dynamic batch: a named dim becomes a symbol, planned with --dim.
xb = rand(5, 4)
case("symbolic_batch", [n("Gemm", ["a", "w", "c"], ["g"], transB=1), n("Relu", ["g"], ["y0"])],
     [("a", xb, ["N", 4])], [np.maximum(xb @ w.T + b, 0)], initializers=[("w", w), ("c", b)],
     dims=[("N", 8)])
# Exporters' shape arithmetic, folded at import: Shape -> Gather ->
# Unsqueeze -> Concat feeding a Reshape; Range feeding a Gather.
case("shape_arithmetic",
     [n("Shape", ["a"], ["s"]), n("Gather", ["s", "zero"], ["b"]),
      n("Unsqueeze", ["b", "ax"], ["u"]), n("Concat", ["u", "minus1"], ["c"], axis=0),
      n("Reshape", ["a", "c"], ["y0"]),
      n("Range", ["r0", "r4", "r1"], ["idx"]), n("Mul", ["idx", "two"], ["idx2"]),
      n("Gather", ["a", "idx2"], ["y1"], axis=2)],
     [("a", T, None)], [T.reshape(2, -1), np.take(T, [0, 2], axis=2)],
     initializers=[("zero", np.array(0, np.int64)), ("ax", np.array([0], np.int64)),
                   ("minus1", np.array([-1], np.int64)), ("r0", np.array(0, np.int64)),
                   ("r4", np.array(2, np.int64)), ("r1", np.array(1, np.int64)),
                   ("two", np.array(2, np.int64))])
# The same over a symbolic batch, as PyTorch's attention exports it: Shape ->
# Gather -> Mul by the head count -> Concat with [-1, 3] -> Reshape to
# [B * 2, T, E / 2] (the derived symbol 2*B; -1 resolved at import), a
# transposed matmul per head, and back; one plan (N <= 8) run at N = 3.
xh = rand(3, 4, 6)
heads = xh.reshape(6, 4, 3)
attn = (heads @ heads.transpose(0, 2, 1)) @ heads
case("symbolic_shape_arithmetic",
     [n("Shape", ["a"], ["s"]), n("Gather", ["s", "zero"], ["b"]),
      n("Mul", ["b", "two"], ["bh"]), n("Unsqueeze", ["bh", "ax"], ["u"]),
      n("Concat", ["u", "rest"], ["c"], axis=0), n("Reshape", ["a", "c"], ["h"]),
      n("Transpose", ["h"], ["ht"], perm=[0, 2, 1]), n("MatMul", ["h", "ht"], ["sc"]),
      n("MatMul", ["sc", "h"], ["o"]), n("Shape", ["a"], ["back"]),
      n("Reshape", ["o", "back"], ["y0"])],
     [("a", xh, ["N", 4, 6])], [attn.reshape(3, 4, 6)],
     initializers=[("zero", np.array(0, np.int64)), ("two", np.array(2, np.int64)),
                   ("ax", np.array([0], np.int64)), ("rest", np.array([-1, 3], np.int64))],
     dims=[("N", 8)], tolerance=(1e-4, 1e-5))
# ConvTranspose against a direct scatter of every input element (random
# weights, two groups, stride, dilation, pads, output_padding).
def conv_transpose(x, w, stride, dilation, pads, output_padding, groups):
    n, c, h, wd = x.shape
    cg, mg, kh, kw = c // groups, w.shape[1], w.shape[2], w.shape[3]
    full = [stride[a] * ([h, wd][a] - 1) + output_padding[a] + (w.shape[2 + a] - 1) * dilation[a] + 1
            for a in range(2)]
    y = np.zeros((n, mg * groups, full[0], full[1]), np.float64)
    for g in range(groups):
        for ci in range(cg):
            for m in range(mg):
                for i in range(kh):
                    for j in range(kw):
                        y[:, g * mg + m, i * dilation[0]:i * dilation[0] + stride[0] * (h - 1) + 1:stride[0],
                          j * dilation[1]:j * dilation[1] + stride[1] * (wd - 1) + 1:stride[1]] += \
                            x[:, g * cg + ci] * w[g * cg + ci, m, i, j]
    return y[:, :, pads[0]:full[0] - pads[2], pads[1]:full[1] - pads[3]].astype(np.float32)


xt, wt = rand(2, 4, 5, 6), rand(4, 3, 3, 2)
case("ConvTranspose", [n("ConvTranspose", ["a", "w"], ["y0"], strides=[2, 3], dilations=[2, 1],
                         pads=[1, 0, 2, 1], output_padding=[1, 1], group=2)],
     [("a", xt, None)], [conv_transpose(xt, wt, [2, 3], [2, 1], [1, 0, 2, 1], [1, 1], 2)],
     initializers=[("w", wt)], tolerance=(1e-4, 1e-5))
# Constant folding of Shape on static shapes.
case("Shape_Reshape", [n("Shape", ["a"], ["s"]), n("Reshape", ["b", "s"], ["y0"])],
     [("a", T, None), ("b", T.reshape(4, 6), None)], [T])

# Opsets 18-21 (current exporters' defaults), built here with the helper API
# (Debian's onnx package has no node tests past 17).
ax1 = ("ax", np.array([1], np.int64))
case("ReduceMean_opset18_axes_input", [n("ReduceMean", ["a", "ax"], ["y0"], keepdims=1)],
     [("a", T, None)], [T.mean(axis=1, keepdims=True)], initializers=[ax1], opset=18)
case("ReduceMax_opset20_axes_input", [n("ReduceMax", ["a", "ax"], ["y0"], keepdims=0)],
     [("a", T, None)], [T.max(axis=1)], initializers=[ax1], opset=20)
x5 = rand(3, 5)
case("Split_opset18_num_outputs_uneven", [n("Split", ["a"], ["y0", "y1"], axis=1, num_outputs=2)],
     [("a", x5, None)], [x5[:, :3], x5[:, 3:]], opset=18)
case("Split_opset18_num_outputs_even", [n("Split", ["a"], ["y0", "y1", "y2"], axis=0, num_outputs=3)],
     [("a", x5, None)], [x5[:1], x5[1:2], x5[2:]], opset=18)
case("Pad_opset18_axes", [n("Pad", ["a", "p", "v", "ax"], ["y0"])], [("a", T, None)],
     [np.pad(T, ((0, 0), (2, 1), (0, 0)), constant_values=1.5)],
     initializers=[("p", np.array([2, 1], np.int64)), ("v", np.array(1.5, np.float32)), ax1],
     opset=18)
small = rand(1, 1, 4, 6)
# not_larger: sizes 8x9 of 4x6 keep the smaller factor (1.5): 6x9, nearest
# (asymmetric, floor) reads input floor(i / 1.5).
rows, cols = (np.arange(6) / 1.5).astype(int), (np.arange(9) / 1.5).astype(int)
case("Resize_opset18_axes_keep_aspect", [n("Resize", ["a", "", "", "sz"], ["y0"], axes=[2, 3],
                                           keep_aspect_ratio_policy="not_larger", mode="nearest",
                                           coordinate_transformation_mode="asymmetric",
                                           nearest_mode="floor")],
     [("a", small, None)], [small[:, :, rows][:, :, :, cols]],
     initializers=[("sz", np.array([8, 9], np.int64))], opset=18)
case("Resize_opset19_scales_for_axes", [n("Resize", ["a", "", "sc"], ["y0"], axes=[3], mode="nearest",
                                          coordinate_transformation_mode="asymmetric",
                                          nearest_mode="floor", antialias=1)],
     [("a", small, None)], [np.repeat(small, 2, axis=3)],
     initializers=[("sc", np.array([2.0], np.float32))], opset=19)
gx = rand(2, 4, 3, 3)


def group_norm(v, groups, scale, bias):
    g = v.astype(np.float64).reshape(v.shape[0], groups, -1)
    g = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    return (g.reshape(v.shape) * scale.reshape(1, -1, 1, 1) + bias.reshape(1, -1, 1, 1)).astype(np.float32)


gs, gb = rand(2), rand(2)
case("GroupNormalization_opset18_per_group", [n("GroupNormalization", ["a", "s", "b"], ["y0"], num_groups=2)],
     [("a", gx, None)], [group_norm(gx, 2, np.repeat(gs, 2), np.repeat(gb, 2))],
     initializers=[("s", gs), ("b", gb)], opset=18, tolerance=(1e-4, 1e-5))
cs, cb = rand(4), rand(4)
case("GroupNormalization_opset21_per_channel", [n("GroupNormalization", ["a", "s", "b"], ["y0"], num_groups=2)],
     [("a", gx, ["N", 4, 3, 3])], [group_norm(gx, 2, cs, cb)],
     initializers=[("s", cs), ("b", cb)], opset=21, tolerance=(1e-4, 1e-5), dims=[("N", 2)])
case("Gelu_opset20", [n("Gelu", ["a"], ["y0"])], [("a", x, None)],
     [(0.5 * x * (1 + erf(x / np.sqrt(2)))).astype(np.float32)], opset=20, tolerance=(1e-5, 1e-6))
case("Gelu_opset20_tanh", [n("Gelu", ["a"], ["y0"], approximate="tanh")], [("a", x, None)],
     [(0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))).astype(np.float32)],
     opset=20, tolerance=(1e-5, 1e-6))
case("AveragePool_opset19", [n("AveragePool", ["a"], ["y0"], kernel_shape=[2, 2], strides=[2, 2],
                               dilations=[1, 1])],
     [("a", gx, None)], [gx[:, :, 0:2, 0:2].mean(axis=(2, 3), keepdims=True)], opset=19)
for dt, elem in ((np.int32, TensorProto.INT32), (np.uint8, TensorProto.UINT8)):
    info = np.iinfo(dt)
    ia = rng.integers(info.min, info.max, size=(3, 4), endpoint=True).astype(dt)
    ib = rng.integers(info.min, info.max, size=(4,), endpoint=True).astype(dt)
    for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
                   ("BitwiseXor", np.bitwise_xor)):
        case(f"{op}_opset18_{np.dtype(dt).name}", [n(op, ["a", "b"], ["y0"])],
             [("a", ia, None), ("b", ib, None)], [fn(ia, ib)], opset=18, out_type=elem)
    case(f"BitwiseNot_opset18_{np.dtype(dt).name}", [n("BitwiseNot", ["a"], ["y0"])],
         [("a", ia, None)], [np.invert(ia)], opset=18, out_type=elem)
# The 16-bit and unsigned 32/64-bit integers (run-time inputs, exact), the
# shifts past the width included; integer powers of a scalar base (2^y: its
# squarings once made LLVM's vectorizer recurse exponentially).
for dt in (np.int16, np.uint16, np.uint32, np.uint64):
    info = np.iinfo(dt)
    ia = rng.integers(info.min, info.max, size=(3, 4), endpoint=True, dtype=dt)
    ib = rng.integers(max(info.min, -1000), 1000, size=(4,), endpoint=True, dtype=dt)
    ib[ib == 0] = 7
    name = np.dtype(dt).name
    for op, fn in (("Max", np.maximum), ("Min", np.minimum), ("Mod", np.mod)):
        case(f"{op}_{name}", [n(op, ["a", "b"], ["y0"])], [("a", ia, None), ("b", ib, None)],
             [fn(ia, ib)], out_type=ELEM[dt])
    exponent = rng.integers(0, 8, size=(3, 4), dtype=dt)
    case(f"Pow_scalar_base_{name}", [n("Pow", ["a", "b"], ["y0"])],
         [("a", np.array(3, dtype=dt), None), ("b", exponent, None)],
         [np.power(dt(3), exponent).astype(dt)], out_type=ELEM[dt])
    if info.min == 0:
        bits = 8 * np.dtype(dt).itemsize
        shift = rng.integers(0, bits + 4, size=(3, 4), dtype=dt)
        for direction in ("LEFT", "RIGHT"):
            with np.errstate(over="ignore"):
                want = np.where(shift >= bits, dt(0), np.left_shift(ia, shift % bits)
                                if direction == "LEFT" else np.right_shift(ia, shift % bits))
            case(f"BitShift_{direction}_{name}", [n("BitShift", ["a", "b"], ["y0"],
                                                    direction=direction)],
                 [("a", ia, None), ("b", shift, None)], [want.astype(dt)], opset=11,
                 out_type=ELEM[dt])
unit = np.concatenate([rng.uniform(-1, 1, size=10), [-1, 1, 0, 0.5, -0.999]]).astype(np.float32)
for op, fn in (("Asin", np.arcsin), ("Acos", np.arccos), ("Atan", np.arctan)):
    values = unit if op != "Atan" else (unit * 50).astype(np.float32)
    case(op, [n(op, ["a"], ["y0"])], [("a", values, None)],
         [fn(values.astype(np.float64)).astype(np.float32)], tolerance=(1e-6, 1e-6))
row6 = rand(6)
case("MatMul_Add_Softmax_opset21", [n("MatMul", ["a", "m"], ["mm"]), n("Add", ["mm", "c"], ["s"]),
                                    n("Softmax", ["s"], ["y0"], axis=-1)],
     [("a", A, None)], [softmax((A @ M + row6).astype(np.float64), -1).astype(np.float32)],
     initializers=[("m", M), ("c", row6)], opset=21)

# Einsum (12): contractions, batch axes, outer products, sums, transposes,
# implicit outputs, an ellipsis, three operands and a symbolic batch,
# against numpy.einsum.
einsums = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ijk->j", [(2, 3, 4)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd->dba", [(2, 3, 4), (4, 5)]),
    ("ik,jk->ijk", [(3, 4), (2, 4)]),
    ("...ii->...i", [(2, 3, 4, 4)]),
    ("ii->", [(5, 5)]),
    ("iij->j", [(3, 3, 4)]),
    ("bii,bi->b", [(2, 4, 4), (2, 4)]),
]
for number, (equation, shapes) in enumerate(einsums):
    operands = [rand(*shape) for shape in shapes]
    names = [f"e{i}" for i in range(len(shapes))]
    case(f"Einsum_{number}", [n("Einsum", names, ["y0"], equation=equation)],
         [(nm, a, None) for nm, a in zip(names, operands)],
         [np.einsum(equation, *[a.astype(np.float64) for a in operands]).astype(np.float32)],
         opset=12, tolerance=(1e-5, 1e-5))
ea, eb = rand(3, 4, 5), rand(5, 6)
case("Einsum_symbolic_batch", [n("Einsum", ["e0", "e1"], ["y0"], equation="bij,jk->bik")],
     [("e0", ea, ["B", 4, 5]), ("e1", eb, None)], [np.einsum("bij,jk->bik", ea, eb)],
     opset=12, tolerance=(1e-5, 1e-5), dims=[("B", 3)])

finish()
