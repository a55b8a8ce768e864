"""Twisted against plain tori of the same shape (issue 40): rounds, W, Omega and modeled goodput by size.

Run: ``python bench/machines.py [--shapes 4x8,4x4x8,4x8x8] [--sizes 64KiB,1MiB,16MiB,256MiB]``.

For each shape: the SP-allreduce (and the forest plus exchange) on the twisted torus and on the
plain torus of the same shape, each certified by ``synth.check.claims.certify``; modeled time and
goodput (``synth.analysis.cost``: 400 Gb/s links, 400 ns per hop, alpha 1 us) as a fraction of
the bound ``D B / 2``, and the Ring baseline on the twisted torus.  A SimGrid replay of the same
certificates is ``synth simulate`` (left to the lead: ``synth solve --twisted 4x4x8 --out c.json``
then ``synth simulate c.json --size 1MiB``).
"""

import argparse

from synth.analysis.cost import goodput, goodput_bound, model_time
from synth.baselines import build_baseline
from synth.check import measure_symmetric
from synth.schedule import chunk_elements
from synth.schedule.lift import lifted_weights
from synth.solving import solve
from synth.topology.lattice import twisted
from synth.topology.torus import torus
from synth.units import parse_size


def _rows(name, t, exchange, sizes):
    r = solve(t, exchange=exchange, time_limit=30)
    cert = r.certificate
    c = cert.claims
    row = {"instance": name, "p": t.n_vertices, "H": t.diameter, "rounds": c["rounds"], "W": c["weight"],
           "psi": c["psi"], "theta": c["theta"], "omega": c["omega"]}
    for size in sizes:
        elements = parse_size(size) // 4
        m = measure_symmetric(cert.base, cert.group, chunk_elements(lifted_weights(cert.base, cert.group), elements))
        row[f"G/Gmax {size}"] = f"{goodput(m) / goodput_bound(t):.3f}"
        row[f"T {size} (us)"] = f"{model_time(m) * 1e6:.1f}"
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="4x8,4x4x8,4x8x8")
    ap.add_argument("--sizes", default="64KiB,1MiB,16MiB,256MiB")
    args = ap.parse_args(argv)
    sizes = [s for s in args.sizes.split(",") if s]
    rows = []
    for text in args.shapes.split(","):
        shape = tuple(int(x) for x in text.split("x"))
        for exchange in (False, True):
            tag = " exchange" if exchange else ""
            rows.append(_rows(f"twisted {text}{tag}", twisted(shape), exchange, sizes))
            rows.append(_rows(f"torus {text}{tag}", torus(shape), exchange, sizes))
        m = build_baseline("ring", twisted(shape)).measure()
        rows.append({"instance": f"ring on twisted {text}", "p": twisted(shape).n_vertices, "rounds": m.rounds,
                     "psi": str(m.psi), "theta": str(m.theta), "omega": str(m.omega)})
    keys = list(dict.fromkeys(k for row in rows for k in row))
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "")) for k in keys) + " |")


if __name__ == "__main__":
    main()
