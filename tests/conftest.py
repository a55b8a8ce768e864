import itertools
import os
import shutil
import tempfile

import pytest

from synth.topology.torus import parse_torus

_CACHE = tempfile.mkdtemp(prefix="synth-test-cache-")


def pytest_configure(config):
    """Solved trees go to a cache of this test process (each xdist worker has its own), never the user's."""
    os.environ["SYNTH_CACHE_DIR"] = _CACHE


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE, ignore_errors=True)


def equal_sided_shapes(max_p):
    """Every equal-sided torus n^d (n >= 3) with at most max_p vertices."""
    out = []
    for d in range(1, 8):
        for n in itertools.count(3):
            if n**d > max_p:
                break
            out.append("x".join([str(n)] * d))
    return out


@pytest.fixture(scope="session")
def t44():
    return parse_torus("4x4")


@pytest.fixture(autouse=True)
def _run_in_tmp(tmp_path, monkeypatch):
    """Each test runs in a fresh folder, so a file a command writes (``--out``) never lands in the repo."""
    monkeypatch.chdir(tmp_path)
