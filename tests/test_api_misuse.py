"""Every public function of the facade refuses wrong-typed arguments at its entry.

A wrong type is a TypeError (or ValueError) whose message names the parameter, never an AttributeError or
IndexError from deep inside, and nothing is solved, cached or written first.
"""

import inspect
import json
import os

import numpy as np
import pytest

import synth
from synth.check.claims import check_file

T = synth.parse_torus("3x3")
G = synth.torus_gamma(T)
BASE = synth.sp_allreduce(T)
SCHED = synth.lift(BASE, G)
CERT = synth.certify(BASE, G)
METRICS = synth.measure_symmetric(BASE, G, np.ones(G.order, dtype=np.int64))
GOOD = {"topology": T, "t": T, "group": G, "base": BASE, "schedule": SCHED, "cert": CERT, "metrics": METRICS,
        "text": "3x3", "shape": [3, 3], "path": "x.json", "path_or_data": "x.json", "weights": [1],
        "n_elements": 4, "chunk_sizes": np.ones(G.order, dtype=np.int64), "spec": {"kind": "torus-gamma"},
        "parent": [-1, 0, 0, 0, 0, 0, 0, 0, 0], "root": 0, "a": 0, "b": 1,
        "chunk_elements": np.ones(G.order, dtype=np.int64)}
BAD = [None, 2.5, "4x4", {"a": 1}, object()]
FUNCTIONS = [name for name in synth.__all__ if inspect.isfunction(getattr(synth, name))]


def first_parameter(fn):
    return next(iter(inspect.signature(fn).parameters))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("bad", BAD, ids=["None", "float", "str", "dict", "object"])
def test_wrong_first_argument_is_named(name, bad, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fn = getattr(synth, name)
    params = inspect.signature(fn).parameters
    first = first_parameter(fn)
    if isinstance(bad, str) and first in ("text", "path", "path_or_data"):
        pytest.skip("a string is the right type here")
    if isinstance(bad, dict) and first == "path_or_data":
        pytest.skip("a dict is the right type here")
    args = [bad] + [GOOD[p] for p in list(params)[1:] if params[p].default is inspect.Parameter.empty
                    and params[p].kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    with pytest.raises((TypeError, ValueError)) as info:
        fn(*args)
    assert not isinstance(info.value, (AttributeError, IndexError, KeyError))
    assert first in str(info.value) or (first == "t" and "topology" in str(info.value)), str(info.value)
    assert not os.listdir(tmp_path), "nothing may be written"


@pytest.mark.parametrize("depth", [2.5, True, "2", np.float64(2.0)])
def test_solve_refuses_a_depth_that_is_not_an_int(depth, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(TypeError, match="depth must be an int"):
        synth.solve(synth.parse_torus("4x4"), depth=depth)
    assert not (tmp_path / "cache").exists()


def test_solve_takes_numpy_integers_and_refuses_strings():
    res = synth.solve(synth.parse_torus("3x3"), depth=np.int64(2))
    assert res.depth == 2 and synth.check_certificate(res.certificate).valid
    with pytest.raises(TypeError, match=r"expected a Topology \(e.g. synth.parse_torus\('4x4'\)\), got str"):
        synth.solve("4x4")


def test_check_file_refuses_a_descriptor_and_leaves_it_open():
    r, w = os.pipe()
    try:
        with pytest.raises(TypeError, match="path must be a file path"):
            check_file(r)
        os.fstat(r)  # still open
    finally:
        os.close(r)
        os.close(w)


def test_check_certificate_of_a_dict_names_the_parameter():
    with pytest.raises(TypeError, match="cert: expected a Certificate"):
        synth.check_certificate(json.loads(json.dumps({"format": "synth-certificate"})))
    with pytest.raises(TypeError, match="t: expected a Torus"):
        synth.torus_gamma(None)
