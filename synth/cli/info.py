"""``synth info``: facts about a topology."""

from __future__ import annotations

import json
import sys

import numpy as np

from synth.cli._common import EXIT_OK, add_topology_args, print_table, topology_from_args
from synth.solving.summary import ROUND_BOUND_SCOPE
from synth.check import round_lower_bound
from synth.check.eccentricity import diameter_bounds
from synth.symmetry.spec import lifting_group
from synth.topology.failures import Damaged
from synth.topology.link_classes import bandwidth_classes

__all__ = ["add_parser", "cmd_info"]


def cmd_info(args) -> int:
    """Facts about a topology: size, diameter, distances, symmetry group, round lower bound, and its links
    by class and bandwidth when they are not all alike.

    Example: ``synth info --torus 8x8x8``
    """
    t = topology_from_args(args)
    g = lifting_group(t, args.generators)
    bound, witness = round_lower_bound(t, g)
    first = int(t.compute[0])
    dist = t.bfs([first])[t.compute]
    lo, hi = _diameter(t, g)
    info = {"topology": t.name, "vertices": t.n_vertices, "compute_nodes": t.n_compute, "links": t.n_links,
            "out_degree": sorted(set(np.bincount(t.link_src, minlength=t.n_vertices)[t.compute].tolist())),
            "diameter": lo if lo == hi else None, **({} if lo == hi else {"diameter_bounds": [lo, hi]}),
            "distance_distribution": np.bincount(dist).tolist(),
            "group": g.name if g else None, "group_order": g.order if g else None,
            "link_orbits": g.n_link_orbits if g else None, "orbit_sizes": g.orbit_sizes.tolist() if g else None,
            "regular_on_links": g.is_regular if g else None,
            "round_lower_bound": bound, "bound_witness": witness}
    classes = bandwidth_classes(t) if t.has_bandwidths or t.has_latencies else []
    if classes:
        info["link_classes"] = [c.to_json() for c in classes]
    if args.json:
        print(json.dumps({**info, "round_lower_bound_scope": ROUND_BOUND_SCOPE}))
    else:
        shown = {**info, "orbit_sizes": _sizes(info["orbit_sizes"])}
        if classes:
            shown["link_classes"] = "; ".join(c.describe() for c in classes)
        if lo != hi:
            shown.pop("diameter_bounds")
            shown["diameter"] = f"{lo}..{hi} (bounds: the exact value needs a BFS from every vertex orbit)"
        print_table(shown, sys.stdout)
    return EXIT_OK


def _diameter(t, group):
    """``(lo, hi)``: the closed form when the topology has one (``lo == hi``), else :func:`diameter_bounds`."""
    if isinstance(t, Damaged) or getattr(t, "diameter", None) is None:
        return diameter_bounds(t, group)
    return t.diameter, t.diameter


def _sizes(sizes, show=8):
    """Orbit sizes for a terminal: the list when short, else each size with its count (``--json``: the list).

    >>> _sizes([4, 4, 2])
    [4, 4, 2]
    >>> _sizes([96] * 48 + [192] * 12)
    '96 (48 orbits), 192 (12 orbits)'
    """
    if sizes is None or len(sizes) <= show:
        return sizes
    values, counts = np.unique(sizes, return_counts=True)
    return ", ".join(f"{v} ({c} orbits)" for v, c in zip(values.tolist(), counts.tolist()))


def add_parser(sub) -> None:
    """Add ``synth info`` to the subparsers ``sub``."""
    i = sub.add_parser("info", help="facts about a topology", description=cmd_info.__doc__)
    add_topology_args(i)
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=cmd_info)
