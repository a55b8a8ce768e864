"""k-hop trees through the public API, against an independent exact MILP on tiny tori."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from synth.check.claims import certify
from synth.schedule.forest import forest_depths
from synth.solving.khop import khop_tree, tree_base
from synth.solving.record import tighten
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import parse_torus


def reference_optimum(t, k):
    """W*(k) by a plain hop-indexed MILP (z[i, j, h]: j at depth h under i), written independently here."""
    V = t.n_vertices
    D = t.dist(np.arange(V)[:, None], np.arange(V)[None, :])
    idx = {}
    for h in range(1, k + 1):
        for j in range(1, V):
            for i in ([0] if h == 1 else range(1, V)):
                if i != j:
                    idx[i, j, h] = len(idx)
    c = np.zeros(len(idx))
    for (i, j, h), n in idx.items():
        c[n] = D[i, j]
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0
    for j in range(1, V):  # every non-root vertex has one (parent, depth)
        for (i, jj, h), n in idx.items():
            if jj == j:
                rows.append(r), cols.append(n), vals.append(1)
        lo.append(1), hi.append(1)
        r += 1
    for (i, j, h), n in idx.items():  # a parent at depth h-1 must itself be placed at depth h-1
        if h > 1:
            rows.append(r), cols.append(n), vals.append(1)
            for (a, b, g), m in idx.items():
                if b == i and g == h - 1:
                    rows.append(r), cols.append(m), vals.append(-1)
            lo.append(-np.inf), hi.append(0)
            r += 1
    A = sp.csr_matrix((vals, (rows, cols)), shape=(r, len(idx)))
    res = milp(c, constraints=LinearConstraint(A, lo, hi), integrality=np.ones(len(idx)), bounds=Bounds(0, 1))
    assert res.status == 0
    return int(round(res.fun))


@pytest.mark.parametrize("shape,ks", [("3x3", [1, 2]), ("4x4", [1, 2, 3]), ("3x4", [1, 2, 3]), ("5", [1, 2]),
                                      ("3x3x3", [1, 2])])
def test_khop_matches_reference(shape, ks):
    t = parse_torus(shape)
    for k in ks:
        rec = khop_tree(t, k, time_limit=30, cache=False)
        assert rec.status == "optimal"
        assert rec.weight == rec.lower_bound == reference_optimum(t, k)
        depth = forest_depths(t, rec.parent, [0])
        assert depth.max() == rec.depth <= k
        kids = np.flatnonzero(rec.parent >= 0)
        assert int(t.dist(kids, rec.parent[kids]).sum()) == rec.weight


def test_certified_khop_schedule():
    t = parse_torus("6x6")
    rec = khop_tree(t, 3, time_limit=30, cache=False)
    cert = certify(tree_base(t, rec), torus_gamma(t))
    c = cert.claims
    assert c["rounds"] == 2 * rec.depth and c["psi"] == "1" and c["omega"] == "1"
    assert c["weight"] == str(rec.weight) and c["theta"] == str(__import__("fractions").Fraction(rec.weight, 35))
    assert rec.lower_bound <= rec.weight


def test_cache_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    t = parse_torus("4x4")
    first = khop_tree(t, 2, time_limit=20)
    again = khop_tree(t, 2, time_limit=20)
    assert not first.cached and again.cached
    assert np.array_equal(first.parent, again.parent) and again.weight == first.weight
    (path,) = tmp_path.iterdir()
    path.write_text("{broken")  # a damaged entry is solved again, not trusted
    assert not khop_tree(t, 2, time_limit=20).cached


def test_cache_is_keyed_on_the_solver_revision(tmp_path, monkeypatch):
    """A tree cached by an older solver is solved again, not served with the older solver's weaker bound."""
    import synth.models.khop as khop

    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    t = parse_torus("4x4")
    assert not khop_tree(t, 2, time_limit=20).cached
    assert khop_tree(t, 2, time_limit=20).cached
    monkeypatch.setattr(khop, "SOLVER_REVISION", khop.SOLVER_REVISION + 1)
    assert not khop_tree(t, 2, time_limit=20).cached
    assert len(list(tmp_path.iterdir())) == 2


def test_tighten_is_monotone_and_honest():
    """Heuristic-only solves are not monotone in k; tighten() makes W and the bound non-increasing in k,
    keeps every tree within its own depth bound, and only calls a record optimal when W meets its bound."""
    t = parse_torus("6x6")
    recs = [khop_tree(t, k, time_limit=5, solver="heuristic", cache=False) for k in (2, 3, 4, 5)]
    # a deliberately bad record at k=4: the star (depth 1) weighs far more than the k=3 tree
    import dataclasses
    star = np.zeros(36, dtype=np.int64)
    star[0] = -1
    w_star = int(t.dist(np.arange(1, 36), np.zeros(35, dtype=np.int64)).sum())
    recs[2] = dataclasses.replace(recs[2], parent=star, depth=1, weight=w_star, lower_bound=35.0)
    out = tighten(recs)
    assert [r.k for r in out] == [2, 3, 4, 5]
    assert all(a.weight >= b.weight for a, b in zip(out, out[1:]))
    assert all(a.lower_bound >= b.lower_bound for a, b in zip(out, out[1:]))
    assert out[2].weight == out[1].weight < w_star
    for r in out:
        depth = int(forest_depths(t, r.parent, [0]).max())
        assert depth == r.depth <= r.k
        assert (r.status == "optimal") == (r.weight <= np.ceil(r.lower_bound - 1e-9))
