#!/usr/bin/python3
"""Runs cases planned elsewhere: every DIR/*/case.json written by
test/lit/reference/check-ops.py and test/lit/run/check-graphs.py (their ptx
target, or FUEL_EXPORT_CASES=1): fuel-run on the case's artifact and
inputs, outputs compared with the saved expected ones (numpy.allclose with
the case's tolerances; exact where none). This is how the CUDA cases run on
a machine with a GPU but without fuelc's compiler (scripts/gpu-check.sh).

Usage: gpu-cases.py DIR FUEL_RUN [ENV=VALUE...]
Prints one line per failure and "N passed, M failed"; exits 1 on failure.
"""
import json
import os
import subprocess
import sys

import numpy as np

root, fuel_run = sys.argv[1], os.path.abspath(sys.argv[2])
env = dict(os.environ)
env.update(a.split("=", 1) for a in sys.argv[3:])
passed = failed = 0
for name in sorted(os.listdir(root)):
    d = os.path.join(root, name)
    spec_path = os.path.join(d, "case.json")
    if not os.path.isfile(spec_path):
        continue
    spec = json.load(open(spec_path))
    outputs = [f"got{i}.npy" for i in range(len(spec["expected"]))]
    cmd = [fuel_run, "-q", spec["artifact"], *spec["run_args"], *spec["args"],
           *[a for o in outputs for a in ("--output", o)]]
    r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, env=env)
    problem = f"fuel-run exited {r.returncode}: {r.stderr.strip()}" if r.returncode else ""
    if not problem and "validation" in r.stderr:
        problem = f"validation messages: {r.stderr.strip()}"
    for got, want, tol in zip(outputs, spec["expected"], spec["tolerances"]):
        if problem:
            break
        a, b = np.load(os.path.join(d, got)), np.load(os.path.join(d, want))
        if a.shape != b.shape or a.dtype != b.dtype:
            problem = f"{got}: {a.dtype}{list(a.shape)}, want {b.dtype}{list(b.shape)}"
        elif tol is None and not np.array_equal(a, b):
            problem = f"{got}: differs (exact dtype)"
        elif tol is not None and not np.allclose(a.astype(np.float64), b.astype(np.float64),
                                                 rtol=tol[0], atol=tol[1], equal_nan=True):
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64)).max()
            problem = f"{got}: max abs difference {diff}"
    if problem:
        print(f"FAIL {name}: {problem}")
        failed += 1
    else:
        passed += 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
