"""The checkable k-hop bound (synth.check.bounds) against an LP solved here, independently of models/."""

import functools
import json
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from synth.check.bounds import CONE_KIND, KIND, cone_count_bound, khop_dual_bound, root_stabilizer_perms
from synth.errors import SynthError
from synth.topology.torus import parse_torus


def _brute_optimum_k2(t):
    """W*(2) by enumerating the root's children (every other vertex hangs on its nearest child or the root)."""
    V = t.n_vertices
    D = t.dist(np.arange(V)[:, None], np.arange(V)[None, :])
    best = None
    for mask in range(1 << (V - 1)):
        hubs = [0] + [v for v in range(1, V) if mask >> (v - 1) & 1]
        w = sum(int(D[0, h]) for h in hubs) + int(D[np.ix_(hubs, range(V))].min(axis=0).sum())
        best = w if best is None else min(best, w)
    return best


class FullLP:
    """The relaxation of synth.check.bounds.lagrangian written out row by row (no aggregation), with cone cuts."""

    def __init__(self, t, k, radii=(0, 1, 2)):
        V = self.V = t.n_vertices
        self.k, self.t = k, t
        v = np.arange(V)
        D = t.dist(v[:, None], v[None, :])
        d0 = D[0]
        self.arcs = [(0, i, 1) for i in range(1, V)]
        for h in range(2, k + 1):
            for tt in range(1, V):
                if h >= 3 and d0[tt] == 1:
                    continue
                for i in range(1, V):
                    if i != tt and D[tt, i] < d0[i]:
                        self.arcs.append((tt, i, h))
        self.ys = [(i, h) for i in range(1, V) for h in range(1, k + 1)]
        ny = len(self.ys)
        yidx = {y: n for n, y in enumerate(self.ys)}
        zidx = {a: ny + n for n, a in enumerate(self.arcs)}
        nvar = ny + len(self.arcs)
        self.cost = np.zeros(nvar)
        for a, n in zidx.items():
            self.cost[n] = D[a[0], a[1]]
        eq, ub = [], []          # (row entries, rhs, label)
        for (i, h), n in yidx.items():
            ent = {n: 1.0}
            for a in self.arcs:
                if a[1] == i and a[2] == h:
                    ent[zidx[a]] = -1.0
            eq.append((ent, 0.0, ("beta", i, h)))
        for i in range(1, V):
            eq.append(({yidx[(i, h)]: 1.0 for h in range(1, k + 1)}, 1.0, ("alpha", i)))
        for a in self.arcs:
            tt, i, h = a
            if h >= 2:
                ub.append(({zidx[a]: 1.0, yidx[(tt, h - 1)]: -1.0}, 0.0, ("lambda", tt, i, h)))
        # cone cuts S_j(r) = {(i, h): dist(i, j) <= r + k - h}, closed under the stabilizer by construction
        self.cuts = []
        for j in range(1, V):
            for r in radii:
                nodes = sorted(h * V + i for h in range(1, k + 1) for i in range(1, V) if D[i, j] <= r + k - h)
                if nodes not in self.cuts:
                    self.cuts.append(nodes)
        for c, nodes in enumerate(self.cuts):
            inside = set(nodes)
            ent = {}
            for a, n in zidx.items():
                tt, i, h = a
                tail = 0 if h == 1 else (h - 1) * V + tt
                if h * V + i in inside and tail not in inside:
                    ent[n] = -1.0
            ub.append((ent, -1.0, ("cut", c)))
        self.eq, self.ub = eq, ub
        self.nvar = nvar

    def _matrix(self, rows):
        R, C, X = [], [], []
        for r, (ent, _, _) in enumerate(rows):
            for c, x in ent.items():
                R.append(r)
                C.append(c)
                X.append(x)
        return sp.csr_matrix((X, (R, C)), shape=(len(rows), self.nvar))

    def solve(self):
        res = linprog(self.cost, A_ub=self._matrix(self.ub), b_ub=[b for _, b, _ in self.ub],
                      A_eq=self._matrix(self.eq), b_eq=[b for _, b, _ in self.eq], bounds=(0, 1), method="highs")
        assert res.status == 0
        return res

    def stored_dual(self, res):
        """The LP's duals averaged over the root's stabilizer, one entry per row orbit."""
        perms = root_stabilizer_perms(self.t)
        V, k = self.V, self.k
        vals = {}
        for (_, _, lab), u in zip(self.eq, res.eqlin.marginals):
            vals[lab] = u
        for (_, _, lab), u in zip(self.ub, res.ineqlin.marginals):
            vals[lab] = -u if lab[0] == "cut" else u
        cut_key = {tuple(n): c for c, n in enumerate(self.cuts)}

        def image(lab, g):
            if lab[0] == "alpha":
                return ("alpha", int(g[lab[1]]))
            if lab[0] == "beta":
                return ("beta", int(g[lab[1]]), lab[2])
            if lab[0] == "lambda":
                return ("lambda", int(g[lab[1]]), int(g[lab[2]]), lab[3])
            h, i = np.divmod(np.asarray(self.cuts[lab[1]]), V)
            return ("cut", cut_key[tuple(sorted((h * V + g[i]).tolist()))])

        out = {"kind": KIND, "k": k, "alpha": [], "beta": [], "lambda": [], "cuts": []}
        done = set()
        for lab in vals:
            if lab in done:
                continue
            orbit = {image(lab, g) for g in perms}
            done |= orbit
            avg = float(np.mean([vals[o] for o in orbit]))
            if lab[0] == "cut":
                out["cuts"].append([max(avg, 0.0), self.cuts[lab[1]]])
            elif lab[0] == "lambda":
                out["lambda"].append([lab[1], lab[2], lab[3], min(avg, 0.0)])
            else:
                out[lab[0]].append([*lab[1:], avg])
        return out


@pytest.mark.parametrize("shape,k", [("3x3", 2), ("4x4", 2), ("4x4", 3), ("5x5", 2), ("3x4", 2), ("3x3x3", 2)])
def test_lp_dual_reproduces_lp_value(shape, k):
    t = parse_torus(shape)
    lp = FullLP(t, k)
    res = lp.solve()
    db = khop_dual_bound(t, k, lp.stored_dual(res))
    assert db.value == pytest.approx(res.fun, abs=1e-6)
    assert db.bound == int(np.ceil(res.fun - 1e-6))


@pytest.mark.parametrize("shape,k", [("3x3", 2), ("4x4", 2), ("3x4", 2)])
def test_bound_never_exceeds_brute_force(shape, k):
    t = parse_torus(shape)
    w_star = _brute_optimum_k2(t)
    lp = FullLP(t, k)
    dual = lp.stored_dual(lp.solve())
    assert khop_dual_bound(t, k, dual).bound <= w_star
    rng = np.random.default_rng(7)
    for _ in range(20):   # any dual of the right signs gives a valid bound
        noisy = {**dual}
        noisy["alpha"] = [[i, x + rng.normal(0, 1)] for i, x in dual["alpha"]]
        noisy["beta"] = [[i, h, x + rng.normal(0, 1)] for i, h, x in dual["beta"]]
        noisy["cuts"] = [[abs(x + rng.normal(0, 0.5)), n] for x, n in dual["cuts"]]
        assert khop_dual_bound(t, k, noisy).value <= w_star + 1e-9


def test_malformed_duals_are_rejected():
    t = parse_torus("4x4")
    good = {"kind": KIND, "k": 2}
    bad = [
        {"kind": "other", "k": 2},
        {**good, "k": 1},                                # a dual for a smaller depth proves nothing about k=2
        {**good, "cuts": [[-1.0, [17, 33]]]},            # negative cut dual
        {**good, "cuts": [[1.0, [17]]]},                 # does not hold every copy of vertex 1
        {**good, "cuts": [[1.0, [0, 16, 17, 32, 33]]]},  # layer-0 node
        {**good, "lambda": [[1, 2, 2, 1.0]]},            # positive lambda
        {**good, "lambda": [[0, 5, 2, -1.0]]},           # the root is no tail at layer 1
        {**good, "lambda": [[1, 2, 1, -1.0]]},           # no link row at layer 1
        {**good, "alpha": [[16, 1.0]]},                  # vertex out of range
        {**good, "alpha": [[1, float("nan")]]},
        {**good, "beta": [[1, 1]]},                      # wrong width
    ]
    for dual in bad:
        with pytest.raises(SynthError):
            khop_dual_bound(t, 2, dual)


@functools.lru_cache(maxsize=None)
def _tree_and_dual(shape, k):
    from synth.models.khop.dual import export_dual
    from synth.models.forest.instance import distance_matrix, root_stabilizer
    from synth.models.khop.lp import LayeredLP
    from synth.models.khop import solve_khop

    t = parse_torus(shape)
    r = solve_khop(t, k, time_limit=2, solver="heuristic")
    lp = LayeredLP(distance_matrix(t), k, root_stabilizer(t))
    return r.parent, json.dumps(export_dual(lp, lp.solve().bound))


def _certified_tree(shape, k, tamper=None):
    """A k-hop tree certified with the LP's dual in its solver section (optionally tampered)."""
    from synth.check.claims import certify
    from synth.symmetry.torus import torus_gamma
    from synth.schedule import tree_schedule

    t = parse_torus(shape)
    parent, text = _tree_and_dual(shape, k)
    dual = json.loads(text)
    if tamper:
        tamper(dual)
    solver = {"depth_bound": k, "lower_bound": dual["bound"], "dual_bound": dual}
    return certify(tree_schedule(t, parent, 0, route=t.route), torus_gamma(t), solver=solver), dual


def test_certificate_bound_is_rederived(tmp_path):
    from synth.check.certificate import write_certificate
    from synth.check.claims import check_certificate, check_file

    cert, dual = _certified_tree("6x6", 3)
    rep = check_certificate(cert)
    assert rep.valid
    assert rep.claims["weight_lower_bound"] == (dual["bound"], 40, True)
    assert rep.claims["depth_bound"][2]
    path = tmp_path / "c.json"
    write_certificate(cert, path)
    assert check_file(path).claims["weight_lower_bound"][1] == 40


@pytest.mark.parametrize("tamper", [
    lambda d: d.update(bound=d["bound"] + 1),                                  # claims more than the dual proves
    lambda d: d.update(beta=[]),                                                # a damaged dual proves less
    lambda d: d.update(k=2),                                                    # a dual for a smaller depth
])
def test_tampered_dual_fails(tamper):
    from synth.check.claims import check_certificate

    cert, _ = _certified_tree("6x6", 3, tamper)
    assert not check_certificate(cert).valid


def test_tree_deeper_than_the_dual_fails():
    from synth.check.claims import check_certificate

    cert, _ = _certified_tree("6x6", 3)
    cert.solver["depth_bound"] = 2          # the dual (depth 3) still proves a bound for depth 2
    rep = check_certificate(cert)
    assert not rep.claims["depth_bound"][2] and not rep.valid


# ----------------------------------------------------------------- the cone-counting bound


def _cone_count_by_definition(t, k):
    """cone_count_bound's value written out from its definition, loop by loop (exact)."""
    V = t.n_vertices
    D = t.dist(np.arange(V)[:, None], np.arange(V)[None, :])
    far = [j for j in range(V) if D[0, j] > k]
    if not far:
        return Fraction(V - 1)
    rho = None
    for d in range(1, V):
        if D[0, d] < 2:
            continue
        for s in range(k - 1):
            n = sum(1 for x in range(V) if D[0, x] <= s and D[d, x] >= s + 2)
            if rho is None or Fraction(n, int(D[0, d]) - 1) > rho:
                rho = Fraction(n, int(D[0, d]) - 1)
    kids = []
    for c in range(1, V):
        n = sum(1 for j in far if D[c, j] <= k - 1)
        if D[0, c] >= 2 and n:
            kids.append((Fraction(n, int(D[0, c]) - 1), n, int(D[0, c]) - 1))
    left, extra = Fraction(len(far)), Fraction(0)
    for ratio, n, length in sorted(kids, reverse=True):
        if left and (rho is None or ratio > rho):
            take = min(Fraction(1), left / n)
            extra, left = extra + take * length, left - take * n
    return V - 1 + extra + (left / rho if left else 0)


@pytest.mark.parametrize("shape", ["3x3", "4x4", "5x5", "3x4", "6x6", "3x3x3", "9", "8x5"])
def test_cone_count_bound_matches_its_definition(shape):
    t = parse_torus(shape)
    for k in range(1, t.diameter + 1):
        want = _cone_count_by_definition(t, k)
        got = cone_count_bound(t, k)
        assert got.value == pytest.approx(float(want), abs=1e-12)
        assert got.bound == int(np.ceil(want))
        assert khop_dual_bound(t, k, {"kind": CONE_KIND, "k": k}) == got


@pytest.mark.parametrize("shape", ["3x3", "4x4", "3x4"])
def test_cone_count_bound_never_exceeds_brute_force_k2(shape):
    t = parse_torus(shape)
    assert cone_count_bound(t, 2).bound <= _brute_optimum_k2(t)


def _random_tree(t, k, rng):
    """A random spanning tree of depth <= k rooted at 0 (random attachment to shallower vertices)."""
    V = t.n_vertices
    D = t.dist(np.arange(V)[:, None], np.arange(V)[None, :])
    parent, depth = np.full(V, -1), np.zeros(V, dtype=int)
    placed = [0]
    for v in rng.permutation(np.arange(1, V)):
        options = [u for u in placed if depth[u] < k]
        near = min(D[u, v] for u in options)
        u = rng.choice([u for u in options if D[u, v] <= near + 2])     # mostly short edges
        parent[v], depth[v] = u, depth[u] + 1
        placed.append(v)
    return parent, depth, D


@pytest.mark.parametrize("shape,k", [("8x8", 2), ("8x8", 3), ("9x7", 4), ("4x4x4", 2)])
def test_cone_count_charging_lemma_on_random_trees(shape, k):
    """Every far vertex is charged to an edge of its root path that the proof's count allows."""
    t = parse_torus(shape)
    rng = np.random.default_rng(11)
    b = cone_count_bound(t, k)
    for _ in range(10):
        parent, depth, D = _random_tree(t, k, rng)
        charges = {}
        for j in np.flatnonzero(D[0] > k):
            path = [int(j)]
            while parent[path[-1]] >= 0:
                path.append(int(parent[path[-1]]))
            path = path[::-1]                                   # 0 = v_0, ..., v_m = j
            h = next(h for h in range(len(path)) if D[path[h], j] - (k - h) <= 0)
            assert h >= 1 and D[path[h - 1], j] >= k - h + 2 and D[path[h - 1], path[h]] >= 2
            charges[(path[h - 1], path[h])] = charges.get((path[h - 1], path[h]), 0) + 1
        for (u, v), n in charges.items():
            s = k - depth[v]
            assert n <= np.sum((D[v] <= s) & (D[u] >= s + 2) & (D[0] > k))
        w = int(sum(D[v, parent[v]] for v in range(1, t.n_vertices)))
        assert w >= b.bound


def test_cone_count_dual_rejects_a_smaller_depth():
    with pytest.raises(SynthError):
        khop_dual_bound(parse_torus("6x6"), 3, {"kind": CONE_KIND, "k": 2})
    with pytest.raises(SynthError):
        cone_count_bound(parse_torus("6x6"), 0)
