"""Per-link bandwidth and latency: topology files, specs, damage, explicit headers, certificates, groups."""

import json

import numpy as np
import pytest

from synth.check.explicit import read_explicit, write_explicit
from synth.errors import FileFormatError, GroupError, TopologyError
from synth.symmetry.group import Group
from synth.symmetry.nauty import automorphisms
from synth.topology.failures import damage, parse_failures
from synth.topology.spec import build_topology
from synth.topology.torus import parse_torus
from synth.topology.user import topology_from_json

RING = {"format": "synth-topology", "version": 1, "name": "ring", "vertices": 4,
        "links": [[0, 1], [1, 2], [2, 3], [3, 0]]}


def ring(**extra):
    return topology_from_json({**RING, **extra})


def test_default_is_one_and_zero():
    t = ring()
    assert t.bandwidth is None and not t.has_bandwidths and not t.has_latencies
    assert t.link_bandwidth.tolist() == [1.0] * 8 and t.link_latency.tolist() == [0.0] * 8
    assert "bandwidth" not in t.to_json() and "bandwidth" not in t.spec


def test_undirected_entry_gives_both_directions():
    t = ring(bandwidth=[10, 20, 30, 40], latency=[1, 2, 3, 4])
    for (u, v), b, lat in zip(RING["links"], [10, 20, 30, 40], [1, 2, 3, 4]):
        ids = t.link_ids([u, v], [v, u])
        assert t.link_bandwidth[ids].tolist() == [b, b]
        assert t.link_latency[ids].tolist() == [lat, lat]


def test_directed_file_keeps_each_direction():
    t = topology_from_json({**RING, "directed": True, "links": [[0, 1], [1, 0], [1, 2], [2, 1]],
                            "vertices": 3, "bandwidth": [1, 2, 3, 4]})
    assert t.link_bandwidth[t.link_ids([0, 1, 1, 2], [1, 0, 2, 1])].tolist() == [1, 2, 3, 4]


def test_parallel_entries_add_their_bandwidth():
    t = ring(links=RING["links"] + [[1, 0], [0, 1]], bandwidth=[1, 1, 1, 1, 2, 4])
    assert t.link_bandwidth[t.link_ids([0, 1], [1, 0])].tolist() == [7.0, 7.0]
    with pytest.raises(FileFormatError, match="different latencies"):
        ring(links=RING["links"] + [[1, 0]], latency=[0, 0, 0, 0, 1])


@pytest.mark.parametrize("extra, message", [
    ({"bandwidth": [1, 1, 1]}, "lists 3 values for 4 links"),
    ({"bandwidth": [1, 1, 0, 1]}, "entry 2 is 0.0"),
    ({"bandwidth": [1, 1, -1, 1]}, "above 0"),
    ({"bandwidth": [1, 1, True, 1]}, "list of numbers"),
    ({"bandwidth": [1, 1, "2", 1]}, "list of numbers"),
    ({"bandwidth": [1, 1, 10 ** 400, 1]}, "too large"),
    ({"latency": [0, 0, -1, 0]}, "0 or more"),
    ({"bandwith": [1, 1, 1, 1]}, "unknown key 'bandwith'"),
])
def test_bad_values_are_refused(extra, message):
    with pytest.raises(FileFormatError, match=message):
        ring(**extra)


def test_spec_rebuilds_the_values():
    t = ring(bandwidth=[10, 20, 30, 40], latency=[1, 2, 3, 4])
    again = build_topology(json.loads(json.dumps(t.spec)))
    assert np.array_equal(again.link_bandwidth, t.link_bandwidth)
    assert np.array_equal(again.link_latency, t.link_latency)


def test_damage_keeps_the_surviving_values():
    t = ring(bandwidth=[10, 20, 30, 40])
    d = damage(t, parse_failures(t, links=["1-2"]))
    assert sorted(d.link_bandwidth.tolist()) == [10, 10, 30, 30, 40, 40]
    assert np.array_equal(build_topology(d.spec).link_bandwidth, d.link_bandwidth)


def test_groups_keep_the_values():
    assert automorphisms(ring()).order == 8
    assert automorphisms(ring(bandwidth=[10, 10, 1, 1])).order == 2      # the reflection through 1 and 3
    assert automorphisms(ring(bandwidth=[1, 2, 3, 4])).order == 1
    assert automorphisms(ring(latency=[1, 0, 1, 0])).order == 4
    t = ring(bandwidth=[10, 10, 1, 1])
    with pytest.raises(GroupError, match="bandwidths"):
        Group.from_generators(t, [[1, 2, 3, 0]], "rotation", {})


def _write(t, path):
    from synth.schedule.lift import lift, lifted_chunk_elements
    from synth.solving import solve
    cert = solve(t).certificate
    write_explicit(lift(cert.base, cert.group), lifted_chunk_elements(cert.base, cert.group, cert.elements), path)


def test_explicit_header_carries_and_checks_the_values(tmp_path):
    t = ring(bandwidth=[10, 10, 1, 1], latency=[1, 1, 2, 2])
    path = tmp_path / "s.jsonl"
    _write(t, path)
    back = read_explicit(path)[0].topology
    assert np.array_equal(back.link_bandwidth, t.link_bandwidth)
    assert np.array_equal(back.link_latency, t.link_latency)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["bandwidth"][0] += 1
    path.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    with pytest.raises(FileFormatError, match="bandwidth list is not that of"):
        read_explicit(path)


def test_torus_header_with_a_bandwidth_list_is_refused(tmp_path):
    path = tmp_path / "s.jsonl"
    _write(parse_torus("3"), path)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["bandwidth"] = [2.0] * len(header["links"])
    path.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n")
    with pytest.raises(FileFormatError, match="bandwidth list is not that of torus 3"):
        read_explicit(path)


def test_topology_array_validation():
    from synth.topology.base import Topology
    with pytest.raises(TopologyError, match="one per link"):
        Topology.from_links("pair", {}, 2, [(0, 1), (1, 0)], bandwidth=[1.0])
    with pytest.raises(TopologyError, match="above 0"):
        Topology.from_links("pair", {}, 2, [(0, 1), (1, 0)], bandwidth=np.array([1.0, np.nan]))


def test_the_independent_verifier_weighs_loads_by_bandwidth(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    verifier = Path(__file__).resolve().parents[2] / "tools" / "verify_explicit.py"
    header = {"format": "synth-explicit", "version": 1, "topology": {}, "vertices": 2, "compute": [0, 1],
              "links": [[0, 1], [1, 0]], "bandwidth": [2, 4], "chunk_elements": [4], "rounds": 2}
    rows = [{"round": 1, "chunk": 0, "src": 0, "dst": 1, "route": [0, 1], "op": "reduce"},
            {"round": 2, "chunk": 0, "src": 1, "dst": 0, "route": [1, 0], "op": "copy"}]
    path = tmp_path / "two.jsonl"

    def run(h):
        path.write_text("\n".join(json.dumps(x) for x in [h] + rows) + "\n")
        out = subprocess.run([sys.executable, str(verifier), str(path), "--json"], capture_output=True, text=True)
        return out.returncode, json.loads(out.stdout) if out.stdout else out.stderr

    rc, metrics = run(header)
    assert rc == 0 and metrics["bandwidth_term"] == "3"        # 4/2 + 4/4
    rc, metrics = run({k: v for k, v in header.items() if k != "bandwidth"})
    assert rc == 0 and metrics["bandwidth_term"] == "8"        # every link 1
    rc, metrics = run({**header, "claims": {"bandwidth_term": 8}})
    assert rc == 1 and "bandwidth_term" in metrics["errors"][0]
    rc, _ = run({**header, "bandwidth": [2, 0]})
    assert rc == 2
