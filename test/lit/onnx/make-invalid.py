#!/usr/bin/python3
"""Writes the bad ONNX models of invalid.test into the directory argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)


S = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])


def save(name, nodes, opset=13, inits=(), outputs=("y",), inputs=(X,), domains=()):
    graph = helper.make_graph(nodes, name, list(inputs),
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                               for o in outputs], list(inits))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    onnx.save(helper.make_model(graph, opset_imports=opsets), os.path.join(out, name + ".onnx"))


n = helper.make_node
# Three independent problems, and readers of their outputs (not reported).
save("unsupported", [n("Bernoulli", ["x"], ["e"]), n("Relu", ["e"], ["e2"]),
                     n("Add", ["shape", "shape"], ["s2"]), n("Reshape", ["x", "s2"], ["r"]),
                     n("Dropout", ["x", "", "training"], ["m"]),
                     n("Add", ["e2", "m"], ["y"])], outputs=("y", "r"), inputs=(X, S),
     inits=[numpy_helper.from_array(np.array(True), "training")])
# Relu kept its meaning since opset 6; Pad took its pads as an attribute
# before opset 11.
save("opset", [n("Relu", ["x"], ["r"]), n("Pad", ["r"], ["y"], pads=[0, 0, 1, 1, 0, 0, 1, 1])],
     opset=9)
save("opset22", [n("Relu", ["x"], ["y"])], opset=22)
# Opset 18-21 signatures fuelc reads but whose values it cannot take.
save("opset21_refused", [n("AveragePool", ["x"], ["a"], kernel_shape=[2, 2], dilations=[2, 2]),
                         n("Resize", ["x", "", "sc"], ["r"], mode="linear", antialias=1),
                         n("Split", ["x"], ["s0", "s1", "s2"], axis=1, num_outputs=2),
                         n("GroupNormalization", ["x", "gs", "gb"], ["y"], num_groups=3),
                         n("Resize", ["x", "", "tiny"], ["z"], mode="linear")],
     opset=21, inits=[numpy_helper.from_array(np.array([1, 1, 0.5, 0.5], np.float32), "sc"),
                      numpy_helper.from_array(np.array([1, 1, 0.1, 0.1], np.float32), "tiny"),
                      numpy_helper.from_array(np.ones(3, np.float32), "gs"),
                      numpy_helper.from_array(np.zeros(3, np.float32), "gb")],
     outputs=("a", "r", "s0", "y", "z"))
strings = helper.make_tensor("s", TensorProto.STRING, [1], [b"a"])
save("dtype", [n("Relu", ["x"], ["y"])], inits=[strings])
# What the ops built from IR ops refuse, each reported in one run.
IDX = helper.make_tensor_value_info("idx", TensorProto.INT64, [3])
save("composed", [n("Resize", ["x", "", "scales"], ["r"], mode="area"),
                  n("GatherElements", ["x", "idx"], ["g"], axis=1),
                  n("ConvTranspose", ["x", "wt"], ["c"]),
                  n("OneHot", ["idx", "depth", "vals"], ["o"]),
                  n("Resize", ["x", "", "huge"], ["h"]),
                  n("Add", ["r", "c"], ["y"])],
     inputs=(X, IDX, helper.make_tensor_value_info("depth", TensorProto.FLOAT, [])),
     inits=[numpy_helper.from_array(np.ones(4, np.float32), "scales"),
            numpy_helper.from_array(np.ones(2, np.float32), "vals"),
            numpy_helper.from_array(np.ones((2, 1, 3), np.float32), "wt"),
            numpy_helper.from_array(np.array([1, 1, 1e30, 1], np.float32), "huge")],
     outputs=("y", "g", "o", "h"))
# The composed families' refusals, each reported in one run: an LSTM over a
# symbolic sequence (it is unrolled), a quantized type fuelc lacks, a zero
# point shaped unlike its scale, a 1-D integer convolution, window
# attributes of the wrong length (two pads for a 2-D window, three strides),
# a BitShift on signed integers, TopK's K beyond the axis, reverse sequences
# shorter than the sequence, a scatter reduction ONNX does not define, an
# optimizer step count that is not a constant.
T = helper.make_tensor_value_info("seq", TensorProto.FLOAT, ["T", 2, 3])
I = helper.make_tensor_value_info("ints", TensorProto.INT32, [4])
save("families", [n("LSTM", ["seq", "w", "r"], ["l"], hidden_size=2),
                  n("QuantizeLinear", ["x", "scale", "zp16"], ["q"]),
                  n("DequantizeLinear", ["q8", "scale", "zpvec"], ["dq"]),
                  n("ConvInteger", ["x1d", "w1d"], ["ci"]),
                  n("ConvInteger", ["x2d", "w2d", "q8"], ["cp"], pads=[1, 1]),
                  n("MaxPool", ["x"], ["mp"], kernel_shape=[2, 2], strides=[2, 2, 2]),
                  n("BitShift", ["ints", "ints"], ["b"], direction="LEFT"),
                  n("TopK", ["x", "k"], ["t", "ti"]),
                  n("RNN", ["x3", "rw", "rr", "", "lens"], ["rn"], hidden_size=2,
                    direction="reverse"),
                  n("ScatterElements", ["x", "sidx", "x"], ["s"], reduction="avg"),
                  n("Momentum", ["scale", "step", "x", "x", "x"], ["m", "mv"],
                    domain="ai.onnx.preview.training")],
     inputs=(X, T, I, helper.make_tensor_value_info("step", TensorProto.INT64, [])),
     inits=[numpy_helper.from_array(np.ones((1, 8, 3), np.float32), "w"),
            numpy_helper.from_array(np.ones((1, 8, 2), np.float32), "r"),
            numpy_helper.from_array(np.float32(0.1), "scale"),
            numpy_helper.from_array(np.int16(0), "zp16"),
            numpy_helper.from_array(np.uint8(3), "q8"),
            numpy_helper.from_array(np.array([1], np.uint8), "zpvec"),
            numpy_helper.from_array(np.ones((1, 2, 5), np.uint8), "x1d"),
            numpy_helper.from_array(np.ones((3, 2, 3), np.uint8), "w1d"),
            numpy_helper.from_array(np.ones((1, 2, 5, 5), np.uint8), "x2d"),
            numpy_helper.from_array(np.ones((3, 2, 3, 3), np.uint8), "w2d"),
            numpy_helper.from_array(np.array([9], np.int64), "k"),
            numpy_helper.from_array(np.ones((3, 2, 3), np.float32), "x3"),
            numpy_helper.from_array(np.ones((1, 2, 3), np.float32), "rw"),
            numpy_helper.from_array(np.ones((1, 2, 2), np.float32), "rr"),
            numpy_helper.from_array(np.array([3, 1], np.int32), "lens"),
            numpy_helper.from_array(np.zeros((1, 2, 4, 4), np.int64), "sidx")],
     outputs=("l", "q", "dq", "ci", "cp", "mp", "b", "t", "rn", "s", "m"), opset=18,
     domains=("ai.onnx.preview.training",))
# Selections known at import and the sampling, spectral and 3-D pooling
# ops, each refusal reported in one run: a condition that is not a
# constant, a sequence length past the sequence, an unpooling index past
# the output, a 3-D grid, an unknown mode, a 5x5 determinant, a DFT along
# the parts axis, frames longer than the signal, inverted Mel edges, Mel
# edges past 2^53 DFT bins, a 3-D pooling over symbolic extents, the
# non-zero elements of zeros, the unique values of a run-time input, boxes
# of three coordinates, a scatter into data empty along its axis (the
# ONNX-import fuzzer found it dividing by zero).
i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
f32 = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
save("selections", [n("Compress", ["x", "cond"], ["c"], axis=1),
                    n("ReverseSequence", ["x", "lens"], ["rs"]),
                    n("MaxUnpool", ["x", "uidx"], ["u"], kernel_shape=[2, 2], strides=[2, 2]),
                    n("GridSample", ["x", "grid3"], ["g"]),
                    n("GridSample", ["x", "grid2"], ["gm"], mode="area"),
                    n("Det", ["m5"], ["d"]),
                    n("DFT", ["sig"], ["f"], axis=2),
                    n("STFT", ["sig", "one", "", "n64"], ["st"]),
                    n("MelWeightMatrix", ["n64", "n64", "n64", "hi", "lo"], ["mw"]),
                    n("MelWeightMatrix", ["n64", "n64", "n64", "lo", "far"], ["mwfar"]),
                    n("MaxPool", ["vol"], ["p3"], kernel_shape=[2, 2, 2]),
                    n("NonZero", ["zeros"], ["nz"]), n("Unique", ["x"], ["uq"]),
                    n("NonMaxSuppression", ["box3", "sc3"], ["nms"]),
                    n("ScatterElements", ["empty", "eidx", "empty"], ["se"])],
     inputs=(X, helper.make_tensor_value_info("cond", TensorProto.BOOL, [2]),
             helper.make_tensor_value_info("vol", TensorProto.FLOAT, [1, 1, "D", 4, 4]),
             helper.make_tensor_value_info("empty", TensorProto.FLOAT, [0, 3]),
             helper.make_tensor_value_info("eidx", TensorProto.INT64, [0, 3])),
     inits=[i64("lens", [9, 1]), i64("uidx", np.full((1, 2, 4, 4), 999)),
            f32("grid3", np.zeros((1, 2, 2, 3))), f32("grid2", np.zeros((1, 2, 2, 2))),
            f32("m5", np.eye(5)), f32("sig", np.zeros((1, 16, 1))), i64("one", 1),
            i64("n64", 64), f32("hi", 100), f32("lo", 10), f32("far", 1e30),
            f32("zeros", np.zeros((2, 3))), f32("box3", np.zeros((1, 2, 3))),
            f32("sc3", np.zeros((1, 1, 2)))],
     outputs=("c", "rs", "u", "g", "gm", "d", "f", "st", "mw", "mwfar", "p3", "nz", "uq", "nms",
              "se"),
     opset=18)
# Control flow fuelc cannot resolve at import, each reported in one run: an
# If on a run-time condition, a Loop whose body computes its condition from
# run-time data, a Loop with neither trip count nor condition, a Loop past
# the unrolling bound, Ifs nested past 16 levels; opset 8's Scan with
# sequence lengths.
B = TensorProto.BOOL
body_value = lambda name, elem, shape: helper.make_tensor_value_info(name, elem, shape)
branch = helper.make_graph([n("Identity", ["x"], ["b"])], "branch", [],
                           [body_value("b", TensorProto.FLOAT, [1, 2, 4, 4])])
data_cond = helper.make_graph(
    [n("ReduceSum", ["s"], ["r"], keepdims=0), n("Less", ["r", "zero"], ["c2"]),
     n("Identity", ["s"], ["s2"])], "body",
    [body_value("i", TensorProto.INT64, []), body_value("c", B, []),
     body_value("s", TensorProto.FLOAT, [1, 2, 4, 4])],
    [body_value("c2", B, []), body_value("s2", TensorProto.FLOAT, [1, 2, 4, 4])],
    [numpy_helper.from_array(np.array(0, np.float32), "zero")])
nested = branch
for level in range(17):
    nested = helper.make_graph([n("If", ["yes"], [f"n{level}"], then_branch=nested,
                                  else_branch=nested)], f"level{level}", [],
                               [body_value(f"n{level}", TensorProto.FLOAT, [1, 2, 4, 4])])
save("control_flow", [n("If", ["flag"], ["i"], then_branch=branch, else_branch=branch),
                      n("Loop", ["", "yes", "x"], ["l"], body=data_cond),
                      n("Loop", ["", "", "x"], ["e"], body=data_cond),
                      n("Loop", ["many", "", "x"], ["m"], body=data_cond),
                      n("If", ["yes"], ["d"], then_branch=nested, else_branch=nested)],
     inputs=(X, helper.make_tensor_value_info("flag", B, [])),
     inits=[numpy_helper.from_array(np.array(True), "yes"),
            numpy_helper.from_array(np.array(5000, np.int64), "many")],
     outputs=("i", "l", "e", "m", "d"))
# Loops within the bounds one by one whose unrolling, nested, would import
# half a million nodes (past 2^16): the import-wide subgraph budget stops them.
inner = helper.make_graph([n("Identity", ["s"], ["s2"])], "inner",
                          [body_value("j", TensorProto.INT64, []), body_value("c", B, []),
                           body_value("s", TensorProto.FLOAT, [1, 2, 4, 4])],
                          [body_value("c", B, []), body_value("s2", TensorProto.FLOAT, [1, 2, 4, 4])])
outer = helper.make_graph([n("Loop", ["inner_trips", "", "s"], ["s2"], body=inner)], "outer",
                          [body_value("i", TensorProto.INT64, []), body_value("c", B, []),
                           body_value("s", TensorProto.FLOAT, [1, 2, 4, 4])],
                          [body_value("c", B, []), body_value("s2", TensorProto.FLOAT, [1, 2, 4, 4])])
save("nested_loops", [n("Loop", ["outer_trips", "", "x"], ["y"], body=outer)],
     inits=[numpy_helper.from_array(np.array(4096, np.int64), "outer_trips"),
            numpy_helper.from_array(np.array(128, np.int64), "inner_trips")])
# Constants the importer would build past 2^22 elements: a window, an
# identity matrix, one-hot positions.
save("built_constants", [n("HannWindow", ["length"], ["w"]), n("EyeLike", ["big"], ["e"]),
                         n("OneHot", ["idx", "depth", "values"], ["o"])],
     inputs=(helper.make_tensor_value_info("big", TensorProto.FLOAT, [4096, 2048]),
             helper.make_tensor_value_info("idx", TensorProto.INT64, [3])),
     inits=[numpy_helper.from_array(np.array(2**22 + 1, np.int64), "length"),
            numpy_helper.from_array(np.array(2**22 + 1, np.int64), "depth"),
            numpy_helper.from_array(np.array([0, 1], np.float32), "values")],
     outputs=("w", "e", "o"), opset=17)
# A ConstantOfShape of 2^44 elements is not folded into a constant (the
# element count overflowed the 2^24 bound once, and the fold never ended):
# it stays a broadcast, and planning it says the runtime cannot take it.
save("huge_constant_of_shape",
     [n("ConstantOfShape", ["extents"], ["y"],
        value=numpy_helper.from_array(np.array([1.5], np.float32)))],
     inputs=(), inits=[numpy_helper.from_array(np.array([2**24, 2**20], np.int64), "extents")])
# RoiAlign's forms fuelc refuses: a mode ONNX lacks, and an adaptive
# sample count.
roi_inits = [numpy_helper.from_array(np.array([[0, 0, 2, 2]], np.float32), "rois"),
             numpy_helper.from_array(np.array([0], np.int64), "batch")]
save("roialign_refused", [n("RoiAlign", ["x", "rois", "batch"], ["m"], mode="sum",
                            sampling_ratio=2),
                          n("RoiAlign", ["x", "rois", "batch"], ["y"])],
     inits=roi_inits, outputs=("m", "y"), opset=16)
summed = helper.make_graph([n("Add", ["s", "v"], ["s2"])], "body",
                           [body_value("s", TensorProto.FLOAT, [3]),
                            body_value("v", TensorProto.FLOAT, [3])],
                           [body_value("s2", TensorProto.FLOAT, [3])])
save("scan8_lengths", [n("Scan", ["lens", "h", "xs"], ["y"], body=summed, num_scan_inputs=1)],
     inits=[numpy_helper.from_array(np.array([4], np.int32), "lens"),
            numpy_helper.from_array(np.zeros((1, 3), np.float32), "h"),
            numpy_helper.from_array(np.zeros((1, 5, 3), np.float32), "xs")], opset=8)
# A key/value cache that grows by concatenation: its extent `P + 1` is a
# sum of symbols, which fuelc's dims cannot hold (sequence_models.py shows
# the fixed-capacity cache it takes instead).
save("growing_cache", [n("Concat", ["past", "new"], ["y"], axis=2)],
     inputs=(helper.make_tensor_value_info("past", TensorProto.FLOAT, ["B", 2, "P", 8]),
             helper.make_tensor_value_info("new", TensorProto.FLOAT, ["B", 2, 1, 8])))
# Constant inputs that must hold one value but are empty (each threw
# std::out_of_range out of the importer once).
empty = numpy_helper.from_array(np.zeros(0, np.float32), "empty")
empty_i = numpy_helper.from_array(np.zeros(0, np.int64), "empty_i")
save("empty_scalars", [n("Pad", ["x", "pads", "empty"], ["p"]),
                       n("CumSum", ["x", "empty_i"], ["c"]),
                       n("Trilu", ["x", "empty_i"], ["t"]),
                       n("TopK", ["x", "empty_i"], ["k", "ki"]),
                       n("Clip", ["x", "empty"], ["y"])],
     inits=[empty, empty_i, numpy_helper.from_array(np.zeros(8, np.int64), "pads")],
     outputs=("p", "c", "t", "k", "y"), opset=18)
# Einsum equations fuelc refuses, each reported in one run.
save("einsum", [n("Einsum", ["x"], ["d"], equation="aaij->aij"),
                n("Einsum", ["x"], ["l"], equation="i1->i"),
                n("Einsum", ["x", "x"], ["c"], equation="ij->ij"),
                n("Einsum", ["x"], ["r"], equation="ijk->i")],
     opset=12, outputs=("d", "l", "c", "r"))
# Extents of a symbolic batch used as data, not as a shape.
XB = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
save("symbolic_data", [n("Shape", ["x"], ["s"]), n("Cast", ["s"], ["f"], to=TensorProto.FLOAT),
                       n("Add", ["x", "f"], ["y"])], inputs=(XB,))
