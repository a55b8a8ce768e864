"""NCCL's ring and double binary tree and the hierarchical allreduce on fabrics of servers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from synth.analysis.compare import compare
from synth.analysis.cost import Network, model_time
from synth.baselines import build_baseline
from synth.baselines.gpu import fabric_servers, hierarchical, nccl_ring, nccl_tree, two_servers_example
from synth.check import execute
from synth.check.claims import check_file
from synth.check.metrics import link_loads_explicit
from synth.cli import main
from synth.errors import TopologyError
from synth.topology.torus import parse_torus
from synth.topology.user import topology_from_json

GPU_BASELINES = ("nccl-ring", "nccl-tree", "hierarchical")


def _fabric(servers=2, gpus=4, rails=2):
    return topology_from_json(two_servers_example(servers, gpus, rails))


def _failed_nic():
    """Two servers of four GPUs whose GPU 1 lost its NIC: its traffic goes through the switch and a neighbour's."""
    spec = two_servers_example()
    nic = 2 * 4 + 2 + 1
    keep = [i for i, (u, v) in enumerate(spec["links"]) if nic not in (u, v)]
    spec["links"] = [spec["links"][i] for i in keep]
    spec["bandwidth"] = [spec["bandwidth"][i] for i in keep]
    spec["links"].append([nic, nic + 1])      # the NIC itself stays as a vertex joined to nothing useful
    spec["bandwidth"].append(25)
    return topology_from_json(spec)


@pytest.mark.parametrize("servers,gpus", [(1, 4), (2, 4), (3, 2), (4, 4)])
@pytest.mark.parametrize("name", GPU_BASELINES)
def test_every_gpu_baseline_is_a_correct_allreduce(name, servers, gpus):
    t = _fabric(servers, gpus)
    assert fabric_servers(t).shape == (servers, gpus)
    b = build_baseline(name, t)
    assert execute(b.schedule) == []
    assert b.measure().psi >= 1


def test_servers_are_found_from_the_slowest_links():
    t = _fabric(3, 4)
    assert fabric_servers(t).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    # one bandwidth everywhere: one server
    spec = two_servers_example()
    spec["bandwidth"] = [25] * len(spec["bandwidth"])
    assert fabric_servers(topology_from_json(spec)).shape == (1, 8)
    # the slowest links join two GPUs (an MI250 node's single xGMI lanes): one server
    direct = {"vertices": 4, "links": [[0, 1], [1, 2], [2, 3], [3, 0]], "bandwidth": [100, 50, 100, 50]}
    assert fabric_servers(topology_from_json(direct)).shape == (1, 4)


def test_a_torus_is_not_a_fabric_and_unequal_servers_are_refused():
    with pytest.raises(TopologyError, match="no bandwidths"):
        build_baseline("nccl-ring", parse_torus("4x4"))
    spec = two_servers_example()
    gpu = 3                                   # GPU 3 loses its NVSwitch link: it joins its server only by NIC
    keep = [i for i, (u, v) in enumerate(spec["links"]) if not (u == gpu and v == 8)]
    spec["links"] = [spec["links"][i] for i in keep]
    spec["bandwidth"] = [spec["bandwidth"][i] for i in keep]
    with pytest.raises(TopologyError, match="equal GPU counts"):
        hierarchical(topology_from_json(spec))


def test_a_failed_nic_is_routed_around():
    t = _failed_nic()
    for f in (nccl_ring, nccl_tree, hierarchical):
        assert execute(f(t).schedule) == []


def test_the_ring_keeps_each_channel_on_its_rail():
    """Channel c leaves server s from the GPU whose local index the next server enters on: each NIC carries
    one channel's ring between the servers (but the closing hop), so the rails share the load."""
    t = _fabric(2, 4, rails=4)
    b = nccl_ring(t)
    loads = link_loads_explicit(b.schedule, b.chunk_sizes(8 * 4 * 64)).sum(axis=0)
    nic_links = np.flatnonzero((t.link_src >= 10) & (t.link_src < 18) & (t.link_dst >= 18))
    assert loads[nic_links].max() <= 2 * loads[nic_links].min()


def test_hierarchical_crosses_servers_only_with_one_shard_per_rail():
    t = _fabric(2, 4, rails=4)
    m = hierarchical(t).measure(4 * 2 * 1000)
    # the slow NIC links carry 2 (S-1)/S of a shard per GPU: 1,000 elements each way, twice (reduce, gather)
    net = Network(alpha=0, hop_latency=0)
    slow = float(sum(m.round_time[i] for i in range(m.rounds) if m.max_load[i] <= 1000))
    assert slow == pytest.approx(2 * 1000 / 25)
    assert model_time(m, net) > 0


@pytest.mark.parametrize("name", GPU_BASELINES)
def test_written_baselines_check_and_a_changed_bandwidth_is_caught(tmp_path, name, capsys):
    topo = tmp_path / "fabric.json"
    topo.write_text(json.dumps(two_servers_example()))
    out = tmp_path / f"{name}.jsonl"
    assert main(["baseline", name, "--topology", str(topo), "--out", str(out)]) == 0
    report = check_file(str(out))
    assert report.valid, report
    lines = out.read_text().splitlines()
    header = json.loads(lines[0])
    where = header if "bandwidth" in header else header.get("topology", {})
    if "bandwidth" in where:    # the header carries the fabric's bandwidths: changing one is caught
        where["bandwidth"][0] += 1
        out.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
        assert main(["check", str(out)]) != 0
        assert "synth: error:" in capsys.readouterr().err


def test_compare_lists_the_gpu_baselines():
    t = _fabric(2, 4)
    rows = compare(t, [1 << 20], Network(), ["nccl-ring", "nccl-tree", "hierarchical", "ring"])
    names = {r.algorithm for r in rows}
    assert set(GPU_BASELINES) <= names
    assert all(r.seconds > 0 for r in rows)


def _preset(argv):
    from synth.cli import _parser
    from synth.cli._common import topology_from_args
    return topology_from_args(_parser().parse_args(["bound", *argv]))


@pytest.mark.parametrize("argv,name,most", [
    (["--machine", "tpu-v5p:2x2x2", "--slices", "2"], "hierarchical", 0.0375),  # via the DCN switch: 0.3
    (["--machine", "mi250:1"], "nccl-ring", 0.0375),                           # id order over xGMI hops: 0.056
])
def test_rings_take_the_fast_links(argv, name, most):
    """Routes of least sum 1/bandwidth and rings along the fastest direct links: the bandwidth term per element
    (elements per GB/s) measured by the checker."""
    t = _preset(argv)
    b = build_baseline(name, t)
    assert execute(b.schedule) == []
    m = b.measure(t.n_compute * 64 * int(b.weights.sum()))
    assert float(m.bandwidth_term / m.elements) <= most * (1 + 1e-12)


def test_presets_of_every_kind():
    for argv in (["--machine", "dgx-a100:2"], ["--machine", "dgx-h100:2"], ["--machine", "mi250:2"],
                 ["--machine", "dgx-a100:2", "--fail-node", "27"]):
        t = _preset(argv)
        for name in GPU_BASELINES:
            assert execute(build_baseline(name, t).schedule) == [], (argv, name)


def test_mi250_rings_share_the_xgmi_lanes_as_rccl_does():
    """One MI250 node: several Hamiltonian rings over the GCDs' direct xGMI links, each taking its speed from
    every link it crosses (no link over its lanes), one channel per ring: the bandwidth term falls from the
    single cycle's 0.0375 per element (6.4x ForestColl's optimum) to 0.0075 (1.29x)."""
    from synth.baselines.channel_rings import channel_rings
    from synth.baselines.gpu import _direct_bandwidth

    t = _preset(["--machine", "mi250:1"])
    bw = _direct_bandwidth(t, np.arange(16))
    rings, speed = channel_rings(bw)
    assert len(rings) * speed >= 250
    use = np.zeros_like(bw)
    for r in rings:
        assert sorted(r.tolist()) == list(range(16))                 # Hamiltonian
        assert (bw[r, np.roll(r, -1)] > 0).all()                     # over existing xGMI links
        use[r, np.roll(r, -1)] += speed
    assert (use <= bw + 1e-9).all()                                  # within every link's lanes
    b = nccl_ring(t)
    assert execute(b.schedule) == []
    m = b.measure(t.n_compute * 64 * int(b.weights.sum()))
    assert float(m.bandwidth_term / m.elements) <= 0.0076
    # each channel is one of the rings: its transmissions use only that ring's links
    assert b.schedule.n_chunks == len(rings) * 16


def test_two_mi250_nodes_run_a_channel_per_path_from_nic_to_nic():
    """Two MI250 nodes: channels along Hamiltonian paths through a node's GCDs, each entering through one GCD's
    NIC and leaving through another's, sharing the xGMI lanes and the 16 GB/s NICs (no NIC over its rate):
    1.43x ForestColl's optimum, where the single cycle took 6.4x."""
    from synth.baselines.channel_rings import channel_paths
    from synth.baselines.gpu import _direct_bandwidth, _scale_out

    t = _preset(["--machine", "mi250:2"])
    server = np.arange(16)
    into, out = _scale_out(t, server)
    assert into.tolist() == out.tolist() == [16.0] * 16
    paths, speed = channel_paths(_direct_bandwidth(t, server), into, out)
    assert len(paths) * speed >= 240
    bw = _direct_bandwidth(t, server)
    use, first, last = np.zeros_like(bw), np.zeros(16), np.zeros(16)
    for path in paths:
        assert sorted(path.tolist()) == list(range(16)) and (bw[path[:-1], path[1:]] > 0).all()
        use[path[:-1], path[1:]] += speed
        first[path[0]] += speed
        last[path[-1]] += speed
    assert (use <= bw + 1e-9).all() and (first <= 16 + 1e-9).all() and (last <= 16 + 1e-9).all()
    b = nccl_ring(t)
    assert execute(b.schedule) == []
    m = b.measure(t.n_compute * 64 * int(b.weights.sum()))
    assert float(m.bandwidth_term / m.elements) <= 0.0081        # the single cycle: 0.0363
