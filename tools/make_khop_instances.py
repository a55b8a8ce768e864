"""Write the k-hop certificates of ``instances/torus/`` (the depths of the paper's Table 1).

Each instance is ``synth solve --depth K --torus SHAPE --time-limit S --seed 0 --out
instances/torus/khop-SHAPE-kK.json``, run through the CLI so the files are exactly what
a user gets.  Depths of Table 1 below ``H`` (``K = H`` is SP-allreduce, ``sp-*.json``).

Run: ``python tools/make_khop_instances.py [--time-limit 600] [--only 16x16:3,...] [--cache-dir DIR] [--improve]``.
The solver cache is bypassed by default (a fresh ``--cache-dir``), so the time limit is
the real one; hours at 600 s per instance.  ``--improve`` starts each solve from the
tree of the existing file (``synth solve --start``), so a file never gets heavier.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from synth.cli import main as synth

TABLE1 = {"8x8": (1, 3, 5), "16x16": (3, 4, 7, 15), "32x32": (6, 9, 11, 12, 20, 22), "64x64": (10, 11, 14)}
OUT = Path(__file__).resolve().parents[1] / "instances" / "torus"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--only", help="SHAPE:K,SHAPE:K (default: all of Table 1)")
    ap.add_argument("--cache-dir", help="solver cache to use (default: a fresh temporary one)")
    ap.add_argument("--improve", action="store_true", help="start from the tree of the existing file")
    a = ap.parse_args(argv)
    todo = [(s, k) for s, ks in TABLE1.items() for k in ks]
    if a.only:
        todo = [(p.split(":")[0], int(p.split(":")[1])) for p in a.only.split(",")]
    os.environ["SYNTH_CACHE_DIR"] = a.cache_dir or tempfile.mkdtemp(prefix="synth-cache-")
    failed = 0
    for shape, k in todo:
        out = OUT / f"khop-{shape}-k{k}.json"
        print(f"== {shape} k={k} -> {out.name}", file=sys.stderr, flush=True)
        start = ["--start", str(out)] if a.improve and out.exists() else []
        code = synth(["solve", "--depth", str(k), "--torus", shape, "--time-limit", f"{a.time_limit:g}",
                      "--seed", "0", *start, "--out", str(out)])
        failed += code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
