"""``solve(..., collective=...)`` and ``synth solve --collective``: every tree construction has both halves."""

import json

import pytest

from synth.cli import main
from synth.errors import OptionError
from synth.solving import check_written, solve
from synth.topology.hyperx import parse_hyperx
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.torus import parse_torus
from synth.topology.user import read_topology

HALVES = ("reduce-scatter", "allgather")


def _claims(result):
    report = check_written(result.certificate)
    assert report.valid, (report.errors, report.claims)
    return result.certificate.claims


@pytest.mark.parametrize("collective", HALVES)
def test_tori_hyperx_meet_the_bound(collective):
    for topology in (parse_torus("6x6"), parse_torus("3x4"), parse_hyperx("4x4")):
        c = _claims(solve(topology, collective=collective, time_limit=20))
        assert c["rounds"] == c["round_lower_bound"] == topology.diameter and c["round_optimal"], topology.name
        assert (c["psi"], c["theta"], c["omega"]) == ("1", "1", "1"), topology.name


@pytest.mark.parametrize("collective", HALVES)
def test_khop_spine_leaf_user_and_smaller_groups(tmp_path, collective):
    k = solve(parse_torus("4x4"), depth=2, collective=collective, time_limit=10)
    c = _claims(k)
    assert c["rounds"] == k.depth == 2 and c["psi"] == "1" and "depth_bound" in check_written(k.certificate).claims
    sl = solve(parse_spine_leaf("2,4,2"), collective=collective)
    assert _claims(sl)["rounds"] == 1  # host to host through the switches: one round, multi-hop routes
    path = tmp_path / "ring.json"
    path.write_text(json.dumps({"vertices": 5, "links": [[i, (i + 1) % 5] for i in range(5)]}))
    user = solve(read_topology(str(path))[0], collective=collective)
    assert _claims(user)["rounds"] == 2 and user.certificate.claims["round_optimal"]
    small = solve(parse_torus("4x4"), group="translations", collective=collective, time_limit=20)
    assert _claims(small)["rounds"] == 4 and small.certificate.claims["omega"] == "1"


def test_refusals():
    with pytest.raises(OptionError, match="^collective reduce-scatter: the exchange"):
        solve(parse_torus("4x4"), exchange=True, collective="reduce-scatter")
    with pytest.raises(OptionError, match="^collective must be one of"):
        solve(parse_torus("4x4"), collective="broadcast")


def test_cli(capsys, tmp_path):
    out = tmp_path / "rs.json"
    assert main(["solve", "--torus", "4x4", "--collective", "reduce-scatter", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["collective"] == "reduce-scatter" and summary["rounds"] == 4
    assert summary["round_lower_bound_scope"] == "every one-hop schedule"
    assert main(["check", str(out)]) == 0
    assert "(certificate, reduce-scatter, explicit check)" in capsys.readouterr().out
    assert main(["solve", "--torus", "4x4", "--exchange", "--collective", "allgather"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synth: error: --collective allgather: the exchange") and err.count("\n") == 1
    assert main(["solve", "--torus", "4x4", "--json"]) == 0
    assert "collective" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
def test_a_damaged_torus_gives_every_node_the_same_block(collective):
    # 6x6 with a failed link keeps a group of order 4 whose mirrors fix the owners on the link's axis: with the
    # same share per represented owner, those got twice the others' block once lifted
    import numpy as np

    from synth.topology.failures import damage, parse_failures

    t = parse_torus("6x6")
    cert = solve(damage(t, parse_failures(t, links=["0-1"])), collective=collective).certificate
    base, group = cert.base, cert.group
    assert group.order == 4 and cert.provenance["algorithm"] == "layered-packing"
    block = np.zeros(t.n_vertices)
    for image in group.vertex_images(np.asarray(base.owner)):   # every element's image of every owner
        np.add.at(block, image, np.asarray(base.weights, dtype=float))
    assert block.max() - block.min() <= 1      # whole units of 1,024 per owner: 1,365 or 1,366 of 49,152 here
