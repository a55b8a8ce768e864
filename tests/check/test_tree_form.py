"""Certificates in the tree form (version 2): every construction round-trips long <-> compact, a corrupt tree is
refused (format error, exit 2) or INVALID (a false schedule, exit 1), version 1 files still read, gzip is bounded."""

import copy
from dataclasses import replace
import gzip
import json

import numpy as np
import pytest

import synth.solving.rounds as rounds
from synth.check.base_json import base_from_json
from synth.check.certificate import (Certificate, IMAGES_VERSION, VERSION, certificate_lines, certificate_to_json,
                                     dumps, read_certificate, write_certificate)
from synth.check.claims import certify, check_certificate
from synth.check.tree_form import tree_parts
from synth.cli import main
from synth.errors import FileFormatError, InvalidScheduleError
from synth.schedule.data import BaseSchedule
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.forest import hub_parents, tree_schedule
from synth.schedule.sp import sp_allreduce
from synth.solving import solve
from synth.solving.repair import repair
from synth.symmetry.residual import trivial_group
from synth.symmetry.torus import torus_gamma
from synth.topology.failures import damage, parse_failures
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.torus import parse_torus


def damaged(shape="4x4", links=("0-1",), nodes=()):
    t = parse_torus(shape)
    return damage(t, parse_failures(t, links=list(links), nodes=list(nodes)))


def _layered(monkeypatch):
    monkeypatch.setattr(rounds, "TIMED_MAX_ROWS", 0)   # the timed master never fits: layered trees only
    monkeypatch.setattr("synth.solving.periodic.PLANE_ROWS", 0)
    return solve(damaged()).certificate


CONSTRUCTIONS = {
    "sp": lambda mp: certify(sp_allreduce(parse_torus("4x4")), torus_gamma(parse_torus("4x4"))),
    "exchange": lambda mp: certify(exchange_allreduce(parse_torus("4x4")), torus_gamma(parse_torus("4x4"))),
    "k-hop routes": lambda mp: certify(tree_schedule(parse_torus("4x4"), hub_parents(parse_torus("4x4"), 2), 0),
                                       torus_gamma(parse_torus("4x4"))),
    "k-hop solve": lambda mp: solve(parse_torus("4x4"), depth=2, time_limit=10).certificate,
    "spine-leaf": lambda mp: solve(parse_spine_leaf("2,4,2")).certificate,
    "timed packing": lambda mp: solve(damaged()).certificate,
    "layered packing": _layered,
    "depth-bounded packing": lambda mp: solve(damaged(), depth=3, time_limit=10).certificate,
    "repair": lambda mp: repair(solve(parse_torus("4x4")).certificate,
                                parse_failures(parse_torus("4x4"), links=["0-1"], nodes=["10"]), time_limit=5).certificate,
    "reduce-scatter": lambda mp: solve(damaged(), collective="reduce-scatter").certificate,
    "allgather": lambda mp: solve(parse_torus("4x4"), depth=2, collective="allgather", time_limit=10).certificate,
}


def rows(base: BaseSchedule) -> list:
    """The transmissions of ``base`` as a sorted list (order within a component is not part of the form)."""
    return sorted((int(base.component[i]), int(base.round[i]), int(base.src[i]), int(base.dst[i]), int(base.op[i]),
                   tuple(base.route(i).tolist())) for i in range(base.n_transmissions))


def same(a: BaseSchedule, b: BaseSchedule) -> None:
    assert rows(a) == rows(b)
    assert a.n_rounds == b.n_rounds and a.labels == b.labels and a.collective == b.collective
    assert np.array_equal(a.weights, b.weights)
    assert (a.owner is None) == (b.owner is None) and (a.owner is None or np.array_equal(a.owner, b.owner))


@pytest.mark.parametrize("name", list(CONSTRUCTIONS))
def test_every_construction_round_trips_long_and_compact(name, tmp_path, monkeypatch):
    cert = CONSTRUCTIONS[name](monkeypatch)
    compact, long = tmp_path / "c.json", tmp_path / "l.json"
    write_certificate(cert, compact)
    write_certificate(cert, long, compact=False)
    data = json.loads(compact.read_text())
    # repair's trees are images of SP-allreduce's (version 3, synth.check.tree_images); the others plain trees
    assert data["version"] == (IMAGES_VERSION if name == "repair" else VERSION) and VERSION == 2
    assert any("tree" in c for c in data["base_schedule"]["components"])
    assert compact.stat().st_size < long.stat().st_size
    from_compact, from_long = read_certificate(str(compact)), read_certificate(str(long))
    same(cert.base, from_compact.base)
    same(cert.base, from_long.base)
    # long -> compact gives the bytes compact gave; compact -> long the lines long gave (a tree has no row order)
    assert "".join(certificate_lines(replace(from_long, tree_images=cert.tree_images))) == compact.read_text()
    again = "".join(certificate_lines(from_compact, compact=False))
    assert sorted(x.rstrip(",") for x in again.splitlines()) == sorted(x.rstrip(",") for x in long.read_text().splitlines())
    assert dumps(certificate_to_json(from_compact)) == compact.read_text()
    assert check_certificate(from_compact).valid and check_certificate(from_long).valid


def junk(seed: int) -> BaseSchedule:
    """A random base schedule (no allreduce: any rows): repeated sends, cycles, self-routes, multi-hop routes."""
    t = parse_torus("3x4")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(int(rng.integers(3, 60))):
        c, r, op = int(rng.integers(0, 3)), int(rng.integers(1, 6)), int(rng.integers(0, 2))
        v = int(rng.integers(0, t.n_vertices))
        route = [int(t.out_links[1][t.out_links[0][v] + rng.integers(0, 4)])]
        for _ in range(int(rng.integers(0, 3))):
            w = int(t.link_dst[route[-1]])
            route.append(int(t.out_links[1][t.out_links[0][w] + rng.integers(0, 4)]))
        out.append((c, r, v, int(t.link_dst[route[-1]]), op, route))
    out += [(c, 6, 0, 1, 0, [int(t.link_ids([0], [1])[0])]) for c in range(3)]   # every component non-empty
    return BaseSchedule.from_rows(t, 6, out, weights=(1, 2, 3), labels=("a", "b", "c"))


@pytest.mark.parametrize("seed", range(40))
def test_any_schedule_round_trips(seed):
    base = junk(seed)
    cert = Certificate(base.topology, trivial_group(base.topology), base, 1000)
    data = json.loads("".join(certificate_lines(cert)))
    assert data == certificate_to_json(cert)
    same(base, base_from_json(base.topology, data["base_schedule"]))


def test_trees_are_only_where_they_pay_and_an_exchange_stays_rows():
    base = exchange_allreduce(parse_torus("4x4"))
    parts = tree_parts(base)
    assert parts.components.tolist() == [0]
    assert int((~parts.in_tree).sum()) == 2   # the two roots' exchange
    t = parse_torus("4x4")
    few = BaseSchedule.from_rows(t, 2, [(0, 1, 1, 0, 0, t.link_ids([1], [0])), (0, 2, 0, 1, 1, t.link_ids([0], [1]))])
    assert tree_parts(few).components.size == 0   # two sends of 16 vertices: the arrays would cost more


@pytest.fixture(scope="module")
def damaged_cert():
    return solve(damaged()).certificate


def _tree_json(cert):
    return json.loads("".join(certificate_lines(cert)))


def _edit(data, edit):
    data = copy.deepcopy(data)
    edit(data["base_schedule"]["components"][0]["tree"], data)
    return data


def _cycle(tree, data):
    p = tree["parent"]
    v = next(v for v in range(len(p)) if p[v] >= 0 and p[p[v]] >= 0)
    p[p[v]] = v   # v's parent now hangs from v


def _fresh_far(tree, data):
    v = next(v for v in range(len(tree["parent"])) if tree["parent"][v] >= 0)
    tree["parent"][v] = next(u for u in range(len(tree["parent"])) if u not in (v, tree["parent"][v])
                             and u not in (v - 1, v + 1, v - 4, v + 4, v + 3, v - 3, v + 12, v - 12))


FORMAT_ERRORS = [
    ("a parent cycle", _cycle, "has a cycle"),
    ("a short array", lambda tree, d: tree["up"].pop(), "'up' must be a list of 16 integers"),
    ("a float", lambda tree, d: tree["down"].__setitem__(3, 2.0), "'down' must hold integers only"),
    ("a bool", lambda tree, d: tree["parent"].__setitem__(3, True), "'parent' must hold integers only"),
    ("a negative round", lambda tree, d: tree["up"].__setitem__(3, -2), "non-negative"),
    ("a parent without rounds", lambda tree, d: (tree["up"].__setitem__(3, 0), tree["down"].__setitem__(3, 0)),
     "a parent but no up or down round"),
    ("rounds without a parent", lambda tree, d: tree["up"].__setitem__(tree["parent"].index(-1), 1),
     "an up or down round but no parent"),
    ("a self parent", lambda tree, d: tree["parent"].__setitem__(3, 3), "is not another vertex"),
    ("an unknown key", lambda tree, d: tree.__setitem__("sideways", []), "unknown key 'sideways'"),
    ("a non-link edge", _fresh_far, "is not a link"),
    ("a route to elsewhere", lambda tree, d: tree.__setitem__("up_routes", [[3, [3, 2]]]), "does not go from"),
    ("a route out of order", lambda tree, d: tree.__setitem__(
        "up_routes", [[3, [3, tree["parent"][3]]], [2, [2, tree["parent"][2]]]]), "out of order"),
    ("an unknown component key", lambda tree, d: d["base_schedule"]["components"][0].__setitem__("x", 1),
     "component 0: unknown key 'x'"),
    ("an unknown top key", lambda tree, d: d.__setitem__("extra", 1), "certificate: unknown key 'extra'"),
]


@pytest.mark.parametrize("what, edit, message", FORMAT_ERRORS, ids=[f[0] for f in FORMAT_ERRORS])
def test_a_corrupt_tree_is_one_format_error(damaged_cert, what, edit, message, tmp_path, capsys):
    data = _edit(_tree_json(damaged_cert), edit)
    with pytest.raises(FileFormatError, match=message):
        read_certificate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synth: error:") and err.count("\n") == 1 and message.split("'")[0] in err


def _across_the_failure(tree, data):
    # in a tree of owner 0 or 1 (the failed link's ends), the other end reduces into it over the failed link
    tree = next(c["tree"] for c in data["base_schedule"]["components"] if -1 in (c["tree"]["parent"][:2]))
    r = tree["parent"][:2].index(-1)
    tree["parent"][1 - r], tree["up"][1 - r], tree["down"][1 - r] = r, 1, 0


def _down_before_up(tree, data):
    v = next(v for v in range(len(tree["parent"])) if tree["up"][v] and tree["down"][v])
    tree["up"][v], tree["down"][v] = tree["down"][v], tree["up"][v]   # the total comes back before v sent


@pytest.mark.parametrize("edit, message", [(_across_the_failure, "crosses the failed link 0-1"),
                                           (_down_before_up, "")])
def test_a_false_tree_is_invalid(damaged_cert, edit, message, tmp_path, capsys):
    data = _edit(_tree_json(damaged_cert), edit)
    path = tmp_path / "false.json"
    path.write_text(json.dumps(data))
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "INVALID" in out and message in out
    if message:
        with pytest.raises(InvalidScheduleError, match=message):
            read_certificate(data)


def test_version_1_files_still_read_and_trees_need_version_2(damaged_cert, tmp_path, capsys):
    old = certificate_to_json(damaged_cert, compact=False)
    old["version"] = 1
    old["ignored by version 1"] = True
    same(read_certificate(old).base, damaged_cert.base)
    path = tmp_path / "v1.json"
    path.write_text(dumps(old))
    assert main(["check", str(path)]) == 0
    tree = _tree_json(damaged_cert)
    tree["version"] = 1
    with pytest.raises(FileFormatError, match="component 0 needs a 'transmissions' list"):
        read_certificate(tree)
    tree["version"] = 5
    with pytest.raises(FileFormatError, match="version '5' is not supported"):
        read_certificate(tree)


def test_gzip_certificates_are_deterministic_and_bounded(damaged_cert, tmp_path, capsys, monkeypatch):
    from synth.fileio import LIMITS

    a, b, plain = tmp_path / "a.json.gz", tmp_path / "b.json.gz", tmp_path / "p.json"
    write_certificate(damaged_cert, a)
    write_certificate(damaged_cert, b)
    write_certificate(damaged_cert, plain)
    assert a.read_bytes() == b.read_bytes() and a.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(a.read_bytes()) == plain.read_bytes()
    same(read_certificate(str(a)).base, damaged_cert.base)
    for command in (["check", str(a)], ["export", str(a), "--format", "explicit", "--out", str(tmp_path / "e")]):
        assert main(command) == 0
    capsys.readouterr()
    # the limit holds for the decompressed text: a writer refuses above it, a reader refuses a bomb
    monkeypatch.setitem(LIMITS, "certificate", plain.stat().st_size - 1)
    with pytest.raises(FileFormatError, match="nothing written"):
        write_certificate(damaged_cert, tmp_path / "c.json.gz")
    assert not (tmp_path / "c.json.gz").exists()
    assert a.stat().st_size < LIMITS["certificate"]
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b"{" + b" " * (10 << 20) + b"}"))
    assert bomb.stat().st_size < LIMITS["certificate"]
    for path, message in ((bomb, "decompresses to more than"), (a, "decompresses to more than")):
        assert main(["check", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("synth: error:") and message in err and err.count("\n") == 1
    monkeypatch.undo()
    cut, tail = tmp_path / "cut.json.gz", tmp_path / "tail.json.gz"
    cut.write_bytes(a.read_bytes()[:-20])
    tail.write_bytes(a.read_bytes() + b"junk")
    for path, message in ((cut, "cut short"), (tail, "after the end of the gzip stream")):
        with pytest.raises(FileFormatError, match=message):
            read_certificate(str(path))
