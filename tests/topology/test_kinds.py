"""The table of network kinds is the one place a kind is declared: the CLI's topology flags,
``build_topology`` / ``spec_size`` and ``default_group`` derive from it (a fake row added in a
fixture shows up in all of them), and every naming flag round-trips flag -> topology -> spec ->
topology."""

from dataclasses import fields

import numpy as np
import pytest

import synth.topology.kinds as kinds
from synth.cli import main
from synth.cli._common import topology_argv, topology_from_args
from synth.errors import SynthError, TopologyError
from synth.symmetry.spec import GROUPS, default_group, lifting_group
from synth.topology.kinds import NetworkKind, SpecKind, TopologyFlag, kind_of, naming_flags, topology_flags
from synth.topology.spec import build_topology, spec_size
from synth.topology.torus import Torus, torus

from conftest import cli_args, cli_topology

#: a word for every flag that names a network (a new flag needs one here: test_every_flag_has_a_sample)
SAMPLES = {"torus": "4x4", "hyperx": "3x4", "spine_leaf": "2,4,2", "twisted": "4x4x8", "lattice": "4,4;0,8",
           "mesh": "3x4", "machine": "tofu-d:2x3x2"}
#: the solve paths the solve stage dispatches on (synth.solving)
SOLVE_PATHS = {"torus", "hyperx", "spineleaf", "lattice", "user", "packing"}


def _same(a, b):
    assert (a.name, a.spec, a.n_vertices) == (b.name, b.spec, b.n_vertices)
    assert np.array_equal(a.link_src, b.link_src) and np.array_equal(a.link_dst, b.link_dst)
    assert np.array_equal(a.compute, b.compute)
    assert kind_of(a) is kind_of(b)


def test_every_flag_has_a_sample():
    files = {f.name for f in naming_flags() if f.reads_file}
    assert {f.name for f in naming_flags()} - files == set(SAMPLES)


@pytest.mark.parametrize("flag", sorted(SAMPLES))
def test_each_flag_round_trips_through_its_spec(flag):
    t = cli_topology([f"--{flag.replace('_', '-')}", SAMPLES[flag]])
    rebuilt = build_topology(t.spec)
    _same(t, rebuilt)
    V, E, C = spec_size(t.spec)
    assert (V, E) == (t.n_vertices, t.n_links) and C in (None, t.n_compute)


@pytest.mark.parametrize("flag", [f.name for f in naming_flags() if f.no_wrap])
def test_no_wrap_and_failures_round_trip(flag):
    word = {"torus": "4x4x3", "machine": "tofu-d:2x3x2"}[flag]
    t = cli_topology([f"--{flag}", word, "--no-wrap", "0", "--fail-link", "0-1"])
    assert kind_of(t).solve_path == "packing" and kind_of(t.healthy).solve_path == "lattice"
    _same(t, build_topology(t.spec))


def test_user_topology_round_trips(tmp_path):
    path = tmp_path / "ring.json"
    path.write_text('{"vertices": 5, "links": [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]], '
                    '"generators": [[1, 2, 3, 4, 0]]}')
    args = cli_args(["--topology", str(path)])
    t = topology_from_args(args)
    assert args.generators == [[1, 2, 3, 4, 0]] and kind_of(t).solve_path == "user"
    assert default_group(t) is None and lifting_group(t, args.generators).order == 5
    _same(t, build_topology(t.spec))


def test_rows_are_consistent():
    names = [f.name for f in topology_flags()]
    assert len(names) == len(set(names))
    assert {row.solve_path for row in kinds.KINDS} == SOLVE_PATHS
    specs = [s.kind for row in kinds.KINDS for s in row.specs]
    assert len(specs) == len(set(specs))
    for flag in topology_flags():
        assert (flag.parse is None) == (flag.example == "") and not (flag.no_wrap and flag.parse is None)


@pytest.mark.parametrize("flag", sorted(SAMPLES))
def test_default_group_is_the_rows(flag):
    t = cli_topology([f"--{flag.replace('_', '-')}", SAMPLES[flag]])
    kind = kind_of(t).group(t)
    assert kind in GROUPS
    assert default_group(t).spec["kind"] == kind
    assert lifting_group(t).spec == default_group(t).spec


# ---------------------------------------------------------------- a new kind is one row
class Ring(Torus):
    """A 1-D torus under another name, so that its row, not the torus row, is nearest."""


def _ring(spec):
    n = spec.get("n")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TopologyError("a ring spec needs an integer 'n'")
    t = torus((n,))
    values = {f.name: getattr(t, f.name) for f in fields(t) if f.init}
    return Ring(**{**values, "name": f"ring {n}", "spec": {"kind": "ring", "n": n}})


@pytest.fixture
def ring_row(monkeypatch):
    row = NetworkKind("ring", (Ring,), (TopologyFlag("ring", "N", "a ring of N nodes", lambda word, no_wrap: (
        _ring({"n": int(word)}), None), "5"),), (SpecKind("ring", _ring, lambda spec: (spec["n"], 2 * spec["n"],
                                                                                      spec["n"])),),
        lambda t: "torus-translations", "torus")
    monkeypatch.setattr(kinds, "KINDS", kinds.KINDS + (row,))
    return row


def test_a_new_row_reaches_the_cli_the_spec_reader_and_the_group(ring_row, capsys):
    with pytest.raises(SystemExit):
        main(["info", "--help"])  # argparse exits after printing the help
    assert "--ring N" in capsys.readouterr().out
    assert main(["info", "--ring", "5", "--json"]) == 0
    assert '"topology": "ring 5"' in capsys.readouterr().out
    t = cli_topology(["--ring", "7"])
    assert kind_of(t) is ring_row and build_topology({"kind": "ring", "n": 7}).name == "ring 7"
    assert spec_size({"kind": "ring", "n": 7}) == (7, 14, 7)
    assert default_group(t).spec == {"kind": "torus-translations"}    # the row's group, not the torus row's Γ
    with pytest.raises(SynthError, match="name exactly one topology: .* or --ring 5"):
        cli_topology([])
    words = topology_argv(cli_args(["--ring", "7", "--fail-node", "3"]))
    assert words == ["--fail-node", "3", "--ring", "7"]  # in table order


def test_cluster_words_come_from_the_table(tmp_path):
    argv = ["--torus", "4x4x3", "--no-wrap", "0", "--fail-link", "0-1", "--fail-link", "2-3"]
    assert topology_argv(cli_args(argv)) == argv
    with pytest.raises(SynthError, match="workers may not see a --topology FILE"):
        topology_argv(cli_args(["--topology", str(tmp_path / "t.json")]))


def test_without_the_row_the_kind_is_unknown():
    with pytest.raises(TopologyError, match="unknown topology kind 'ring'"):
        build_topology({"kind": "ring", "n": 5})
    with pytest.raises(SynthError, match="unrecognized arguments: --ring"):
        cli_args(["--ring", "5"])
