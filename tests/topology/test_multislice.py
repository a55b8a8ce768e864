"""Multislice: K TPU slices and one DCN switch, with the generation's ICI and DCN bandwidths; the
--slices/--dcn-bandwidth flags round-trip through specs and cluster words; groups keep the bandwidths."""

import json

import numpy as np
import pytest

from synth.cli import main
from synth.cli._common import topology_argv
from synth.errors import SynthError, TopologyError
from synth.symmetry.multislice import failed_slices
from synth.symmetry.spec import default_group, lifting_group, named_group
from synth.topology.kinds import kind_of
from synth.topology.machines import TPU_BANDWIDTHS, machine_spec
from synth.topology.multislice import Multislice
from synth.topology.spec import build_topology, spec_size

from conftest import cli_args, cli_topology


@pytest.mark.parametrize("word,k,chips,ports", [("tpu-v5p:4x4x4", 2, 64, 6), ("tpu-v5e:4x8", 4, 32, None),
                                                ("tpu-v4:4x4x8", 2, 128, 6), ("tpu-v6e:16x16", 2, 256, 4),
                                                ("tpu7x:2x2x1", 3, 4, None)])
def test_counts_bandwidths_and_spec_round_trip(word, k, chips, ports):
    t = cli_topology(["--machine", word, "--slices", str(k)])
    inner = build_topology(machine_spec(word))
    name = word.split(":")[0]
    assert isinstance(t, Multislice) and kind_of(t).name == "multislice"
    assert (t.n_vertices, t.n_compute, t.n_links) == (k * chips + 1, k * chips, k * (inner.n_links + 2 * chips))
    assert spec_size(t.spec) == (t.n_vertices, t.n_links, t.n_compute)
    assert t.link_bandwidth[t.link_class == 0].tolist() == [TPU_BANDWIDTHS[name].ici] * (k * inner.n_links)
    assert t.link_bandwidth[t.link_class == 1].tolist() == [TPU_BANDWIDTHS[name].dcn] * (2 * k * chips)
    if ports:   # a full torus: ICI per chip and direction = ports x per-link figure
        out = t.link_src[t.link_class == 0] == 0
        assert out.sum() == ports
    # every chip of every slice reaches the switch both ways, at the DCN figure
    chips_all = np.arange(k * chips)
    up, down = t.link_ids(chips_all, np.full(k * chips, t.dcn_switch)), t.link_ids(np.full(k * chips, t.dcn_switch),
                                                                                 chips_all)
    assert (up >= 0).all() and (down >= 0).all()
    again = build_topology(json.loads(json.dumps(t.spec)))
    assert np.array_equal(again.link_src, t.link_src) and np.array_equal(again.link_bandwidth, t.link_bandwidth)
    assert again.name == t.name == f"{k} slices of {inner.name}"


def test_dcn_bandwidth_flag_and_cluster_words():
    argv = ["--machine", "tpu-v5p:4x4x4", "--slices", "2", "--dcn-bandwidth", "12.5"]
    t = cli_topology(argv)
    assert t.spec["dcn_bandwidth"] == 12.5 and set(t.link_bandwidth.tolist()) == {100.0, 12.5}
    words = topology_argv(cli_args(argv))
    assert cli_topology(words).spec == t.spec
    assert set(words) == set(argv)


@pytest.mark.parametrize("argv,match", [
    (["--torus", "4x4", "--slices", "2"], "--slices goes with --machine"),
    (["--machine", "dgx-a100:2", "--slices", "2"], "`slices` goes with a TPU preset"),
    (["--machine", "trn2:4x4", "--slices", "2"], "`slices` goes with a TPU preset"),
    (["--machine", "tpu-v5p:4x4x4", "--slices", "1"], "2 to 64"),
    (["--machine", "tpu-v5p:4x4x4", "--slices", "two"], "whole number"),
    (["--machine", "tpu-v5p:4x4x4", "--slices", "2", "--dcn-bandwidth", "0"], "above 0"),
    (["--machine", "tpu-v5p:4x4x4", "--slices", "2", "--dcn-bandwidth", "inf"], "above 0"),
    (["--machine", "tpu-v5p:4x4x4", "--dcn-bandwidth", "5"], "goes with `slices`"),
])
def test_bad_flags_are_refused(argv, match):
    with pytest.raises(SynthError, match=match):
        cli_topology(argv)


def test_bad_flags_are_one_line_at_the_cli(capsys):
    assert main(["info", "--machine", "tpu-v5p:4x4x4", "--dcn-bandwidth", "5"]) == 2
    err = capsys.readouterr().err
    assert err == "synth: error: --dcn-bandwidth goes with --slices (the network between slices)\n"


@pytest.mark.parametrize("spec,match", [
    ({"slice": {"kind": "torus", "shape": [4, 4]}, "slices": 2, "ici_bandwidth": 50.0}, "'dcn_bandwidth'"),
    ({"slice": {"kind": "torus", "shape": [4, 4]}, "slices": 2, "ici_bandwidth": 50.0, "dcn_bandwidth": -1},
     "'dcn_bandwidth'"),
    ({"slice": {"kind": "gpu", "machine": "dgx-a100", "servers": 2}, "slices": 2, "ici_bandwidth": 1.0,
      "dcn_bandwidth": 1.0}, "healthy topology spec of kind torus"),
    ({"slice": {"kind": "torus", "shape": [4, 4], "failed": [0]}, "slices": 2, "ici_bandwidth": 1.0,
      "dcn_bandwidth": 1.0}, "healthy topology spec"),
    ({"slice": {"kind": "torus", "shape": [4, 4]}, "slices": 65, "ici_bandwidth": 1.0, "dcn_bandwidth": 1.0},
     "2 to 64"),
    ({"slice": {"kind": "torus", "shape": [4, 4]}, "slices": 2, "ici_bandwidth": 1.0, "dcn_bandwidth": 1.0,
      "bandwidth": [1.0]}, "unknown key 'bandwidth'"),
])
def test_bad_specs_are_refused(spec, match):
    with pytest.raises(TopologyError, match=match):
        build_topology({"kind": "multislice", **spec})


def test_group_is_slice_rotation_times_the_slice_group_and_keeps_bandwidths():
    t = cli_topology(["--machine", "tpu-v5p:4x4x4", "--slices", "3"])
    g = default_group(t)
    inner = default_group(t.slice_topology)
    assert g.spec == {"kind": "multislice-shifts"} and g.order == 3 * inner.order
    assert lifting_group(t).spec == g.spec and named_group(t, g.spec).order == g.order
    for perm in g.generator_links:
        assert np.array_equal(t.link_bandwidth[perm], t.link_bandwidth)


def test_a_failed_chip_and_a_failed_dcn_link():
    t = cli_topology(["--machine", "tpu-v5e:2x2", "--slices", "2", "--fail-node", "1", "--fail-link",
                   "5-8"])
    assert t.n_compute == 7 and kind_of(t).name == "damaged"
    again = build_topology(t.spec)
    assert np.array_equal(again.link_bandwidth, t.link_bandwidth) and again.spec == t.spec
    assert lifting_group(t).order >= 1


def test_a_failure_in_one_slice_leaves_the_others_rotating():
    """A failed DCN link fixes its slice; the other three still rotate among themselves, times the slice
    group's elements that fix the chip (the rotation of all four survives nowhere)."""
    t = cli_topology(["--machine", "tpu-v5e:4x4", "--slices", "4", "--fail-link", f"5-{4 * 16}"])
    assert failed_slices(t.healthy, t.failures) == [0]
    inner = default_group(t.healthy.slice_topology)
    fixing_chip = int((inner.vertex_images(np.array([5]))[:, 0] == 5).sum())
    g = lifting_group(t)
    assert g.order == 3 * fixing_chip and named_group(t, g.spec).order == g.order
    chips = g.vertex_images(np.arange(t.n_compute)).astype(np.int64) // 16
    assert (chips[:, :16] == 0).all() and len({tuple(r) for r in chips[:, 16::16].tolist()}) == 3


def test_a_failed_dcn_switch_cuts_the_slices_apart(capsys):
    assert main(["info", "--machine", "tpu-v5e:2x2", "--slices", "2", "--fail-node", "8"]) == 2
    err = capsys.readouterr().err
    assert "disconnect" in err and err.count("\n") == 1


def test_solve_gives_a_valid_certificate(tmp_path, capsys):
    out = tmp_path / "ms.json"
    assert main(["solve", "--machine", "tpu-v5e:2x2", "--slices", "2", "--out", str(out)]) == 0
    capsys.readouterr()
    assert json.loads(out.read_text())["topology"]["kind"] == "multislice"
    assert main(["check", str(out)]) == 0
    assert "VALID" in capsys.readouterr().out
