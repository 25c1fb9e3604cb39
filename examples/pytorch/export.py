#!/usr/bin/python3
"""Exports four PyTorch models to ONNX with random weights (fixed seeds),
with an input and PyTorch's output for it, for fuelc to import, plan and run.

Usage: export.py OUTDIR [--bench | --zoo | --sequence | --quantized]

Writes, per model NAME in mlp, encoder, decoder (a GPT-style block),
resnet18, lstm (two layers), gru (bidirectional): NAME.onnx, NAME.input.npy
and NAME.expected.npy (PyTorch eager on that input, no_grad, eval mode), and
NAME.next.input.npy / NAME.next.expected.npy with a batch one larger.
The batch dim is symbolic (`B`) in every model: in the encoder, PyTorch's
attention reshapes to `[T, B * heads, head_dim]` by shape arithmetic that
fuelc folds into the derived symbol `4*B`. --bench writes deployment sizes (ResNet-18 at 224x224, a wider encoder)
instead of the small test sizes; --zoo writes more torchvision architectures
instead (ZOO: depthwise and grouped convolutions, channel shuffles, SiLU
and squeeze-excitation, inception branches, a segmentation head with
bilinear Resize to sizes computed from the input's shape); --sequence
writes the models of sequence_models.py instead (a BERT-style encoder with
a mask, a GPT-2-style decoding step with its cache, a ViT, an LSTM language
model), which have several named inputs and outputs: NAME.io.json lists
them, and NAME[.next].INPUT.npy and NAME[.next].expected.OUTPUT.npy hold
the data; --quantized writes ResNet-18 and the decoder block quantized by
PyTorch (FX static quantization, fbgemm, calibrated on random inputs;
exported as QDQ) as resnet18_qdq and decoder_qdq, their expected outputs
PyTorch's quantized models' and NAME.float.npy the float models'. Needs Debian's python3-torch and
python3-torchvision (scripts/install-deps.sh installs them).
"""
import json
import os
import sys

import numpy as np
import torch
import torchvision

from sequence_models import sequence_models


class Mlp(torch.nn.Module):
    def __init__(self, width, hidden, classes):
        super().__init__()
        self.fc1 = torch.nn.Linear(width, hidden)
        self.fc2 = torch.nn.Linear(hidden, classes)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.nn.functional.gelu(self.fc1(x))), dim=-1)


class DecoderBlock(torch.nn.Module):
    """A GPT-style decoder block: pre-LayerNorm, causal self-attention (an
    additive -inf mask above the diagonal), GELU MLP, residuals."""

    def __init__(self, width, heads, hidden, length):
        super().__init__()
        self.heads, self.width = heads, width
        self.ln1, self.ln2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        self.qkv, self.proj = torch.nn.Linear(width, 3 * width), torch.nn.Linear(width, width)
        self.fc, self.out = torch.nn.Linear(width, hidden), torch.nn.Linear(hidden, width)
        self.register_buffer("mask", torch.full((length, length), float("-inf")).triu(1))

    def forward(self, x):
        # Extents come from x.size(), not by unpacking x.shape: FX traces it
        # (quantized()).
        c = self.width
        qkv = self.qkv(self.ln1(x)).split(c, dim=-1)
        q, k, v = (qkv[i].reshape(x.size(0), x.size(1), self.heads, -1).transpose(1, 2)
                   for i in range(3))
        scores = q @ k.transpose(-2, -1) / (c // self.heads) ** 0.5 + self.mask
        attended = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(
            x.size(0), x.size(1), c)
        x = x + self.proj(attended)
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))


class Recurrent(torch.nn.Module):
    """A recurrent network over a feature sequence (batch first) with a
    linear head on every step: `kind` is torch.nn.LSTM or torch.nn.GRU."""

    def __init__(self, kind, features, hidden, classes, **options):
        super().__init__()
        self.rnn = kind(features, hidden, batch_first=True, **options)
        width = hidden * (2 if options.get("bidirectional") else 1)
        self.head = torch.nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


def models(bench):
    """(name, module, input) in a fixed order and seed."""
    torch.manual_seed(0)
    if bench:
        yield "mlp", Mlp(512, 2048, 1000), torch.randn(64, 512)
        yield ("encoder", torch.nn.TransformerEncoderLayer(512, 8, 2048, dropout=0.0, batch_first=True),
               torch.randn(1, 128, 512))
        yield "decoder", DecoderBlock(512, 8, 2048, 128), torch.randn(1, 128, 512)
        yield "resnet18", torchvision.models.resnet18(), torch.randn(1, 3, 224, 224)
    else:
        yield "mlp", Mlp(64, 256, 10), torch.randn(8, 64)
        yield ("encoder", torch.nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True),
               torch.randn(2, 16, 128))
        yield "decoder", DecoderBlock(128, 4, 256, 16), torch.randn(2, 16, 128)
        yield "resnet18", torchvision.models.resnet18(), torch.randn(2, 3, 64, 64)
        yield "lstm", Recurrent(torch.nn.LSTM, 32, 64, 10, num_layers=2), torch.randn(2, 12, 32)
        yield ("gru", Recurrent(torch.nn.GRU, 32, 48, 10, bidirectional=True),
               torch.randn(2, 10, 32))


ZOO = ("mobilenet_v2", "shufflenet_v2_x1_0", "efficientnet_b0", "squeezenet1_1", "googlenet",
       "lraspp_mobilenet_v3_large")


class SegmentationOutput(torch.nn.Module):
    """The "out" map of a torchvision segmentation model (which returns a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def zoo():
    """(name, module, input) for ZOO, random weights, 64x64 images."""
    torch.manual_seed(0)
    for name in ZOO:
        if hasattr(torchvision.models.segmentation, name):
            module = SegmentationOutput(getattr(torchvision.models.segmentation, name)(
                weights=None, weights_backbone=None))
        else:
            module = getattr(torchvision.models, name)(weights=None)
        yield name, module, torch.randn(2, 3, 64, 64)


def export(module, x, path):
    """ONNX opset 17 with input `x` and output `y`, batch dim `B`."""
    torch.onnx.export(module, x, path, input_names=["x"], output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "B"}, "y": {0: "B"}})


def export_sequence_model(name, module, out):
    """Exports with a batch of 2 (symbolic `B`), writes NAME.io.json and
    the data of batches 2 and 3."""
    module.eval()
    axes = getattr(module, "batch_axes", {})
    names = list(module.inputs) + list(module.outputs)
    examples = {2: module.example(2), 3: module.example(3)}
    torch.onnx.export(module, examples[2], os.path.join(out, name + ".onnx"),
                      input_names=list(module.inputs), output_names=list(module.outputs),
                      opset_version=17, dynamic_axes={v: {axes.get(v, 0): "B"} for v in names})
    with open(os.path.join(out, name + ".io.json"), "w") as f:
        json.dump({"inputs": module.inputs, "outputs": module.outputs}, f)
    for suffix, batch in (("", 2), (".next", 3)):
        with torch.no_grad():
            ys = module(*examples[batch])
        ys = ys if isinstance(ys, tuple) else (ys,)
        for n, a in zip(module.inputs, examples[batch]):
            np.save(os.path.join(out, f"{name}{suffix}.{n}.npy"), a.numpy())
        for n, a in zip(module.outputs, ys):
            np.save(os.path.join(out, f"{name}{suffix}.expected.{n}.npy"), a.numpy())


def quantized(bench=False):
    """(name, quantized module, float module, input): ResNet-18 and the
    GPT-style decoder block statically quantized (8-bit activations and
    weights; the decoder's linear layers, as its causal mask's -inf would
    overflow the other ops' histogram observers) after calibration on
    random inputs. `bench`: deployment sizes, batch 1."""
    from torch.ao.quantization import QConfigMapping, get_default_qconfig, \
        get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.manual_seed(0)
    image, tokens = ((1, 3, 224, 224), (1, 128, 512)) if bench else ((2, 3, 64, 64), (2, 16, 128))
    linear = QConfigMapping().set_object_type(torch.nn.Linear, get_default_qconfig("fbgemm"))
    for name, module, shape, mapping in (
            ("resnet18_qdq", torchvision.models.resnet18(), image,
             get_default_qconfig_mapping("fbgemm")),
            ("decoder_qdq", DecoderBlock(tokens[2], 8 if bench else 4, 4 * tokens[2], tokens[1]),
             tokens, linear)):
        module.eval()
        x = torch.randn(*shape)
        prepared = prepare_fx(module, mapping, example_inputs=(x,))
        with torch.no_grad():
            for _ in range(4):
                prepared(torch.randn(*shape))
        yield name, convert_fx(prepared), module, x


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    flags = sys.argv[2:]
    if "--quantized" in flags:
        for name, module, original, x in quantized():
            export(module, x, os.path.join(out, name + ".onnx"))
            bigger = torch.cat([x, torch.randn(1, *x.shape[1:])])
            for suffix, batch in (("", x), (".next", bigger)):
                with torch.no_grad():
                    y, reference = module(batch), original(batch)
                np.save(os.path.join(out, name + suffix + ".input.npy"), batch.numpy())
                np.save(os.path.join(out, name + suffix + ".expected.npy"), y.numpy())
                np.save(os.path.join(out, name + suffix + ".float.npy"), reference.numpy())
        return
    if "--sequence" in flags:
        for name, module in sequence_models():
            export_sequence_model(name, module, out)
        return
    for name, module, x in zoo() if "--zoo" in flags else models("--bench" in flags):
        module.eval()
        path = os.path.join(out, name + ".onnx")
        export(module, x, path)
        # The export's batch, and one more: the plan is for any batch.
        bigger = torch.cat([x, torch.randn(1, *x.shape[1:])])
        for suffix, batch in (("", x), (".next", bigger)):
            with torch.no_grad():
                y = module(batch)
            np.save(os.path.join(out, name + suffix + ".input.npy"), batch.numpy())
            np.save(os.path.join(out, name + suffix + ".expected.npy"), y.numpy())


if __name__ == "__main__":
    main()
