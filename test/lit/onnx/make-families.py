#!/usr/bin/python3
"""Writes one small ONNX model per op family the importer composes from IR
ops (recurrent, quantized, scatter/gather, selection, normalization,
optimizer, wide-integer and bit ops, sampling, spectral, control flow) into
argv[1]: seeds for the
onnx-import fuzzer, and models test/lit/onnx/families.test plans."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(5)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def save(name, nodes, inputs, outputs, inits=(), opsets=(("", 17),)):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs], list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    onnx.save(model, os.path.join(out, name + ".onnx"))


def weights(*shape):
    return rng.standard_normal(shape).astype(np.float32)


n = helper.make_node
save("lstm", [n("LSTM", ["x", "w", "r", "b"], ["y", "h", "c"], hidden_size=4,
                direction="bidirectional")],
     [("x", F, [5, 2, 3])], [("y", F, None), ("h", F, None), ("c", F, None)],
     [const("w", weights(2, 16, 3)), const("r", weights(2, 16, 4)), const("b", weights(2, 32))])
save("gru", [n("GRU", ["x", "w", "r"], ["y"], hidden_size=4, linear_before_reset=1, layout=1)],
     [("x", F, [2, 5, 3])], [("y", F, None)],
     [const("w", weights(1, 12, 3)), const("r", weights(1, 12, 4))])
save("rnn", [n("RNN", ["x", "w", "r", "", "lens"], ["y", "h"], hidden_size=4)],
     [("x", F, [5, 2, 3])], [("y", F, None), ("h", F, None)],
     [const("w", weights(1, 4, 3)), const("r", weights(1, 4, 4)),
      const("lens", np.array([5, 3], np.int32))])
save("qdq_matmul", [n("QuantizeLinear", ["x", "s", "z"], ["q"]),
                    n("QLinearMatMul", ["q", "s", "z", "wq", "ws", "wz", "s", "z"], ["qy"]),
                    n("DequantizeLinear", ["qy", "s", "z"], ["y"])],
     [("x", F, [3, 4])], [("y", F, None)],
     [const("s", np.float32(0.05)), const("z", np.uint8(128)),
      const("wq", rng.integers(0, 255, (4, 5), dtype=np.uint8)), const("ws", np.float32(0.02)),
      const("wz", np.uint8(120))])
# The QDQ form PyTorch writes for linear layers (DequantizeLinear, then a
# Transpose of the weights, MatMul), and Gemm: integer products.
save("qdq_linear", [n("QuantizeLinear", ["x", "s", "z"], ["q"]),
                    n("DequantizeLinear", ["q", "s", "z"], ["xf"]),
                    n("DequantizeLinear", ["wq", "ws"], ["wf"], axis=0),
                    n("Transpose", ["wf"], ["wt"]), n("MatMul", ["xf", "wt"], ["m"]),
                    n("Gemm", ["xf", "wf"], ["g"], transB=1), n("Add", ["m", "g"], ["y"])],
     [("x", F, [3, 4])], [("y", F, None)],
     [const("s", np.float32(0.05)), const("z", np.uint8(128)),
      const("wq", rng.integers(-128, 127, (5, 4), dtype=np.int8)),
      const("ws", rng.uniform(0.01, 0.02, 5).astype(np.float32))])


def save_qdq_conv(name, weight_zero_points):
    save(name, [n("QuantizeLinear", ["x", "s", "z"], ["q"]),
                n("DequantizeLinear", ["q", "s", "z"], ["xf"]),
                n("DequantizeLinear", ["wq", "ws", "wz"], ["wf"], axis=0),
                n("Conv", ["xf", "wf", "b"], ["y"], pads=[1, 1, 1, 1])],
         [("x", F, [1, 2, 5, 5])], [("y", F, None)],
         [const("s", np.float32(0.05)), const("z", np.uint8(128)),
          const("wq", rng.integers(-128, 127, (3, 2, 3, 3), dtype=np.int8)),
          const("ws", rng.uniform(0.01, 0.02, 3).astype(np.float32)),
          const("wz", np.array(weight_zero_points, np.int8)), const("b", weights(3))])


# A QDQ convolution whose weights' zero points are not 0 runs in floats: the
# weights' DequantizeLinear (per output channel) is computed at import, so
# the plan holds f32 weights and no per-run dequantization of them.
save_qdq_conv("qdq_conv", [0, 3, -2])
# With symmetric weights (zero point 0) it convolves the 8-bit values: the
# image padded with its zero point, an 8-bit conv2d, the zero point's term,
# one scale per output channel.
save_qdq_conv("qdq_conv_int8", [0, 0, 0])
save("conv_integer", [n("ConvInteger", ["x", "w", "xz"], ["y"], pads=[1, 1, 1, 1])],
     [("x", TensorProto.UINT8, [1, 2, 5, 5])], [("y", TensorProto.INT32, None)],
     [const("w", rng.integers(0, 255, (3, 2, 3, 3), dtype=np.uint8)), const("xz", np.uint8(3))],
     opsets=(("", 10),))
save("scatter_gather", [n("ScatterND", ["x", "i", "u"], ["s"], reduction="add"),
                        n("GatherND", ["s", "i"], ["g"]),
                        n("ScatterElements", ["x", "e", "v"], ["t"], axis=1),
                        n("TopK", ["t", "k"], ["values", "indices"], axis=1)],
     [("x", F, [4, 3])], [("g", F, None), ("values", F, None), ("indices", I64, None)],
     [const("i", np.array([[1], [3]], np.int64)), const("u", weights(2, 3)),
      const("e", np.array([[2, 0], [1, 1], [0, 2], [2, 1]], np.int64)), const("v", weights(4, 2)),
      const("k", np.array([2], np.int64))], opsets=(("", 18),))
save("normalizations", [n("InstanceNormalization", ["x", "sc", "bi"], ["a"]),
                        n("LRN", ["a"], ["b"], size=3),
                        n("DepthToSpace", ["b"], ["c"], blocksize=2, mode="CRD"),
                        n("MaxPool", ["c"], ["y"], kernel_shape=[3, 3], pads=[2, 2, 2, 2])],
     [("x", F, [1, 4, 3, 3])], [("y", F, None)],
     [const("sc", weights(4)), const("bi", weights(4))])
save("adam", [n("Adam", ["r", "t", "x", "g", "v", "h"], ["x2", "v2", "h2"], alpha=0.9,
                domain="ai.onnx.preview.training")],
     [("r", F, []), ("x", F, [3]), ("g", F, [3]), ("v", F, [3]), ("h", F, [3])],
     [("x2", F, None), ("v2", F, None), ("h2", F, None)], [const("t", np.int64(2))],
     opsets=(("ai.onnx.preview.training", 1),))
save("bits", [n("BitShift", ["a", "b"], ["s"], direction="RIGHT"), n("Max", ["s", "a"], ["y"])],
     [("a", TensorProto.UINT32, [6]), ("b", TensorProto.UINT32, [6])],
     [("y", TensorProto.UINT32, None)], opsets=(("", 11),))
save("window", [n("HannWindow", ["size"], ["w"]), n("Acos", ["x"], ["a"]),
                n("Mul", ["w", "a"], ["y"])],
     [("x", F, [8])], [("y", F, None)], [const("size", np.int64(8))])
save("sampling", [n("GridSample", ["x", "g"], ["s"], mode="bicubic", padding_mode="reflection"),
                  n("MaxPool", ["v"], ["p"], kernel_shape=[2, 2, 2], pads=[1, 0, 0, 1, 1, 1]),
                  n("Det", ["m"], ["d"])],
     [("x", F, [1, 2, 4, 5]), ("g", F, [1, 3, 3, 2]), ("v", F, [1, 2, 3, 4, 4]),
      ("m", F, [2, 3, 3])], [("s", F, None), ("p", F, None), ("d", F, None)], opsets=(("", 16),))
save("spectral", [n("STFT", ["x", "step", "w"], ["s"]), n("DFT", ["s"], ["d"], axis=2, inverse=1)],
     [("x", F, [1, 32, 1]), ("w", F, [8])], [("d", F, None)], [const("step", np.int64(4))])
save("selections", [n("Compress", ["x", "c"], ["k"], axis=1),
                    n("ReverseSequence", ["k", "l"], ["r"], batch_axis=0, time_axis=1),
                    n("MaxUnpool", ["x", "i"], ["u"], kernel_shape=[1, 2], strides=[1, 2])],
     [("x", F, [1, 3, 1, 4])], [("r", F, None), ("u", F, None)],
     [const("c", np.array([1, 0, 1], bool)), const("l", np.array([2], np.int64)),
      const("i", np.array([[[[1, 2, 5, 7]], [[8, 11, 13, 14]], [[17, 18, 20, 23]]]], np.int64))])

def body(name, nodes, inputs, outputs, inits=()):
    value = lambda v: helper.make_tensor_value_info(*v)
    return helper.make_graph(nodes, name, [value(i) for i in inputs], [value(o) for o in outputs],
                             list(inits))


B = TensorProto.BOOL
save("control_flow",
     [n("If", ["yes"], ["i"], then_branch=body("then", [n("Relu", ["x"], ["t"])], [],
                                               [("t", F, [2, 3])]),
        else_branch=body("else", [n("Neg", ["x"], ["e"])], [], [("e", F, [2, 3])])),
      n("Loop", ["three", "", "i"], ["l", "ls"],
        body=body("loop", [n("Cast", ["k"], ["fk"], to=F), n("Add", ["s", "fk"], ["s2"]),
                           n("Identity", ["c"], ["c2"]), n("Identity", ["s2"], ["out"])],
                  [("k", I64, []), ("c", B, []), ("s", F, [2, 3])],
                  [("c2", B, []), ("s2", F, [2, 3]), ("out", F, [2, 3])])),
      n("Scan", ["h", "l"], ["sh", "so"], num_scan_inputs=1,
        body=body("scan", [n("Mul", ["a", "b"], ["ab"]), n("Identity", ["ab"], ["o"])],
                  [("a", F, [3]), ("b", F, [3])], [("ab", F, [3]), ("o", F, [3])]))],
     [("x", F, [2, 3]), ("h", F, [3])], [("ls", F, None), ("sh", F, None), ("so", F, None)],
     [const("yes", np.array(True)), const("three", np.int64(3))])
# A scatter into data with no rows (its strides were once divided out of
# the element count, a division by zero).
save("empty_scatter", [n("ScatterND", ["x", "i", "u"], ["y"], reduction="add")],
     [("x", F, [0, 3])], [("y", F, None)],
     [const("i", np.zeros((1, 1), np.int64)), const("u", np.zeros((1, 3), np.float32))],
     opsets=(("", 18),))
