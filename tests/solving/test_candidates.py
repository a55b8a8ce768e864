"""``size`` off an equal-sided torus: the candidates, the shared time limit, the pick, the plan, bad sizes.

The pick is checked against times computed here, apart from :mod:`synth.solving.candidates`: every built
candidate is lifted to its explicit schedule, executed, measured transmission by transmission and costed
by the formula of docs/spec.md section 1 written out below.
"""

import json
from fractions import Fraction
import time
from dataclasses import replace

import numpy as np
import pytest

import synth.solving.candidates as candidates_module
import synth.solving.rounds as rounds
from synth.analysis.cost import Network
from synth.analysis.compare import compare
from synth.check import execute
from synth.check.claims import check_certificate
from synth.cli import main
from synth.errors import OptionError
from synth.schedule.chunking import chunk_elements
from synth.schedule.lift import lift, lifted_weights
from synth.solving import SolveRequest, plan, run
from synth.topology.failures import damage, parse_failures
from synth.topology.gpu import gpu_fabric
from synth.topology.lattice import grid
from synth.topology.torus import parse_torus

MiB = 1 << 20


def _damaged(shape, links=(), nodes=()):
    t = parse_torus(shape)
    return damage(t, parse_failures(t, list(links), list(nodes)))


def _independent_seconds(cert, nbytes, net=Network()):
    """The modeled time of a certificate's schedule at ``nbytes``: lifted, executed, costed by hand link by link
    (on links with bandwidths, each round as long as its slowest link); a chunk that gets no element at this
    size moves nothing (a packed schedule's chunks have very unequal weights), a dropped chip nothing either."""
    # the chips a periodic schedule drops are left out, as the certificate says (synth.check.dropped)
    schedule, weights = lift(cert.base, cert.group, cert.dropped), lifted_weights(cert.base, cert.group)
    assert execute(schedule) == []
    sizes = np.asarray(chunk_elements(weights, nbytes // net.element_bytes), dtype=float)
    t = schedule.topology
    load, hops = np.zeros((schedule.n_rounds, t.n_links)), np.zeros(schedule.n_rounds)
    for b in schedule.blocks:
        moving = sizes[b.chunk] > 0
        if moving.any():
            hops[b.round - 1] = max(hops[b.round - 1], b.links.shape[1])
        for column in b.links.T:
            np.add.at(load[b.round - 1], column, sizes[b.chunk])
    rate = t.link_bandwidth * 1e9 if t.has_bandwidths else np.full(t.n_links, net.bandwidth)
    slowest = (load * net.element_bytes / rate).max(axis=1)
    return schedule.n_rounds * net.alpha + net.hop_latency * hops.sum() + slowest.sum()


def _volume_floor(cert, nbytes, net=Network()):
    """The bandwidth term's floor at ``nbytes`` from the certificate's own claimed bound (re-derived by the
    checker): ``beta`` times the bound scaled from the certificate's elements to the message's."""
    bound = Fraction(cert.claims["bandwidth_lower_bound"]) * (nbytes // net.element_bytes) / cert.elements
    return float(bound) * net.element_bytes / net.bandwidth


def _solve_recording(monkeypatch, topology, nbytes, time_limit):
    """Solve by size, and the candidates as built (the build is recorded, not repeated)."""
    seen = []
    real = candidates_module.build_candidates

    def recording(*args, **kwargs):
        for built in real(*args, **kwargs):
            seen.append(built)
            yield built

    monkeypatch.setattr(candidates_module, "build_candidates", recording)
    result = run(SolveRequest(topology, size=nbytes, time_limit=time_limit))
    return result, seen


def _check_pick(result, built, nbytes):
    times = {b.candidate.name: _independent_seconds(b.result.certificate, nbytes) for b in built if b.result}
    choice = result.certificate.provenance["size_choice"]
    assert choice["size"] == nbytes and choice["engine"] == "model"
    for b in built:   # a timed candidate left out for its rounds could not have won: 2R x alpha + the bound say so
        if b.result is None and "rounds take at least" in b.why:
            least = 2 * b.candidate.depth * Network().alpha + _volume_floor(result.certificate, nbytes)
            assert b.candidate.kind == "timed" and least >= min(times.values()) * (1 - 1e-9)
    assert choice["chosen"] == min(times, key=times.get)
    for row in choice["candidates"]:   # what the notes claim is what the schedules take
        if "seconds" in row:
            assert row["seconds"] == pytest.approx(times[row["name"]], rel=1e-9)
    assert check_certificate(result.certificate, "symmetric").valid
    return times


@pytest.mark.parametrize("nbytes", [MiB, 64 * MiB])
def test_the_pick_on_a_damaged_4x4_is_the_fastest_candidate_by_the_model(monkeypatch, nbytes):
    result, built = _solve_recording(monkeypatch, _damaged("4x4", links=["0-1"]), nbytes, 6.0)
    times = _check_pick(result, built, nbytes)
    assert {"ring", "layered", "depth K=2"} <= set(times) and any(n.startswith("timed R=") for n in times)
    assert any(n.startswith(f"size {nbytes // MiB}MiB: modeled times of the candidates") for n in result.notes)
    skipped = {b.candidate.name for b in built if b.result is None}
    # 16 rounds at 1 us each plus the bandwidth bound already exceed the layered schedule's time at 1 MiB (at
    # 64 MiB only where a timed candidate of fewer rounds is within 16 us of the bound: _check_pick checks why)
    assert "timed R=8" in skipped or nbytes != MiB


def test_a_failed_chip_on_6x6_and_a_mesh_get_their_candidates(monkeypatch):
    result, built = _solve_recording(monkeypatch, _damaged("6x6", nodes=["7"]), MiB, 6.0)
    _check_pick(result, built, MiB)
    mesh = plan(SolveRequest(grid((4, 4), (False, False)), size=MiB, time_limit=6.0))
    assert [c.name for c in mesh.prepared.candidates][:3] == ["default", "ring", "layered"]


@pytest.mark.parametrize("shape, failure, rows", [("8x8", {"links": ["0.0-0.1"]}, (500, 1_000)),
                                                 ("12x12", {"nodes": ["14"]}, (1_100, 1_100))])
def test_the_candidates_of_a_periodic_plan_are_built_on_their_own_networks(monkeypatch, shape, failure, rows):
    # the failures repeated on cells (as on the pods): the timed candidates run on the periodic network with its
    # group (and its chips' copies as leaves), the depth-bounded one on the damaged torus with its own (the
    # periodic group on the damaged torus was an internal error on 20x20 with a failed link)

    monkeypatch.setattr(rounds, "TIMED_MAX_ROWS", rows[0])   # the damaged torus's own master does not fit
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", rows[1])
    monkeypatch.setattr("synth.solving.periodic.MAX_IDLE_SHARE", 0.05)
    d = _damaged(shape, **failure)
    p = plan(SolveRequest(d, size=MiB, time_limit=8.0))
    assert p.prepared.packing.prepared.periodic is not None
    result, built = _solve_recording(monkeypatch, d, MiB, 8.0)
    kinds = {b.candidate.kind for b in built if b.result}
    assert {"timed", "layered"} <= kinds, [(b.candidate.name, b.why) for b in built]
    # the depth-bounded LP on the damaged 12x12 with its group of order 2 may not fit its share of 8 s
    assert "depth" in kinds or all("time limit" in b.why for b in built if b.candidate.kind == "depth")
    assert "depth" in kinds or shape != "8x8"
    made = {"layered": {"layered-packing"}, "depth": {"depth-bounded-packing"},
            "timed": {"timed-packing", "layered-packing"}, "baseline": {"ring"}}
    for b in built:      # every certificate is the damaged torus's (a periodic one names its idle links)
        if b.result:
            spec = b.result.certificate.network.spec
            assert {k: v for k, v in spec.items() if k != "idle"} == d.spec
            assert b.result.certificate.provenance["algorithm"] in made[b.candidate.kind]
    _check_pick(result, built, MiB)


@pytest.mark.parametrize("nbytes", [MiB, 64 * MiB])
def test_the_pick_on_a_gpu_fabric_is_the_fastest_candidate_by_the_model(monkeypatch, nbytes):
    # two DGX A100 servers: the routed and timed trees over the switches and NCCL's schedules; at 1 MiB few
    # rounds win, at 64 MiB the bandwidth term
    fabric = gpu_fabric("dgx-a100", 2)
    result, built = _solve_recording(monkeypatch, fabric, nbytes, 6.0)
    times = _check_pick(result, built, nbytes)
    assert {"nccl-ring", "nccl-tree", "hierarchical", "routed", "timed R=2"} <= set(times)
    assert not any(b.candidate.name.startswith("depth") for b in built)
    chosen = result.certificate.provenance["size_choice"]["chosen"]
    assert chosen == "timed R=2" if nbytes == MiB else chosen.startswith("timed R=")


def test_a_damaged_fabric_times_every_candidate_at_1mib(monkeypatch):
    # two DGX A100 servers, a NIC failed: no symmetry left, so 16 owners of 131,072 units each by default, far more
    # than the 262,144 elements of 1 MiB; the candidates round to the message's elements (16,384 units each), so
    # every chunk gets one, and no timed candidate is left out for it
    fabric = gpu_fabric("dgx-a100", 2)
    d = damage(fabric, parse_failures(fabric, [], [str(int(fabric.nic_of(1)))]))
    result, built = _solve_recording(monkeypatch, d, MiB, 6.0)
    timed = [b.result.certificate for b in built if b.result and b.candidate.kind == "timed"]
    assert timed and all(min(chunk_elements(lifted_weights(c.base, c.group), MiB // 4)) >= 1 for c in timed)
    assert all(c.elements == MiB // 4 for c in timed)
    times = _check_pick(result, built, MiB)
    rows = result.certificate.provenance["size_choice"]["candidates"]
    assert not [r for r in rows if "chunks need" in r.get("left_out", "")]
    assert sum(name.startswith("timed R=") for name in times) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("nbytes", [MiB, 64 * MiB])
def test_the_pick_on_8x8_with_a_failed_link_is_the_fastest_candidate_by_the_model(monkeypatch, nbytes):
    """The issue's case: at 1 MiB the 24-round timed schedule was slower than the 16-round layered one."""
    result, built = _solve_recording(monkeypatch, _damaged("8x8", links=["0-1"]), nbytes, 60.0)
    times = _check_pick(result, built, nbytes)
    assert times[result.certificate.provenance["size_choice"]["chosen"]] <= times["layered"]


def test_the_candidates_share_the_time_limit(monkeypatch):
    """Each solving candidate gets the CPU time left over the solving candidates left, never more; a baseline's
    build is not theirs (the Ring is made to take a CPU second here)."""
    calls, baseline = [], []
    real = candidates_module._build_one

    def recording(req, prep, cand, share, shared):
        if cand.solves:
            calls.append((time.process_time(), share, cand.kind))
            return real(req, prep, cand, share, shared)
        cpu = time.process_time()
        while time.process_time() < cpu + 1.0:
            pass
        out = real(req, prep, cand, share, shared)
        baseline.append(time.process_time() - cpu)
        return out

    starts = []
    build = candidates_module.build_candidates

    def starting(*args, **kwargs):
        starts.append(time.process_time())
        return build(*args, **kwargs)

    monkeypatch.setattr(candidates_module, "_build_one", recording)
    monkeypatch.setattr(candidates_module, "build_candidates", starting)
    run(SolveRequest(_damaged("4x4", links=["0-1"]), size=64 * MiB, time_limit=3.0))   # large: none is skipped
    assert len(calls) == 7 and len(baseline) == 1 and baseline[0] >= 1.0
    # the Ring, first, took a second of no solve's share; the layered candidate, next, takes the layered halves of
    # the five timed candidates too (they start from its LP, shared)
    assert calls[0][2] == "layered" and sum(kind == "timed" for *_, kind in calls) == 5
    assert 3.0 / 7 * 3.5 - 0.05 < calls[0][1] <= 3.0 / 7 * 3.5
    for i, (at, share, _) in enumerate(calls[1:], 1):   # what the earlier solving candidates used is no longer shared
        assert share * (7 - i) <= 3.0 + baseline[0] - (at - starts[0]) + 1e-3   # CPU time from the share to the call


def test_the_ring_candidate_is_certified_and_checks():
    req = SolveRequest(_damaged("4x4", nodes=["5"]), size=MiB, time_limit=5.0)
    p = plan(req)
    ring = [c for c in p.prepared.candidates if c.name == "ring"]
    only = replace(p, prepared=replace(p.prepared, candidates=tuple(ring)))
    (built,) = candidates_module.build_candidates(req, only)
    cert = built.result.certificate
    assert cert.provenance["algorithm"] == "ring" and cert.claims["rounds"] == 2 * (15 - 1)
    assert check_certificate(cert, "explicit").valid


def test_plan_says_what_runs(capsys, tmp_path):
    argv = ["solve", "--torus", "4x4", "--fail-link", "0-1", "--size", "1MiB", "--time-limit", "4"]
    assert main([*argv, "--plan", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["construction"] == "by-size" and shown["solves"] and shown["time_limit"] == 4.0
    listed = shown["notes"][0]
    assert listed.startswith("candidates at 1MiB: ring (2(p-1) = 30 rounds), layered (2H = 8 rounds)")
    out = tmp_path / "c.json"
    assert main([*argv, "--json", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = json.loads(out.read_text())["provenance"]["size_choice"]["candidates"]
    assert [r["name"] for r in rows] == [part.split(" (")[0] for part in listed.split(": ", 1)[1].split("), ")]
    assert summary["chosen"] in [r["name"] for r in rows] and summary["valid"] is True
    assert main(["check", str(out)]) == 0


@pytest.mark.parametrize("extra, words", [
    (["--size", "0"], "--size"), (["--size", "x"], "--size"), (["--size", "-1"], "--size"),
    (["--size", "3"], "smaller than one element"), (["--size", "3", "--plan"], "smaller than one element"),
    (["--size", "1MiB", "--depth", "3"], "--size chooses the depth"),
    (["--size", "1MiB", "--collective", "allgather"], "--size chooses among allreduce schedules"),
    (["--size", "1MiB", "--engine", "bogus"], "--engine"),
])
def test_a_bad_size_is_one_line_and_exit_2(capsys, extra, words):
    assert main(["solve", "--torus", "4x4", "--fail-link", "0-1", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("synth: error: ") and words in err


def test_the_library_refuses_a_bad_size():
    d = _damaged("4x4", links=["0-1"])
    for options in ({"size": 0}, {"size": "1MiB"}, {"size": MiB, "depth": 2}, {"size": MiB, "engine": "x"}):
        with pytest.raises(OptionError):
            SolveRequest(d, **options)
    with pytest.raises(OptionError, match="depth sweep"):
        plan(SolveRequest(parse_torus("4x4"), size=MiB))


def test_compare_lists_the_candidates_at_each_size():
    rows = compare(_damaged("4x4", links=["0-1"]), [MiB, 64 * MiB], time_limit=4.0)
    for size in (MiB, 64 * MiB):
        names = {r.algorithm for r in rows if r.size == size}
        assert {"layered", "depth K=2", "ring"} <= names and any(n.startswith("timed R=") for n in names)
        best = [r for r in rows if r.size == size and r.best]
        assert len(best) == 1 and best[0].seconds == min(r.seconds for r in rows if r.size == size)


def test_the_rounding_takes_as_many_units_as_the_elements_fill(monkeypatch, tmp_path, capsys):
    # 6x6 with a failed link: 1,024 units per represented owner give 308 chunks, more than 288 elements; the
    # rounding takes 288 // (owners x group) units instead (what --size passes for its message), every chunk an element
    import synth.solving.packing as packing

    out = tmp_path / "c.json"
    argv = ["solve", "--torus", "6x6", "--fail-link", "0-1", "--elements", "288", "--time-limit", "5"]
    assert main([*argv, "--out", str(out)]) == 0
    cert = json.loads(out.read_text())
    assert cert["claims"]["elements"] == 288 and cert["claims"]["chunks"] <= 288
    assert main(["check", str(out)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(packing, "units", lambda _req, _data, default, placed=1: default)
    assert main(argv) == 2
    assert "288 elements cannot fill" in capsys.readouterr().err


def test_a_size_passes_its_message_elements_to_the_candidates():
    d = _damaged("16x16x16", links=["0-1", "37-53"])
    req = SolveRequest(d, size=1 << 20)
    assert candidates_module.without_size(req).elements == 262144 and candidates_module.without_size(req).size is None
    assert candidates_module.without_size(SolveRequest(d, size=1 << 20, elements=5)).elements == 5


def test_the_timed_candidates_start_from_the_layered_candidates_lp(monkeypatch):
    # one layered LP for the layered candidate and the five timed ones (before: one each, in their shares)
    import synth.solving.packing as packing

    solved, real = [], packing._solved_layered

    def counting(req, prep, *args):
        solved.append(prep.topology.name)
        return real(req, prep, *args)

    monkeypatch.setattr(packing, "_solved_layered", counting)
    result = run(SolveRequest(_damaged("4x4", links=["0-1"]), size=64 * MiB, time_limit=10.0))
    timed = [r for r in result.certificate.provenance["size_choice"]["candidates"] if r["name"].startswith("timed R=")]
    # a candidate whose rounds alone cost more than the best so far is not built (and solves nothing): which ones
    # depends on how near their bound the earlier ones came in their shares (at 3 CPU s a fresh-clone CI, the other
    # core busy, left the last one out for time)
    assert len(timed) == 5 and sum("left_out" not in r for r in timed) >= 3, timed
    assert all(r["left_out"].startswith("not built: any schedule of") for r in timed if "left_out" in r), timed
    assert solved == ["torus 4x4 with 1 failed link"]
