"""The residual group's elements, found without mapping every healthy element whole."""

import numpy as np
import pytest

from synth.symmetry.group import Group
from synth.symmetry.residual import fixing, residual_elements
from synth.symmetry.torus import torus_gamma
from synth.topology.failures import parse_failures
from synth.topology.torus import parse_torus


@pytest.mark.parametrize("links,nodes", [(["0-1"], []), ([], ["9"]), (["0-1", "9-17"], ["27"]), ([], [])])
def test_the_same_elements_as_filtering_every_element(links, nodes):
    t = parse_torus("6x6")
    g, f = torus_gamma(t), parse_failures(t, links=links, nodes=nodes)
    every = g.vertex_images(np.arange(t.n_vertices))
    assert np.array_equal(residual_elements(g, f), fixing(every, f))


def test_gamma_of_a_64x64_torus_is_never_mapped_whole(monkeypatch):
    t = parse_torus("64x64")
    g = torus_gamma(t)
    widest = []
    real = Group.vertex_images

    def counted(self, vertices):
        out = real(self, vertices)
        widest.append(out.size)
        return out

    monkeypatch.setattr(Group, "vertex_images", counted)
    kept = residual_elements(g, parse_failures(t, links=["0-1"]))
    assert kept.shape == (2, 4096) and max(widest) <= 1 << 22   # not 32,768 x 4,096
