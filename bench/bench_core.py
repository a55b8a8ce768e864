"""Core performance figures: lift + explicit check of SP-allreduce, symmetric checks.

Run: ``python bench/bench_core.py [--big]``.  Prints seconds and peak RSS; the
baseline in the same process is a plain numpy ``np.add.at`` scatter of the same
size, so the ratio says how the executor compares with the obvious approach.
"""

import argparse
import resource
import sys
import time

import numpy as np

from synth.check import execute, measure_explicit, measure_symmetric, round_lower_bound
from synth.group import torus_gamma
from synth.lift import lift, lifted_weights
from synth.schedule import chunk_elements
from synth.sp import sp_allreduce
from synth.torus import parse_torus


def peak_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def explicit(shape):
    t0 = time.perf_counter()
    t = parse_torus(shape)
    g = torus_gamma(t)
    b = sp_allreduce(t)
    t1 = time.perf_counter()
    s = lift(b, g)
    t2 = time.perf_counter()
    errors = execute(s)
    t3 = time.perf_counter()
    m = measure_explicit(s, chunk_elements(lifted_weights(b, g), g.order))
    t4 = time.perf_counter()
    print(f"explicit {shape}: {s.n_transmissions:,} transmissions; group+base {t1 - t0:.2f} s, lift {t2 - t1:.2f} s, "
          f"execute {t3 - t2:.2f} s, loads {t4 - t3:.2f} s, total {t4 - t0:.2f} s; ok={not errors}, "
          f"omega={m.omega}, peak RSS {peak_gib():.2f} GiB")
    return s.n_transmissions, t3 - t2


def symmetric(shape):
    t0 = time.perf_counter()
    t = parse_torus(shape)
    g = torus_gamma(t)
    t1 = time.perf_counter()
    b = sp_allreduce(t)
    errors = execute(b.as_schedule())
    m = measure_symmetric(b, g, chunk_elements(lifted_weights(b, g), g.order))
    bound = round_lower_bound(t, g)
    t2 = time.perf_counter()
    print(f"symmetric {shape}: group verify {t1 - t0:.2f} s, base+metrics+bound {t2 - t1:.2f} s, "
          f"total {t2 - t0:.2f} s; ok={not errors}, rounds={m.rounds}, bound={bound[0]}")


def baseline_add_at(n):
    vals = np.zeros(n, dtype=np.uint64)
    idx = np.random.default_rng(0).integers(0, n, n)
    t0 = time.perf_counter()
    np.add.at(vals, idx, np.ones(n, dtype=np.uint64))
    return time.perf_counter() - t0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--big", action="store_true", help="include 64x64 explicit (needs ~4 GiB)")
    args = ap.parse_args()
    n, secs = explicit("32x32")
    base = baseline_add_at(n)
    print(f"  executor vs np.add.at on {n:,} updates: {base:.2f} s / {secs:.2f} s = {base / secs:.1f}x")
    for shape in ("16x16x16", "8x8x8x8", "64x64"):
        symmetric(shape)
    if args.big:
        explicit("64x64")
    sys.exit(0)
