#!/usr/bin/python3
"""Runs examples/mlp with fuel-ref on a random batch and compares with numpy
evaluating the same weights (read from the safetensors file independently).

Usage: check-mlp.py FUEL_REF EXAMPLES_DIR WORKDIR
"""
import json
import math
import os
import struct
import subprocess
import sys

import numpy as np

fuel_ref, examples, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
blob = open(os.path.join(examples, "mlp", "mlp.safetensors"), "rb").read()
(n,) = struct.unpack("<Q", blob[:8])
header = json.loads(blob[8:8 + n])
def tensor(name):
    entry = header[name]
    begin, end = entry["data_offsets"]
    return np.frombuffer(blob[8 + n + begin:8 + n + end], "<f4").reshape(entry["shape"]).astype(np.float64)

x = np.random.default_rng(7).standard_normal((5, 64)).astype(np.float32)
np.save(os.path.join(work, "x.npy"), x)
out = os.path.join(work, "probs.npy")
subprocess.run([fuel_ref, os.path.join(examples, "mlp", "mlp.json"),
                "--input", "x=" + os.path.join(work, "x.npy"), "--output", out], check=True)
h = x.astype(np.float64) @ tensor("fc1.weight").T + tensor("fc1.bias")
erf = np.vectorize(math.erf)
h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
logits = h @ tensor("fc2.weight").T + tensor("fc2.bias")
e = np.exp(logits - logits.max(-1, keepdims=True))
want = e / e.sum(-1, keepdims=True)
got = np.load(out)
print("shape", list(got.shape), "dtype", got.dtype)
print("max abs error", "ok" if np.allclose(got, want, rtol=1e-4, atol=1e-6) else f"BAD {np.abs(got - want).max()}")
