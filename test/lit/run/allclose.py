#!/usr/bin/python3
"""Usage: allclose.py GOT.npy WANT.npy [RTOL ATOL]: exits 1 (printing the
largest difference) unless the arrays have the same shape and dtype and are
close (numpy.allclose; default rtol 2e-5, atol 2e-6)."""
import sys

import numpy as np

got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
rtol, atol = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) > 4 else (2e-5, 2e-6)
if got.shape != want.shape or got.dtype != want.dtype:
    sys.exit(f"{sys.argv[1]}: {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}")
if not np.allclose(got, want, rtol=rtol, atol=atol):
    sys.exit(f"{sys.argv[1]}: max abs difference {np.abs(got - want).max()}")
