"""The k-hop tree cache: only completed solves are stored, and nothing in an entry is trusted.

An entry that was edited by accident (its checksum fails) or on purpose (checksum
recomputed) never changes what a later solve reports beyond what the checker's code
re-derives from it: the reported record is compared with a fresh, uncached solve.
"""

import dataclasses
import hashlib
import json

import numpy as np
import pytest

import synth.models.khop.pipeline as pipeline
import synth.models.khop as khop
from synth.check.claims import check_certificate, check_file
from synth.cli import main
from synth.check.bounds import khop_dual_bound
from synth.models.khop.dual import simple_dual
from synth.models.backends.result import Best, MipSolution
from synth.solving import solve
from synth.solving.khop import khop_tree
from synth.solving.record import SOLVER_CLAIM, TreeRecord
from synth.symmetry.torus import root_stabilizer
from synth.topology.torus import parse_torus

SHAPE, K, LIMIT = "4x4", 2, 20.0


def report(rec):
    """What a solve reports about a tree: the certificate's solver section (provenance aside) and the tree."""
    claims = {key: v for key, v in rec.solver_claims().items() if key != "seconds"}
    return claims, rec.parent.tolist(), rec.depth


def digest(data):
    """The entry's checksum, as a forger would recompute it: sha256 of the canonical JSON without it."""
    body = {key: v for key, v in data.items() if key != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@pytest.fixture(scope="module")
def torus():
    return parse_torus(SHAPE)


@pytest.fixture(scope="module")
def solved(torus):
    """One real solve, replayed by the fake solver below (so each test costs no solve)."""
    return khop.solve_khop(torus, K, time_limit=LIMIT)


class _Calls(list):
    """The depth bounds ``solve_khop`` was called with; ``result["value"]`` is what it returns."""


@pytest.fixture
def solves(solved, tmp_path, monkeypatch):
    """A fresh cache; ``solve_khop`` replays ``solved`` and records each call."""
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path / "cache"))
    calls = _Calls()
    result = {"value": solved}

    def fake(t, k, **_kw):
        calls.append(k)
        return result["value"]

    monkeypatch.setattr(khop, "solve_khop", fake)
    calls.result = result
    return calls


def weak_dual(t):
    """A valid dual that proves only W >= p - 1 (every tree edge costs at least 1)."""
    return simple_dual(t, K, root_stabilizer(t))


def entry_path(tmp_path):
    (path,) = (tmp_path / "cache").iterdir()
    return path


def edit(path, change, *, forge):
    data = json.loads(path.read_text())
    change(data)
    if forge:
        data["sha256"] = digest(data)
    path.write_text(json.dumps(data))


def test_cached_record_reports_what_the_fresh_solve_reported(torus, solves, tmp_path):
    fresh = khop_tree(torus, K, time_limit=LIMIT, cache=False)
    first = khop_tree(torus, K, time_limit=LIMIT)
    again = khop_tree(torus, K, time_limit=LIMIT)
    assert len(solves) == 2 and not first.cached and again.cached
    assert report(again) == report(first) == report(fresh)
    assert fresh.status == "optimal" and fresh.lower_bound == fresh.weight == 18
    assert khop_dual_bound(torus, K, again.dual).bound >= again.lower_bound


# ------------------------------------------------------------------ interrupted solves
def _raise(*_a, **_kw):
    raise KeyboardInterrupt


def _at_cone_bound(monkeypatch):
    return lambda m: _raise() if m.endswith("(cone counting)") else None


def _at_first_incumbent(monkeypatch):
    return lambda m: _raise() if m.startswith("incumbent") else None


def _in_the_lp(monkeypatch):
    monkeypatch.setattr(pipeline.LayeredLP, "solve", _raise)


def _in_the_lns(monkeypatch):
    """The LP skipped, the improvement phase's slices short, and Ctrl-C in the first window LNS."""
    monkeypatch.setattr(pipeline, "lp_affordable", lambda V, s: False)
    monkeypatch.setattr(pipeline, "unit_metric", lambda D: False)
    monkeypatch.setattr(pipeline, "MIN_SLICE", 0.05)
    monkeypatch.setattr(pipeline, "lns_search", _raise)


def _caught_by_the_mip_engine(monkeypatch):
    """No bound proves the tree, so the MIP runs; its engine caught Ctrl-C (as CP-SAT, SCIP and HiGHS do)."""
    import synth.models.khop.dual as duals

    monkeypatch.setattr(duals, "cone_dual", lambda t, k: {"kind": "khop-cone-count", "k": k, "bound": 0})
    monkeypatch.setattr(Best, "offer_bound", lambda *a: False)
    monkeypatch.setattr(pipeline, "_solve_mip",
                        lambda *a, **kw: MipSolution("unknown", None, -np.inf, None, 0.1, interrupted=True))


@pytest.mark.parametrize("stage,limit", [(_at_cone_bound, LIMIT), (_at_first_incumbent, LIMIT), (_in_the_lp, LIMIT),
                                         (_in_the_lns, 3.0), (_caught_by_the_mip_engine, LIMIT)])
def test_an_interrupt_propagates_and_is_never_cached_as_an_answer(stage, limit, torus, tmp_path, monkeypatch):
    """Ctrl-C in each phase stops the solve and propagates (the LNS, last in line, is reached sooner with less
    time); whatever tree it had goes to the cache marked interrupted, beside the real entry, and the note says so."""
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    progress = stage(monkeypatch)
    with pytest.raises(KeyboardInterrupt) as info:
        khop_tree(torus, K, time_limit=limit, progress=progress)
    notes = " ".join(getattr(info.value, "__notes__", ()))
    files = [p.name for p in tmp_path.iterdir()]
    assert all(name.endswith(".interrupted.json") for name in files)
    if files:
        assert "kept in the cache marked interrupted" in notes
        data = json.loads((tmp_path / files[0]).read_text())
        assert data["interrupted"] is True
    else:
        assert "interrupted before a tree was found" in notes


def test_after_an_interrupted_solve_the_same_call_solves_again_and_says_so(torus, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        khop_tree(torus, K, time_limit=LIMIT, progress=_at_first_incumbent(monkeypatch))
    (kept,) = tmp_path.iterdir()
    assert kept.name.endswith(".interrupted.json")
    again = khop_tree(torus, K, time_limit=LIMIT)
    assert not again.cached and not again.interrupted and again.status == "optimal"
    assert again.interrupted_before is not None
    assert [p.name for p in tmp_path.iterdir()] == [kept.name.replace(".interrupted", "")]  # replaced
    assert khop_tree(torus, K, time_limit=LIMIT).cached


def test_an_entry_marked_interrupted_is_never_served(torus, tmp_path, monkeypatch):
    """Even renamed to the real entry's name, an entry that says it was interrupted is solved again."""
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        khop_tree(torus, K, time_limit=LIMIT, progress=_at_first_incumbent(monkeypatch))
    (kept,) = tmp_path.iterdir()
    kept.rename(tmp_path / kept.name.replace(".interrupted", ""))
    again = khop_tree(torus, K, time_limit=LIMIT)
    assert not again.cached and not again.interrupted


def test_an_unwritable_cache_is_said_not_promised(torus, tmp_path, monkeypatch):
    """The record says the cache could not be written, and solve's notes say so."""
    monkeypatch.setenv("SYNTH_CACHE_DIR", "/proc/self/synth-cache")   # not writable, even by root
    rec = khop_tree(torus, K, time_limit=LIMIT)
    assert rec.uncached and "cannot be written" in rec.uncached
    res = solve(torus, depth=K, time_limit=LIMIT)
    assert any("cannot be written" in n and "solves again" in n for n in res.notes)


def test_a_cache_entry_that_is_a_fifo_or_dev_zero_is_refused_at_once(torus, tmp_path, monkeypatch):
    """A FIFO (no writer) or a symlink to /dev/zero in place of an entry is skipped at once."""
    import os
    import time

    from synth.solving.cache import cache_key

    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path))
    path = tmp_path / cache_key(torus, K, "auto", LIMIT, 0)
    for make in (lambda: os.mkfifo(path), lambda: os.symlink("/dev/zero", path)):
        make()
        t0 = time.monotonic()
        rec = khop_tree(torus, K, time_limit=LIMIT)
        assert not rec.cached and time.monotonic() - t0 < LIMIT
        path.unlink()


# ------------------------------------------------------------------ edited entries
EDITS = {
    "status": lambda d: d.update(status="optimal" if d["status"] != "optimal" else "feasible"),
    "lower_bound": lambda d: d.update(lower_bound=d["weight"] + 5),
    "lower_bound_nan": lambda d: d.update(lower_bound=float("nan")),
    "gap": lambda d: d.update(gap=0.5),
}
INCONSISTENT = {
    "dual_bound_inflated": lambda d: d["dual"].update(bound=d["dual"]["bound"] + 1),
    "dual_bound_huge": lambda d: d["dual"].update(bound=10**30),
    "dual_bound_nan": lambda d: d["dual"].update(bound=float("nan")),
    "dual_alpha_inflated": lambda d: d["dual"].update(alpha=[[i, 5 * v] for i, v in d["dual"]["alpha"]]),
    "dual_kind": lambda d: d["dual"].update(kind="trust-me"),
    "dual_missing": lambda d: d.update(dual=None),
    "parent_rehung": lambda d: d["parent"].__setitem__(next(v for v, u in enumerate(d["parent"]) if u > 0), 0),
    "parent_cycle": lambda d: d["parent"].__setitem__(1, 1),
    "parent_float": lambda d: d["parent"].__setitem__(1, 0.0),
    "parent_short": lambda d: d["parent"].pop(),
    "parent_huge": lambda d: d["parent"].__setitem__(1, 10**30),
    "weight": lambda d: d.update(weight=d["weight"] - 1),
    "solver_bound_above_weight": lambda d: d.update(solver_bound=d["weight"] + 1),
    "solver_bound_bool": lambda d: d.update(solver_bound=True),
    "k": lambda d: d.update(k=d["k"] + 1),
    "time_limit": lambda d: d.update(time_limit=1e9),
    "seconds_nan": lambda d: d.update(seconds=float("nan")),
}


@pytest.mark.parametrize("name", sorted({**EDITS, **INCONSISTENT}))
def test_accidental_edit_is_solved_again(name, torus, solves, tmp_path):
    """Any edit that leaves the checksum stale: the entry is ignored and the tree solved again."""
    first = khop_tree(torus, K, time_limit=LIMIT)
    edit(entry_path(tmp_path), {**EDITS, **INCONSISTENT}[name], forge=False)
    again = khop_tree(torus, K, time_limit=LIMIT)
    assert len(solves) == 2 and not again.cached and report(again) == report(first)


@pytest.mark.parametrize("name", sorted(EDITS))
def test_forged_status_bound_and_gap_are_never_read(name, torus, solves, tmp_path):
    """The entry's status, lower bound and gap are for people: recomputed from the tree and the dual."""
    first = khop_tree(torus, K, time_limit=LIMIT)
    edit(entry_path(tmp_path), EDITS[name], forge=True)
    again = khop_tree(torus, K, time_limit=LIMIT)
    assert len(solves) == 1 and again.cached and report(again) == report(first)


@pytest.mark.parametrize("name", sorted(INCONSISTENT))
def test_forged_inconsistent_entry_is_solved_again(name, torus, solves, tmp_path):
    """A dual that does not prove its stated bound, a tree that is not the stated one, a claim above W."""
    first = khop_tree(torus, K, time_limit=LIMIT)
    edit(entry_path(tmp_path), INCONSISTENT[name], forge=True)
    again = khop_tree(torus, K, time_limit=LIMIT)
    assert len(solves) == 2 and not again.cached and report(again) == report(first)


def test_forged_weaker_dual_or_heavier_tree_is_served_honestly(torus, solves, tmp_path):
    """A consistent entry, only weaker, is all a forger can make: what is served is what it proves."""
    first = khop_tree(torus, K, time_limit=LIMIT)
    weak = weak_dual(torus)
    assert weak["bound"] == torus.n_vertices - 1 < first.weight
    edit(entry_path(tmp_path), lambda d: d.update(dual=weak), forge=True)
    again = khop_tree(torus, K, time_limit=LIMIT)
    assert again.cached and again.lower_bound == weak["bound"] and again.status == "feasible"
    assert again.gap == pytest.approx((again.weight - weak["bound"]) / again.weight)

    def heavier(d):
        v = next(v for v, u in enumerate(d["parent"]) if u > 0)     # re-hung on the root: a longer edge
        d["parent"][v] = 0
        d["weight"] = int(torus.dist(np.arange(1, 16), np.asarray(d["parent"][1:])).sum())

    edit(entry_path(tmp_path), heavier, forge=True)
    worse = khop_tree(torus, K, time_limit=LIMIT)
    assert worse.cached and worse.weight > first.weight and worse.status == "feasible"
    assert worse.lower_bound == weak["bound"]
    assert check_certificate(solve(torus, depth=K, time_limit=LIMIT).certificate).valid


GARBAGE = [b"", b"{broken", b"null", b"[]", b"\xff\xfe\x00", b'{"parent": 1}', b"[" * 100_000 + b"]" * 100_000,
           b'{"sha256": null}', json.dumps({"parent": [-1] + [0] * 15, "weight": 1e400}).encode()]


@pytest.mark.parametrize("raw", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_entry_is_ignored(raw, torus, solves, tmp_path):
    first = khop_tree(torus, K, time_limit=LIMIT)
    entry_path(tmp_path).write_bytes(raw)
    again = khop_tree(torus, K, time_limit=LIMIT)
    assert len(solves) == 2 and not again.cached and report(again) == report(first)


def test_oversized_entry_is_not_read(torus, solves, tmp_path):
    khop_tree(torus, K, time_limit=LIMIT)
    path = entry_path(tmp_path)
    path.write_text(path.read_text() + " " * (1 << 21))       # still the same JSON, but 2 MiB of it
    assert not khop_tree(torus, K, time_limit=LIMIT).cached and len(solves) == 2


# ------------------------------------------------------------------ solver claims
def test_optimality_only_the_mip_proved_is_labelled_a_solver_claim(torus, solved, solves, tmp_path):
    """The MIP proved W optimal, the stored dual proves less: status 'optimal (solver claim)', the gap to the dual."""
    weak = weak_dual(torus)
    cone = weak["bound"]
    solves.result["value"] = dataclasses.replace(solved, lower_bound=solved.weight, status="optimal", gap=0.0,
                                                 dual=weak)
    fresh = khop_tree(torus, K, time_limit=LIMIT)
    assert (fresh.status, fresh.lower_bound, fresh.solver_bound) == (SOLVER_CLAIM, cone, solved.weight)
    assert fresh.gap == pytest.approx((solved.weight - cone) / solved.weight)
    again = khop_tree(torus, K, time_limit=LIMIT)
    assert again.cached and report(again) == report(fresh)
    # the certificate says the same, and synth check re-derives the dual's bound, not the claim
    cert = solve(torus, depth=K, time_limit=LIMIT).certificate
    assert cert.solver["status"] == SOLVER_CLAIM and cert.solver["solver_lower_bound"] == solved.weight
    rep = check_certificate(cert)
    assert rep.valid and rep.claims["weight_lower_bound"][1] == cone
    # dropping the claim (checksum recomputed) only makes the report more modest
    edit(entry_path(tmp_path), lambda d: d.update(solver_bound=None), forge=True)
    modest = khop_tree(torus, K, time_limit=LIMIT)
    assert modest.cached and modest.status == "feasible" and modest.lower_bound == cone


def test_tighten_keeps_the_solver_claim_apart():
    from synth.solving.record import tighten

    def rec(k, w, lb, sb):
        return TreeRecord((4, 4), k, np.zeros(16, np.int64), k, w, lb, 0.0, "feasible", 1.0, "auto", "LP", 10.0, 0,
                          solver_bound=sb)

    out = tighten([rec(2, 20, 17, None), rec(3, 20, 18, 20)])
    assert [(r.status, r.lower_bound, r.solver_bound) for r in out] == [(SOLVER_CLAIM, 18, 20),
                                                                       (SOLVER_CLAIM, 18, 20)]


# ------------------------------------------------------------------ valid
def test_solve_prints_valid_only_for_a_certificate_that_checks(torus, solves, tmp_path, capsys, monkeypatch):
    out = tmp_path / "c.json"
    code = main(["solve", "--torus", SHAPE, "--depth", str(K), "--time-limit", str(LIMIT), "--json",
                 "--out", str(out)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["valid"] is True and check_file(out).valid
    # a dual that claims more than it proves: certify() writes it, the check of the written file catches it
    honest = TreeRecord.solver_claims

    def inflated(self):
        claims = honest(self)
        claims["dual_bound"] = {**claims["dual_bound"], "bound": claims["dual_bound"]["bound"] + 1}
        return claims

    monkeypatch.setattr(TreeRecord, "solver_claims", inflated)
    code = main(["solve", "--torus", SHAPE, "--depth", str(K), "--time-limit", str(LIMIT), "--json",
                 "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 1 and json.loads(captured.out)["valid"] is False and not check_file(out).valid
    assert "weight_lower_bound" in captured.err
