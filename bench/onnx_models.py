#!/usr/bin/python3
"""End-to-end CPU latency of PyTorch-exported models: fuelc (import, plan for
the `host` machine, fuel-run --bench) against ONNX Runtime (npm
onnxruntime-node, CPU provider, all graph optimizations, sequential
execution, intra-op threads = T) and PyTorch eager (no_grad), same machine,
same thread count (one-thread cells all on the same CPU), interleaved in
rounds, medians.

Models (random weights, fixed seeds): the MLP, transformer encoder layer and
GPT-style decoder block of examples/pytorch/export.py --bench, ResNet-18 and
five more torchvision CNNs at 224x224, batch 1; the encoder and ResNet-18
also at batch 8. Prints the warm latency table with the geometric mean of
the ratios per thread count, then the cold start (fuelc: artifact load +
first run; ONNX Runtime: session creation + first run).

With --shapes, the transformer layers instead, across the shapes a
deployment meets rather than at one tuned point: the encoder layer and the
decoder block of widths 256, 512 and 768 (heads of 64, MLPs 4x as wide)
over sequences of 64, 128 and 512 tokens, batch 1, and batch 8 at the
three (width, sequence) pairs of the diagonal; at least 10 runs a round.

Each round runs every engine the same number of times: RUNS, or more where
that takes under MIN_ROUND_SECONDS (counted from one fuelc run of RUNS runs
first): 10 runs of a 0.6 ms layer are 6 ms of a VM whose speed swings
from one moment to the next, where a quarter of a second of runs gives a
median that holds from one round to the next.

Usage: onnx_models.py BUILD_DIR WORKDIR ORT_DIR [--quick] [--shapes]
ORT_DIR holds node_modules/onnxruntime-node (scripts/bench.sh installs it).
--quick: one round of 5 runs (a smoke run, not figures to publish).
"""
import math
import os
import subprocess
import sys

# PyTorch's OpenMP workers otherwise spin after each run, taking the cores
# from whatever is measured next in this process's children.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import torchvision  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "pytorch"))
import export  # noqa: E402

from benchlib import Bench, median, ort_latency, timed  # noqa: E402

build, work, ort_dir = sys.argv[1:4]
quick, shapes = "--quick" in sys.argv, "--shapes" in sys.argv
ROUNDS, RUNS = (1, 5) if quick else (5, 10 if shapes else 20)
MIN_ROUND_SECONDS = 0.25
CNNS = ("mobilenet_v2", "efficientnet_b0", "shufflenet_v2_x1_0", "squeezenet1_1", "googlenet")


def transformer_shapes():
    """(name, module, input) of the --shapes sweep, in a fixed order and seed."""
    torch.manual_seed(0)
    diagonal = {(256, 64), (512, 128), (768, 512)}
    for width in (256, 512, 768):
        for tokens in (64, 128, 512):
            heads, hidden = width // 64, 4 * width
            layers = (("encoder", torch.nn.TransformerEncoderLayer(
                width, heads, hidden, dropout=0.0, batch_first=True)),
                      ("decoder", export.DecoderBlock(width, heads, hidden, tokens)))
            for name, module in layers:
                for batch in (1, 8) if (width, tokens) in diagonal else (1,):
                    yield name, module, torch.randn(batch, tokens, width)


def models():
    """(name, module, input) in a fixed order and seed."""
    if shapes:
        yield from transformer_shapes()
        return
    for name, module, x in export.models(bench=True):
        yield name, module, x
        if name in ("encoder", "resnet18"):
            yield name, module, torch.randn(8, *x.shape[1:])
    torch.manual_seed(0)
    for name in CNNS:
        yield name, getattr(torchvision.models, name)(weights=None), torch.randn(1, 3, 224, 224)


# One-thread cells run every engine on the same CPU (children inherit the
# affinity): the VMs these run on have had vCPUs of different speeds, 25%
# apart for minutes, which an unpinned one-thread process draws at random.
CPUS = os.sched_getaffinity(0)

os.makedirs(work, exist_ok=True)
bench = Bench(build, work, ["--machine", "host"])
warm, cold = [], []
trial_runs = set()  # How many runs chose the thread splits, as fuel-run counted them.
for name, module, x in models():
    module.eval()
    label = f"{name}-{'x'.join(map(str, x.shape))}"
    path = os.path.join(work, label + ".onnx")
    export.export(module, x, path)
    raw = os.path.join(work, label + ".f32")
    x.numpy().tofile(raw)
    npy = bench.save(label + ".input", x.numpy())
    artifact = os.path.join(work, label + ".fplan")
    subprocess.run([bench.fuelc, "plan", path, "--machine", "host", "--dim", f"B={x.shape[0]}",
                    "-o", artifact], check=True)
    for threads in (1, 2):
        ours, theirs, eager, our_cold, their_cold, choosing = [], [], [], [], [], []
        os.sched_setaffinity(0, {min(CPUS)} if threads == 1 else CPUS)
        torch.set_num_threads(threads)
        runs = RUNS
        if not quick:
            estimate = bench.run(artifact, {"x": npy}, threads, runs=RUNS).latency
            runs = max(RUNS, math.ceil(MIN_ROUND_SECONDS * 1e3 / estimate))
        for _ in range(ROUNDS):
            run = bench.run(artifact, {"x": npy}, threads, runs=runs)
            ours.append(run.latency)
            our_cold.append(run.load + run.first)
            choosing.append(run.choosing)
            latency, start = ort_latency(ort_dir, path, raw, x.shape, threads, runs)
            theirs.append(latency)
            their_cold.append(start)
            with torch.no_grad():
                eager.append(timed(lambda: module(x), runs=runs))
        spread = (max(ours) - min(ours)) / median(ours)
        # Ratios paired within a round, whose engines ran a moment apart:
        # a round in a slow minute of the VM moves both.
        warm.append((f"{name} {list(x.shape)}", threads, runs, median(ours), median(theirs),
                     median(eager), median([t / o for t, o in zip(theirs, ours)]),
                     median([e / o for e, o in zip(eager, ours)]), spread))
        trials = None
        if choosing[0] is not None:
            trial_runs.update(c[0] for c in choosing)
            trials = median([c[1] for c in choosing]), max(c[2] for c in choosing)
        cold.append((f"{name} {list(x.shape)}", threads, median(our_cold), median(their_cold),
                     trials))

print(f"Warm latency: medians of {ROUNDS} rounds; each round runs every engine `runs` times (at least "
      f"{RUNS}, and at least {MIN_ROUND_SECONDS} s of fuelc's runs); ratios are medians of the rounds' "
      "ratios; spread = (max - min) / median")
print("of fuelc's round medians. With two threads, fuelc's warm runs include a round checking its")
print("split choice now and then (one run all split, one all whole, one split per kernel; "
      "SplitChoice.h), as a deployed session's runs do.")
print()
print("| model (input) | threads | runs | fuelc ms | ONNX Runtime ms | PyTorch eager ms "
      "| ONNX Runtime / fuelc | PyTorch / fuelc | spread |")
print("|---|---|---|---|---|---|---|---|---|")
for model, threads, runs, ours, theirs, eager, ort_ratio, eager_ratio, spread in warm:
    print(f"| {model} | {threads} | {runs} | {ours:.3f} | {theirs:.3f} | {eager:.3f} "
          f"| {ort_ratio:.2f} | {eager_ratio:.2f} | {spread:.0%} |")
for threads in (1, 2):
    ratios = [ratio for _, t, _, _, _, _, ratio, _, _ in warm if t == threads]
    print(f"| geometric mean | {threads} | | | | | "
          f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} | | |")
print()
print("Cold start: fuelc artifact load + first run; ONNX Runtime session creation + first run.")
print(f"With two threads, fuelc's next {' or '.join(map(str, sorted(trial_runs)))} runs choose "
      "which kernels split (timed apart, not in")
print("the warm latency): their median and slowest (which packs the whole kernels' weights).")
print()
print("| model (input) | threads | fuelc ms | ONNX Runtime ms | ONNX Runtime / fuelc "
      "| fuelc's split trials: median, max ms |")
print("|---|---|---|---|---|---|")
for model, threads, ours, theirs, trials in cold:
    print(f"| {model} | {threads} | {ours:.1f} | {theirs:.1f} | {theirs / ours:.2f} "
          f"| {'' if trials is None else f'{trials[0]:.1f}, {trials[1]:.1f}'} |")
