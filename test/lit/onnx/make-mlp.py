#!/usr/bin/python3
"""Writes mlp.onnx (Gemm + Relu + Gemm + Softmax, a dynamic batch) into argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(3)
inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), name)
         for name, s in [("fc1.weight", (16, 8)), ("fc1.bias", (16,)),
                         ("fc2.weight", (4, 16)), ("fc2.bias", (4,))]]
nodes = [helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], transB=1),
         helper.make_node("Relu", ["h"], ["a"]),
         helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["z"], transB=1),
         helper.make_node("Softmax", ["z"], ["y"], axis=1)]
graph = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
                          inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(sys.argv[1], "mlp.onnx"))
