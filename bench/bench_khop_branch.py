"""How far one branching on a vertex's depth lifts the layered LP's bound, and what its sides cost.

The 16x16 gaps of k = 3 and 4 are the LP's integrality gap, so only a branch-and-bound can
close them.  This script measures its first step, per instance: the orbit LP at the root
(:class:`synth.models._khop_lp.LayeredLP`, until it converges or stalls, and its seconds:
the baseline), then, for the ``--probes`` most fractional ``y[v, h]`` (``v`` a vertex orbit
representative, ``h`` a depth), the two sides of the orbital branching
(:meth:`~synth.models._khop_lp.LayeredLP.fix_depth`):

* ``off``: no vertex of ``v``'s orbit at depth ``h``; the LP keeps the root's stabilizer;
* ``on``: ``v`` at depth ``h``, on the LP of ``v``'s stabilizer (larger: fewer orbits).

It prints each side's bound and seconds (and the ratio to the root's), marked ``~`` where
that side's LP stopped on the stall rule before converging (its bound is then the Lagrangian
value of its last duals, and may be below the root's), and ``min``, the bound the split
proves.  A split that lifts ``min`` by a tenth of a unit, at a minute a side, says how far a
plain branch-and-bound is from closing a gap of seven units.

Run: ``python bench/bench_khop_branch.py [--set quick|issue] [--only 16x16:3] [--probes 2]``
(``quick``: 8x8 and 10x10, k = 3, seconds; ``issue``: 16x16, k = 3 and 4: a minute a probe at
k = 3, and at k = 4 the first probe's ``on`` side, on the trivial stabilizer of ``(3, 4)``,
took 24 minutes).
"""

from __future__ import annotations

import numpy as np

from synth.models._khop_instance import root_stabilizer
from synth.torus import parse_torus

# the sibling script (this directory is on sys.path when run)
from bench_khop import instance_parser, instances, timed_orbit_lp

SETS = {
    "quick": [("8x8", 3), ("10x10", 3)],
    "issue": [("16x16", 3), ("16x16", 4)],
}


def _side(t, k, perms, v, h, value):
    _lp, res, seconds = timed_orbit_lp(t, k, perms, fix=(v, h, value))
    return res.bound, seconds, "" if res.converged else "~"


def main(argv=None):
    ap = instance_parser(__doc__, SETS)
    ap.add_argument("--probes", type=int, default=2, help="fractional depth variables to branch on")
    a = ap.parse_args(argv)
    todo = instances(a, SETS)
    print(f"{'torus':>6} {'k':>3} {'vertex':>9} {'h':>2} {'y':>6} {'orbit':>5} {'off':>9} {'s':>6} {'x root':>6} "
          f"{'on':>9} {'s':>6} {'x root':>6} {'min':>9} {'+root':>6}", flush=True)
    for shape, k in todo:
        t = parse_torus(shape)
        G = root_stabilizer(t)
        root, res, t_root = timed_orbit_lp(t, k, G)
        print(f"{shape:>6} {k:>3} {'root':>9} {'':>2} {'':>6} {'':>5} {res.bound:>9.3f} {t_root:>6.1f}", flush=True)
        y = root.x[:root.n_y].reshape(root.nrep, k)
        for flat in np.argsort(np.abs(y - 0.5), axis=None, kind="stable")[:a.probes]:
            ri, h0 = divmod(int(flat), k)
            v, h = int(root.reps[ri]), h0 + 1
            off, s_off, c_off = _side(t, k, G, v, h, 0)
            on, s_on, c_on = _side(t, k, G[G[:, v] == v], v, h, 1)
            low = min(off, on)
            coord = "(" + ",".join(str(int(c)) for c in t.coords(np.array([v]))[0]) + ")"
            print(f"{shape:>6} {k:>3} {coord:>9} {h:>2} {y[ri, h0]:>6.3f} {int(root.orb[ri]):>5} "
                  f"{off:>8.3f}{c_off or ' '} {s_off:>6.1f} {s_off / t_root:>6.1f} {on:>8.3f}{c_on or ' '} "
                  f"{s_on:>6.1f} {s_on / t_root:>6.1f} {low:>9.3f} {low - res.bound:>+6.3f}", flush=True)


if __name__ == "__main__":
    main()
