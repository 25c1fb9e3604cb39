"""The harness of the check-onnx*.py scripts: an ONNX model built with
onnx.helper, imported by fuelc, planned for the CPU and run by fuel-run on
random inputs, its outputs compared with a reference computed by the
script (numpy, torch).

Reads FUELC FUEL_RUN WORKDIR from the command line; `finish()` prints
"N passed, M failed" and exits 1 on a failure.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FUELC, FUEL_RUN, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(11)
passed, failed = 0, 0
n = helper.make_node
F = TensorProto.FLOAT
ELEM = {np.float32: F, np.float16: TensorProto.FLOAT16, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
        np.uint8: TensorProto.UINT8, np.int16: TensorProto.INT16, np.uint16: TensorProto.UINT16,
        np.uint32: TensorProto.UINT32, np.uint64: TensorProto.UINT64}


def rand(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def case(name, nodes, inputs, expected, initializers=(), opset=13, out_type=F,
         tolerance=(2e-5, 2e-6), dims=()):
    """`inputs`: (name, array, declared shape or None); `expected`: arrays in
    output order (outputs named y0, y1, ..., of `out_type`: one element
    type, or a list of one per output)."""
    global passed, failed
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    graph_inputs, args = [], []
    for iname, arr, declared in inputs:
        path = os.path.join(d, iname + ".npy")
        np.save(path, arr)
        elem = ELEM[arr.dtype.type]
        graph_inputs.append(helper.make_tensor_value_info(
            iname, elem, declared if declared is not None else list(arr.shape)))
        args += ["--input", f"{iname}={path}"]
    types = out_type if isinstance(out_type, list) else [out_type] * len(expected)
    outputs = [helper.make_tensor_value_info(f"y{i}", t, None) for i, t in enumerate(types)]
    inits = [numpy_helper.from_array(a, n) for n, a in initializers]
    model = helper.make_model(helper.make_graph(nodes, name, graph_inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", opset)])
    path = os.path.join(d, "model.onnx")
    onnx.save(model, path)
    plan = os.path.join(d, "model.fplan")
    got = [os.path.join(d, f"got{i}.npy") for i in range(len(expected))]
    dim_args = [a for s, v in dims for a in ("--dim", f"{s}={v}")]
    for cmd in ([FUELC, "plan", path, "--machine", "host", *dim_args, "-o", plan],
                [FUEL_RUN, "-q", plan, *args, *[a for g in got for a in ("--output", g)]]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: {os.path.basename(cmd[0])} exited {r.returncode}: {r.stderr.strip()}")
            failed += 1
            return
    for g, want in zip(got, expected):
        a, want = np.load(g), np.asarray(want)
        ok = a.shape == want.shape and (
            np.allclose(a, want, rtol=tolerance[0], atol=tolerance[1], equal_nan=True)
            if np.issubdtype(want.dtype, np.floating) else np.array_equal(a, want))
        if not ok:
            print(f"FAIL {name}: got {a.dtype}{list(a.shape)} {a.ravel()[:4]}, "
                  f"want {want.dtype}{list(want.shape)} {want.ravel()[:4]}")
            failed += 1
            return
    passed += 1



def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
