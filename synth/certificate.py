"""Certificates: a base schedule, its group and the claims the checker re-derives.

Format ``synth-certificate``, version 1 (one JSON object)::

    {
      "format": "synth-certificate", "version": 1,
      "topology": {"kind": "torus", "shape": [16, 16]},          # synth.registry.build_topology
      "group": {"kind": "torus-gamma"},                          # synth.group.named_group
      "base_schedule": {
        "rounds": 32,
        "components": [
          {"weight": 1, "label": "SP BFS tree, root 0, depth 16",
           "transmissions": [[round, src, dst, "reduce" | "copy", [src, ..., dst]], ...]}
        ]
      },
      "chunking": {"elements": 512, "rule": "proportional-floor"},
      "claims": {"rounds": 32, "round_lower_bound": 31, "psi": "1", "theta": "1", "omega": "1",
                 "weight": "255", ...},                            # exact fractions as strings
      "solver": {...},                                           # solver's own claims, not checkable
      "provenance": {"tool": "synth 0.1.0", "algorithm": "sp-allreduce", "seed": null, "seconds": 0.1}
    }

Routes are vertex lists along directed links.  Component ``t`` lifted by group
element ``i`` is chunk ``t*|G| + i``; ``chunking.elements`` input elements per
node are cut as in :func:`synth.schedule.chunk_elements`.  Every key of
``claims`` is re-derived by ``synth check``; ``solver`` is reported as the
solver's claim, with one exception: a k-hop certificate's ``solver.dual_bound``
(a dual of the layered LP, or the cone-counting bound, :mod:`synth.dualbound`) is re-evaluated by the
checker, which then also checks the claims ``weight_lower_bound`` (the dual's
``bound`` on ``W*`` for depth ``solver.depth_bound``) and ``depth_bound``
(``rounds <= 2 * depth_bound``).  Only ``provenance.seconds`` varies between
identical runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from synth import __version__
from synth.errors import FileFormatError, ScheduleError, SynthError
from synth.fileio import read_json, write_atomic
from synth.group import Group, named_group
from synth.registry import build_topology
from synth.schedule import OPS, BaseSchedule

__all__ = ["Certificate", "FORMAT", "VERSION", "base_to_json", "base_from_json", "read_certificate",
           "write_certificate", "certificate_to_json", "dumps"]

FORMAT = "synth-certificate"
VERSION = 1


@dataclass(frozen=True, eq=False)
class Certificate:
    """A certificate in memory (see the module docstring for the file format)."""

    topology: object
    group: Group
    base: BaseSchedule
    elements: int
    claims: dict = field(default_factory=dict)
    solver: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)


def route_vertices(topology, links) -> list:
    links = np.asarray(links)
    return [int(topology.link_src[links[0]])] + topology.link_dst[links].tolist()


def base_to_json(base: BaseSchedule) -> dict:
    """The ``base_schedule`` object of a certificate."""
    t = base.topology
    comps = []
    for c in range(base.n_components):
        rows = []
        for i in np.flatnonzero(base.component == c):
            rows.append([int(base.round[i]), int(base.src[i]), int(base.dst[i]), OPS[base.op[i]],
                         route_vertices(t, base.route(i))])
        comps.append({"weight": int(base.weights[c]), "label": base.labels[c], "transmissions": rows})
    return {"rounds": int(base.n_rounds), "components": comps}


def base_from_json(topology, data) -> BaseSchedule:
    """Parse a ``base_schedule`` object, with one-line errors for anything malformed."""
    if not isinstance(data, dict) or not isinstance(data.get("components"), list) or not data["components"]:
        raise FileFormatError("base_schedule needs a non-empty 'components' list")
    rounds = data.get("rounds")
    if not isinstance(rounds, int) or rounds < 1:
        raise FileFormatError("base_schedule.rounds must be a positive integer")
    rows, weights, labels = [], [], []
    for c, comp in enumerate(data["components"]):
        if not isinstance(comp, dict) or not isinstance(comp.get("transmissions"), list):
            raise FileFormatError(f"component {c} needs a 'transmissions' list")
        w = comp.get("weight", 1)
        if not isinstance(w, int) or w < 1:
            raise FileFormatError(f"component {c}: weight must be a positive integer")
        weights.append(w)
        labels.append(str(comp.get("label", f"component {c}")))
        for j, tr in enumerate(comp["transmissions"]):
            try:
                rnd, src, dst, op, route = tr
                op_code = OPS.index(op)
                verts = np.asarray(route, dtype=np.int64)
                if verts.ndim != 1 or verts.size < 2:
                    raise ValueError("route needs at least two vertices")
                if verts[0] != src or verts[-1] != dst:
                    raise ValueError("route does not start at src and end at dst")
                links = topology.link_ids(verts[:-1], verts[1:])
                if np.any(links < 0):
                    k = int(np.argmax(links < 0))
                    raise ValueError(f"route step {verts[k]}->{verts[k + 1]} is not a link")
            except (TypeError, ValueError) as exc:
                raise FileFormatError(f"component {c}, transmission {j}: {exc}") from None
            rows.append((c, int(rnd), int(src), int(dst), op_code, links))
    try:
        return BaseSchedule.from_rows(topology, rounds, rows, weights, labels)
    except ScheduleError as exc:
        raise FileFormatError(f"base schedule: {exc}") from None


def certificate_to_json(cert: Certificate) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "topology": cert.topology.spec,
        "group": cert.group.to_json(),
        "base_schedule": base_to_json(cert.base),
        "chunking": {"elements": int(cert.elements), "rule": "proportional-floor"},
        "claims": cert.claims,
        "solver": cert.solver,
        "provenance": {"tool": f"synth {__version__}", **cert.provenance},
    }


def dumps(obj: dict) -> str:
    """Compact, deterministic JSON: one transmission per line inside the base schedule."""
    import json

    head = {k: v for k, v in obj.items() if k != "base_schedule"}
    base = obj["base_schedule"]
    parts = ["{"]
    for k, v in head.items():
        parts.append(f'  {json.dumps(k)}: {json.dumps(v, sort_keys=True)},')
    parts.append(f'  "base_schedule": {{"rounds": {base["rounds"]}, "components": [')
    for ci, comp in enumerate(base["components"]):
        parts.append(f'    {{"weight": {comp["weight"]}, "label": {json.dumps(comp["label"])}, "transmissions": [')
        rows = comp["transmissions"]
        for ri, row in enumerate(rows):
            parts.append("      " + json.dumps(row, separators=(",", ":")) + ("," if ri + 1 < len(rows) else ""))
        parts.append("    ]}" + ("," if ci + 1 < len(base["components"]) else ""))
    parts.append("  ]}")
    parts.append("}")
    return "\n".join(parts) + "\n"


def write_certificate(cert: Certificate, path) -> None:
    """Write ``cert`` atomically."""
    write_atomic(path, dumps(certificate_to_json(cert)))


def read_certificate(path_or_data) -> Certificate:
    """Read and structurally validate a certificate (claims are *not* checked here)."""
    data = read_json(path_or_data) if not isinstance(path_or_data, dict) else path_or_data
    if data.get("format") != FORMAT:
        raise FileFormatError(f"not a synth certificate (format {data.get('format')!r})")
    if data.get("version") != VERSION:
        raise FileFormatError(f"certificate version {data.get('version')!r} is not supported (this is {VERSION})")
    for key in ("topology", "group", "base_schedule", "chunking"):
        if key not in data:
            raise FileFormatError(f"certificate lacks '{key}'")
    try:
        topology = build_topology(data["topology"])
        group = named_group(topology, data["group"])
    except SynthError as exc:
        raise FileFormatError(f"certificate: {exc}") from None
    base = base_from_json(topology, data["base_schedule"])
    elements = data["chunking"].get("elements") if isinstance(data["chunking"], dict) else None
    if not isinstance(elements, int) or isinstance(elements, bool) or elements < 1:
        raise FileFormatError("chunking.elements must be a positive integer")
    for key in ("claims", "solver", "provenance"):
        if not isinstance(data.get(key, {}), dict):
            raise FileFormatError(f"certificate '{key}' must be an object")
    return Certificate(topology, group, base, elements, data.get("claims", {}), data.get("solver", {}),
                       data.get("provenance", {}))
