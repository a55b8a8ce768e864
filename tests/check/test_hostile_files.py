"""Hostile certificates, explicit files and shapes.

Every case ends in a clean :class:`SynthError` (or a report that is not valid), fast, and the
cases that declare huge sizes are refused before anything of that size is allocated (the
peak of traced allocations stays small).
"""

import copy
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from synth.check.certificate import certificate_to_json, dumps, read_certificate
from synth.check.claims import certify, check_certificate, check_file
from synth.errors import FileFormatError, ScheduleError, SynthError, TopologyError
from synth.check.explicit import explicit_lines, read_explicit
from synth.fileio import read_json
from synth.symmetry.torus import torus_gamma
from synth.topology.hyperx import parse_hyperx
from synth.schedule.lift import lift, lifted_weights
from synth.topology.spec import build_topology
from synth.schedule import chunk_elements
from synth.schedule.sp import sp_allreduce
from synth.topology.spineleaf import parse_spine_leaf
from synth.topology.torus import parse_torus
from synth.topology.user import read_topology

VERIFIER = Path(__file__).resolve().parents[2] / "tools" / "verify_explicit.py"


@pytest.fixture(scope="module")
def cert44():
    t = parse_torus("4x4")
    return certify(sp_allreduce(t), torus_gamma(t))


@pytest.fixture
def data(cert44):
    return copy.deepcopy(certificate_to_json(cert44, compact=False))   # rows: the long form's hostile fields


@pytest.fixture(scope="module")
def explicit_text(cert44):
    sizes = chunk_elements(lifted_weights(cert44.base, cert44.group), cert44.elements)
    return "".join(explicit_lines(lift(cert44.base, cert44.group), sizes, cert44.claims))


def write(tmp_path, obj, name="c.json"):
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return path


def edit_explicit(text, header=None, line=None, index=1):
    """``text`` with the header updated by ``header`` and/or line ``index`` replaced by ``line``."""
    lines = text.splitlines(keepends=True)
    if header:
        head = json.loads(lines[0])
        head.update(header)
        lines[0] = json.dumps(head) + "\n"
    if line is not None:
        lines[index] = line if isinstance(line, str) else json.dumps(line) + "\n"
    return "".join(lines)


class Bounded:
    """Assert that a block ends within ``seconds`` and allocates at most ``mb`` (traced) megabytes."""

    def __init__(self, seconds=5.0, mb=64):
        self.seconds, self.mb = seconds, mb

    def __enter__(self):
        tracemalloc.start()
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc):
        elapsed = time.monotonic() - self.t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert elapsed < self.seconds, f"took {elapsed:.1f} s"
        assert peak < self.mb << 20, f"allocated {peak >> 20} MB"
        return False


# ------------------------------------------------------------- item 1: soundness
def test_the_wrapped_weight_forgery_is_refused(tmp_path, data):
    """Weight 2^57 + 1 with claims edited to the int64-wrapped values: never VALID."""
    data["base_schedule"]["components"][0]["weight"] = 2**57 + 1
    data["claims"].update(elements=-64, vol_abs=-1920, vol_phys=-1920, omega="-1")
    with pytest.raises(FileFormatError, match="out of range"):
        check_file(write(tmp_path, data))
    for mode in ("explicit", "symmetric"):   # past the reader (a dict), the arithmetic is exact
        rep = check_certificate(read_certificate(copy.deepcopy(data)), mode)
        assert not rep.valid
        assert rep.metrics.elements == 64 and rep.claims["elements"] == (-64, 64, False)


def test_chunk_sizes_are_exact_for_huge_weights():
    w = [2**57 + 1, 1, 2**60, 3]
    n = 2**40 + 7
    cum = [0, *np.cumsum(w, dtype=object)]
    expect = [n * cum[i + 1] // sum(w) - n * cum[i] // sum(w) for i in range(len(w))]
    assert chunk_elements(w, n).tolist() == expect
    assert sum(expect) == n


def test_a_weight_that_starves_a_chunk_is_refused(tmp_path, data):
    comp = data["base_schedule"]["components"][0]
    data["base_schedule"]["components"].append(dict(comp, weight=2**52))   # chunks of weight 1 get 0 elements
    data["chunking"]["elements"] = 1000
    with pytest.raises(ScheduleError, match="gets 0 elements"):
        check_file(write(tmp_path, data))


@pytest.mark.parametrize("elements", [63, 1, 0, -5, True, 1.5, "64"])
def test_too_few_or_mistyped_elements_are_refused(tmp_path, data, elements):
    data["chunking"]["elements"] = elements
    with pytest.raises(SynthError, match="elements"):
        check_file(write(tmp_path, data))


def test_certify_refuses_empty_chunks_and_int64_overflow():
    t = parse_torus("4x4")
    with pytest.raises(ScheduleError, match="cannot fill 64 chunks"):
        certify(sp_allreduce(t), torus_gamma(t), 10)
    with pytest.raises(ScheduleError, match="int64"):
        certify(sp_allreduce(t), torus_gamma(t), 2**61)    # 2^61 elements over 30 links per chunk


@pytest.mark.parametrize("sizes", [[0], [-1], [True], [1.5], ["1"]])
def test_explicit_chunk_sizes_must_be_positive_integers(tmp_path, explicit_text, sizes):
    n = len(json.loads(explicit_text.splitlines()[0])["chunk_elements"])
    path = tmp_path / "e.jsonl"
    path.write_text(edit_explicit(explicit_text, {"chunk_elements": sizes + [1] * (n - 1)}))
    with pytest.raises(FileFormatError, match="chunk"):
        check_file(path)
    res = subprocess.run([sys.executable, str(VERIFIER), str(path)], capture_output=True, text=True)
    assert res.returncode == 2 and "chunk_elements" in res.stderr


def test_the_independent_verifier_refuses_negative_sizes_that_sum_right(tmp_path, explicit_text):
    """Sizes -1 and 3 keep N (and so Psi's denominator) but are not a chunking: exit 2, not VALID."""
    head = json.loads(explicit_text.splitlines()[0])
    sizes = list(head["chunk_elements"])
    sizes[0], sizes[1] = -1, sizes[1] + sizes[0] + 1
    path = tmp_path / "e.jsonl"
    path.write_text(edit_explicit(explicit_text, {"chunk_elements": sizes}))
    res = subprocess.run([sys.executable, str(VERIFIER), str(path)], capture_output=True, text=True)
    assert res.returncode == 2, res.stdout


@pytest.mark.parametrize("claim", ["1.0", 1.0, "0x1", "1e0", True, None, "1" * 5000, "1e999999999", "1/0"])
def test_claims_match_only_exactly(tmp_path, data, claim):
    data["claims"]["omega"] = claim
    with Bounded(seconds=20):
        rep = check_file(write(tmp_path, data))
    assert not rep.valid and rep.claims["omega"][2] is False


def test_an_equal_fraction_or_int_is_exact(tmp_path, data):
    data["claims"]["omega"] = 1
    data["claims"]["weight"] = "30/2"
    assert check_file(write(tmp_path, data)).valid


# ------------------------------------------------------------- item 2: resources
@pytest.mark.parametrize("rounds", [10**9, 10**15, 9, 2000])
def test_rounds_beyond_the_transmissions_are_refused_before_allocating(tmp_path, data, rounds):
    data["base_schedule"]["rounds"] = rounds
    path = write(tmp_path, data)
    with Bounded(), pytest.raises(FileFormatError, match="rounds"):
        check_file(path)


@pytest.mark.parametrize("shape", [[3000, 3000], [40, 40], [2**20, 2**20, 2**20], [3] * 60])
def test_a_big_torus_for_a_small_schedule_is_refused_before_building(tmp_path, data, shape):
    data["topology"]["shape"] = shape
    path = write(tmp_path, data)
    with Bounded(), pytest.raises(FileFormatError, match="at most|compute nodes"):
        check_file(path)


def test_a_one_gigabyte_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(1 << 30)   # sparse: no disk used
    with Bounded(), pytest.raises(FileFormatError, match="MiB"):
        check_file(path)
    with Bounded(), pytest.raises(FileFormatError, match="MiB"):
        read_json(path)
    path.write_bytes(b'{"format": "synth-explicit", "version": 1}\n')
    with open(path, "r+b") as f:
        f.truncate(1 << 31)
    with Bounded(), pytest.raises(FileFormatError, match="MiB"):
        check_file(path)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("reader", [check_file, read_json, read_explicit, read_topology])
def test_devices_and_folders_are_refused(tmp_path, reader):
    for path in ("/dev/zero", tmp_path):
        with Bounded(), pytest.raises(FileFormatError, match="not a regular file|folder"):
            reader(path)


@pytest.mark.parametrize("make, text", [
    (parse_hyperx, "1000x1000"), (parse_torus, "3000x3000"), (parse_torus, "9" * 5000),
    (parse_hyperx, "x".join(["2"] * 40)), (parse_spine_leaf, "100000,100000,100000"),
])
def test_shapes_beyond_the_caps_are_refused_from_the_shape(make, text):
    with Bounded(seconds=1, mb=1), pytest.raises(TopologyError, match="at most|too large"):
        make(text)


@pytest.mark.parametrize("spec", [
    {"kind": "links", "vertices": 10**12, "links": [[0, 1], [1, 0]]},
    {"kind": "links", "vertices": 10**6, "links": [[0, 1], [1, 0]]},
    {"kind": "links", "vertices": 2, "links": [[0, 1.5]]},
    {"kind": "spine-leaf", "spines": 2.0, "leaves": 3, "hosts": 2},
    {"kind": "spine-leaf", "spines": True, "leaves": 3, "hosts": True},
    {"kind": "torus", "shape": [4, True]},
])
def test_topology_specs_are_strict_and_bounded(spec):
    with Bounded(seconds=1, mb=1), pytest.raises(TopologyError):
        build_topology(spec)


def test_a_user_topology_declaring_a_billion_vertices_is_refused(tmp_path):
    path = write(tmp_path, {"format": "synth-topology", "version": 1, "vertices": 10**9, "links": [[0, 1]]})
    with Bounded(seconds=1, mb=8), pytest.raises(SynthError, match="vertices"):
        read_topology(path)


@pytest.mark.parametrize("header", [
    {"rounds": 10**9}, {"rounds": 9}, {"vertices": 10**9}, {"chunk_elements": [1] * 100_000},
    {"topology": {"kind": "torus", "shape": [3000, 3000]}},
])
def test_explicit_headers_that_disagree_with_the_lines_are_refused(tmp_path, explicit_text, header):
    path = tmp_path / "e.jsonl"
    path.write_text(edit_explicit(explicit_text, header))
    with Bounded(), pytest.raises(FileFormatError):
        check_file(path)


def test_explicit_lines_are_bounded(tmp_path, explicit_text):
    path = tmp_path / "e.jsonl"
    path.write_text(edit_explicit(explicit_text, line=" " * (2 << 20) + "\n"))
    with Bounded(), pytest.raises(FileFormatError, match="longer than"):
        check_file(path)
    path.write_text(explicit_text.splitlines()[0] + "\n")
    with pytest.raises(FileFormatError, match="no transmission"):
        check_file(path)


@pytest.mark.parametrize("dual", [
    {"kind": "khop-layered-lagrangian", "k": 10**12},
    {"kind": "khop-cone-count", "k": 10**15},
    {"kind": "khop-terminal-steiner", "k": 10**12, "terminals": [1, 2, 3]},
    {"kind": "khop-terminal-steiner", "k": 3, "terminals": list(range(1, 10**4))},
    {"kind": "khop-layered-lagrangian", "k": 4, "cuts": [[1.0, list(range(16, 80))]] * 400},
])
def test_stored_duals_with_huge_sizes_end_quickly(tmp_path, data, dual):
    """Refused, or re-derived: never more than the weight 15 of the SP tree, which has depth 4."""
    data["solver"] = {"depth_bound": 4, "dual_bound": dict(dual, bound=1)}
    with Bounded(seconds=10, mb=256):
        rep = check_file(write(tmp_path, data))
    if rep.valid:
        assert rep.claims["weight_lower_bound"][1] <= 15
    else:
        assert rep.errors or not rep.claims["weight_lower_bound"][2]


# ----------------------------------------------- item 5 (files): NaN, Infinity, 10^30
@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e400", str(10**30), str(-(2**53))])
@pytest.mark.parametrize("where", ["claims", "solver", "provenance", "elements", "round"])
def test_non_numbers_and_huge_integers_anywhere_are_format_errors(tmp_path, data, raw, where):
    text = dumps(data)
    marker = {"claims": '"omega": "1"', "solver": '"solver": {}', "provenance": '"provenance": {',
              "elements": '"elements": 64', "round": "[1,"}[where]
    assert marker in text
    replacement = {"claims": f'"omega": {raw}', "solver": f'"solver": {{"lower_bound": {raw}}}',
                   "provenance": f'"provenance": {{"seed": {raw}, ', "elements": f'"elements": {raw}',
                   "round": f"[{raw},"}[where]
    path = tmp_path / "c.json"
    path.write_text(text.replace(marker, replacement, 1))
    with Bounded(), pytest.raises(FileFormatError, match="c.json"):
        check_file(path)


@pytest.mark.parametrize("raw", ["NaN", "Infinity", str(10**30)])
def test_non_numbers_in_explicit_files_are_format_errors(tmp_path, explicit_text, raw):
    path = tmp_path / "e.jsonl"
    path.write_text(explicit_text.replace('"omega":"1"', f'"omega":{raw}', 1))
    with pytest.raises(FileFormatError, match="line 1"):
        check_file(path)
    path.write_text(edit_explicit(explicit_text, line=explicit_text.splitlines()[1].replace(
        '"round":1', f'"round":{raw}') + "\n"))
    with pytest.raises(FileFormatError, match="line 2"):
        check_file(path)


def test_a_dict_certificate_with_nan_bound_is_not_valid(data):
    data["solver"] = {"depth_bound": 4, "dual_bound": {"kind": "khop-cone-count", "k": 4, "bound": float("nan")}}
    assert not check_certificate(read_certificate(data)).valid


# ---------------------------------------------------------------- item 7: types
@pytest.mark.parametrize("field, value", [
    (0, 1.5), (0, "1"), (0, True), (1, 0.0), (1, False), (2, "4"), (3, 1), (4, [0, 1.0]), (4, [True, 1]),
    (4, "0,1"),
])
def test_transmission_fields_are_strictly_typed(tmp_path, data, field, value):
    row = data["base_schedule"]["components"][0]["transmissions"][0]
    row[field] = value
    with pytest.raises(FileFormatError, match="transmission 0"):
        check_file(write(tmp_path, data))


@pytest.mark.parametrize("weight", [True, 1.0, "1", None, 0, -1])
def test_weights_are_strictly_typed(tmp_path, data, weight):
    data["base_schedule"]["components"][0]["weight"] = weight
    with pytest.raises(FileFormatError, match="weight"):
        check_file(write(tmp_path, data))


@pytest.mark.parametrize("key, value", [("round", 1.5), ("round", "1"), ("round", True), ("chunk", 0.0),
                                        ("src", False), ("route", [0, 1.0]), ("chunk", -1), ("op", 0)])
def test_explicit_lines_are_strictly_typed(tmp_path, explicit_text, key, value):
    row = json.loads(explicit_text.splitlines()[1])
    row[key] = value
    path = tmp_path / "e.jsonl"
    path.write_text(edit_explicit(explicit_text, line=row))
    with pytest.raises(FileFormatError, match="line 2"):
        check_file(path)


def test_the_cli_reports_hostile_files_in_one_line(tmp_path, data):
    data["base_schedule"]["rounds"] = 10**9
    path = write(tmp_path, data)
    res = subprocess.run([sys.executable, "-m", "synth", "check", str(path)], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "rounds" in res.stderr


def test_certify_refuses_claims_a_file_could_not_hold():
    """Volumes past 2**53 could never be read back (the reader refuses such integers): certify says so first."""
    from synth.check.claims import certify
    from synth.symmetry.torus import torus_gamma
    from synth.schedule.sp import sp_allreduce
    from synth.topology.torus import parse_torus

    t = parse_torus("4x4")
    assert certify(sp_allreduce(t), torus_gamma(t), 1 << 40).claims["vol_abs"] == 30 << 40
    with pytest.raises(ScheduleError, match="vol_abs .* too large for a certificate"):
        certify(sp_allreduce(t), torus_gamma(t), 1 << 49)
