"""Certificates written from the arrays and read column by column are the files and schedules of the
row-by-row code: the same bytes, the same arrays, the same one-line errors."""

import copy

import numpy as np
import pytest

import synth.check.certificate as C
from synth.check import rows_form
from synth.check.base_json import base_from_json
from synth.check.certificate import Certificate, certificate_lines, certificate_to_json, dumps, read_certificate
from synth.errors import FileFormatError
from synth.fileio import LIMITS
from synth.schedule.data import BaseSchedule
from synth.symmetry.torus import torus_gamma
from synth.topology.failures import damage, parse_failures
from synth.topology.torus import parse_torus

FIELDS = ("component", "round", "src", "dst", "op", "route_ptr", "route_links", "weights")


@pytest.fixture(scope="module")
def packed():
    from synth.solving import solve

    t = parse_torus("4x4")
    return solve(damage(t, parse_failures(t, links=["0-1"]))).certificate


def multi_hop():
    """A hand-made base schedule with routes of one and two links (not an allreduce: only its text counts)."""
    t = parse_torus("5")
    e = {(a, b): int(t.link_ids([a], [b])[0]) for a in range(5) for b in ((a + 1) % 5, (a - 1) % 5)}
    rows = [(0, 1, 0, 2, 0, [e[0, 1], e[1, 2]]), (0, 2, 2, 0, 1, [e[2, 1], e[1, 0]]), (1, 1, 3, 4, 0, [e[3, 4]])]
    base = BaseSchedule.from_rows(t, 2, rows, weights=(3, 5), labels=("two \"hops\"", "one"))
    return Certificate(t, torus_gamma(t), base, 40, {"rounds": 2}, {}, {"algorithm": "hand"})


def row_by_row(topology, data):
    saved, rows_form.fast_rows = rows_form.fast_rows, lambda *_: None
    try:
        return base_from_json(topology, data)
    finally:
        rows_form.fast_rows = saved


@pytest.mark.parametrize("which", ["packed", "multi_hop"])
def test_streamed_text_is_dumps_and_columns_read_as_rows(which, packed):
    cert = packed if which == "packed" else multi_hop()
    data = certificate_to_json(cert)
    assert "".join(certificate_lines(cert)) == dumps(data)
    fast, slow = base_from_json(cert.topology, data["base_schedule"]), row_by_row(cert.topology, data["base_schedule"])
    for k in FIELDS:
        assert np.array_equal(getattr(fast, k), getattr(slow, k)), k
    assert fast.labels == slow.labels


@pytest.mark.parametrize("edit, message", [
    (lambda tr: tr.__setitem__(1, True), "round, src and dst must be integers"),
    (lambda tr: tr.__setitem__(0, 1.0), "round, src and dst must be integers"),
    (lambda tr: tr.__setitem__(3, "add"), "op must be one of"),
    (lambda tr: tr.__setitem__(3, []), "op must be one of"),
    (lambda tr: tr.__setitem__(4, {}), "route must be a list"),
    (lambda tr: tr.__setitem__(4, [tr[1]]), "route must be a list of at least two"),
    (lambda tr: tr[4].__setitem__(0, tr[2]), "route does not start at src"),
    (lambda tr: tr[4].insert(1, tr[4][0]), "is not a link"),
    (lambda tr: tr.pop(), "a transmission is"),
])
def test_a_bad_row_is_named_as_before(packed, edit, message, tmp_path):
    data = copy.deepcopy(certificate_to_json(packed, compact=False))
    rows = data["base_schedule"]["components"][2]["transmissions"]
    edit(rows[5])
    with pytest.raises(FileFormatError, match=f"component 2, transmission 5: .*{message}"):
        base_from_json(packed.topology, data["base_schedule"])
    with pytest.raises(FileFormatError, match="component 2, transmission 5"):
        read_certificate(data)


def test_the_certificate_cap_is_its_own(packed, tmp_path, monkeypatch):
    path = tmp_path / "c.json"
    path.write_text(dumps(certificate_to_json(packed)))
    assert read_certificate(str(path)).base.n_transmissions == packed.base.n_transmissions
    monkeypatch.setitem(LIMITS, "certificate", 1000)
    with pytest.raises(FileFormatError, match="larger than"):
        read_certificate(str(path))
