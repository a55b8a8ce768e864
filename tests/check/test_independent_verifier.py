"""tools/verify_explicit.py, which shares no code with synth, accepts our exports and rejects mutants."""

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from synth.baselines import build_baseline
from synth.cli import main
from synth.topology.torus import parse_torus

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
    build_baseline(name, parse_torus("4x4")).write(path)
    code, rep = verify(path)
    assert code == 0 and rep["valid"], rep


def _mutate_row(kind, body, i, row) -> bool:
    """Drop, duplicate or flip the op of transmission line ``i`` of ``body``; False for another kind."""
    if kind == "drop":
        del body[i]
    elif kind == "duplicate":
        body.insert(i, body[i])
    elif kind == "flip":
        body[i] = json.dumps(dict(row, op="copy" if row["op"] == "reduce" else "reduce"))
    else:
        return False
    return True


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
        if _mutate_row(kind, body, i, row):
            pass
        elif kind == "move":
            body[i] = json.dumps(dict(row, round=row["round"] % 4 + 1))
        else:
            body[i] = json.dumps(dict(row, route=[row["src"], (row["src"] + 4) % 9, row["dst"]]))
        bad = tmp_path / f"{kind}.jsonl"
        bad.write_text("\n".join([lines[0]] + body) + "\n")
        code, rep = verify(bad)
        assert code == 1, kind


COLLECTIVE_CASES = [(["--torus", "4x4"], 4), (["--torus", "5x5"], 4), (["--torus", "3x4"], 3),
                    (["--torus", "3x3x3"], 3), (["--hyperx", "4x4"], 2), (["--spine-leaf", "2,3,2"], None)]


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
@pytest.mark.parametrize("argv,rounds", COLLECTIVE_CASES, ids=[" ".join(a) for a, _ in COLLECTIVE_CASES])
def test_collective_exports_verify(tmp_path, capsys, argv, rounds, collective):
    cert, ex = tmp_path / "c.json", tmp_path / "e.jsonl"
    assert main(["solve", *argv, "--collective", collective, "--out", str(cert)]) == 0
    assert main(["export", str(cert), "--out", str(ex)]) == 0  # with the claims
    capsys.readouterr()
    code, rep = verify(ex)
    assert code == 0 and rep["valid"], rep
    if rounds is not None:  # tori and HyperX: H rounds, the bound, fully bandwidth-optimal
        assert (rep["rounds"], rep["round_lower_bound"], rep["round_optimal"]) == (str(rounds), str(rounds), "True")
        assert (rep["psi"], rep["theta"], rep["omega"]) == ("1", "1", "1")
    assert main(["check", str(ex), "--json"]) == 0
    mine = json.loads(capsys.readouterr().out)
    for key in ("psi", "theta", "omega", "weight"):
        assert rep[key] == mine["exact"][key]


@pytest.mark.parametrize("collective", ["reduce-scatter", "allgather"])
def test_collective_mutants_are_rejected(tmp_path, capsys, collective):
    cert, ex = tmp_path / "c.json", tmp_path / "e.jsonl"
    main(["solve", "--torus", "3x3", "--collective", collective, "--out", str(cert)])
    main(["export", str(cert), "--out", str(ex)])
    capsys.readouterr()
    lines = ex.read_text().splitlines()
    head = json.loads(lines[0])
    rng = random.Random(5)
    kinds = ("drop", "duplicate", "flip", "owner", "blocks", "claim", "late")
    for kind in kinds:
        body, top = list(lines[1:]), dict(head)
        i = rng.randrange(len(body))
        row = json.loads(body[i])
        if _mutate_row(kind, body, i, row):
            pass
        elif kind == "owner":  # the owner of one chunk moves to another node
            owners = list(top["chunk_owner"])
            owners[0], owners[-1] = owners[-1], owners[0]
            top["chunk_owner"] = owners
        elif kind == "blocks":  # one element moves from one chunk to another of a different owner
            sizes = list(top["chunk_elements"])
            j = next(k for k, v in enumerate(top["chunk_owner"]) if v != top["chunk_owner"][0])
            sizes[0], sizes[j] = sizes[0] + 1, sizes[j] - 1
            top["chunk_elements"] = sizes
        elif kind == "claim":  # claims a round bound the file does not meet
            top["claims"] = dict(top["claims"], round_lower_bound=top["claims"]["round_lower_bound"] - 1)
        else:  # the last round's transmissions one round later: correct, but no longer round-optimal as claimed
            body = [json.dumps(dict(json.loads(b), round=json.loads(b)["round"] + 1))
                    if json.loads(b)["round"] == head["rounds"] else b for b in body]
            top["rounds"] = head["rounds"] + 1
        bad = tmp_path / f"{kind}.jsonl"
        bad.write_text("\n".join([json.dumps(top)] + body) + "\n")
        code, rep = verify(bad)
        assert code in (1, 2) and not (rep or {}).get("valid"), kind
        assert main(["check", str(bad)]) != 0, kind
        capsys.readouterr()


@pytest.mark.parametrize("name", ["nccl-ring", "hierarchical"])
def test_fabric_baselines_verify_with_the_bandwidth_weighted_omega(tmp_path, capsys, name):
    """An MI250 node, whose xGMI links carry 1, 2 or 4 lanes: the verifier's Omega (the bandwidth term over the
    load spread in proportion to the bandwidths) is synth check's, and differs from counting links alike."""
    out = tmp_path / f"{name}.jsonl"
    assert main(["baseline", name, "--machine", "mi250:1", "--out", str(out)]) == 0
    capsys.readouterr()
    code, rep = verify(out)
    assert code == 0 and rep["valid"], rep
    assert main(["check", str(out), "--json"]) == 0
    mine = json.loads(capsys.readouterr().out)
    assert rep["omega"] == mine["exact"]["omega"] and rep["bandwidth_term"] == mine["metrics"]["bandwidth_term"]
    header = json.loads(out.read_text().splitlines()[0])
    assert "bandwidth" in header and len(set(header["bandwidth"])) > 1
