"""synth solve on networks whose links differ in bandwidth: the packing models, weighted, not a balanced tree."""

import json

import numpy as np
import pytest

from synth.cli import main
from synth.solving import SolveRequest, plan
from synth.topology.user import topology_from_json
from tests.models.packing.test_bandwidth import MINI_DGX, forestcoll_optimum, weighted_term


def ring(n, bandwidth=None):
    spec = {"format": "synth-topology", "version": 1, "name": f"ring {n}", "vertices": n,
            "links": [[i, (i + 1) % n] for i in range(n)]}
    return topology_from_json(spec if bandwidth is None else {**spec, "bandwidth": bandwidth})


def test_a_ring_with_a_slow_link_is_packed_not_lifted():
    equal = plan(SolveRequest(ring(6, [300] * 6)))                # every link alike: the balanced tree
    assert equal.construction == "shortest-path-tree"
    slow = ring(6, [1, 1, 1, 1, 1, 0.25])
    p = plan(SolveRequest(slow, time_limit=20))
    assert p.construction == "timed-packing" and "differ in bandwidth" in p.reason
    tree = plan(SolveRequest(slow, allow_unbalanced=True))
    assert tree.construction == "shortest-path-tree"
    packed = p.build(SolveRequest(slow, time_limit=20), p).certificate
    lifted = tree.build(SolveRequest(slow, allow_unbalanced=True), tree).certificate
    # the lifted tree waits on the slow link in its rounds; the packing routes around it
    assert weighted_term(packed) < 0.75 * weighted_term(lifted)


def test_two_servers_behind_switches_meet_forestcoll(tmp_path, capsys):
    t = topology_from_json(MINI_DGX)
    p = plan(SolveRequest(t, time_limit=20))
    assert p.construction == "timed-packing" and p.algorithms == ("routed-packing", "timed-packing")
    res = p.build(SolveRequest(t, time_limit=20), p)
    assert res.certificate.provenance["algorithm"] == "timed-packing"
    assert weighted_term(res.certificate) <= 1.03 * forestcoll_optimum(t)
    f = tmp_path / "mini.json"
    f.write_text(json.dumps(MINI_DGX))
    out = tmp_path / "c.json"
    assert main(["solve", "--topology", str(f), "--time-limit", "20", "--out", str(out)]) == 0
    assert "timed trees" in capsys.readouterr().err
    assert main(["check", str(out)]) == 0
    assert json.loads(out.read_text())["topology"]["bandwidth"] == t.link_bandwidth.tolist()


def test_the_plan_names_the_closed_form_group_that_leaves_the_tree_unbalanced(capsys):
    """TPU slices whose DCN is as fast as ICI: equal links, the slices' closed-form group lifts the tree
    unbalanced; the note names that group, it does not say a search gave up."""
    from synth.cli import main

    assert main(["solve", "--machine", "tpu-v5p:2x2x2", "--slices", "2", "--dcn-bandwidth", "100", "--plan"]) == 0
    out = capsys.readouterr().out
    assert "the group slice rotation x lattice-gamma(mesh 2x2x2) (order 48) does not balance" in out
    assert "within the limits" not in out
