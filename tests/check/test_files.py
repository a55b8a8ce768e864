"""Certificates and explicit files: round trips, corrupt input, and the mutation suite."""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from synth.check.certificate import read_certificate, write_certificate
from synth.check.claims import certify, check_certificate, check_file
from synth.errors import FileFormatError, SynthError
from synth.check.explicit import read_explicit, write_explicit
from synth.symmetry.torus import torus_gamma
from synth.schedule.lift import lift, lifted_weights
from synth.schedule import chunk_elements
from synth.schedule.sp import sp_allreduce
from synth.topology.torus import parse_torus


def make_cert(shape, elements=None):
    t = parse_torus(shape)
    return certify(sp_allreduce(t), torus_gamma(t), elements, provenance={"algorithm": "sp-allreduce"})


def export(cert, path):
    s = lift(cert.base, cert.group)
    write_explicit(s, chunk_elements(lifted_weights(cert.base, cert.group), cert.elements), path, cert.claims)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.sampled_from(["3", "5", "3x3", "4x4", "3x4", "5x5", "3x3x3"]),
       extra=st.integers(min_value=0, max_value=500), mode=st.sampled_from(["explicit", "symmetric"]))
def test_certificate_round_trip(tmp_path, shape, extra, mode):
    t = parse_torus(shape)
    from synth.symmetry.spec import default_group

    g = default_group(t)
    cert = certify(sp_allreduce(t), g, g.order + extra, mode=mode)
    path = tmp_path / "c.json"
    write_certificate(cert, path)
    again = read_certificate(str(path))
    assert again.claims == json.loads(json.dumps(cert.claims))
    r1, r2 = check_certificate(again, "explicit"), check_certificate(again, "symmetric")
    assert r1.valid and r2.valid
    assert r1.metrics == r2.metrics
    # explicit export of the same schedule gives the same verdict and metrics
    export(again, tmp_path / "e.jsonl")
    r3 = check_file(str(tmp_path / "e.jsonl"))
    assert r3.valid and r3.metrics == r1.metrics


def test_writes_are_deterministic(tmp_path):
    for name in ("a", "b"):
        cert = make_cert("4x4")
        write_certificate(cert, tmp_path / f"{name}.json")
        export(cert, tmp_path / f"{name}.jsonl")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_explicit_header_matches_spec(tmp_path):
    cert = make_cert("3x3")
    export(cert, tmp_path / "e.jsonl")
    lines = (tmp_path / "e.jsonl").read_text().splitlines()
    head = json.loads(lines[0])
    assert head["format"] == "synth-explicit" and head["version"] == 1
    assert head["vertices"] == 9 and head["compute"] == list(range(9)) and len(head["links"]) == 36
    assert head["rounds"] == 4 and len(head["chunk_elements"]) == 36
    row = json.loads(lines[1])
    assert set(row) == {"round", "chunk", "src", "dst", "route", "op"}
    assert len(lines) - 1 == 36 * 16


# ------------------------------------------------------------------ mutations
def _mutants(lines, rng, topology):
    """Yield (name, new lines) for every mutation kind, on transmissions drawn at random."""
    body = lines[1:]
    n = len(body)
    head = json.loads(lines[0])
    for _ in range(3):
        i = rng.randrange(n)
        row = json.loads(body[i])
        yield "drop", [lines[0]] + body[:i] + body[i + 1:]
        yield "duplicate", [lines[0]] + body[:i + 1] + body[i:]
        moved = dict(row, round=row["round"] % head["rounds"] + 1)
        yield "move", [lines[0]] + body[:i] + [json.dumps(moved)] + body[i + 1:]
        flipped = dict(row, op="copy" if row["op"] == "reduce" else "reduce")
        yield "flip", [lines[0]] + body[:i] + [json.dumps(flipped)] + body[i + 1:]
        far = (row["dst"] + 2) % head["vertices"]
        nonpath = dict(row, route=[row["src"], far, row["dst"]])
        yield "non-path", [lines[0]] + body[:i] + [json.dumps(nonpath)] + body[i + 1:]
        wrong_end = dict(row, dst=far, route=[row["src"], far])
        yield "wrong endpoint", [lines[0]] + body[:i] + [json.dumps(wrong_end)] + body[i + 1:]
        other_chunk = dict(row, chunk=(row["chunk"] + 1) % len(head["chunk_elements"]))
        yield "other chunk", [lines[0]] + body[:i] + [json.dumps(other_chunk)] + body[i + 1:]
    for key in ("rounds", "psi", "theta", "omega", "weight", "round_lower_bound", "vol_abs", "round_optimal"):
        claims = dict(head["claims"])
        value = claims[key]
        claims[key] = (not value) if isinstance(value, bool) else (
            value + 1 if isinstance(value, int) else str(json.loads("1") + 1) if value == "1" else "1")
        yield f"lie {key}", [json.dumps(dict(head, claims=claims))] + body


@pytest.mark.parametrize("shape", ["3x3", "4x4"])
def test_every_mutation_fails_the_check(tmp_path, shape):
    cert = make_cert(shape, 5 * torus_gamma(parse_torus(shape)).order)
    path = tmp_path / "e.jsonl"
    export(cert, path)
    lines = path.read_text().splitlines()
    assert check_file(str(path)).valid
    rng = random.Random(7)
    seen = set()
    for name, mutant in _mutants(lines, rng, cert.topology):
        bad = tmp_path / "m.jsonl"
        bad.write_text("\n".join(mutant) + "\n")
        try:
            report = check_file(str(bad))
            assert not report.valid, name
        except SynthError:
            pass  # malformed input is a failed check too
        seen.add(name)
    assert len(seen) == 15


def test_certificate_mutations_fail(tmp_path):
    cert = make_cert("4x4")
    path = tmp_path / "c.json"
    write_certificate(cert, path, compact=False)   # rows to mutate (tests/check/test_tree_form.py: trees)
    data = json.loads(path.read_text())
    trans = data["base_schedule"]["components"][0]["transmissions"]
    variants = {
        "drop": lambda d: trans.pop(3),
        "duplicate": lambda d: trans.append(list(trans[0])),
        "flip": lambda d: trans[-1].__setitem__(3, "reduce"),
        "move": lambda d: trans[0].__setitem__(0, 2),
        "lie omega": lambda d: d["claims"].__setitem__("omega", "2"),
        "lie rounds": lambda d: d["claims"].__setitem__("rounds", 7),
    }
    for name, mutate in variants.items():
        d = json.loads(path.read_text())
        trans = d["base_schedule"]["components"][0]["transmissions"]
        mutate(d)
        bad = tmp_path / f"{name}.json"
        bad.write_text(json.dumps(d))
        for mode in ("explicit", "symmetric"):
            assert not check_file(str(bad), mode).valid, (name, mode)


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", '{"format": "synth-certificate", "version": 1}',
                                  '{"format": "synth-certificate", "version": 9}', '{"format": "x"}'])
def test_corrupt_certificates_are_clean_errors(tmp_path, text):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(FileFormatError):
        check_file(str(path))


def test_truncated_files(tmp_path):
    cert = make_cert("3x3")
    write_certificate(cert, tmp_path / "c.json")
    raw = (tmp_path / "c.json").read_text()
    (tmp_path / "t.json").write_text(raw[: len(raw) // 2])
    with pytest.raises(FileFormatError):
        check_file(str(tmp_path / "t.json"))
    export(cert, tmp_path / "e.jsonl")
    raw = (tmp_path / "e.jsonl").read_text()
    (tmp_path / "t.jsonl").write_text(raw[: len(raw) // 2])
    with pytest.raises(SynthError):
        assert not check_file(str(tmp_path / "t.jsonl")).valid


def test_explicit_header_must_match_topology(tmp_path):
    cert = make_cert("3x3")
    export(cert, tmp_path / "e.jsonl")
    lines = (tmp_path / "e.jsonl").read_text().splitlines()
    head = json.loads(lines[0])
    head["links"][0], head["links"][1] = head["links"][1], head["links"][0]
    (tmp_path / "x.jsonl").write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    with pytest.raises(FileFormatError, match="not those of"):
        read_explicit(str(tmp_path / "x.jsonl"))


def test_atomic_write_leaves_no_partial_file(tmp_path):
    from synth.fileio import write_atomic

    def lines():
        yield "partial\n"
        raise RuntimeError("disk full")

    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        write_atomic(target, lines())
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with pytest.raises(FileFormatError, match="does not exist"):
        write_atomic(tmp_path / "nope" / "x", "y")


def test_an_explicit_check_too_large_names_the_mode_parameter(monkeypatch):
    """The library names the parameter (``mode``); the CLI says its flag."""
    import synth.check.claims as claims
    from synth.cli._common import with_flags
    from synth.errors import OptionError

    t = parse_torus("4x4")
    monkeypatch.setattr(claims, "EXPLICIT_HARD_LIMIT", 10)
    with pytest.raises(OptionError, match=r"^mode explicit: .* use `mode` symmetric$") as info:
        certify(sp_allreduce(t), torus_gamma(t), mode="explicit")
    line = with_flags(info.value, str(info.value))
    assert line.startswith("--mode explicit: the lifted schedule has ") and line.endswith("use --mode symmetric")
    assert certify(sp_allreduce(t), torus_gamma(t), mode="symmetric").claims["rounds"] == 8
