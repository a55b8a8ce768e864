"""The coarse-to-fine start of the k-hop solver (models._khop_coarse) and its place in the pipeline."""

import time

import numpy as np
import pytest

from synth.models._khop_coarse import coarse_start, half_torus, scale_labels
from synth.models._khop_heuristic import heuristic_tree, labels_cost, labels_to_parent
from synth.models._khop_instance import check_tree, distance_matrix, tree_weight
from synth.models._khop_pipeline import run_pipeline
from synth.torus import parse_torus


def test_half_torus_needs_even_sides():
    assert half_torus(parse_torus("12x8")).shape == (6, 4)
    assert half_torus(parse_torus("8x8x8")).shape == (4, 4, 4)
    assert half_torus(parse_torus("12x13")) is None
    assert half_torus(parse_torus("4x4")) is None          # a half side of 2 is no torus to solve on


@pytest.mark.parametrize("shape,k", [("12x12", 2), ("12x12", 4), ("16x16", 3), ("16x16", 5), ("16x16", 6),
                                     ("12x12x12", 4)])
def test_scaled_labels_give_a_tree_about_twice_as_heavy(shape, k):
    """Scaled labels give a tree of depth <= k; each vertex costs at most the path argument allows.

    Images get ``2 d' - 1``, so for even ``k`` no image is deeper than ``k - 1``.

    On the shortest path from an image ``2u`` (label ``b``) to ``v`` (label ``l <= b + dist``) the
    vertex ``l - 1 - b`` steps from ``2u`` has a label below ``l``.  For even ``k`` nothing is
    capped by more than ``d - 1`` (``d`` dimensions), so ``W <= 2 W' + d (p - p')``.
    """
    t = parse_torus(shape)
    half = half_torus(t)
    Dh, D = distance_matrix(half), distance_matrix(t)
    res = heuristic_tree(Dh, -(-k // 2), seed=1, iterations=20)
    lab = scale_labels(t, half, res.labels, k, D)
    assert lab[0] == 0 and lab[1:].min() >= 1 and lab.max() <= k
    parent = labels_to_parent(D, lab)
    _depth, w = check_tree(t, parent, k)
    assert w == labels_cost(D, lab)
    images = t.vertex(2 * half.coords(np.arange(half.n_vertices)))
    hl = np.asarray(res.labels)
    base = np.where(hl > 0, 2 * hl - 1, 0)
    assert lab[images].max() <= k - 1 + k % 2     # the leaves of the half tree land on 2 k' - 1
    v = np.arange(1, t.n_vertices)
    reach = np.where(base[:, None] < lab[None, v], D[np.ix_(images, v)] + base[:, None] + 1 - lab[None, v], 10**6)
    assert (D[v, parent[v]] <= reach.min(axis=0)).all()
    if k % 2 == 0:
        assert w <= 2 * res.weight + t.ndim * (t.n_vertices - half.n_vertices)


def test_coarse_start_gives_a_valid_tree_and_needs_even_sides():
    t = parse_torus("16x16")
    parent = coarse_start(t, 6, distance_matrix(t), deadline=time.monotonic() + 4, seed=3)
    assert check_tree(t, parent, 6)[0] <= 6
    assert coarse_start(t, 4, distance_matrix(t), deadline=time.monotonic() + 1) is None     # half depth 2
    assert coarse_start(parse_torus("15x15"), 6, distance_matrix(parse_torus("15x15")),
                        deadline=time.monotonic() + 1) is None


def test_pipeline_starts_big_tori_from_the_half_torus(monkeypatch):
    """From COARSE_FROM vertices on the first incumbent is the coarse start; its half-torus solve has no LP."""
    import synth.models._khop_pipeline as pipeline

    lp_sizes, seen = [], []
    real_lp = pipeline.LayeredLP

    def spy_lp(D, *a, **kw):
        lp_sizes.append(D.shape[0])
        return real_lp(D, *a, **kw)

    monkeypatch.setattr(pipeline, "COARSE_FROM", 256)
    monkeypatch.setattr(pipeline, "LayeredLP", spy_lp)
    t = parse_torus("16x16")
    best = {"parent": None, "weight": None, "bound": float(t.n_vertices - 1), "method": ""}
    run_pipeline(t, 6, best, deadline=time.monotonic() + 12, say=seen.append)
    first = [m for m in seen if m.startswith("incumbent")][0]
    assert first.endswith("(coarse start)")
    assert any(m.startswith("coarse 8x8 k=3: incumbent") for m in seen)
    assert lp_sizes == [256]                     # the LP ran on 16x16 only, never on the half torus
    assert check_tree(t, best["parent"], 6)[1] == best["weight"] == tree_weight(t, best["parent"])


def test_no_coarse_start_below_the_threshold():
    t = parse_torus("12x12")          # k = 6 would qualify (half depth 3), but 144 < COARSE_FROM vertices
    seen = []
    best = {"parent": None, "weight": None, "bound": float(t.n_vertices - 1), "method": ""}
    run_pipeline(t, 6, best, deadline=time.monotonic() + 3, say=seen.append)
    assert not any(m.startswith("coarse") for m in seen)


def test_a_start_tree_is_continued_not_replaced_by_the_coarse_start(monkeypatch):
    import synth.models._khop_pipeline as pipeline

    monkeypatch.setattr(pipeline, "COARSE_FROM", 256)
    t = parse_torus("16x16")
    D = distance_matrix(t)
    start = labels_to_parent(D, np.minimum(D[0].astype(np.int64), 6))      # truncated BFS, depth 6
    seen = []
    best = {"parent": None, "weight": None, "bound": float(t.n_vertices - 1), "method": ""}
    run_pipeline(t, 6, best, deadline=time.monotonic() + 6, say=seen.append, start=start, bound=False)
    assert seen[0].endswith("(start)")
    assert not any(m.startswith("coarse") for m in seen)
    assert best["weight"] <= tree_weight(t, start)
