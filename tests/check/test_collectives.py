"""Reduce-scatter and allgather: the halves of SP, executed and measured by the checker (both modes),
mutations refused, the file formats, and the round bound max_v ecc(v) against brute force."""

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest

from synth.check import check_certificate, certify, execute, measure_explicit, round_lower_bound
from synth.check.certificate import certificate_to_json, read_certificate, write_certificate
from synth.check.claims import check_file
from synth.check.explicit import read_explicit, write_explicit
from synth.errors import FileFormatError, ScheduleError
from synth.schedule import COPY, REDUCE, BaseSchedule, Block, Schedule
from synth.schedule.collective import collective_half
from synth.schedule.chunking import block_chunk_elements, chunk_offsets
from synth.schedule.exchange import exchange_allreduce
from synth.schedule.lift import lift, lifted_chunk_elements, lifted_owners
from synth.schedule.sp import sp_allreduce
from synth.symmetry.spec import default_group
from synth.symmetry.torus import torus_gamma
from synth.topology.base import Topology
from synth.topology.torus import parse_torus

HALVES = ("reduce-scatter", "allgather")


@pytest.fixture(scope="module", params=["4x4", "5x5", "3x3x3", "6"])
def torus_case(request):
    t = parse_torus(request.param)
    return t, torus_gamma(t)


@pytest.mark.parametrize("collective", HALVES)
def test_sp_halves_are_certified_round_optimal(torus_case, collective):
    t, g = torus_case
    cert = certify(collective_half(sp_allreduce(t), collective), g)
    c = cert.claims
    assert (c["rounds"], c["round_lower_bound"], c["round_optimal"]) == (t.diameter, t.diameter, True)
    assert (c["psi"], c["theta"], c["omega"], c["weight"]) == ("1", "1", "1", str(t.n_vertices - 1))
    assert c["transmissions"] == c["chunks"] * (t.n_vertices - 1)
    for mode in ("explicit", "symmetric"):
        report = check_certificate(cert, mode)
        assert report.valid, (report.errors, report.claims)
        assert report.to_json()["collective"] == collective


def test_modes_agree_and_owners_follow_the_group(t44):
    g = torus_gamma(t44)
    for collective in HALVES:
        base = collective_half(sp_allreduce(t44), collective)
        explicit = check_certificate(certify(base, g, 256), "explicit").metrics
        symmetric = check_certificate(certify(base, g, 256), "symmetric").metrics
        assert explicit == symmetric
    owners = lifted_owners(base, g)
    assert np.bincount(owners).tolist() == [4] * 16  # |G| = 4p: four chunks per node, one per tree orientation
    sizes = lifted_chunk_elements(base, g, 16 * 10)  # blocks of 10 over 4 chunks: 2, 2, 3, 3 (floor rule)
    assert [sorted(sizes[owners == v].tolist()) for v in (0, 7)] == [[2, 2, 3, 3]] * 2
    m = measure_explicit(lift(base, g), sizes)
    assert m.psi == 1 and m.omega > 1  # uneven chunks: measured honestly, slightly above 1


def test_allreduce_files_are_unchanged(t44):
    cert = certify(sp_allreduce(t44), torus_gamma(t44))
    data = certificate_to_json(cert)
    assert "collective" not in data and "chunk_owner" not in data
    assert "collective" not in check_certificate(cert).to_json()


def _ring3():
    return parse_torus("3")


def _blk(t, rnd, op, chunk, pairs):
    links = t.link_ids([u for u, _ in pairs], [v for _, v in pairs]).reshape(-1, 1)
    return Block(rnd, op, np.asarray(chunk, dtype=np.int32), links)


def test_hand_built_reduce_scatter_and_allgather():
    t = _ring3()  # chunk 0 owned by 0, chunk 1 by 1, chunk 2 by 2: everyone reduces into the owner in one round
    pairs = [(1, 0), (2, 0), (0, 1), (2, 1), (0, 2), (1, 2)]
    rs = Schedule(t, 3, 1, (_blk(t, 1, REDUCE, [0, 0, 1, 1, 2, 2], pairs),), "reduce-scatter", [0, 1, 2])
    assert execute(rs) == []
    m = measure_explicit(rs, [2, 2, 2])
    assert (m.psi, m.theta, m.weight) == (1, 1, 2)
    ag = Schedule(t, 3, 1, (_blk(t, 1, COPY, [0, 0, 1, 1, 2, 2], [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]),),
                  "allgather", [0, 1, 2])
    assert execute(ag) == []
    # the same transmissions as reduces: the receivers' values were undefined, so the sums are garbage
    bad = Schedule(t, 3, 1, (replace(ag.blocks[0], op=REDUCE),), "allgather", [0, 1, 2])
    assert execute(bad)


def _mutants(base):
    """(name, mutated base): a transmission dropped, an owner moved, a transmission doubled, a copy turned reduce.

    (A copy repeated in a *later* round is no error: an allgather that delivers a value twice by copy
    still ends exact, with Ψ > 1.)"""
    rows = [(int(base.component[i]), int(base.round[i]), int(base.src[i]), int(base.dst[i]), int(base.op[i]),
             base.route(i)) for i in range(base.n_transmissions)]
    def make(rs, owner=None):
        return BaseSchedule.from_rows(base.topology, base.n_rounds, rs, base.weights, base.labels, base.collective,
                                      base.owner if owner is None else owner)
    yield "drop", make(rows[1:])
    yield "owner", make(rows, (base.owner + 1) % base.topology.n_vertices)
    last = max(range(len(rows)), key=lambda i: rows[i][1])
    r = rows[last]
    yield "double", make(rows + [r])  # the same transmission twice in its round: counted twice (or two copies)
    if base.collective == "allgather":
        yield "reduce", make([r if i else r[:4] + (REDUCE, r[5]) for i, r in enumerate(rows)])


@pytest.mark.parametrize("collective", HALVES)
def test_mutations_are_refused(t44, collective):
    g = torus_gamma(t44)
    base = collective_half(sp_allreduce(t44), collective)
    names = []
    for name, mutant in _mutants(base):
        names.append(name)
        with pytest.raises(ScheduleError, match="incorrect schedule"):
            certify(mutant, g)
        # the claims of the correct schedule, on the mutant: both modes say INVALID
        cert = certify(base, g)
        forged = replace(cert, base=mutant)
        for mode in ("explicit", "symmetric"):
            assert not check_certificate(forged, mode).valid, (name, mode)
    assert len(names) >= 3


@pytest.mark.parametrize("collective", HALVES)
def test_files_round_trip(tmp_path, t44, collective):
    g = torus_gamma(t44)
    cert = certify(collective_half(sp_allreduce(t44), collective), g)
    path = tmp_path / "c.json"
    write_certificate(cert, path)
    data = json.loads(path.read_text())
    assert data["collective"] == collective and data["chunk_owner"] == [0]
    back = read_certificate(str(path))
    assert back.base.collective == collective and back.base.owner.tolist() == [0]
    assert check_file(str(path)).valid
    ex = tmp_path / "c.jsonl"
    write_explicit(lift(cert.base, g), lifted_chunk_elements(cert.base, g, cert.elements), ex, cert.claims)
    schedule, sizes, header = read_explicit(str(ex))
    assert schedule.collective == collective and header["chunk_owner"] == lifted_owners(cert.base, g).tolist()
    assert check_file(str(ex)).valid
    # a wrong owner in the file: the checker executes and refuses
    data["chunk_owner"] = [5]
    path.write_text(json.dumps(data))
    assert not check_file(str(path)).valid


def _edit_header(path, **changes):
    lines = path.read_text().splitlines(keepends=True)
    head = json.loads(lines[0])
    for k, v in changes.items():
        if v is None:
            head.pop(k, None)
        else:
            head[k] = v
    path.write_text(json.dumps(head) + "\n" + "".join(lines[1:]))


def test_explicit_header_rules(tmp_path, t44):
    g = torus_gamma(t44)
    cert = certify(collective_half(sp_allreduce(t44), "reduce-scatter"), g)
    ex = tmp_path / "rs.jsonl"
    sizes = lifted_chunk_elements(cert.base, g, cert.elements)
    for changes, message in [({"chunk_owner": None}, "needs 'chunk_owner'"),
                             ({"collective": "broadcast"}, "collective must be one of"),
                             ({"collective": None}, "chunk_owner belongs to"),
                             ({"chunk_elements": [2] + sizes.tolist()[1:]}, "blocks of a reduce-scatter are equal")]:
        write_explicit(lift(cert.base, g), sizes, ex)
        _edit_header(ex, **changes)
        with pytest.raises(FileFormatError, match=message):
            read_explicit(str(ex))


def test_layout_functions():
    assert block_chunk_elements([1, 0], [1, 1], [0, 1], 8).tolist() == [4, 4]
    assert chunk_offsets([1, 0], [4, 4], [0, 1]).tolist() == [4, 0]
    with pytest.raises(ScheduleError, match="multiple of the 2"):
        block_chunk_elements([1, 0], [1, 1], [0, 1], 7)
    with pytest.raises(ScheduleError, match="owns no chunk"):
        block_chunk_elements([1, 1], [1, 1], [0, 1], 8)


def test_exchange_has_no_halves():
    with pytest.raises(ScheduleError, match="exactly one root"):
        collective_half(exchange_allreduce(parse_torus("4x4")), "reduce-scatter")


def test_rectangular_and_odd_tori_meet_h(t44):
    for shape in ("3x5", "4x6", "5x4"):
        t = parse_torus(shape)
        for collective in HALVES:
            cert = certify(collective_half(sp_allreduce(t), collective), default_group(t))
            assert cert.claims["rounds"] == cert.claims["round_lower_bound"] == t.diameter


# ----------------------------------------------------------------- brute force of the round bound
X = -1  # a value that counts some input twice, or an allgather's undefined start: never part of an exact result


def _new_values(state, w, in_nbrs):
    """Every value node ``w`` can hold after one round: keep, a copy from one in-neighbour, or reduces from a
    non-empty set of them (each link at most once: a repeated transmission only double-counts, giving X, and a
    node holding X never helps a node reach an exact value, so those moves are left out)."""
    out = {state[w]}
    out.update(state[u] for u in in_nbrs)
    for k in range(1, len(in_nbrs) + 1):
        for group in itertools.combinations(in_nbrs, k):
            value = state[w]
            for u in group:
                if value == X or state[u] == X or value & state[u]:
                    value = X
                    break
                value |= state[u]
            out.add(value)
    return out


def _min_rounds(n, in_nbrs, start, target, cap):
    """Fewest rounds after which every node ``w`` of ``target`` holds exactly ``target[w]``, over every schedule
    of one chunk (all states reachable round by round; the nodes' choices in a round are independent)."""
    states = {start}
    for r in range(1, cap + 1):
        if any(all(target[w] in _new_values(st, w, in_nbrs[w]) for w in target) for st in states):
            return r
        nxt = set()
        for st in states:
            nxt.update(itertools.product(*(sorted(_new_values(st, w, in_nbrs[w])) for w in range(n))))
        states = nxt
    return None


def _graph(name, n, edges):
    links = [(u, v) for u, v in edges] + [(v, u) for u, v in edges]
    return Topology.from_links(name, {"kind": "links"}, n, links)


TINY = [parse_torus("3"), parse_torus("4"), parse_torus("5"),
        _graph("path 3", 3, [(0, 1), (1, 2)]), _graph("path 4", 4, [(0, 1), (1, 2), (2, 3)]),
        _graph("star 4", 4, [(0, 1), (0, 2), (0, 3)]), _graph("diamond", 4, [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)])]


@pytest.mark.parametrize("t", TINY, ids=[t.name for t in TINY])
def test_round_bound_against_brute_force(t):
    n = t.n_vertices
    in_nbrs = [sorted(int(u) for u in t.link_src[t.link_dst == w]) for w in range(n)]
    full = (1 << n) - 1
    rs = max(_min_rounds(n, in_nbrs, tuple(1 << u for u in range(n)), {v: full}, 4) for v in range(n))
    ag = max(_min_rounds(n, in_nbrs, tuple(1 << v if u == v else X for u in range(n)),
                         {u: 1 << v for u in range(n)}, 4) for v in range(n))
    bound, _ = round_lower_bound(t, None, "reduce-scatter")
    assert rs == ag == bound == round_lower_bound(t, None, "allgather")[0]
