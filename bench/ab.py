"""Paired A/B latency of two artifacts of one model, in one process.

    ab.py BUILD_DIR A.fplan B.fplan --input NAME=FILE.npy [--threads T] [--pairs N]

Judges a change to the compiler or its kernels: plan the model before and
after, then compare. Both artifacts are loaded by the Python API and run in
alternation (A B, then B A), so both see the same machine from one moment
to the next; the figure is the median over pairs of B's latency over A's.
Separate `fuel-run --bench` processes, even interleaved, compare minutes of
a VM whose speed swings by 2x from one minute to the next, and need larger
changes to show. Run it with A against A first: how far that median lies
from 1 is the smallest change it can tell apart (MobileNetV2, one thread,
four runs of 200 pairs: 0.983-1.028; two threads, three runs: 0.988-1.019,
2026-12-05).
Like every benchmark here it never asserts a time.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", help="build directory (its python/ holds the fuel module)")
    parser.add_argument("a", help="the reference artifact")
    parser.add_argument("b", help="the artifact compared with it")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input of both artifacts (repeatable)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=300)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import fuel

    inputs = {}
    for spec in args.input:
        name, sep, path = spec.partition("=")
        if not sep:
            parser.error(f"--input {spec}: expected NAME=FILE.npy")
        inputs[name] = np.load(path)
    sessions = [fuel.Session(path, threads=args.threads) for path in (args.a, args.b)]
    # Warm up until neither session still chooses its thread splits: those
    # runs are not the steady state (fuel_session_choosing).
    for session in sessions:
        session.run(inputs)
        while session.choosing:
            session.run(inputs)
    times = ([], [])
    for pair in range(args.pairs):
        for which in (0, 1) if pair % 2 == 0 else (1, 0):
            if args.threads > 1:
                # The other session's workers spin for up to 2 ms after its
                # run (ThreadPool.cpp): let them sleep first.
                time.sleep(0.003)
            start = time.perf_counter()
            sessions[which].run(inputs)
            times[which].append(time.perf_counter() - start)
    a, b = times
    ratios = [y / x for x, y in zip(a, b)]
    low, _, high = statistics.quantiles(ratios, n=4)
    print(f"A {statistics.median(a) * 1e3:.3f} ms, B {statistics.median(b) * 1e3:.3f} ms "
          f"(medians of {args.pairs}, {args.threads} thread(s)); B / A paired: median "
          f"{statistics.median(ratios):.3f}, quartiles {low:.3f}-{high:.3f}")


if __name__ == "__main__":
    main()
