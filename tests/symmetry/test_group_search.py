"""User topologies: file format, searched and given groups, honest balance."""

import json

import networkx as nx
import numpy as np
import pytest

from synth.check.claims import certify, check_certificate
from synth.cli import main
from synth.errors import FileFormatError, GroupError
from synth.schedule.user import shortest_path_tree
from synth.symmetry.search import search_group, user_group
from synth.topology.user import topology_from_json


def spec_of(graph, **extra):
    graph = nx.convert_node_labels_to_integers(graph)
    return {"format": "synth-topology", "version": 1, "vertices": graph.number_of_nodes(),
            "links": [list(e) for e in graph.edges()], **extra}


@pytest.mark.parametrize("graph", [nx.cycle_graph(6), nx.hypercube_graph(3), nx.complete_bipartite_graph(3, 3),
                                   nx.petersen_graph(), nx.complete_graph(4)],
                         ids=["C6", "Q3", "K33", "petersen", "K4"])
def test_searched_groups_balance_symmetric_graphs(graph):
    t = topology_from_json(spec_of(graph))
    g = search_group(t)
    cert = certify(shortest_path_tree(t), g)
    assert cert.claims["omega"] == "1" and cert.claims["psi"] == "1" and cert.claims["theta"] == "1"
    assert check_certificate(cert, "symmetric").valid and check_certificate(cert, "explicit").valid


def test_given_generators_are_verified():
    t = topology_from_json(spec_of(nx.cycle_graph(5)))
    rot = [1, 2, 3, 4, 0]
    g = user_group(t, [rot])
    assert g.order == 5 and g.n_link_orbits == 2
    with pytest.raises(GroupError, match="not an automorphism"):
        user_group(t, [[1, 0, 2, 3, 4]])


def test_asymmetric_graph_goes_to_the_packing_model(tmp_path, capsys):
    g = nx.Graph([(0, 1), (1, 2), (2, 3), (1, 4), (4, 5)])  # no automorphism but the identity... almost
    g.add_edge(5, 6)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(spec_of(g)))
    assert main(["solve", "--topology", str(path), "--json"]) == 0
    err = capsys.readouterr().err
    assert "the packing model" in err and "error" not in err
    # asked for the unbalanced lift, the missing group is still a clear one-line error
    assert main(["solve", "--topology", str(path), "--allow-unbalanced"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synth: error:") and len(err.strip().splitlines()) == 1


def test_unbalanced_fallback_on_request(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(spec_of(nx.path_graph(5))))
    assert main(["solve", "--topology", str(path)]) == 0      # unbalanced: the packing model, said on stderr
    assert "--allow-unbalanced" in capsys.readouterr().err
    out = tmp_path / "c.json"
    assert main(["solve", "--topology", str(path), "--allow-unbalanced", "--out", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["omega"] != "1" and res["rounds"] == 4  # rooted at the centre of the path
    assert main(["check", str(out)]) == 0


def test_switches_and_directed_links():
    # a star of 3 hosts around a switch: hosts compute, the switch forwards
    spec = {"vertices": 4, "links": [[0, 3], [1, 3], [2, 3]], "compute": [0, 1, 2]}
    t = topology_from_json(spec)
    assert t.n_links == 6 and t.n_compute == 3
    cert = certify(shortest_path_tree(t), search_group(t))
    assert cert.claims["rounds"] == 2 and cert.claims["max_route"] == 2
    with pytest.raises(FileFormatError):
        topology_from_json({"vertices": 3})
    directed = topology_from_json({"vertices": 3, "directed": True, "links": [[0, 1], [1, 2], [2, 0]]})
    assert directed.n_links == 3
    assert np.array_equal(directed.link_dst, [1, 2, 0])
