#!/usr/bin/python3
"""Writes the example graphs in examples/ and their weight files.

Weights are random (fixed seeds) and stored in all three external formats the
graph format supports: safetensors (mlp), one raw .bin with offsets
(transformer) and .npy files (cnn). Run with Debian's python3 (numpy).
"""
import json
import os
import struct

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


def write_graph(path, graph):
    with open(path, "w") as f:
        f.write("{\n")
        items = list(graph.items())
        for i, (key, value) in enumerate(items):
            sep = "," if i + 1 < len(items) else ""
            if isinstance(value, list) and value and isinstance(value[0], dict):
                f.write(f'  "{key}": [\n')
                for j, entry in enumerate(value):
                    comma = "," if j + 1 < len(value) else ""
                    f.write(f"    {json.dumps(entry)}{comma}\n")
                f.write(f"  ]{sep}\n")
            else:
                f.write(f'  "{key}": {json.dumps(value)}{sep}\n')
        f.write("}\n")


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def mlp():
    rng = np.random.default_rng(1)
    d_in, d_hidden, d_out = 64, 128, 10
    weights = {
        "fc1.weight": rng.standard_normal((d_hidden, d_in)) / np.sqrt(d_in),
        "fc1.bias": rng.standard_normal(d_hidden) * 0.1,
        "fc2.weight": rng.standard_normal((d_out, d_hidden)) / np.sqrt(d_hidden),
        "fc2.bias": rng.standard_normal(d_out) * 0.1,
    }
    write_safetensors(os.path.join(ROOT, "mlp", "mlp.safetensors"), weights)
    constants = [{"name": name, "dtype": "f32", "shape": list(w.shape),
                  "data": {"file": "mlp.safetensors", "tensor": name}}
                 for name, w in weights.items()]
    write_graph(os.path.join(ROOT, "mlp", "mlp.json"), {
        "format": "fuel.graph", "version": 1, "name": "mlp",
        "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", d_in]}],
        "constants": constants,
        "nodes": [
            {"id": "fc1", "op": "linear", "inputs": ["x", "fc1.weight", "fc1.bias"]},
            {"id": "act", "op": "gelu", "inputs": ["fc1"]},
            {"id": "fc2", "op": "linear", "inputs": ["act", "fc2.weight", "fc2.bias"]},
            {"id": "probs", "op": "softmax", "inputs": ["fc2"], "attrs": {"axis": -1}},
        ],
        "outputs": ["probs"],
    })


def transformer():
    rng = np.random.default_rng(2)
    d, heads, d_ff = 64, 4, 256
    head_dim = d // heads
    shapes = [("ln1.scale", (d,)), ("ln1.bias", (d,)),
              ("wq", (d, d)), ("wk", (d, d)), ("wv", (d, d)), ("wo", (d, d)),
              ("bo", (d,)), ("ln2.scale", (d,)), ("ln2.bias", (d,)),
              ("ff1.weight", (d_ff, d)), ("ff1.bias", (d_ff,)),
              ("ff2.weight", (d, d_ff)), ("ff2.bias", (d,))]
    constants, blob = [], b""
    for name, shape in shapes:
        if name.endswith("scale"):
            w = 1 + 0.1 * rng.standard_normal(shape)
        else:
            w = rng.standard_normal(shape) / np.sqrt(shape[-1])
        data = np.asarray(w, dtype="<f4").tobytes()
        constants.append({"name": name, "dtype": "f32", "shape": list(shape),
                          "data": {"file": "encoder_block.bin", "offset": len(blob)}})
        blob += data
    with open(os.path.join(ROOT, "transformer", "encoder_block.bin"), "wb") as f:
        f.write(blob)
    constants.append({"name": "attn_scale", "dtype": "f32", "shape": [],
                      "data": [1.0 / np.sqrt(head_dim)]})
    split_heads = {"shape": ["B", "T", heads, head_dim]}
    nodes = [
        {"id": "ln1", "op": "layer_norm", "inputs": ["x", "ln1.scale", "ln1.bias"], "attrs": {"eps": 1e-5}},
        {"id": "q", "op": "linear", "inputs": ["ln1", "wq"]},
        {"id": "k", "op": "linear", "inputs": ["ln1", "wk"]},
        {"id": "v", "op": "linear", "inputs": ["ln1", "wv"]},
        {"id": "q_heads", "op": "reshape", "inputs": ["q"], "attrs": split_heads},
        {"id": "k_heads", "op": "reshape", "inputs": ["k"], "attrs": split_heads},
        {"id": "v_heads", "op": "reshape", "inputs": ["v"], "attrs": split_heads},
        {"id": "q_t", "op": "transpose", "inputs": ["q_heads"], "attrs": {"perm": [0, 2, 1, 3]}},
        {"id": "k_t", "op": "transpose", "inputs": ["k_heads"], "attrs": {"perm": [0, 2, 1, 3]}},
        {"id": "v_t", "op": "transpose", "inputs": ["v_heads"], "attrs": {"perm": [0, 2, 1, 3]}},
        {"id": "scores", "op": "matmul", "inputs": ["q_t", "k_t"], "attrs": {"transpose_b": True}},
        {"id": "scaled", "op": "mul", "inputs": ["scores", "attn_scale"]},
        {"id": "attn", "op": "softmax", "inputs": ["scaled"], "attrs": {"axis": -1}},
        {"id": "context", "op": "matmul", "inputs": ["attn", "v_t"]},
        {"id": "context_t", "op": "transpose", "inputs": ["context"], "attrs": {"perm": [0, 2, 1, 3]}},
        {"id": "merged", "op": "reshape", "inputs": ["context_t"], "attrs": {"shape": ["B", "T", d]}},
        {"id": "proj", "op": "linear", "inputs": ["merged", "wo", "bo"]},
        {"id": "res1", "op": "add", "inputs": ["x", "proj"]},
        {"id": "ln2", "op": "layer_norm", "inputs": ["res1", "ln2.scale", "ln2.bias"], "attrs": {"eps": 1e-5}},
        {"id": "ff1", "op": "linear", "inputs": ["ln2", "ff1.weight", "ff1.bias"]},
        {"id": "ff_act", "op": "gelu", "inputs": ["ff1"], "attrs": {"approximate": "tanh"}},
        {"id": "ff2", "op": "linear", "inputs": ["ff_act", "ff2.weight", "ff2.bias"]},
        {"id": "out", "op": "add", "inputs": ["res1", "ff2"]},
    ]
    write_graph(os.path.join(ROOT, "transformer", "encoder_block.json"), {
        "format": "fuel.graph", "version": 1, "name": "transformer_encoder_block",
        "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", "T", d]}],
        "constants": constants, "nodes": nodes, "outputs": ["out"],
    })


def cnn():
    rng = np.random.default_rng(3)
    shapes = {"conv1.weight": (8, 3, 3, 3), "conv1.bias": (8,),
              "conv2.weight": (16, 8, 3, 3), "conv2.bias": (16,),
              "fc.weight": (10, 16 * 8 * 8), "fc.bias": (10,)}
    constants = []
    for name, shape in shapes.items():
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 10
        w = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype("<f4")
        np.save(os.path.join(ROOT, "cnn", name + ".npy"), w)
        constants.append({"name": name, "dtype": "f32", "shape": list(shape),
                          "data": {"file": name + ".npy"}})
    conv = {"pads": [1, 1, 1, 1], "strides": [1, 1]}
    nodes = [
        {"id": "conv1", "op": "conv2d", "inputs": ["image", "conv1.weight", "conv1.bias"], "attrs": conv},
        {"id": "relu1", "op": "relu", "inputs": ["conv1"]},
        {"id": "pool1", "op": "max_pool2d", "inputs": ["relu1"], "attrs": {"kernel": [2, 2], "strides": [2, 2]}},
        {"id": "conv2", "op": "conv2d", "inputs": ["pool1", "conv2.weight", "conv2.bias"], "attrs": conv},
        {"id": "relu2", "op": "relu", "inputs": ["conv2"]},
        {"id": "pool2", "op": "avg_pool2d", "inputs": ["relu2"], "attrs": {"kernel": [2, 2], "strides": [2, 2]}},
        {"id": "flat", "op": "reshape", "inputs": ["pool2"], "attrs": {"shape": ["B", -1]}},
        {"id": "logits", "op": "linear", "inputs": ["flat", "fc.weight", "fc.bias"]},
        {"id": "log_probs", "op": "log_softmax", "inputs": ["logits"], "attrs": {"axis": 1}},
    ]
    write_graph(os.path.join(ROOT, "cnn", "small_cnn.json"), {
        "format": "fuel.graph", "version": 1, "name": "small_cnn",
        "inputs": [{"name": "image", "dtype": "f32", "shape": ["B", 3, 32, 32]}],
        "constants": constants, "nodes": nodes, "outputs": ["log_probs"],
    })


if __name__ == "__main__":
    mlp()
    transformer()
    cnn()
