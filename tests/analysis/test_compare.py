"""``synth compare`` on networks that are not healthy tori: its fraction of the bound is a true fraction.

The goodput bound divides by the least bandwidth term any correct schedule has on the network
(:func:`synth.check.bounds.bandwidth.collective_bound`), so no schedule, however good, passes 1;
the least degree's ``D B / 2`` of a healthy torus is no bound on a mesh or a damaged torus.
"""

import json
import sys

import pytest

import synth.analysis.compare as compare_module
from synth.analysis.compare import compare
from synth.analysis.cost import Network, goodput_bound
from synth.cli import main
from synth.topology.failures import damage, parse_failures
from synth.topology.lattice import grid, twisted
from synth.topology.torus import parse_torus

BIG = 64 << 20
#: the bandwidth term alone: the closest any schedule gets to the bound
PURE = Network(alpha=0.0, hop_latency=0.0)


def _damaged(shape, links=(), nodes=()):
    t = parse_torus(shape)
    return damage(t, parse_failures(t, list(links), list(nodes)))


IRREGULAR = {
    "mesh 4x4": lambda: grid((4, 4), (False, False)),
    "mesh 3x3x2": lambda: grid((3, 3, 2), (False, False, False)),
    "grid 4x6 wrap 1": lambda: grid((4, 6), (False, True)),
    "torus 4x4, a failed link": lambda: _damaged("4x4", links=["0-1"]),
    "torus 4x4, a failed node": lambda: _damaged("4x4", nodes=["5"]),
    "torus 6x6, two failed links": lambda: _damaged("6x6", links=["0-1", "14-20"]),
    "twisted 4x4x8": lambda: twisted((4, 4, 8)),
}
#: the solve of synth's own schedule, short: what is tested is the bound, not how close the schedule gets
LIMIT = 4.0


def _above_one(rows):
    return [(r.algorithm, r.size, r.fraction_of_bound) for r in rows if not 0 < r.fraction_of_bound <= 1 + 1e-12]


@pytest.mark.parametrize("name", sorted(IRREGULAR))
def test_no_fraction_of_the_bound_above_one_on_irregular_and_damaged_networks(name):
    """Without latency terms (the closest any schedule gets to the bound), at a small and a large size."""
    rows = compare(IRREGULAR[name](), [64 << 10, BIG], PURE, time_limit=LIMIT)
    assert rows and not _above_one(rows)


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
@pytest.mark.parametrize("name", ["torus 4x4, a failed link", "torus 4x4, a failed node"])
def test_no_fraction_above_one_for_the_halves(name, collective):
    rows = compare(IRREGULAR[name](), [BIG], PURE, collective=collective, time_limit=LIMIT)
    assert rows and not _above_one(rows)


@pytest.mark.parametrize("collective", ["allreduce", "reduce-scatter", "allgather"])
def test_on_a_healthy_torus_the_bound_is_the_least_degrees(collective):
    """Where D B / 2 (D B for a half) is the bound, the certified bounds give exactly it, and SP meets it."""
    t, net = parse_torus("4x4"), Network(bandwidth=2.0)
    assert goodput_bound(t, net, collective) == 4 * 2.0 / (2 if collective == "allreduce" else 1)
    if collective == "allreduce":
        (row,) = compare(t, [BIG], PURE, algorithms=["sp"])
        assert row.fraction_of_bound == pytest.approx(1, rel=1e-12)


def test_a_size_with_fewer_elements_than_chunks_leaves_those_chunks_empty():
    """A packed schedule has 1,024 weight units per owner: at 1 KiB (256 elements of 4 bytes) most of its chunks
    get no element and move nothing; every candidate is measured in 4-byte elements, none is left out."""
    notes = []
    rows = compare(IRREGULAR["torus 4x4, a failed link"](), [1 << 10, 16 << 10, BIG], notes=notes, time_limit=LIMIT)
    layered = {r.size: r for r in rows if r.algorithm == "layered"}   # one of synth's candidates there
    assert sorted(layered) == [1 << 10, 16 << 10, BIG] and not _above_one(rows)
    assert not [n for n in notes if "1 byte" in n or "left out at" in n]
    timed = {(r.algorithm, r.size) for r in rows if r.algorithm.startswith("timed R=")}
    assert timed and {size for _, size in timed} == {1 << 10, 16 << 10, BIG}


def test_a_size_whose_empty_chunks_would_need_too_large_a_lift_leaves_the_candidate_out(monkeypatch):
    """Past ``EXPLICIT_MAX`` lifted transmissions a size that leaves chunks empty is not measured (a 16x16x16
    periodic schedule lifted 755 M transmissions for it, 15 GB): the timed candidates, whose chunks are empty even
    in 1-byte elements, are left out there, with a note, and measured where every chunk has an element.  Their
    rounding now takes as many units as the smallest size fills, so their default units stand in for a schedule
    read from elsewhere."""
    monkeypatch.setattr("synth.analysis.cost.EXPLICIT_MAX", 100)
    network = IRREGULAR["torus 4x4, a failed link"]()
    rows = compare(network, [1 << 10, BIG], time_limit=LIMIT)      # the units of 1 KiB: measured at both sizes
    timed = {(r.algorithm, r.size) for r in rows if r.algorithm.startswith("timed R=")}
    assert timed and {size for _, size in timed} == {1 << 10, BIG}
    monkeypatch.setattr("synth.solving.candidates.message_elements", lambda *_: 0)   # their default units again
    notes = []
    rows = compare(network, [1 << 10, BIG], notes=notes, time_limit=LIMIT)
    timed = {(r.algorithm, r.size) for r in rows if r.algorithm.startswith("timed R=")}
    assert timed and {size for _, size in timed} == {BIG}       # every chunk of theirs has an element there
    assert len([n for n in notes if n.startswith("timed R=") and "left out at 1,024 bytes" in n]) == len(timed)


def test_cli_compare_takes_a_time_limit_and_shows_progress_on_a_terminal(capsys, monkeypatch):
    limits = []
    real = compare_module.build_candidates

    def build_candidates(req, plan, baselines=True):
        limits.append(req.time_limit)
        return real(req, plan, baselines)

    monkeypatch.setattr(compare_module, "build_candidates", build_candidates)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    argv = ["compare", "--torus", "4x4", "--fail-link", "0-1", "--sizes", "16KiB", "--algorithms", "sp"]
    assert main([*argv, "--time-limit", "3", "--json"]) == 0
    out, err = capsys.readouterr()
    assert limits == [3.0] and "[synth] building synth's candidates on torus 4x4 with 1 failed link" in err
    names = [r["algorithm"] for r in json.loads(out)["rows"]]
    assert "layered" in names and "ring" not in names   # only synth's candidates: --algorithms sp
    assert main([*argv, "--time-limit", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
