"""The MSCCL export of GPU-fabric schedules: sends between GPUs only, a channel per NIC rail."""

from __future__ import annotations

import pytest

from synth.baselines import build_baseline
from synth.baselines.gpu import two_servers_example
from synth.runtime.msccl.check import check_xml, parse_xml
from synth.runtime.msccl.export import export_msccl
from synth.runtime.msccl.rails import connection_rails
from synth.baselines.halves import baseline_half
from synth.topology.user import topology_from_json
from synth.topology.torus import parse_torus

GPUS = 4


def _fabric(servers=2, rails=2):
    return topology_from_json(two_servers_example(servers, GPUS, rails))


def _channels(xml):
    """``{(sender, receiver): {channels}}`` of every send threadblock."""
    out = {}
    for g in parse_xml(xml).gpus:
        for tb in g.tbs:
            if tb.send >= 0:
                out.setdefault((g.id, tb.send), set()).add(tb.chan)
    return out


@pytest.mark.parametrize("name", ["nccl-ring", "nccl-tree", "hierarchical"])
def test_fabric_schedules_export_and_execute(name):
    t = _fabric()
    ex = export_msccl(build_baseline(name, t))
    assert ex.ngpus == t.n_compute == 2 * GPUS          # the switches and NICs are no ranks
    assert check_xml(ex.xml).ok
    sends = _channels(ex.xml)
    assert all(u < t.n_compute and v < t.n_compute for u, v in sends)


def test_connections_across_servers_go_on_their_rails_channel():
    t = _fabric(servers=2, rails=4)
    b = build_baseline("hierarchical", t)
    rails = connection_rails(b.schedule)
    # GPU k of server 0 talks to GPU k of server 1 through NIC k: rail k both ways
    assert rails == {(k, GPUS + k): k for k in range(GPUS)} | {(GPUS + k, k): k for k in range(GPUS)}
    ex = export_msccl(b)
    sends = _channels(ex.xml)
    for (u, v), rail in rails.items():
        assert sends[(u, v)] == {rail}
    assert ex.nchannels == GPUS
    assert check_xml(ex.xml).ok


def test_a_relayed_route_takes_the_rail_it_leaves_on():
    """With GPU 1's NIC failed, its traffic to the other server leaves through another GPU's NIC (PXN):
    the connection's channel is that GPU's rail."""
    spec = two_servers_example(2, GPUS, GPUS)
    nic1 = 2 * GPUS + 2 + 1
    keep = [i for i, (u, v) in enumerate(spec["links"]) if nic1 not in (u, v)]
    spec["links"] = [spec["links"][i] for i in keep] + [[nic1, 0]]
    spec["bandwidth"] = [spec["bandwidth"][i] for i in keep] + [25]
    t = topology_from_json(spec)
    rails = connection_rails(build_baseline("hierarchical", t).schedule)
    # the way out and the way in both cross on the rail of another GPU of the servers (rail 1 is dead)
    assert rails[(1, GPUS + 1)] != 1 and rails[(GPUS + 1, 1)] != 1
    assert all(rails[(k, GPUS + k)] == k for k in (0, 2, 3))
    assert check_xml(export_msccl(build_baseline("hierarchical", t)).xml).ok


def test_halves_and_equal_links_are_unchanged():
    t = _fabric()
    rs = export_msccl(baseline_half(build_baseline("nccl-ring", t), "reduce-scatter"))
    assert rs.coll == "reducescatter" and check_xml(rs.xml).ok
    torus = build_baseline("ring", parse_torus("4x4"))
    assert connection_rails(torus.schedule) == {}
