"""bench/fabrics.py: the fabrics it builds, its failures, and one row against the certificate and the optimum."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def fabrics():
    sys.path.insert(0, str(_BENCH))  # the bench scripts import _harness from their own folder
    try:
        spec = importlib.util.spec_from_file_location("bench_fabrics", _BENCH / "fabrics.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(_BENCH))


def test_the_dgx_fabric_and_its_failures(fabrics):
    t = fabrics.fabric("dgx-a100", 2)
    assert (t.n_vertices, t.n_compute, t.n_links) == (36, 16, 96)
    assert sorted(set(t.link_bandwidth.tolist())) == [25.0, 300.0]
    nic = int(t.nic_of(1))
    assert t.link_bandwidth[(t.link_src == 1) & (t.link_dst == nic)].tolist() == [25.0]
    assert fabrics.failed(t, "nic").n_links == t.n_links - 4           # GPU <-> NIC and NIC <-> rail
    assert fabrics.failed(t, "link").n_links == t.n_links - 2
    slices = fabrics.fabric("tpu-v5p-slices", 2)
    assert slices.n_compute == 16 and fabrics.failed(slices, "nic").n_links == slices.n_links - 2


def test_one_row_is_the_certificate_against_the_bound_and_the_optimum(fabrics, tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    fabrics.main(["--only", "dgx-a100:1:healthy,dgx-a100:1:nic", "--time-limit", "20", "--sizes", "",
                  "--json", str(out)])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    healthy, nic = rows
    # one server through one NVSwitch: the volume bound, ForestColl's optimum and the tree all 2(p-1)/(p 300)
    assert healthy["bound"] == healthy["fc"] == pytest.approx(14 / 8 / 300) and healthy["q_fc"] >= 1 - 1e-12
    assert "no NICs" in nic["note"]
    # one server: every GPU baseline is the NVSwitch ring or chain, at the optimum or behind it
    assert all(healthy[k] >= 1 - 1e-12 for k in ("ring_fc", "tree_fc", "hier_fc"))


def test_goodput_by_the_model_and_simgrid_at_every_size(fabrics, tmp_path, capsys):
    """One server: synth's schedule and each baseline timed at 1 MiB and 256 MiB by the cost model and by a
    SimGrid replay (which agree on these balanced rounds), ForestColl by its bandwidth term and least latency."""
    from synth.analysis.simulate import simgrid_available

    out = tmp_path / "rows.jsonl"
    sim = simgrid_available()
    fabrics.main(["--only", "dgx-a100:1:healthy", "--time-limit", "20", "--sizes", "1MiB,256MiB", "--json", str(out)]
                 + ([] if sim else ["--no-sim"]))
    row = json.loads(out.read_text())
    for who in ("synth", "ring", "tree", "hier"):
        for size in ("1MiB", "256MiB"):
            model = row[f"{who} model {size}"]
            assert model > 0
            if sim:
                assert row[f"{who} sim {size}"] == pytest.approx(model, rel=1e-3)
        assert row[f"{who} model 256MiB"] > row[f"{who} model 1MiB"]     # latency weighs less on big messages
    # one NVSwitch: synth's tree is ForestColl's optimum, in bandwidth and in its two steps of latency
    assert row["fc model 256MiB"] == pytest.approx(row["synth model 256MiB"], rel=1e-6)
    assert row["synth model 256MiB"] >= row["ring model 256MiB"]
    text = capsys.readouterr().out
    assert "== goodput (Gb/s)" in text and "fc" in text


def test_no_sim_leaves_simgrid_out(fabrics, tmp_path):
    out = tmp_path / "rows.jsonl"
    fabrics.main(["--only", "dgx-a100:1:healthy", "--time-limit", "20", "--sizes", "1MiB", "--no-sim",
                  "--json", str(out)])
    row = json.loads(out.read_text())
    assert row["synth model 1MiB"] > 0 and row["synth sim 1MiB"] is None
    assert "--no-sim" in row["sim_note"]
