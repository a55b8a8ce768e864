"""tools/verify_explicit.py, which shares no code with synth, accepts our exports and rejects mutants."""

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from synth.baselines import build_baseline
from synth.cli import main

ROOT = Path(__file__).resolve().parents[2]
VERIFIER = ROOT / "tools" / "verify_explicit.py"


def verify(path):
    out = subprocess.run([sys.executable, str(VERIFIER), str(path), "--json"], capture_output=True, text=True)
    return out.returncode, (json.loads(out.stdout) if out.stdout.strip() else None)


@pytest.mark.parametrize("argv", [["--torus", "4x4"], ["--torus", "4x4", "--exchange"], ["--torus", "3x5"],
                                  ["--hyperx", "4x4"], ["--spine-leaf", "2,3,2"], ["--torus", "3x3x3"]])
def test_exports_verify(tmp_path, capsys, argv):
    cert, ex = tmp_path / "c.json", tmp_path / "e.jsonl"
    assert main(["solve", *argv, "--out", str(cert)]) == 0
    assert main(["export", str(cert), "--out", str(ex), "--elements", "1000"]) == 0
    capsys.readouterr()
    code, rep = verify(ex)
    assert code == 0 and rep["valid"], rep
    assert main(["check", str(ex), "--json"]) == 0
    mine = json.loads(capsys.readouterr().out)
    for key in ("psi", "theta", "omega", "weight"):
        assert rep[key] == mine["exact"][key]


@pytest.mark.parametrize("name", ["ring", "bucket", "swing-b", "swing-l", "trivance-b", "halving-doubling"])
def test_baseline_exports_verify(tmp_path, name):
    path = tmp_path / "b.jsonl"
    build_baseline(name, __import__("synth.torus", fromlist=["x"]).parse_torus("4x4")).write(path)
    code, rep = verify(path)
    assert code == 0 and rep["valid"], rep


def test_mutants_are_rejected(tmp_path, capsys):
    cert, ex = tmp_path / "c.json", tmp_path / "e.jsonl"
    main(["solve", "--torus", "3x3", "--out", str(cert)])
    main(["export", str(cert), "--out", str(ex)])  # with the claims: a legal move still changes omega
    capsys.readouterr()
    lines = ex.read_text().splitlines()
    rng = random.Random(3)
    for kind in ("drop", "duplicate", "flip", "move", "reroute"):
        body = list(lines[1:])
        i = rng.randrange(len(body))
        row = json.loads(body[i])
        if kind == "drop":
            del body[i]
        elif kind == "duplicate":
            body.insert(i, body[i])
        elif kind == "flip":
            body[i] = json.dumps(dict(row, op="copy" if row["op"] == "reduce" else "reduce"))
        elif kind == "move":
            body[i] = json.dumps(dict(row, round=row["round"] % 4 + 1))
        else:
            body[i] = json.dumps(dict(row, route=[row["src"], (row["src"] + 4) % 9, row["dst"]]))
        bad = tmp_path / f"{kind}.jsonl"
        bad.write_text("\n".join([lines[0]] + body) + "\n")
        code, rep = verify(bad)
        assert code == 1, kind
