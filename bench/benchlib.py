"""Helpers shared by the kernel benchmarks: graphs written to a work
directory, planned with fuelc, run with fuel-run (medians), and Markdown
tables. Import after setting the BLAS environment (numpy loads it)."""
import collections
import json
import os
import re
import subprocess
import time

import numpy as np

REPEATS = 5

# One fuel-run --bench: median latency of the warm runs, artifact load and
# first run (the cold start), all ms, {kernel label: warm ms per call}, and
# (count, median ms, max ms) of the runs that chose the thread splits
# between the first run and the warm ones (None with one thread).
Run = collections.namedtuple("Run", "latency load first kernels choosing")


class Bench:
    def __init__(self, build, work, machine_args):
        self.fuelc = os.path.join(build, "tools", "fuelc", "fuelc")
        self.fuel_run = os.path.join(build, "tools", "fuel-run", "fuel-run")
        self.work = work
        self.machine_args = machine_args
        self.rows = []
        os.makedirs(work, exist_ok=True)

    def save(self, name, array):
        path = os.path.join(self.work, name + ".npy")
        np.save(path, array)
        return path

    def write_graph(self, name, inputs, nodes, outputs, constants=()):
        path = os.path.join(self.work, name + ".json")
        json.dump({"format": "fuel.graph", "version": 1, "name": name,
                   "inputs": [{"name": n, "dtype": "f32", "shape": s} for n, s in inputs],
                   "constants": [{"name": n, "dtype": "f32", "shape": list(a.shape),
                                  "data": {"file": self.save(n, a)}} for n, a in constants],
                   "nodes": nodes, "outputs": outputs}, open(path, "w"))
        return path

    def plan(self, graph, *flags):
        out = graph.replace(".json", ".fplan")
        subprocess.run([self.fuelc, "plan", graph, *self.machine_args, *flags, "-o", out],
                       check=True)
        return out

    def run(self, artifact, inputs, threads, runs=REPEATS, profile=False):
        """A Run; kernel times (with `profile`) are of the warm runs."""
        cmd = [self.fuel_run, "-q", artifact, "--threads", str(threads), "--bench", str(runs)]
        for name, path in inputs.items():
            cmd += ["--input", f"{name}={path}"]
        if profile:
            cmd.append("--profile")
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        m = re.search(r"load ([\d.]+) ms \(first run ([\d.]+) ms\).* median ([\d.]+) ms", out)
        kernels = {}
        for line in out.splitlines()[1:]:
            parts = line.split("\t")
            if len(parts) == 5 and parts[2].isdigit():
                kernels[parts[0]] = float(parts[3]) / int(parts[2])
        c = re.search(r"(\d+) runs choosing the thread splits \(median ([\d.]+) ms, "
                      r"max ([\d.]+) ms\)", out)
        return Run(float(m.group(3)), float(m.group(1)), float(m.group(2)), kernels,
                   (int(c.group(1)), float(c.group(2)), float(c.group(3))) if c else None)

    def add(self, name, ours, reference, ratio):
        self.rows.append((name, ours, reference, ratio))

    def print_table(self):
        print("| benchmark | fuelc | reference (same run) | ratio |")
        print("|---|---|---|---|")
        for name, ours, ref, ratio in self.rows:
            print(f"| {name} | {ours} | {ref} | {'' if ratio is None else f'{ratio:.2f}'} |")


def median(xs):
    return sorted(xs)[len(xs) // 2]


def timed(fn, runs=REPEATS):
    """Median milliseconds of `fn` over `runs` calls, after one warm-up."""
    fn()
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e3)
    return median(samples)


def ort_latency(ort_dir, path, raw, shape, threads, runs):
    """(median warm ms, cold ms) of model `path` in ONNX Runtime (ort_latency.js),
    its input `x` the raw floats in `raw`; ORT_DIR holds node_modules/onnxruntime-node."""
    out = subprocess.run(
        ["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_latency.js"), path,
         raw, ",".join(map(str, shape)), str(threads), str(runs)],
        check=True, capture_output=True, text=True,
        env={**os.environ, "NODE_PATH": os.path.join(ort_dir, "node_modules")}).stdout.split()
    return float(out[0]), float(out[1])
