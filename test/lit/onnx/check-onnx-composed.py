#!/usr/bin/python3
"""ONNX ops fuelc composes from IR ops (GridSample, RoiAlign, 3-D pooling
and convolution, 1-D
ConvTranspose, Det, DFT, STFT, Compress, ReverseSequence, MaxUnpool,
MaxPool's Indices) and
control flow it resolves at import (If, Loop, Scan), imported, planned for
the CPU and run on random inputs, against torch and numpy.

Usage: check-onnx-composed.py FUELC FUEL_RUN WORKDIR
"""
import numpy as np
import torch
import torch.nn.functional as tf
from onnx import TensorProto, helper, numpy_helper

from onnx_case import case, finish, n, rand

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def t(a):
    return torch.from_numpy(a.astype(np.float64))


def f32(a):
    return np.asarray(a, np.float64).astype(np.float32)


# GridSample: every mode, padding and align_corners, the grid reaching
# past the borders (padding matters) against torch's grid_sample (whose
# semantics ONNX adopted); opset 20's mode names.
image = rand(2, 3, 5, 7)
grid = rand(2, 4, 6, 2, low=-1.3, high=1.3)
for mode in ("nearest", "bilinear", "bicubic"):
    for padding in ("zeros", "border", "reflection"):
        for align in (0, 1):
            want = tf.grid_sample(t(image), t(grid), mode=mode, padding_mode=padding,
                                  align_corners=bool(align))
            case(f"GridSample_{mode}_{padding}_{align}",
                 [n("GridSample", ["a", "g"], ["y0"], mode=mode, padding_mode=padding,
                    align_corners=align)],
                 [("a", image, None), ("g", grid, None)], [f32(want)], opset=16,
                 tolerance=(1e-4, 1e-5))
for mode, torch_mode in (("linear", "bilinear"), ("cubic", "bicubic")):
    case(f"GridSample_opset20_{mode}", [n("GridSample", ["a", "g"], ["y0"], mode=mode)],
         [("a", image, None), ("g", grid, None)],
         [f32(tf.grid_sample(t(image), t(grid), mode=torch_mode, align_corners=False))],
         opset=20, tolerance=(1e-4, 1e-5))

# 3-D pooling (two 2-D ones): strides, pads, ceil_mode, dilations, padding
# counted or not, against torch.
volume = rand(2, 3, 7, 8, 9)
for name, attrs, reference in [
        ("MaxPool_3d_strided_padded",
         dict(kernel_shape=[3, 2, 3], strides=[2, 2, 1], pads=[1, 0, 1, 1, 1, 1]),
         lambda v: tf.max_pool3d(tf.pad(v, (1, 1, 0, 1, 1, 1), value=-np.inf), (3, 2, 3),
                                 (2, 2, 1))),
        ("MaxPool_3d_ceil_dilated", dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2], ceil_mode=1,
                                         dilations=[1, 2, 1]),
         lambda v: tf.max_pool3d(v, 2, 2, dilation=(1, 2, 1), ceil_mode=True)),
        ("AveragePool_3d_pads_excluded", dict(kernel_shape=[3, 3, 3], pads=[1, 1, 1, 1, 1, 1]),
         lambda v: tf.avg_pool3d(v, 3, 1, 1, count_include_pad=False)),
        ("AveragePool_3d_pads_counted", dict(kernel_shape=[3, 3, 2], strides=[2, 1, 2],
                                             pads=[1, 1, 1, 1, 1, 1], count_include_pad=1),
         lambda v: tf.avg_pool3d(v, (3, 3, 2), (2, 1, 2), 1, count_include_pad=True))]:
    op = name.split("_")[0]
    case(name, [n(op, ["a"], ["y0"], **attrs)], [("a", volume, None)],
         [f32(reference(t(volume)))], tolerance=(1e-5, 1e-6))

# 3-D Conv (one 2-D convolution per depth tap): strides, asymmetric pads,
# dilations, groups, bias, auto_pad=SAME_UPPER, against torch.
clip = rand(2, 4, 6, 7, 5)
for name, kernel, attrs, bias, reference in [
        ("Conv_3d_strided_padded", (6, 4, 3, 2, 3),
         dict(strides=[2, 1, 2], pads=[1, 0, 1, 2, 1, 1]), True,
         lambda v, w, b: tf.conv3d(tf.pad(v, (1, 1, 0, 1, 1, 2)), w, b, stride=(2, 1, 2))),
        ("Conv_3d_dilated_grouped", (4, 2, 2, 3, 2), dict(dilations=[2, 1, 2], group=2), False,
         lambda v, w, b: tf.conv3d(v, w, None, dilation=(2, 1, 2), groups=2)),
        ("Conv_3d_same_upper", (3, 4, 3, 3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2, 2]),
         True, lambda v, w, b: tf.conv3d(tf.pad(v, (1, 1, 1, 1, 0, 1)), w, b, stride=2))]:
    weights3, bias3 = rand(*kernel), rand(kernel[0])
    inputs = ["a", "w", "b"] if bias else ["a", "w"]
    inits = [("w", weights3)] + ([("b", bias3)] if bias else [])
    case(name, [n("Conv", inputs, ["y0"], **attrs)], [("a", clip, None)],
         [f32(reference(t(clip), t(weights3), t(bias3) if bias else None))],
         initializers=inits, tolerance=(1e-4, 1e-5))



def roi_align(x, rois, batch, out_h, out_w, ratio, scale, half_pixel, mode="avg"):
    """The ONNX reference's RoiAlign, sample by sample: avg, the mean of the
    samples' interpolations; max, the largest of all samples' weighted taps
    (a sample outside counts as 0)."""
    out = np.zeros((len(rois), x.shape[1], out_h, out_w))
    height, width = x.shape[2:]
    offset = 0.5 if half_pixel else 0.0
    for r, roi in enumerate(rois.astype(np.float64)):
        x0, y0, x1, y1 = roi * scale - offset
        roi_w, roi_h = x1 - x0, y1 - y0
        if not half_pixel:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / out_h, roi_w / out_w
        image = x[batch[r]].astype(np.float64)
        for ph in range(out_h):
            for pw in range(out_w):
                total, largest = np.zeros(x.shape[1]), np.full(x.shape[1], -np.inf)
                for iy in range(ratio):
                    for ix in range(ratio):
                        yy = y0 + ph * bin_h + (iy + 0.5) * bin_h / ratio
                        xx = x0 + pw * bin_w + (ix + 0.5) * bin_w / ratio
                        if yy < -1 or yy > height or xx < -1 or xx > width:
                            largest = np.maximum(largest, 0)
                            continue
                        yy, xx = max(yy, 0.0), max(xx, 0.0)
                        ylo, xlo = int(yy), int(xx)
                        if ylo >= height - 1:
                            ylo = yhi = height - 1
                            yy = float(ylo)
                        else:
                            yhi = ylo + 1
                        if xlo >= width - 1:
                            xlo = xhi = width - 1
                            xx = float(xlo)
                        else:
                            xhi = xlo + 1
                        ly, lx = yy - ylo, xx - xlo
                        taps = [(1 - ly) * (1 - lx) * image[:, ylo, xlo],
                                (1 - ly) * lx * image[:, ylo, xhi],
                                ly * (1 - lx) * image[:, yhi, xlo], ly * lx * image[:, yhi, xhi]]
                        total += sum(taps)
                        largest = np.maximum(largest, np.max(taps, axis=0))
                out[r, :, ph, pw] = total / (ratio * ratio) if mode == "avg" else largest
    return out


# RoiAlign (avg: two batched matmuls of separable weights; max: four
# products of per-sample taps): regions inside, across and past the
# borders, both coordinate transformations, against the reference's
# sample-by-sample loop.
features = rand(2, 3, 9, 11)
regions = np.array([[0.5, 1.0, 6.0, 7.5], [-3.0, -2.0, 4.0, 3.0], [8.0, 6.0, 14.0, 12.0],
                    [2.0, 2.0, 2.5, 2.2]], np.float32)
region_batch = np.array([1, 0, 1, 0], np.int64)
for name, opset, attrs, half_pixel in [
        ("RoiAlign_half_pixel", 16, dict(output_height=3, output_width=4, sampling_ratio=2,
                                          spatial_scale=0.9), True),
        ("RoiAlign_output_half_pixel", 16,
         dict(output_height=2, output_width=3, sampling_ratio=3, spatial_scale=1.0,
              coordinate_transformation_mode="output_half_pixel"), False),
        ("RoiAlign_opset10", 10, dict(output_height=4, output_width=2, sampling_ratio=1,
                                      spatial_scale=0.5), False),
        ("RoiAlign_max", 16, dict(output_height=3, output_width=2, sampling_ratio=2,
                                  spatial_scale=0.9, mode="max"), True),
        ("RoiAlign_max_output_half_pixel", 16,
         dict(output_height=2, output_width=4, sampling_ratio=3, spatial_scale=1.0, mode="max",
              coordinate_transformation_mode="output_half_pixel"), False)]:
    want = roi_align(features, regions, region_batch, attrs["output_height"],
                     attrs["output_width"], attrs["sampling_ratio"], attrs["spatial_scale"],
                     half_pixel, attrs.get("mode", "avg"))
    case(name, [n("RoiAlign", ["a", "r", "b"], ["y0"], **attrs)], [("a", features, None)],
         [f32(want)], initializers=[("r", regions), ("b", region_batch)], opset=opset,
         tolerance=(1e-4, 1e-5))

# 1-D ConvTranspose (a 2-D one of height 1): stride, dilation, pads,
# output_padding, groups.
signal, weights, bias = rand(2, 4, 9), rand(4, 3, 3), rand(6)
case("ConvTranspose_1d", [n("ConvTranspose", ["a", "w", "b"], ["y0"], strides=[2], dilations=[2],
                            pads=[1, 2], output_padding=[1], group=2)],
     [("a", signal, None)],
     [f32(tf.conv_transpose1d(t(signal), t(weights), t(bias), stride=2, padding=0,
                              output_padding=1, groups=2, dilation=2)[:, :, 1:-2])],
     initializers=[("w", weights), ("b", bias)], tolerance=(1e-4, 1e-5))

# 3-D ConvTranspose (spread, padded, then a 3-D convolution): stride,
# dilation, pads, output_padding, groups.
volume_in, weights_t3, bias_t3 = rand(1, 4, 3, 4, 3), rand(4, 3, 2, 3, 2), rand(6)
case("ConvTranspose_3d", [n("ConvTranspose", ["a", "w", "b"], ["y0"], strides=[2, 1, 2],
                            dilations=[1, 2, 1], pads=[0, 1, 1, 1, 0, 0],
                            output_padding=[1, 0, 1], group=2)],
     [("a", volume_in, None)],
     [f32(tf.conv_transpose3d(t(volume_in), t(weights_t3), t(bias_t3), stride=(2, 1, 2),
                              output_padding=(1, 0, 1), groups=2,
                              dilation=(1, 2, 1))[:, :, 0:-1, 1:, 1:])],
     initializers=[("w", weights_t3), ("b", bias_t3)], tolerance=(1e-4, 1e-5))

# Det of 1x1 to 4x4 matrices with a batch, against numpy.
for order in (1, 2, 3, 4):
    matrices = rand(2, 3, order, order)
    case(f"Det_{order}", [n("Det", ["a"], ["y0"])], [("a", matrices, None)],
         [f32(np.linalg.det(matrices.astype(np.float64)))], tolerance=(1e-4, 1e-5))

# DFT (forward, inverse, one-sided, a longer or shorter dft_length) and
# STFT (with and without a window) against numpy.fft.
def complex_parts(c):
    return f32(np.stack([c.real, c.imag], axis=-1))


real, cplx = rand(2, 12, 3, 1), rand(2, 12, 3, 2)
as_complex = cplx[..., 0].astype(np.float64) + 1j * cplx[..., 1]
case("DFT_real", [n("DFT", ["a"], ["y0"], axis=1)], [("a", real, None)],
     [complex_parts(np.fft.fft(real[..., 0].astype(np.float64), axis=1))], opset=17,
     tolerance=(1e-4, 1e-4))
case("DFT_onesided_axis2", [n("DFT", ["a"], ["y0"], axis=2, onesided=1)], [("a", real, None)],
     [complex_parts(np.fft.rfft(real[..., 0].astype(np.float64), axis=2))], opset=17,
     tolerance=(1e-4, 1e-4))
case("DFT_inverse_complex", [n("DFT", ["a"], ["y0"], axis=1, inverse=1)], [("a", cplx, None)],
     [complex_parts(np.fft.ifft(as_complex, axis=1))], opset=17, tolerance=(1e-4, 1e-5))
for length in (8, 16):
    case(f"DFT_length_{length}", [n("DFT", ["a", "len"], ["y0"], axis=1)], [("a", cplx, None)],
         [complex_parts(np.fft.fft(as_complex, n=length, axis=1))], opset=17,
         initializers=[("len", np.array(length, np.int64))], tolerance=(1e-4, 1e-4))
case("DFT_opset20_axis_input", [n("DFT", ["a", "", "ax"], ["y0"])], [("a", cplx, None)],
     [complex_parts(np.fft.fft(as_complex, axis=2))], opset=20,
     initializers=[("ax", np.array(-2, np.int64))], tolerance=(1e-4, 1e-4))
audio, window = rand(2, 50, 1), rand(10)
frames = np.stack([audio[:, s:s + 10, 0] for s in range(0, 41, 4)], axis=1).astype(np.float64)
case("STFT_window", [n("STFT", ["a", "step", "w"], ["y0"])], [("a", audio, None), ("w", window, None)],
     [complex_parts(np.fft.rfft(frames * window, axis=2))], opset=17,
     initializers=[("step", np.array(4, np.int64))], tolerance=(1e-4, 1e-4))
case("STFT_two_sided", [n("STFT", ["a", "step", "", "len"], ["y0"], onesided=0)],
     [("a", audio, None)], [complex_parts(np.fft.fft(frames, axis=2))], opset=17,
     initializers=[("step", np.array(4, np.int64)), ("len", np.array(10, np.int64))],
     tolerance=(1e-4, 1e-4))

# Selections of constants: Compress (an axis, the flattened input, a
# condition shorter than the axis), ReverseSequence (both layouts),
# MaxUnpool of torch's max_pool2d indices (made whole-tensor, as ONNX's).
data = rand(3, 5, 4)
keep = np.array([1, 0, 1, 1], bool)
case("Compress_axis", [n("Compress", ["a", "c"], ["y0"], axis=1)], [("a", data, None)],
     [np.compress(keep, data, axis=1)], initializers=[("c", keep)])
case("Compress_flat", [n("Compress", ["a", "c"], ["y0"])], [("a", data, None)],
     [np.compress(keep, data)], initializers=[("c", keep)])
lens = np.array([2, 5, 1], np.int64)
reversed_batch = data.copy()
for b, length in enumerate(lens):
    reversed_batch[b, :length] = data[b, :length][::-1]
case("ReverseSequence_batch_first", [n("ReverseSequence", ["a", "l"], ["y0"], batch_axis=0,
                                       time_axis=1)],
     [("a", data, None)], [reversed_batch], initializers=[("l", lens)])
case("ReverseSequence_time_first", [n("ReverseSequence", ["a", "l"], ["y0"])],
     [("a", data.transpose(1, 0, 2).copy(), None)], [reversed_batch.transpose(1, 0, 2)],
     initializers=[("l", lens)])
planes = rand(2, 3, 6, 8)
pooled, plane_index = tf.max_pool2d(torch.from_numpy(planes), 2, 2, return_indices=True)
whole_index = plane_index.numpy() + (np.arange(6).reshape(2, 3, 1, 1) * 48)
case("MaxUnpool", [n("MaxUnpool", ["a", "i"], ["y0"], kernel_shape=[2, 2], strides=[2, 2])],
     [("a", pooled.numpy(), None)],
     [tf.max_unpool2d(pooled, plane_index, 2, 2).numpy()], initializers=[("i", whole_index)])

# MaxPool's Indices output (whole-tensor flat indices, as ONNX defines
# them) against torch's per-plane ones plus each plane's offset; column
# major per plane with storage_order=1.
pool_in = rand(2, 3, 9, 10)
for name, attrs, torch_args in [
        ("MaxPool_indices_strided_padded", dict(kernel_shape=[3, 3], strides=[2, 2],
                                                pads=[1, 1, 1, 1]), dict(stride=2, padding=1)),
        ("MaxPool_indices_dilated_ceil", dict(kernel_shape=[2, 3], strides=[2, 2], dilations=[2, 1],
                                              ceil_mode=1),
         dict(stride=2, dilation=(2, 1), ceil_mode=True))]:
    values, plane_index = tf.max_pool2d(torch.from_numpy(pool_in), tuple(attrs["kernel_shape"]),
                                        return_indices=True, **torch_args)
    offsets = np.arange(6).reshape(2, 3, 1, 1) * 90
    case(name, [n("MaxPool", ["a"], ["y0", "y1"], **attrs)], [("a", pool_in, None)],
         [values.numpy(), plane_index.numpy() + offsets], out_type=[F, I64])
values, plane_index = tf.max_pool2d(torch.from_numpy(pool_in), 2, 2, return_indices=True)
rows, cols = plane_index.numpy() // 10, plane_index.numpy() % 10
case("MaxPool_indices_column_major", [n("MaxPool", ["a"], ["y0", "y1"], kernel_shape=[2, 2],
                                        strides=[2, 2], storage_order=1)],
     [("a", pool_in, None)], [values.numpy(), cols * 9 + rows + offsets], out_type=[F, I64])

# Control flow resolved at import: an If with a constant condition (each
# branch reading outer values), a counted Loop with a scan output and a
# body initializer and outer input, a while Loop whose condition the body
# computes from the iteration number, a Scan along axis 1 read backwards
# with its outputs stacked along axis 1, and opset 8's batched Scan.
def graph(name, nodes, inputs, outputs, inits=()):
    value = lambda v: helper.make_tensor_value_info(v[0], v[1], v[2])
    return helper.make_graph(nodes, name, [value(i) for i in inputs],
                             [value(o) for o in outputs], list(inits))


B = TensorProto.BOOL
a, w = rand(3, 4), rand(3, 4)
then_branch = graph("then", [n("Mul", ["a", "two"], ["t"])], [], [("t", F, [3, 4])])
else_branch = graph("else", [n("Add", ["a", "two"], ["e"])], [], [("e", F, [3, 4])])
for taken in (True, False):
    case(f"If_{'then' if taken else 'else'}",
         [n("If", ["c"], ["y0"], then_branch=then_branch, else_branch=else_branch)],
         [("a", a, None)], [a * 2 if taken else a + 2],
         initializers=[("c", np.array(taken)), ("two", np.array(2, np.float32))])
half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
counted = graph("body", [n("Cast", ["i"], ["fi"], to=F), n("Mul", ["s", "half"], ["h"]),
                         n("Add", ["h", "fi"], ["s2"]), n("Identity", ["c"], ["c2"]),
                         n("Mul", ["s2", "w"], ["scan"])],
                [("i", I64, []), ("c", B, []), ("s", F, [3, 4])],
                [("c2", B, []), ("s2", F, [3, 4]), ("scan", F, [3, 4])], [half])
state, stacked = a.astype(np.float64), []
for i in range(5):
    state = state * 0.5 + i
    stacked.append(state * w)
case("Loop_counted_scan", [n("Loop", ["m", "", "a"], ["y0", "y1"], body=counted)],
     [("a", a, None), ("w", w, None)], [f32(state), f32(np.stack(stacked))],
     initializers=[("m", np.array(5, np.int64))])
one = numpy_helper.from_array(np.array(1, np.int64), "one")
three = numpy_helper.from_array(np.array(3, np.int64), "three")
whiled = graph("body", [n("Add", ["i", "one"], ["next"]), n("Less", ["next", "three"], ["c2"]),
                        n("Cast", ["i"], ["fi"], to=F), n("Add", ["s", "fi"], ["s2"])],
               [("i", I64, []), ("c", B, []), ("s", F, [3, 4])],
               [("c2", B, []), ("s2", F, [3, 4])], [one, three])
case("Loop_while", [n("Loop", ["", "go", "a"], ["y0"], body=whiled)], [("a", a, None)],
     [a + 0 + 1 + 2], initializers=[("go", np.array(True))])
summed = graph("body", [n("Add", ["s", "x"], ["s2"]), n("Mul", ["s2", "two"], ["out"])],
               [("s", F, [4]), ("x", F, [4])], [("s2", F, [4]), ("out", F, [4])])
h0, xs = rand(4), rand(4, 6)
running, outs = h0.astype(np.float64), []
for t in reversed(range(6)):
    running = running + xs[:, t]
    outs.append(running * 2)
case("Scan_reversed_axis1", [n("Scan", ["h", "xs"], ["y0", "y1"], body=summed, num_scan_inputs=1,
                               scan_input_axes=[1], scan_input_directions=[1],
                               scan_output_axes=[1])],
     [("h", h0, None), ("xs", xs, None)], [f32(running), f32(np.stack(outs, axis=1))],
     initializers=[("two", np.array(2, np.float32))], tolerance=(1e-5, 1e-6))
batched = graph("body", [n("Add", ["s", "x"], ["s2"]), n("Identity", ["s2"], ["out"])],
                [("s", F, [3]), ("x", F, [3])], [("s2", F, [3]), ("out", F, [3])])
h8, x8 = rand(2, 3), rand(2, 5, 3)
case("Scan_opset8_batched", [n("Scan", ["", "h", "xs"], ["y0", "y1"], body=batched,
                               num_scan_inputs=1)],
     [("h", h8, None), ("xs", x8, None)],
     [f32(h8 + x8.sum(axis=1)), f32(h8[:, None] + np.cumsum(x8.astype(np.float64), axis=1))],
     opset=8, tolerance=(1e-5, 1e-6))

# QDQ products (what exporters write for a quantized MatMul or Linear): the
# importer multiplies the 8-bit values in i32 and scales once. Against the
# exact integer product in numpy; per-tensor and per-column scales, zero
# and non-zero zero points, Gemm's transposed weights and bias, the output
# quantized again; and the float fallback when a scale runs along K.


def quantize(x, scale, zero, lo=0, hi=255):
    return np.clip(np.round(x.astype(np.float32) / scale) + zero, lo, hi)


xs, xz = np.float32(0.05), np.uint8(131)
qx = rand(2, 5, 70)
qw = np.random.default_rng(5).integers(-128, 128, (70, 33)).astype(np.int8)
qws = np.random.default_rng(6).uniform(0.001, 0.01, 33).astype(np.float32)
qwz = np.random.default_rng(7).integers(-3, 4, 33).astype(np.int8)
xq = quantize(qx, xs, xz).astype(np.int64)
quantized_in = [n("QuantizeLinear", ["a", "xs", "xz"], ["aq"]),
                n("DequantizeLinear", ["aq", "xs", "xz"], ["af"])]
for name, zero in (("symmetric", np.zeros(33, np.int8)), ("shifted", qwz)):
    exact = (xq - int(xz)) @ (qw.astype(np.int64) - zero.astype(np.int64))
    case(f"QDQ_MatMul_{name}",
         quantized_in + [n("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=1),
                         n("MatMul", ["af", "wf"], ["y0"])],
         [("a", qx, None)], [exact.astype(np.float32) * (xs * qws)],
         initializers=[("xs", np.array(xs)), ("xz", np.array(xz)), ("w", qw), ("ws", qws),
                       ("wz", zero)], tolerance=(1e-5, 1e-6))
wt = np.ascontiguousarray(qw.T)
bias = rand(33)
ys, yz = np.float32(0.2), np.uint8(120)
exact = (xq[0] - int(xz)) @ qw.astype(np.int64)
gemm = exact.astype(np.float32) * (xs * qws) + bias
case("QDQ_Gemm_transposed_requantized",
     quantized_in + [n("DequantizeLinear", ["w", "ws"], ["wf"], axis=0),
                     n("Gemm", ["af", "wf", "c"], ["g"], transB=1),
                     n("QuantizeLinear", ["g", "ys", "yz"], ["gq"]),
                     n("DequantizeLinear", ["gq", "ys", "yz"], ["y0"])],
     [("a", qx[0], None)], [((quantize(gemm, ys, yz) - int(yz)) * ys).astype(np.float32)],
     initializers=[("xs", np.array(xs)), ("xz", np.array(xz)), ("w", wt), ("ws", qws),
                   ("c", bias), ("ys", np.array(ys)), ("yz", np.array(yz))],
     tolerance=(1e-5, 1e-6))
kscale = np.random.default_rng(8).uniform(0.001, 0.01, 70).astype(np.float32)
case("QDQ_MatMul_scale_along_k_runs_in_floats",
     quantized_in + [n("DequantizeLinear", ["w", "ws"], ["wf"], axis=0),
                     n("MatMul", ["af", "wf"], ["y0"]), n("Relu", ["af"], ["y1"])],
     [("a", qx, None)],
     [((xq - int(xz)) * xs).astype(np.float32) @ (qw.astype(np.float32) * kscale[:, None]),
      np.maximum((xq - int(xz)) * xs, 0).astype(np.float32)],
     initializers=[("xs", np.array(xs)), ("xz", np.array(xz)), ("w", qw), ("ws", kscale)],
     tolerance=(1e-5, 1e-5))
# A QDQ convolution, per-output-channel weight scales and zero points: the
# weights are dequantized at import (constants), against the exact integer
# convolution in torch (f64), scaled.
cx = rand(2, 3, 9, 8)
cw = np.random.default_rng(13).integers(-128, 128, (5, 3, 3, 3)).astype(np.int8)
cws = np.random.default_rng(14).uniform(0.001, 0.01, 5).astype(np.float32)
cwz = np.random.default_rng(15).integers(-3, 4, 5).astype(np.int8)
cxq = quantize(cx, xs, xz) - int(xz)
cexact = tf.conv2d(torch.from_numpy(cxq.astype(np.float64)),
                   torch.from_numpy((cw.astype(np.int64) - cwz[:, None, None, None]).astype(
                       np.float64)), stride=2, padding=1).numpy()
cbias = rand(5)
case("QDQ_Conv_per_channel_weights",
     quantized_in + [n("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
                     n("Conv", ["af", "wf", "c"], ["y0"], pads=[1, 1, 1, 1], strides=[2, 2])],
     [("a", cx, None)],
     [f32(cexact * (np.float64(xs) * cws[None, :, None, None].astype(np.float64)) +
          cbias[None, :, None, None])],
     initializers=[("xs", np.array(xs)), ("xz", np.array(xz)), ("w", cw), ("ws", cws),
                   ("wz", cwz), ("c", cbias)], tolerance=(1e-5, 1e-5))
# Symmetric weights (zero points 0), as PyTorch quantizes them: the
# convolution runs on the 8-bit values (the image padded with its zero
# point, asymmetrically here), against the same exact convolution.
sexact = tf.conv2d(tf.pad(torch.from_numpy(cxq.astype(np.float64)), (0, 1, 1, 2)),
                   torch.from_numpy(cw.astype(np.float64))).numpy()
case("QDQ_Conv_symmetric_weights_in_int8",
     quantized_in + [n("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
                     n("Conv", ["af", "wf", "c"], ["cv"], pads=[1, 0, 2, 1]),
                     n("Relu", ["cv"], ["y0"])],
     [("a", cx, None)],
     [f32(np.maximum(sexact * (np.float64(xs) * cws[None, :, None, None].astype(np.float64)) +
                     cbias[None, :, None, None], 0))],
     initializers=[("xs", np.array(xs)), ("xz", np.array(xz)), ("w", cw), ("ws", cws),
                   ("wz", np.zeros(5, np.int8)), ("c", cbias)], tolerance=(1e-5, 1e-5))
# MatMulInteger with a zero point per row of a and per column of b.
ia = np.random.default_rng(9).integers(0, 256, (6, 40)).astype(np.uint8)
ib = np.random.default_rng(10).integers(-128, 128, (40, 9)).astype(np.int8)
iaz = np.random.default_rng(11).integers(0, 256, 6).astype(np.uint8)
ibz = np.random.default_rng(12).integers(-128, 128, 9).astype(np.int8)
case("MatMulInteger_row_and_column_zero_points",
     [n("MatMulInteger", ["a", "b", "az", "bz"], ["y0"])], [("a", ia, None)],
     [((ia.astype(np.int64) - iaz[:, None]) @ (ib.astype(np.int64) - ibz)).astype(np.int32)],
     initializers=[("b", ib), ("az", iaz), ("bz", ibz)], out_type=TensorProto.INT32)

finish()
