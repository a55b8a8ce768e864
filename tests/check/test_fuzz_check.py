"""Fuzzing the checker: mutated numbers and types in valid files are never certified falsely.

Hypothesis replaces values anywhere in a valid 3x3 certificate or explicit file (ints by huge,
negative, zero, nearby values; by floats, strings, bools, None, lists) and asserts that
``check_file`` either raises a :class:`SynthError` or returns a report, and that a VALID report's
claims are exactly those of a fresh certification (certificates) or of a fresh measurement
(explicit files).
"""

import copy
import json
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from synth.check.certificate import certificate_to_json, read_certificate
from synth.check.bounds.bandwidth import BOUND_KEY, CUT_KEY, FRACTION_KEY, bandwidth_claims
from synth.check.claims import certify, check_file, claims_of
from synth.check import execute, measure_explicit, round_lower_bound
from synth.errors import SynthError
from synth.check.explicit import explicit_lines, read_explicit
from synth.symmetry.torus import torus_gamma
from synth.schedule.lift import lift, lifted_weights
from synth.symmetry.spec import default_group
from synth.schedule import chunk_elements
from synth.schedule.sp import sp_allreduce
from synth.topology.torus import parse_torus

FUZZ = settings(max_examples=120, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

REPLACEMENTS = st.one_of(
    st.sampled_from([0, -1, 1, 2, 3, 7, 8, 9, 63, 64, 65, 2**31, 2**53 - 1, 2**53, 2**63, 10**30, -(2**63)]),
    st.sampled_from([1.5, 1.0, 0.0, -1.0, 1e300, "1", "8", "1/2", "", "x", True, False, None, [], {}, [1]]),
    st.integers(-3, 3).map(lambda d: ("offset", d)),
)


def _leaves(obj, path=()):
    """Paths to every scalar (and every list) inside ``obj``."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _leaves(v, path + (k,))
    elif isinstance(obj, list):
        out.append(path)
        for i, v in enumerate(obj):
            out += _leaves(v, path + (i,))
    else:
        out.append(path)
    return out


def _mutate(obj, path, new):
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    old = parent[path[-1]]
    if isinstance(new, tuple):           # ("offset", d): a nearby integer, when there is one
        if isinstance(old, bool) or not isinstance(old, int):
            return
        new = old + new[1]
    parent[path[-1]] = new


def _exact(value):
    """A claim as an exact value (what the checker may accept as equal)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return Fraction(value)
    return Fraction(value) if isinstance(value, str) else value


def _assert_claims_hold(claimed: dict, fresh: dict):
    for key, value in claimed.items():
        assert key in fresh, f"claim {key} is not something the checker derives"
        if key == "bandwidth_bound_cut":   # a witness: any cut proving the same bound will do (the bound is compared)
            continue
        assert type(value) is type(fresh[key]) or not isinstance(value, bool) and not isinstance(fresh[key], bool)
        assert _exact(value) == _exact(fresh[key]), (key, value, fresh[key])


@pytest.fixture(scope="module")
def cert_data():
    t = parse_torus("3x3")
    cert = certify(sp_allreduce(t), torus_gamma(t), 100)
    return certificate_to_json(cert), cert


def _skip_label(path):
    return any(k in ("label", "provenance", "tool") for k in path if isinstance(k, str))


@FUZZ
@given(data=st.data())
def test_mutated_certificates_are_never_falsely_valid(tmp_path, cert_data, data):
    original, _ = cert_data
    obj = copy.deepcopy(original)
    paths = [p for p in _leaves(obj) if p and not _skip_label(p)]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        try:
            _mutate(obj, path, data.draw(REPLACEMENTS))
        except (KeyError, IndexError, TypeError):
            pass                                 # an earlier mutation replaced an enclosing list
    path = tmp_path / "c.json"
    path.write_text(json.dumps(obj))
    for mode in ("explicit", "symmetric"):
        try:
            report = check_file(path, mode)
        except SynthError:
            continue
        if report.valid:
            cert = read_certificate(json.loads(path.read_text()))
            fresh = certify(cert.base, cert.group, cert.elements)
            _assert_claims_hold(cert.claims, fresh.claims)


@pytest.fixture(scope="module")
def explicit_rows(cert_data):
    _, cert = cert_data
    sizes = chunk_elements(lifted_weights(cert.base, cert.group), cert.elements)
    return [json.loads(line) for line in explicit_lines(lift(cert.base, cert.group), sizes, cert.claims)]


@FUZZ
@given(data=st.data())
def test_mutated_explicit_files_are_never_falsely_valid(tmp_path, explicit_rows, data):
    rows = copy.deepcopy(explicit_rows)
    for _ in range(data.draw(st.integers(1, 3))):
        line = data.draw(st.one_of(st.just(0), st.integers(1, len(rows) - 1)))
        paths = [p for p in _leaves(rows[line]) if p and p[0] != "topology"]
        path = data.draw(st.sampled_from(paths))
        try:
            _mutate(rows[line], path, data.draw(REPLACEMENTS))
        except (KeyError, IndexError, TypeError):
            pass
    path = tmp_path / "e.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    try:
        report = check_file(path)
    except SynthError:
        return
    if report.valid:
        schedule, sizes, header = read_explicit(path)
        assert execute(schedule) == []
        t = schedule.topology
        m = measure_explicit(schedule, sizes)
        fresh = claims_of(m, round_lower_bound(t, default_group(t))[0])
        claimed = header.get("claims") or {}
        if any(k in claimed for k in (BOUND_KEY, CUT_KEY, FRACTION_KEY)):   # derived from the claimed cut
            fresh.update(bandwidth_claims(t, m, claimed.get(CUT_KEY)))
        _assert_claims_hold(claimed, fresh)
        assert min(sizes.tolist()) >= 1
