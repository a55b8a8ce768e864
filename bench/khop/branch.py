"""How far one branching on a vertex's depth lifts the layered LP's bound, and what its sides cost.

The 16x16 gaps of k = 3 and 4 are the LP's integrality gap, so only a branch-and-bound can
close them.  This script measures its first step, per instance: the orbit LP at the root
(:class:`synth.models.khop.lp.LayeredLP`, until it converges or stalls, and its seconds:
the baseline), then, for the ``--probes`` most fractional ``y[v, h]`` (``v`` a vertex orbit
representative, ``h`` a depth), the two sides of the orbital branching
(:meth:`~synth.models.khop.lp.LayeredLP.fix_depth`):

* ``off``: no vertex of ``v``'s orbit at depth ``h``; the LP keeps the root's stabilizer;
* ``on``: ``v`` at depth ``h``, on the LP of ``v``'s stabilizer (larger: fewer orbits).

It prints each side's bound and seconds (and the ratio to the root's), marked ``~`` where
that side's LP stopped on the stall rule before converging (its bound is then the Lagrangian
value of its last duals, and may be below the root's), and ``min``, the bound the split
proves.  A split that lifts ``min`` by a tenth of a unit, at a minute a side, says how far a
plain branch-and-bound is from closing a gap of seven units.

Run: ``python bench/khop/branch.py [--set quick|issue] [--only 16x16:3] [--probes 2]``
(``quick``: 8x8 and 10x10, k = 3, seconds; ``issue``: 16x16, k = 3 and 4: a minute a probe at
k = 3, and at k = 4 the first probe's ``on`` side, on the trivial stabilizer of ``(3, 4)``,
took 24 minutes).
"""

from __future__ import annotations

import numpy as np

from _common import Col, Ratio, Table, parse_args, parser, timed_orbit_lp

from synth.models.forest.instance import root_stabilizer
from synth.topology.torus import parse_torus

SETS = {
    "quick": [("8x8", 3), ("10x10", 3)],
    "issue": [("16x16", 3), ("16x16", 4)],
}


def _bound(side):
    """A side's bound, marked ``~`` where its LP stopped on the stall rule before converging."""
    return lambda r: "" if r.get(side) is None else f"{r[side]:>8.3f}{' ' if r[side + '_converged'] else '~'}"


COLUMNS = [Col("torus", "shape", ">6"), Col("k", fmt=">3"), Col("vertex", fmt=">9"), Col("h", fmt=">2"),
           Col("y", fmt=">6.3f"), Col("orbit", fmt=">5"), Col("off", fmt=">9", text=_bound("off")),
           Col("s", "off_s", ">6.1f"), Ratio("x root", "off_s", "off_s", fmt=">6.1f", key="off_x_root"),
           Col("on", fmt=">9", text=_bound("on")), Col("s", "on_s", ">6.1f"),
           Ratio("x root", "on_s", "off_s", fmt=">6.1f", key="on_x_root"),
           Col("min", fmt=">9.3f"), Col("+root", "lift", ">+6.3f")]


def main(argv=None):
    ap = parser(__doc__, SETS)
    ap.add_argument("--probes", type=int, default=2, help="fractional depth variables to branch on")
    a = parse_args(ap, argv)
    # the root LP's row is the baseline of its instance: its bound and seconds sit in the off columns
    table = Table(COLUMNS, baseline=lambda r: r["vertex"] == "root", group=("shape", "k"), json=a.json)
    for shape, k in a.instances:
        t = parse_torus(shape)
        G = root_stabilizer(t)
        root, res, t_root = timed_orbit_lp(t, k, G)
        table.add({"shape": shape, "k": k, "vertex": "root", "off": res.bound, "off_converged": res.converged,
                   "off_s": t_root})
        y = root.x[:root.n_y].reshape(root.nrep, k)
        for flat in np.argsort(np.abs(y - 0.5), axis=None, kind="stable")[:a.probes]:
            ri, h0 = divmod(int(flat), k)
            v, h = int(root.reps[ri]), h0 + 1
            row = {"shape": shape, "k": k, "h": h, "y": y[ri, h0], "orbit": int(root.orb[ri]),
                   "vertex": "(" + ",".join(str(int(c)) for c in t.coords(np.array([v]))[0]) + ")"}
            for side, perms, value in (("off", G, 0), ("on", G[G[:, v] == v], 1)):
                _lp, r, seconds = timed_orbit_lp(t, k, perms, fix=(v, h, value))
                row.update({side: r.bound, side + "_converged": r.converged, side + "_s": seconds})
            row["min"] = min(row["off"], row["on"])
            row["lift"] = row["min"] - res.bound
            table.add(row)


if __name__ == "__main__":
    main()
