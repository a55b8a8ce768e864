"""Damaged and irregular networks (issue 41): the packing model's bandwidth term against the certified bound.

Run: ``python bench/failures.py [--set quick|scale] [--only NETWORK:FAILURES,...] [--json [FILE]]``.

``NETWORK`` is a torus shape (``8x8``) or ``mesh`` + a shape (``mesh8x8``, built as a topology file
would be); ``FAILURES`` is ``none`` or failures joined by ``+``: ``l0.0-0.1`` a failed link, ``n1.1`` a
failed chip.  Each row solves as ``synth solve`` does (:func:`synth.solving.solve`: the packing path),
certifies, and prints the rounds against the one-hop round bound, the LP's share of the volume bound
(the best of the layered class), the certified schedule's share of the certified bound
(``bandwidth_fraction``, re-derived by ``synth check``), its share of the layered class's certified bound
(``class %``: the LP's dual, docs/bounds.md section 5; blank where the local LP gives none), chunks and
seconds; the healthy torus beside it.
The ``scale`` set (16x16 with one and eight failed links, 32x32 with one) takes minutes each.
"""

import itertools

from _harness import Col, Table, parse_args, parser, timed

from synth.solving import solve
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus
from synth.topology.user import topology_from_json

#: the 8 failed links of docs/failures.md section 6
EIGHT = "+".join("l" + pair for pair in "0.0-0.1 2.3-2.4 4.6-4.7 6.9-6.10 8.12-8.13 10.15-10.0 12.2-13.2 14.8-15.8".split())
SETS = {
    "quick": [("8x8", "none"), ("8x8", "l0.0-0.1"), ("8x8", "l0.0-0.1+l4.4-4.5"),
              ("8x8", "l0.0-0.1+l2.2-2.3+l4.4-4.5+l6.6-6.7"), ("8x8", "n1.1"), ("4x4x4", "l0.0.0-0.0.1"),
              ("mesh8x8", "none"), ("mesh4x4x4", "none")],
    "scale": [("16x16", "l0.0-0.1"), ("16x16", EIGHT), ("32x32", "l0.0-0.1")],
}
COLUMNS = [Col("network", fmt="<10"), Col("failures", fmt="<24"), Col("algorithm", fmt="<16"),
           Col("rounds", fmt=">6"), Col("bound", "round_bound", ">5"), Col("LP %", "lp", ">6.2f"),
           Col("cert %", "cert", ">7.2f"), Col("class %", "klass", ">7.2f"), Col("chunks", fmt=">7"), Col("seconds", fmt=">8.1f")]


def mesh(shape):
    """A mesh (no wrap-around) as the topology file a user would write."""
    sides = [int(s) for s in shape.split("x")]
    index = {c: i for i, c in enumerate(itertools.product(*[range(s) for s in sides]))}
    links = [[i, index[c[:d] + (c[d] + 1,) + c[d + 1:]]] for c, i in index.items()
             for d in range(len(sides)) if c[d] + 1 < sides[d]]
    return topology_from_json({"format": "synth-topology", "version": 1, "name": f"mesh {shape}",
                               "vertices": len(index), "links": links})


def network(name, failures):
    t = mesh(name[4:]) if name.startswith("mesh") else parse_torus(name)
    if failures == "none":
        return t
    items = failures.split("+")
    return damage(t, parse_failures(t, [f[1:] for f in items if f[0] == "l"], [f[1:] for f in items if f[0] == "n"]))


def main(argv=None):
    args = parse_args(parser(__doc__, SETS, fields=(str, str), spec="NETWORK:FAILURES"), argv)
    table = Table(COLUMNS, json=args.json, title="== packing on damaged and irregular networks")
    for name, failures in args.instances:
        t = network(name, failures)
        result, seconds = timed(solve, t)
        c = result.certificate
        num, _, den = c.claims["bandwidth_fraction"].partition("/")
        lp = c.solver.get("lp_fraction_of_volume_bound")
        klass = c.claims.get("class_bound")
        table.add({"network": name, "failures": failures, "algorithm": c.provenance.get("algorithm"),
                   "rounds": c.claims["rounds"], "round_bound": c.claims["round_lower_bound"],
                   "lp": None if lp is None else 100 * lp, "cert": 100 * int(num) / int(den or 1),
                   "klass": None if klass is None else 100 * klass["fraction"],
                   "chunks": c.claims["chunks"], "seconds": seconds})


if __name__ == "__main__":
    main()
