"""User-supplied topologies: a JSON graph with optional compute vertices and group generators.

File format ``synth-topology``, version 1::

    {"format": "synth-topology", "version": 1, "name": "my fabric",
     "vertices": 8,
     "links": [[0, 1], [1, 2], ...],      # connections (u, v)
     "directed": false,                   # false: each connection is two directed links
     "compute": [0, 1, ...],              # optional, default every vertex
     "bandwidth": [300, 25, ...],         # optional, GB/s per entry of "links", default 1
     "latency": [0.5, 2, ...],            # optional, µs per entry of "links", default 0
     "generators": [[...], ...]}          # optional vertex permutations of a symmetry group

``bandwidth`` and ``latency`` are parallel to ``links``: an undirected entry gives both of its
directed links that value.  A connection listed more than once (in either direction, undirected)
is one link whose bandwidth is the sum of the entries' (parallel cables, such as the xGMI lanes
of an MI250); its entries must then agree on the latency.  In the spec kept in certificates the
links are the directed ones, sorted, and the two lists follow them.

Without ``generators`` the group is searched (:mod:`synth.symmetry.search`); the base
schedule is a shortest-path tree (:mod:`synth.schedule.user`).

Examples
--------
>>> spec = {"format": "synth-topology", "version": 1, "vertices": 4,
...         "links": [[0, 1], [1, 2], [2, 3], [3, 0]]}
>>> t = topology_from_json(spec)
>>> t.n_links
8
>>> t = topology_from_json({**spec, "links": [[0, 1], [1, 2], [2, 3], [3, 0], [1, 0]],
...                         "bandwidth": [2, 1, 1, 1, 3]})
>>> t.link_bandwidth[t.link_ids([0, 1, 1], [1, 0, 2])].tolist()
[5.0, 5.0, 1.0]
"""

from __future__ import annotations

import numpy as np

from synth.errors import FileFormatError, TopologyError
from synth.fileio import printable, read_json
from synth.topology.base import Topology, check_size, is_int, link_values

__all__ = ["topology_from_json", "read_topology", "links_from_spec", "links_spec_size"]

FORMAT = "synth-topology"
#: the keys a topology file may hold
FILE_KEYS = frozenset({"format", "version", "name", "vertices", "links", "directed", "compute", "bandwidth",
                       "latency", "generators"})


def topology_from_json(data: dict) -> Topology:
    """Build the topology a ``synth-topology`` object describes."""
    if not isinstance(data, dict) or data.get("format", FORMAT) != FORMAT or data.get("version", 1) != 1:
        raise FileFormatError("not a synth-topology version 1 object")
    n, links, compute = data.get("vertices"), data.get("links"), data.get("compute", [])
    if not is_int(n) or not isinstance(links, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and is_int(pair[0]) and is_int(pair[1]) for pair in links):
        raise FileFormatError("a topology needs 'vertices' (an integer count) and 'links' ([[u, v], ...] of "
                              "integer vertex ids)")
    if not isinstance(compute, list) or not all(is_int(c) for c in compute):
        raise FileFormatError("a topology's 'compute' must be a list of integer vertex ids")
    if "compute" in data and (not compute or len(set(compute)) != len(compute)):
        raise FileFormatError("a topology's 'compute' must list distinct vertex ids, at least one (omit it: every "
                              "vertex computes)")
    if not isinstance(data.get("directed", False), bool):
        raise FileFormatError("a topology's 'directed' must be true or false")
    try:
        check_size(printable(data.get("name", "user topology"))[:200], n,
                   len(links) * (1 if data.get("directed") else 2))
    except TopologyError as exc:
        raise FileFormatError(f"topology: {exc}") from None
    unknown = sorted(set(data) - FILE_KEYS)
    if unknown:
        raise FileFormatError(f"topology: unknown key {unknown[0][:40]!r}; a synth-topology object has "
                              + ", ".join(sorted(FILE_KEYS)))
    pairs = np.asarray(links, dtype=np.int64).reshape(-1, 2)
    if pairs.size and (pairs.min() < 0 or pairs.max() >= n):
        raise FileFormatError(f"topology: a link endpoint lies outside 0..{n - 1}")
    try:
        values = {key: link_values(data[key], len(links), key, key == "bandwidth")
                  for key in ("bandwidth", "latency") if key in data}
    except TopologyError as exc:
        raise FileFormatError(f"topology: {exc}") from None
    if not data.get("directed", False):
        pairs = np.concatenate([pairs, pairs[:, ::-1]])
        values = {key: np.concatenate([v, v]) for key, v in values.items()}
        pairs, values = _merge_parallel(pairs, values, n)
    spec = {"kind": "links", "name": printable(data.get("name", "user topology"))[:200], "vertices": n,
            "links": pairs.tolist()}
    if "compute" in data:
        spec["compute"] = [int(c) for c in data["compute"]]
    spec.update({key: v.tolist() for key, v in values.items()})
    try:
        t = Topology.from_links(spec["name"], spec, n, pairs, spec.get("compute"), **values)
    except TopologyError as exc:
        raise FileFormatError(f"topology: {exc}") from None
    if t.n_compute < 2:
        raise FileFormatError(f"{t.name}: an allreduce needs at least 2 compute vertices, this topology has "
                              f"{t.n_compute}")
    for v in t.compute[:1]:
        if np.any(t.bfs([int(v)])[t.compute] < 0):
            raise TopologyError(f"{t.name}: some compute vertex cannot be reached from vertex {int(v)}")
    return t


def _merge_parallel(pairs, values, n):
    """Sorted distinct directed links; a link listed several times sums its bandwidths (latencies must agree)."""
    keys = pairs[:, 0] * max(int(n), 1) + pairs[:, 1]
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    merged = {}
    if "bandwidth" in values:
        merged["bandwidth"] = np.bincount(inverse, weights=values["bandwidth"], minlength=uniq.size)
    if "latency" in values:
        lat = values["latency"]
        lo = np.full(uniq.size, np.inf)
        hi = np.full(uniq.size, -np.inf)
        np.minimum.at(lo, inverse, lat)
        np.maximum.at(hi, inverse, lat)
        if np.any(lo != hi):
            u, v = pairs[first[int(np.argmax(lo != hi))]].tolist()
            raise FileFormatError(f"topology: the connection {u}-{v} is listed more than once with different "
                                  "latencies")
        merged["latency"] = lo
    return pairs[first], merged


def links_from_spec(spec) -> Topology:
    """A ``links`` spec (how a user graph is stored in certificates): ``vertices``, ``links``, ``compute``."""
    n, links, compute = spec.get("vertices"), spec.get("links"), spec.get("compute")
    if not is_int(n) or not isinstance(links, list) or not (compute is None or isinstance(compute, list)):
        raise TopologyError("a links spec needs integer 'vertices', 'links' ([[u, v], ...]) and optionally "
                            "'compute' (a list of vertex ids)")
    if not all(isinstance(pair, list) and len(pair) == 2 and all(is_int(x) for x in pair) for pair in links) \
            or not all(is_int(c) for c in compute or ()):
        raise TopologyError("a links spec's 'links' must be [u, v] pairs of integer vertex ids, and 'compute' "
                            "integer ids")
    values = {key: link_values(spec[key], len(links), key, key == "bandwidth")
              for key in ("bandwidth", "latency") if key in spec}
    return Topology.from_links(str(spec.get("name", "graph"))[:200], dict(spec), n, links, compute, **values)


def links_spec_size(spec):
    """``(V, E, None)`` of a ``links`` spec (the compute count is left to the build); None if malformed.

    The links are listed in the file itself: its size bounds the work already.
    """
    n, links = spec.get("vertices"), spec.get("links")
    if not is_int(n) or not isinstance(links, list):
        return None
    return n, len(links), None


def read_topology(path):
    """Read a topology file: returns ``(topology, generators or None)``.

    The file is read bounded and strictly (:func:`synth.fileio.read_json`); its size is checked
    against :func:`synth.topology.base.check_size` before any array of the graph's size is made.
    """
    data = read_json(path)
    if not isinstance(data, dict):
        raise FileFormatError(f"{path}: not a synth-topology version 1 object")
    gens = data.get("generators")
    if gens is not None and not (isinstance(gens, list) and all(
            isinstance(g, list) and all(is_int(v) for v in g) for g in gens)):
        raise FileFormatError(f"{path}: 'generators' must be lists of integer vertex ids")
    t = topology_from_json(data)
    if gens is not None and (not gens or any(len(g) != t.n_vertices for g in gens)):
        bad = next((i for i, g in enumerate(gens) if len(g) != t.n_vertices), None)
        raise FileFormatError(f"{path}: 'generators' must be a non-empty list of vertex permutations, each listing "
                              f"the {t.n_vertices} vertex images" + ("" if bad is None else
                                                                     f" (generator {bad} lists {len(gens[bad])})"))
    return t, gens
