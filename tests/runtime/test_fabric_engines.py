"""Every engine on a GPU fabric: two servers of four GPUs on a switch, NICs on two rails (a --topology file).

The schedule is the hierarchical baseline, an explicit file whose header carries the bandwidths: the
switches and NICs forward, the GPUs are the ranks.
"""

import json

import pytest

from synth.analysis.simulate import INSTALL_HINT, simgrid_available
from synth.baselines.gpu import two_servers_example
from synth.cli import main


@pytest.fixture(scope="module")
def fabric_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("fabric")
    topo = d / "fabric.json"
    topo.write_text(json.dumps(two_servers_example()))
    out = d / "hierarchical.jsonl"
    assert main(["baseline", "hierarchical", "--topology", str(topo), "--out", str(out)]) == 0
    return out


def test_msccl_export_of_a_fabric(fabric_file, tmp_path, capsys):
    out = tmp_path / "h.xml"
    assert main(["export", str(fabric_file), "--format", "msccl-xml", "--check", "--out", str(out)]) == 0
    assert "check: OK" in capsys.readouterr().out
    assert 'ngpus="8"' in out.read_text()


@pytest.mark.skipif(not simgrid_available(), reason=INSTALL_HINT)
def test_simulate_a_fabric_at_its_bandwidths(fabric_file, capsys):
    assert main(["simulate", str(fabric_file), "--size", "1MiB", "--json"]) == 0
    row, = json.loads(capsys.readouterr().out)["rows"]
    assert row["simulated_over_model"] == pytest.approx(1.0, rel=1e-6)
    # each GPU sends an eighth of its MiB through its 25 GB/s NIC twice (reduce-scatter, allgather)
    assert row["simulated_seconds"] > 2 * (2**20 / 8) / 25e9


@pytest.mark.skipif(not simgrid_available(), reason=INSTALL_HINT)
def test_simulate_says_each_link_class_rate_not_the_unused_default(fabric_file, capsys):
    """On a fabric every link runs at its own bandwidth: the JSON gives no single rate (the 400 Gb/s default is
    not used) but the rate of every class of links, and the text says so."""
    assert main(["simulate", str(fabric_file), "--size", "1MiB", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bandwidth_bytes_per_s"] is None
    assert sorted((c["bandwidth_bytes_per_s"], c["links"]) for c in out["link_classes"]) == [(25e9, 32), (300e9, 16)]
    assert main(["simulate", str(fabric_file), "--size", "1MiB"]) == 0
    text = capsys.readouterr().out
    assert "links at their own bandwidths (links 300 GB/s, links 25 GB/s)" in text and "400Gbps" not in text


def test_compare_json_on_a_fabric_gives_each_class_rate(tmp_path, capsys):
    topo = tmp_path / "fabric.json"
    topo.write_text(json.dumps(two_servers_example()))
    assert main(["compare", "--topology", str(topo), "--sizes", "1MiB", "--algorithms", "nccl-ring", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bandwidth_bytes_per_s"] is None
    assert sorted(c["bandwidth_bytes_per_s"] for c in out["link_classes"]) == [25e9, 300e9]


def test_jax_runs_a_fabric_unchanged(fabric_file, capsys):
    pytest.importorskip("jax")
    assert main(["run", str(fabric_file), "--engine", "jax", "--size", "4KiB", "--iters", "1", "--warmup", "0"]) == 0
    assert "all equal" in capsys.readouterr().out
