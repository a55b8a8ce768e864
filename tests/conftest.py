import itertools

import pytest

from synth.torus import parse_torus


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
    """Commands that write files by default (synth solve) write into a fresh folder, not the repo."""
    monkeypatch.chdir(tmp_path)
