"""``synth export --format`` takes its choices from the one registry of formats, and each row's function
does the work (the CLI only prints what it returns)."""

import json

import pytest

import synth.runtime.formats as formats
from synth.check.certificate import write_certificate
from synth.check.claims import certify
from synth.cli import main
from synth.runtime.formats import EXPORT_FORMATS, Exported, ExportFormat
from synth.schedule.sp import sp_allreduce
from synth.symmetry.torus import torus_gamma
from synth.topology.torus import parse_torus


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    t = parse_torus("3x3")
    path = tmp_path_factory.mktemp("formats") / "sp33.json"
    write_certificate(certify(sp_allreduce(t), torus_gamma(t)), path)
    return str(path)


def test_an_unknown_format_is_refused_naming_the_registry(cert, tmp_path, capsys):
    assert main(["export", cert, "--format", "nccl", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("synth: error: ") and "\n" not in err
    assert all(f"'{name}'" in err for name in EXPORT_FORMATS)


def test_a_new_row_is_a_new_format(cert, tmp_path, monkeypatch, capsys):
    seen = {}

    def count(path, out, options, progress):
        seen.update(options)
        return Exported({"format": "count", "path": out}, (f"counted {path}",), ("a `max_bytes` note",))

    row = ExportFormat("count", "counts nothing", ("elements", "max_bytes"), count)
    monkeypatch.setitem(formats.EXPORT_FORMATS, "count", row)
    out = tmp_path / "c.txt"
    assert main(["export", cert, "--format", "count", "--out", str(out), "--elements", "9"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"counted {cert}\n" and captured.err == "note: a --max-bytes note\n"
    assert seen == {"elements": 9, "max_bytes": None}
    assert main(["export", cert, "--format", "count", "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"format": "count", "path": str(out)}


def test_explicit_export_lives_in_the_library(cert, tmp_path):
    out = tmp_path / "sp.jsonl"
    done = EXPORT_FORMATS["explicit"].export(cert, str(out), {"elements": None, "max_transmissions": None})
    assert done.ok and done.summary["transmissions"] == 576 and out.read_text().count("\n") > 1
    assert done.lines == (f"wrote {out}: 576 transmissions, 36 chunks, 4 rounds",)
