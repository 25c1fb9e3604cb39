#!/usr/bin/python3
"""Imports the models export.py wrote, plans them with fuelc (the `host`
machine, or with --vulkan the `ci` machine's Vulkan device alone), runs them
with fuel-run and compares the outputs with PyTorch's.

Usage: check.py BUILD_DIR MODEL_DIR [--vulkan] [--models NAME,...]

Prints one line per model, output and batch (the export's and one more, run
by the same artifact; the outputs listed in NAME.io.json, if any): its shape, the largest difference from
PyTorch relative to the output's magnitude, and ok or FAIL (over 1e-4, or
--tolerance); for a model with NAME.float.npy (export.py --quantized), also
the difference from the float model and whether each row's largest output
(the class) is the same;
exits 1 when any model fails.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("build")
p.add_argument("models")
p.add_argument("--vulkan", action="store_true")
p.add_argument("--models", dest="names", default="mlp,encoder,decoder,resnet18,lstm,gru")
p.add_argument("--tolerance", type=float, default=1e-4,
               help="the largest relative difference that passes (quantized models: their "
                    "output's quantization step)")
args = p.parse_args()
build, models, vulkan = args.build, args.models, args.vulkan
fuelc = os.path.join(build, "tools", "fuelc", "fuelc")
fuel_run = os.path.join(build, "tools", "fuel-run", "fuel-run")
target = ["--machine", "host"]
env = dict(os.environ)
if vulkan:
    target = ["--machine", "ci", "--allow-device", "vulkan:0", "--input-residency", "vulkan:0",
              "--output-residency", "vulkan:0"]
    if os.environ.get("FUEL_VULKAN_PRELOAD"):  # See test/lit/lit.cfg.py.
        env["LD_PRELOAD"] = os.environ["FUEL_VULKAN_PRELOAD"]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}\nexited {r.returncode}: {r.stderr.strip()}")


failed = False
for name in args.names.split(","):
    stem = os.path.join(models, name)
    plan = stem + ".fplan"
    # The symbolic batch is planned for up to 16; each input binds it.
    run([fuelc, "plan", stem + ".onnx", *target, "--dim", "B=16", "-o", plan])
    io = json.load(open(stem + ".io.json")) if os.path.exists(stem + ".io.json") else None
    for case in (stem, stem + ".next"):
        if io:  # Named inputs and outputs (export.py --sequence).
            inputs = [(n, f"{case}.{n}.npy") for n in io["inputs"]]
            outputs = [(n, f"{case}.expected.{n}.npy", f"{case}.got.{n}.npy")
                       for n in io["outputs"]]
        else:
            inputs = [("x", case + ".input.npy")]
            outputs = [("y", case + ".expected.npy", case + ".got.npy")]
        run([fuel_run, "-q", plan, *[a for n, path in inputs for a in ("--input", f"{n}={path}")],
             *[a for _, _, got in outputs for a in ("--output", got)]], env=env)
        for output, expected, got in outputs:
            label = f"{name}.{output}" if io else name
            want, have = np.load(expected), np.load(got)
            if want.shape != have.shape:
                print(f"{label}: FAIL shape {have.shape}, PyTorch {want.shape}")
                failed = True
                continue
            error = float(np.max(np.abs(have - want)) / max(1e-30, float(np.max(np.abs(want)))))
            ok = error <= args.tolerance
            failed |= not ok
            print(f"{label}: f32{list(have.shape)} max relative difference {error:.1e} "
                  f"{'ok' if ok else 'FAIL'}")
            if os.path.exists(case + ".float.npy"):  # A quantized model's accuracy.
                reference = np.load(case + ".float.npy")
                drift = float(np.max(np.abs(have - reference)) / np.max(np.abs(reference)))
                same = np.mean(have.argmax(axis=-1) == reference.argmax(axis=-1))
                # PyTorch's quantized model itself flips near-ties of the
                # float model's; fuelc's requantizations may round a near-tie
                # the other way, so one row in 20 may differ from its count.
                theirs = np.mean(want.argmax(axis=-1) == reference.argmax(axis=-1))
                ok = same >= theirs - 0.05
                failed |= not ok
                print(f"{label}: against the float model: max relative difference {drift:.1e}, "
                      f"same class for {same:.0%} of the batch (PyTorch's quantized model: "
                      f"{theirs:.0%}) {'ok' if ok else 'FAIL'}")
sys.exit(1 if failed else 0)
