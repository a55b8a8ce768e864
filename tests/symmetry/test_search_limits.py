"""The automorphism search keeps its limits and never claims that no symmetry exists."""

import json
import time

import networkx as nx
import numpy as np
import pytest

from synth.cli import main
from synth.errors import GroupError
from synth.symmetry.nauty import MAX_VERTICES, automorphisms
from synth.symmetry.search import search_group
from synth.topology.user import topology_from_json


def spec_of(graph, **extra):
    graph = nx.convert_node_labels_to_integers(graph)
    return {"format": "synth-topology", "version": 1, "vertices": graph.number_of_nodes(),
            "links": [list(e) for e in graph.edges()], **extra}


def solve_file(tmp_path, capsys, spec, *extra):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(spec))
    t0 = time.monotonic()
    code = main(["solve", "--topology", str(path), "--json", *extra])
    out = capsys.readouterr()
    return code, out, time.monotonic() - t0


@pytest.mark.parametrize("graph,compute", [
    (nx.complete_graph(12), None),
    (nx.hypercube_graph(6), None),
    (nx.star_graph(8), list(range(1, 9))),   # 8 compute hosts around one switch (vertex 0)
], ids=["K12", "Q6", "star8"])
def test_symmetric_graphs_get_a_balanced_schedule_without_generators(graph, compute, tmp_path, capsys):
    spec = spec_of(graph, **({"compute": compute} if compute else {}))
    code, out, _ = solve_file(tmp_path, capsys, spec)
    assert code == 0, out.err
    res = json.loads(out.out)
    assert res["omega"] == "1" and res["valid"] is True


@pytest.mark.slow
@pytest.mark.parametrize("graph", [nx.complete_graph(60)], ids=["K60"])
def test_large_complete_graph_is_balanced(graph, tmp_path, capsys):
    code, out, _ = solve_file(tmp_path, capsys, spec_of(graph))
    assert code == 0 and json.loads(out.out)["omega"] == "1", out.err


def test_rigid_graph_is_told_truthfully(tmp_path, capsys):
    graph = nx.random_regular_graph(3, 300, seed=1)   # nauty: |Aut| = 1
    t0 = time.monotonic()
    with pytest.raises(GroupError, match="no automorphism but the identity"):
        search_group(topology_from_json(spec_of(graph)))
    assert time.monotonic() - t0 < 30


def test_rigid_graph_gets_the_packing_model_and_says_why(tmp_path, capsys):
    """A small graph with no symmetry (Aut trivial: a path of six with a pentagon on it) is solved by the
    packing model, and the note says truthfully that no automorphism exists."""
    graph = nx.Graph([(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (1, 6), (6, 7), (2, 7)])
    code, out, seconds = solve_file(tmp_path, capsys, spec_of(graph))
    assert code == 0 and json.loads(out.out)["valid"], out.err
    assert "no automorphism but the identity" in out.err and "packing model" in out.err


def test_a_failure_on_a_rigid_graph_gets_the_packing_model_too(tmp_path, capsys):
    # the same graph with a failed link: the residual of no group is the trivial group (it was a GroupError,
    # exit 2), and --time-limit bounds its timed trees as on the healthy graph
    graph = nx.Graph([(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (1, 6), (6, 7), (2, 7)])
    code, out, seconds = solve_file(tmp_path, capsys, spec_of(graph), "--fail-link", "1-6", "--time-limit", "2")
    assert code == 0 and json.loads(out.out)["valid"], out.err
    assert "group of order 1)" in out.err


def test_the_packing_plans_of_user_graphs_take_the_time_limit():
    # a rigid graph (no group), the same with a failed link, and a graph whose group leaves the tree unbalanced
    # (a path of six: the flip): the plan's LPs are bounded by the request's limit (their timed trees took
    # 600 CPU s whatever --time-limit said)
    from synth.solving import plan
    from synth.solving.request import SolveRequest
    from synth.topology.failures import damage, parse_failures

    rigid = topology_from_json(spec_of(nx.Graph([(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (1, 6), (6, 7), (2, 7)])))
    path = topology_from_json(spec_of(nx.path_graph(6)))
    for t in (rigid, damage(rigid, parse_failures(rigid, ["1-6"], [])), path):
        chosen = plan(SolveRequest(t, time_limit=7.0))
        assert chosen.construction in ("timed-packing", "layered-packing") and chosen.time_limit == 7.0, t.name


def test_long_paths_finish_within_the_limit(tmp_path, capsys):
    code, out, seconds = solve_file(tmp_path, capsys, spec_of(nx.path_graph(2000)))
    assert seconds < 30 and code == 2 and len(out.err.strip().splitlines()) == 1
    assert "found within the limits" in out.err   # a path's only symmetry (the flip) cannot balance its tree
    t = topology_from_json(spec_of(nx.path_graph(100_000)))
    t0 = time.monotonic()
    with pytest.raises(GroupError, match=f"limit of {MAX_VERTICES:,}.*none found within the limits; pass `generators`"):
        search_group(t)
    assert time.monotonic() - t0 < 5


def test_the_deadline_stops_nauty_and_the_search():
    t = topology_from_json(spec_of(nx.hypercube_graph(6)))
    t0 = time.monotonic()
    with pytest.raises(GroupError, match="none found within the limits"):
        search_group(t, seconds=0.0)
    assert time.monotonic() - t0 < 5


def test_nauty_keeps_colours_and_directions():
    star = topology_from_json(spec_of(nx.star_graph(4), compute=[1, 2, 3, 4]))
    assert automorphisms(star).order == 24                        # S_4 on the hosts, the switch fixed
    lopsided = topology_from_json(spec_of(nx.star_graph(4), compute=[0, 1, 2, 3]))
    assert automorphisms(lopsided).order == 6                     # host 4 is a switch now: S_3
    cycle = topology_from_json({"vertices": 5, "directed": True, "links": [[i, (i + 1) % 5] for i in range(5)]})
    aut = automorphisms(cycle)
    assert aut.order == 5                                         # rotations only: directions kept
    for g in aut.generators:
        assert set(map(tuple, np.c_[g[cycle.link_src], g[cycle.link_dst]].tolist())) == \
            set(map(tuple, np.c_[cycle.link_src, cycle.link_dst].tolist()))
