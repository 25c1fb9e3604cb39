#!/usr/bin/python3
"""The ONNX backend node tests as a conformance suite for fuelc.

Usage: onnx-node-tests.py BUILD_DIR WORKDIR [--table FILE] [--pass-list FILE]
                          [--check-pass-list FILE] [--vulkan]

Regenerates the node test cases from Debian's python3-onnx (nothing
downloaded or vendored; numpy >= 1.24 needs the removed type aliases put
back first), then for each case: `fuelc plan model.onnx -o` (the import),
retried with `--freeze` for the integer inputs and the inputs the import
names when it asks for them as constants (a Reshape's shape, Slice's
starts, Resize's scales: fuelc compiles them ahead of time, where a model
holds them as initializers; such cases are counted as frozen), `fuel-run` on the case's
other inputs, and a comparison with its expected outputs
(numpy.allclose with the ONNX backend's rtol 1e-3, atol 1e-7; f16 1e-2;
integers and bool exact). Every case is:
  passed       the outputs match;
  failed       imported and planned, but wrong numbers or a refused run;
  unsupported  fuelc's import explains what it cannot take (exit 1);
  crashed      any other exit (a signal, an internal error) or a command
               running past 300 s (a hang): must be zero.
Prints a per-op table (the op of the model's first node). With --table the
table goes to FILE as Markdown; --pass-list writes the passing case names;
--check-pass-list fails (exit 1) if a case listed there no longer passes;
--only REGEX runs the matching cases alone.
With --vulkan every case is planned for the `ci` machine's Vulkan device
alone (Mesa lavapipe here) and run with the validation layer on (a message
fails the case); a case with an op or dtype Vulkan kernels lack is
unsupported (NoBackendForOp).
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys

import numpy as np

for alias, real in [("float", float), ("int", int), ("bool", bool), ("object", object),
                    ("complex", complex), ("str", str)]:
    if not hasattr(np, alias):
        setattr(np, alias, real)
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("build")
p.add_argument("work")
p.add_argument("--table")
p.add_argument("--pass-list")
p.add_argument("--check-pass-list")
p.add_argument("--reasons", help="write each unsupported case's diagnostic here, one per line")
p.add_argument("--vulkan", action="store_true")
p.add_argument("--only", metavar="REGEX",
               help="run only the cases whose names match (no pass-list check for the others)")
args = p.parse_args()
MACHINE = []
if args.vulkan:
    MACHINE = ["--machine", "ci", "--allow-device", "vulkan:0", "--input-residency", "vulkan:0",
               "--output-residency", "vulkan:0"]
    os.environ["FUEL_VULKAN_VALIDATION"] = "1"
# Cases run one per CPU at once: each takes one CPU thread and one lavapipe
# thread (see test/lit/lit.cfg.py).
os.environ["FUEL_NUM_THREADS"] = "1"
os.environ["LP_NUM_THREADS"] = "1"
FUELC = os.path.join(args.build, "tools", "fuelc", "fuelc")
FUEL_RUN = os.path.join(args.build, "tools", "fuel-run", "fuel-run")
cases_dir = os.path.join(args.work, "node")
if not os.path.isdir(cases_dir):
    from onnx.backend.test import cmd_tools
    sys.argv = ["cmd_tools", "generate-data", "-o", args.work]
    cmd_tools.main()
SUPPORTED_NPY = {np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64,
                 np.uint8, np.uint16, np.uint32, np.uint64, np.bool_}
BFLOAT16 = onnx.TensorProto.BFLOAT16  # numpy_helper gives its bits as uint16.
CASE_TIMEOUT = 300  # Seconds per command; a case takes a few.


def read_tensor(path):
    t = onnx.TensorProto()
    t.ParseFromString(open(path, "rb").read())
    return numpy_helper.to_array(t)


def run_case(name):
    try:
        return classify(name)
    except (ValueError, TypeError, onnx.onnx_cpp2py_export.checker.ValidationError) as e:
        # Test data that is not a plain tensor (sequences, optionals, maps).
        return name, "?", "unsupported", f"test data: {e}"
    except subprocess.TimeoutExpired as e:  # A hang is a crash, with its command.
        return name, "?", "crashed", f"{os.path.basename(e.cmd[0])} ran past {e.timeout} s"


def run(command):
    """Runs a fuelc or fuel-run command, killed past CASE_TIMEOUT seconds."""
    return subprocess.run(command, capture_output=True, text=True, timeout=CASE_TIMEOUT)


def classify(name):
    d = os.path.join(cases_dir, name)
    work = os.path.join(args.work, "run", name)
    os.makedirs(work, exist_ok=True)
    try:
        model = onnx.load(os.path.join(d, "model.onnx"))
    except Exception as e:  # A model the Python side cannot read.
        return name, "?", "unsupported", f"onnx.load: {e}"
    op = model.graph.node[0].op_type if model.graph.node else "?"
    data = os.path.join(d, "test_data_set_0")
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    elem = {v.name: v.type.tensor_type.elem_type for v in [*model.graph.input, *model.graph.output]}
    bindings, integers = [], []
    for i, iname in enumerate(inputs):
        path = os.path.join(data, f"input_{i}.pb")
        if not os.path.exists(path):
            return name, op, "unsupported", "optional input without data"
        arr = read_tensor(path)
        if arr.dtype.type not in SUPPORTED_NPY:
            return name, op, "unsupported", f"input dtype {arr.dtype}"
        npy = os.path.join(work, f"in{i}.npy")
        bf16 = elem.get(iname) == BFLOAT16
        np.save(npy, arr.view("V2") if bf16 else arr)
        bindings.append((iname, npy))
        if np.issubdtype(arr.dtype, np.integer) and not bf16:
            integers.append(iname)
    plan = os.path.join(work, "model.fplan")
    command = [FUELC, "plan", os.path.join(d, "model.onnx"), *MACHINE, "-o", plan]
    r = run(command)
    frozen = []
    # The integer inputs (shapes, axes, pads, which a model would hold as
    # initializers) and those the import names as needed constants, until
    # it names no new one.
    while r.returncode == 1 and "must be a constant" in r.stderr:
        named = set(re.findall(r"\(input \d+, '([^']+)'\) must be a constant", r.stderr))
        wanted = set(frozen) | set(integers) | {b[0] for b in bindings if b[0] in named}
        if wanted == set(frozen):
            break
        frozen = [b[0] for b in bindings if b[0] in wanted]
        r = run(command + [a for b in bindings if b[0] in frozen
                           for a in ("--freeze", f"{b[0]}={b[1]}")])
    bindings = [a for b in bindings if b[0] not in frozen for a in ("--input", f"{b[0]}={b[1]}")]
    if r.returncode == 1:
        return name, op, "unsupported", r.stderr.strip().splitlines()[0] if r.stderr else ""
    if r.returncode != 0:
        return name, op, "crashed", f"fuelc exit {r.returncode}: {r.stderr.strip()[:200]}"
    outs = [os.path.join(work, f"out{i}.npy") for i in range(len(model.graph.output))]
    r = run([FUEL_RUN, "-q", plan, *bindings, *[a for o in outs for a in ("--output", o)]])
    if r.returncode not in (0, 1, 2):
        return name, op, "crashed", f"fuel-run exit {r.returncode}: {r.stderr.strip()[:200]}"
    if r.returncode != 0:
        return name, op, "failed", r.stderr.strip()[:200]
    if "vulkan validation" in r.stderr:
        return name, op, "failed", r.stderr.strip()[:200]
    for i, out in enumerate(outs):
        want, got = read_tensor(os.path.join(data, f"output_{i}.pb")), np.load(out)
        if elem.get(model.graph.output[i].name) == BFLOAT16:
            got = got.view(np.uint16)  # Compared bit for bit.
        if got.shape != want.shape:
            return name, op, "failed", f"output {i}: shape {got.shape}, want {want.shape}"
        try:
            if np.issubdtype(want.dtype, np.floating):
                tol = 1e-2 if want.dtype == np.float16 else 1e-3
                ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                                 atol=1e-7 if tol == 1e-3 else 1e-3, equal_nan=True)
            else:
                ok = got.dtype == want.dtype and np.array_equal(got, want)
        except TypeError as e:  # Dtypes numpy cannot compare (e.g. bf16 bits).
            return name, op, "failed", f"output {i}: {e}"
        if not ok:
            return name, op, "failed", f"output {i}: wrong values"
    return name, op, "passed", "frozen" if frozen else ""


names = sorted(n for n in os.listdir(cases_dir) if re.search(args.only or "", n))
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    results = list(pool.map(run_case, names))
per_op = collections.defaultdict(collections.Counter)
totals = collections.Counter()
for name, op, status, why in results:
    per_op[op][status] += 1
    totals[status] += 1
    if status in ("failed", "crashed"):
        print(f"{status.upper()} {name}: {why}")
statuses = ["passed", "failed", "unsupported", "crashed"]
lines = ["| op | " + " | ".join(statuses) + " |", "|---|" + "---|" * len(statuses)]
for op in sorted(per_op):
    lines.append(f"| {op} | " + " | ".join(str(per_op[op][s]) for s in statuses) + " |")
lines.append("| **all** | " + " | ".join(f"**{totals[s]}**" for s in statuses) + " |")
attempted = totals["passed"] + totals["failed"] + totals["crashed"]
frozen_passes = sum(1 for _, _, status, why in results if status == "passed" and why == "frozen")
summary = (f"{totals['passed']} of {len(results)} cases pass ({100 * totals['passed'] / len(results):.1f}%); "
           f"of the {attempted} cases fuelc imports, {totals['passed']} pass "
           f"({100 * totals['passed'] / max(attempted, 1):.1f}%); {frozen_passes} of the passes "
           f"freeze inputs; {totals['crashed']} crashed")
print("\n".join(lines))
print(summary)
if args.table:
    open(args.table, "w").write("\n".join(lines) + "\n\n" + summary + "\n")
passing = sorted(name for name, _, status, _ in results if status == "passed")
if args.pass_list:
    open(args.pass_list, "w").write("\n".join(passing) + "\n")
if args.reasons:
    open(args.reasons, "w").writelines(f"{name}\t{op}\t{why}\n" for name, op, status, why in results
                                       if status == "unsupported")
regressions = []
if args.check_pass_list:
    expected = [l.strip() for l in open(args.check_pass_list) if l.strip()]
    regressions = sorted(set(expected) & set(names) - set(passing))
    for r in regressions:
        print(f"REGRESSION {r}: listed as passing, now not")
sys.exit(1 if totals["crashed"] or regressions else 0)
