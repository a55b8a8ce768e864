"""GPU server presets: documented counts, bandwidth classes, ForestColl's models, specs, groups, failures."""

import json

import numpy as np
import pytest

from synth.cli import main
from synth.errors import TopologyError
from synth.symmetry.gpu import failed_servers, gpu_group
from synth.symmetry.nauty import automorphisms
from synth.symmetry.spec import default_group, lifting_group, named_group
from synth.topology.failures import damage, parse_failures
from synth.topology.gpu import MI250_LANES, PRESETS, GpuFabric, gpu_fabric
from synth.topology.kinds import kind_of
from synth.topology.machines import machine_spec
from synth.topology.spec import build_topology, spec_size

#: (preset, servers) -> (vertices, directed links, GPUs)
COUNTS = {("dgx-a100", 1): (9, 16, 8), ("dgx-a100", 2): (36, 96, 16), ("dgx-a100", 4): (70, 192, 32),
          ("dgx-h100", 1): (9, 16, 8), ("dgx-h100", 2): (42, 96, 16), ("dgx-h100", 8): (144, 384, 64),
          ("mi250", 1): (16, 56, 16), ("mi250", 2): (65, 240, 32)}


@pytest.mark.parametrize("machine,n", sorted(COUNTS))
def test_documented_counts_and_spec_round_trip(machine, n):
    t = build_topology(machine_spec(f"{machine}:{n}"))
    assert isinstance(t, GpuFabric) and t.name == f"{machine}:{n}"
    assert (t.n_vertices, t.n_links, t.n_compute) == COUNTS[machine, n] == spec_size(t.spec)
    assert t.compute.tolist() == list(range(t.n_compute))
    again = build_topology(json.loads(json.dumps(t.spec)))
    assert np.array_equal(again.link_src, t.link_src) and np.array_equal(again.link_dst, t.link_dst)
    assert np.array_equal(again.link_bandwidth, t.link_bandwidth)
    # every directed link has its reverse at the same bandwidth
    rev = t.link_ids(t.link_dst, t.link_src)
    assert (rev >= 0).all() and np.array_equal(t.link_bandwidth[rev], t.link_bandwidth)


# per GPU and direction: GB/s inside the server, GB/s out of the server
PER_GPU = {"dgx-a100": (300.0, 25.0), "dgx-h100": (450.0, 50.0), "mi250": (350.0, 16.0)}


@pytest.mark.parametrize("machine", sorted(PRESETS))
def test_bandwidth_classes_and_totals_per_gpu(machine):
    t = gpu_fabric(machine, 2)
    inside, out = PER_GPU[machine]
    for g in t.compute:
        links = np.flatnonzero(t.link_src == g)
        cls = t.link_class[links]
        assert t.link_bandwidth[links[cls == 0]].sum() == inside
        assert t.link_bandwidth[links[cls == 1]].sum() == out
    # every link of a class has its class's bandwidth, except the xGMI links of 1, 2 or 4 lanes
    for c in (1, 2):
        assert set(t.link_bandwidth[t.link_class == c].tolist()) == {out}
    inner = set(t.link_bandwidth[t.link_class == 0].tolist())
    assert inner == ({50.0, 100.0, 200.0} if machine == "mi250" else {inside})
    assert t.class_names[1:] == ("nic", "rail")


def test_a100_is_forestcolls_model_link_for_link():
    """ForestColl's a100_topology: GPU<->NVSwitch at 300, GPU<->mlx5 at 25, mlx5 b <-> IB switch b % 2 at 25."""
    n = 3
    t = gpu_fabric("dgx-a100", n)
    ours = {(int(u), int(v)): float(b) for u, v, b in zip(t.link_src, t.link_dst, t.link_bandwidth)}
    names = {}
    for a in range(n):
        for b in range(8):
            names[a, "GPU", b] = a * 8 + b
            names[a, "mlx5", b] = n * 8 + n + a * 8 + b
        names[a, "NVSwitch", 0] = n * 8 + a
    names[-1, "IB", 0], names[-1, "IB", 1] = n * 17, n * 17 + 1
    theirs = {}
    for a in range(n):
        for b in range(8):
            for x, y, c in (((a, "GPU", b), (a, "NVSwitch", 0), 300.0), ((a, "GPU", b), (a, "mlx5", b), 25.0),
                            ((-1, "IB", b % 2), (a, "mlx5", b), 25.0)):
                theirs[names[x], names[y]] = theirs[names[y], names[x]] = c
    assert ours == theirs


def test_mi250_is_forestcolls_matrix_with_a_nic_in_series():
    t = gpu_fabric("mi250", 2)
    lanes = np.asarray(MI250_LANES)
    assert (lanes == lanes.T).all() and (lanes.sum(1) == 7).all()
    for s in range(2):
        for a in range(16):
            for b in range(16):
                e = t.link_ids([t.gpu(s, a)], [t.gpu(s, b)])[0]
                assert (e >= 0) == bool(lanes[a, b]) and (e < 0 or t.link_bandwidth[e] == 50.0 * lanes[a, b])
    gpus = np.arange(32)
    nic = t.nic_of(gpus)
    assert (t.link_bandwidth[t.link_ids(gpus, nic)] == 16.0).all()
    assert (t.link_bandwidth[t.link_ids(nic, t.rail_switch(t.rail_of(gpus)))] == 16.0).all()
    assert set(t.rail_of(gpus).tolist()) == {0}


def test_one_server_has_no_nics():
    t = gpu_fabric("dgx-h100", 1)
    assert t.nic_of(3) == -1 and t.rail_of(3) == -1 and t.rails == 0
    assert set(t.link_class.tolist()) == {0}


@pytest.mark.parametrize("machine,n", [("dgx-a100", 1), ("dgx-a100", 3), ("dgx-h100", 2), ("mi250", 1), ("mi250", 3)])
def test_group_is_the_kinds_and_keeps_bandwidths(machine, n):
    t = gpu_fabric(machine, n)
    g = default_group(t)
    assert g.spec == {"kind": "gpu-shifts"} and lifting_group(t).spec == g.spec
    assert g.order == (8 if machine != "mi250" else 4) * n
    assert named_group(t, g.spec).order == g.order
    for perm in g.generator_links:  # a link goes to a link of the same bandwidth and class
        assert np.array_equal(t.link_bandwidth[perm], t.link_bandwidth)
        assert np.array_equal(t.link_class[perm], t.link_class)
    # free on the GPUs: only the identity fixes a GPU
    images = g.generators[:, :t.n_compute]
    assert not (images == np.arange(t.n_compute)).all(axis=1).any()


def test_mi250_local_symmetries_are_all_the_lane_matrix_has():
    """The four closed-form symmetries are every automorphism nauty finds on one node (bandwidths kept)."""
    t = gpu_fabric("mi250", 1)
    assert gpu_group(t).order == automorphisms(t).order == 4
    assert automorphisms(gpu_fabric("dgx-a100", 1)).order == 40320    # every permutation of 8 GPUs


def test_a_failed_nic_and_a_failed_gpu_link():
    t = gpu_fabric("dgx-a100", 2)
    nic = int(t.nic_of(9))
    d = damage(t, parse_failures(t, nodes=[str(nic)]))
    assert d.n_compute == 16 and d.n_links == t.n_links - 4
    assert kind_of(d).name == "damaged" and d.healthy is t
    assert set(d.link_bandwidth.tolist()) == {25.0, 300.0}
    rebuilt = build_topology(d.spec)
    assert np.array_equal(rebuilt.link_bandwidth, d.link_bandwidth) and rebuilt.spec == d.spec
    assert lifting_group(d).order >= 1
    e = damage(t, parse_failures(t, links=[f"3-{int(t.nic_of(3))}"]))
    assert e.n_links == t.n_links - 2


@pytest.mark.parametrize("machine,n,order", [("mi250", 4, 3), ("dgx-a100", 4, 3), ("mi250", 2, 1)])
def test_a_failure_in_one_server_leaves_the_others_rotating(machine, n, order):
    """A failed NIC fixes its server, so no rotation of all servers survives; the other servers still rotate
    among themselves (no local symmetry fixes the NIC's GPU, so that rotation is the whole residual group)."""
    t = gpu_fabric(machine, n)
    d = damage(t, parse_failures(t, nodes=[str(int(t.nic_of(1)))]))
    assert failed_servers(t, d.failures) == [0]
    g = default_group(d)
    assert g.order == order and named_group(d, g.spec).order == order
    server = t.server_of(g.vertex_images(np.arange(t.n_compute)).astype(np.int64))
    assert (server[:, :t.gpus_per_server] == 0).all()                    # server 0 stays
    assert len({tuple(row) for row in server[:, t.gpus_per_server::t.gpus_per_server].tolist()}) == order


def test_failures_in_every_server_keep_the_rotation_of_all():
    """The same NIC failed in every server: the rotation of all servers fixes the failures, the rotation of the
    servers left whole (none) does not exist, so the larger of the two groups is kept."""
    t = gpu_fabric("mi250", 4)
    d = damage(t, parse_failures(t, nodes=[str(int(t.nic_of(t.gpu(s, 1)))) for s in range(4)]))
    assert failed_servers(t, d.failures) == [0, 1, 2, 3]
    assert default_group(d).order == 4
    link = parse_failures(t, links=[f"{int(t.gpu(2, 3))}-{int(t.nic_of(t.gpu(2, 3)))}"])
    assert failed_servers(t, link) == [2]


def test_a_failure_that_disconnects_is_one_line(capsys):
    t = gpu_fabric("dgx-a100", 2)
    # without its NVSwitch, server 0's GPUs still meet through their NICs and the rail switches
    assert damage(t, parse_failures(t, nodes=[str(int(t.nvswitch(0)))])).n_compute == 16
    with pytest.raises(TopologyError, match="disconnect"):   # GPU 0 without its NVSwitch link and its NIC
        damage(t, parse_failures(t, links=[f"0-{int(t.nvswitch(0))}"], nodes=[str(int(t.nic_of(0)))]))
    assert main(["info", "--machine", "dgx-a100:1", "--fail-node", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synth: error:") and "disconnect" in err and err.count("\n") == 1


@pytest.mark.parametrize("spec,match", [
    ({"kind": "gpu", "machine": "dgx-b200", "servers": 2}, "unknown GPU machine"),
    ({"kind": "gpu", "machine": "dgx-a100", "servers": 0}, "1 to 1024 servers"),
    ({"kind": "gpu", "machine": "dgx-a100", "servers": True}, "1 to 1024 servers"),
    ({"kind": "gpu", "machine": "dgx-a100", "servers": 2, "bandwidth": [1]}, "unknown key 'bandwidth'"),
])
def test_bad_specs_are_refused(spec, match):
    with pytest.raises(TopologyError, match=match):
        build_topology(spec)
    assert spec_size({k: v for k, v in spec.items() if k != "bandwidth"}) is None or "bandwidth" in spec


@pytest.mark.parametrize("word,match", [("dgx-a100", "needs a shape"), ("dgx-a100:2x2", "does not offer"),
                                        ("mi250:1025", "does not offer")])
def test_bad_words_are_refused(word, match):
    with pytest.raises(TopologyError, match=match):
        machine_spec(word)


def test_solve_gives_a_valid_certificate_with_the_bandwidths(tmp_path, capsys):
    out = tmp_path / "a100.json"
    assert main(["solve", "--machine", "dgx-a100:2", "--out", str(out)]) == 0
    capsys.readouterr()
    cert = json.loads(out.read_text())
    assert cert["topology"] == {"kind": "gpu", "machine": "dgx-a100", "servers": 2}
    assert main(["check", str(out)]) == 0
    assert "VALID" in capsys.readouterr().out


def test_info_lists_the_links_by_class_and_bandwidth(capsys):
    assert main(["info", "--machine", "dgx-a100:2", "--fail-node", "27", "--json"]) == 0
    classes = json.loads(capsys.readouterr().out)["link_classes"]
    assert classes == [{"class": "nvswitch", "bandwidth": 300.0, "latency": 0.0, "links": 32},
                       {"class": "nic", "bandwidth": 25.0, "latency": 0.0, "links": 30},
                       {"class": "rail", "bandwidth": 25.0, "latency": 0.0, "links": 30}]
    assert main(["info", "--machine", "mi250:1"]) == 0
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("link_classes")][0]
    assert line.split(None, 1)[1] == "xgmi: 16 links at 200 GB/s; xgmi: 8 links at 100 GB/s; xgmi: 32 links at 50 GB/s"
    assert main(["info", "--torus", "4x4", "--json"]) == 0
    assert "link_classes" not in json.loads(capsys.readouterr().out)   # equal links: as before


def test_cli_words_round_trip_with_a_failed_nic():
    from synth.cli._common import Parser, add_topology_args, topology_argv, topology_from_args
    parser = Parser(prog="t")
    add_topology_args(parser)
    argv = ["--machine", "dgx-h100:2", "--fail-node", "30"]
    t = topology_from_args(parser.parse_args(argv))
    assert t.spec == {"kind": "gpu", "machine": "dgx-h100", "servers": 2, "failed": [30]}
    words = topology_argv(parser.parse_args(argv))
    assert sorted(words) == sorted(argv)
    assert topology_from_args(parser.parse_args(words)).spec == t.spec
