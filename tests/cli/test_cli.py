"""The command line: outputs, exit codes, one-line errors, and the README's commands."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from synth.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_solve_json_and_check(tmp_path, capsys):
    cert = tmp_path / "c.json"
    code, out, err = run(capsys, "solve", "--torus", "6x6", "--out", str(cert), "--json")
    assert code == 0
    res = json.loads(out)
    for key in ("rounds", "round_lower_bound", "psi", "theta", "omega", "weight", "valid"):
        assert key in res
    assert res["rounds"] == 12 and res["round_lower_bound"] == 11 and res["weight"] == "35"
    code, out, err = run(capsys, "check", str(cert), "--json")
    rep = json.loads(out)
    assert code == 0 and rep["valid"] and rep["rounds"] == 12 and rep["omega"] == 1.0
    code, out, _ = run(capsys, "check", str(cert))
    assert code == 0 and "VALID" in out


def test_export_then_check(tmp_path, capsys):
    cert, ex = tmp_path / "c.json", tmp_path / "e.jsonl"
    assert run(capsys, "solve", "--torus", "3x3x3", "--out", str(cert))[0] == 0
    assert run(capsys, "export", str(cert), "--format", "explicit", "--out", str(ex))[0] == 0
    code, out, _ = run(capsys, "check", str(ex), "--json")
    assert code == 0 and json.loads(out)["valid"]


def test_failing_check_exits_1(tmp_path, capsys):
    cert = tmp_path / "c.json"
    run(capsys, "solve", "--torus", "4x4", "--out", str(cert))
    data = json.loads(cert.read_text())
    data["claims"]["theta"] = "2"
    cert.write_text(json.dumps(data))
    code, out, _ = run(capsys, "check", str(cert))
    assert code == 1 and "FAIL theta" in out


@pytest.mark.parametrize("argv", [
    ["solve", "--torus", "1x8"], ["solve", "--torus", "16xx"], ["solve", "--torus", "0"],
    ["solve", "--torus", "-4x4"], ["solve", "--torus", "axb"], ["solve"], ["info", "--torus", "2x9"],
    ["check", "/nonexistent/file.json"], ["export", "/nonexistent.json", "--out", "x"], ["frobnicate"],
    ["solve", "--torus", "4x4", "--depth", "0"], ["check", "x", "--mode", "bogus"],
])
def test_bad_input_is_one_line_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("synth: error:"), err
    assert "Traceback" not in err


def test_corrupt_file_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "synth-certificate", "version": 1, "topology": ')
    code, _, err = run(capsys, "check", str(bad))
    assert code == 2 and "not valid JSON" in err


def test_info(capsys):
    code, out, _ = run(capsys, "info", "--torus", "8x8", "--json")
    info = json.loads(out)
    assert code == 0 and info["diameter"] == 8 and info["group_order"] == 256 and info["round_lower_bound"] == 15
    assert info["distance_distribution"] == [1, 4, 8, 12, 14, 12, 8, 4, 1]


def test_python_dash_m_and_console_script():
    out = subprocess.run([sys.executable, "-m", "synth", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("synth ")


def test_readme_opens_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", text, re.S)
    first, second = blocks[0].strip(), blocks[1].strip()
    assert "pip install" in first and "synth solve" in first and "--torus 16x16" in first
    assert "pip install" in second and "pytest" in second
    ci = (ROOT / ".ci" / "run").read_text()
    assert second in ci, "the CI script must run the README's test command verbatim"


def test_every_command_is_documented_in_readme():
    text = (ROOT / "README.md").read_text()
    from synth.cli import _parser

    sub = next(a for a in _parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name in sub.choices:
        assert f"synth {name}" in text, f"'synth {name}' is not in README.md"


def test_baseline_and_compare(tmp_path, capsys):
    out = tmp_path / "b.jsonl"
    assert main(["baseline", "bucket", "--torus", "4x4", "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rounds"] == 12
    assert main(["check", str(out)]) == 0
    assert main(["baseline", "nope", "--torus", "4x4"]) == 2
    capsys.readouterr()
    assert main(["compare", "--torus", "4x4", "--sizes", "64KiB,64MiB", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    best = {r["size"]: r["algorithm"] for r in rows if r["best"]}
    assert best[65536] == "swing-l"  # log p rounds win when latency dominates
    assert best[64 << 20] == "exchange"  # fewest rounds among the fully bandwidth-optimal ones
    assert all(r["fraction_of_bound"] <= 1 for r in rows)
    assert main(["compare", "--torus", "4x4", "--sizes", "1MiB", "--bandwidth", "fast"]) == 2


@pytest.mark.parametrize("shape,group,exchange,rounds,chunks", [
    ("6x4", None, False, 10, 96), ("5x3", None, False, 6, 30), ("8x8", "translations", True, 15, 128),
    ("6x6", "translations-negation", False, 12, 144)])
def test_solve_with_balanced_families(capsys, shape, group, exchange, rounds, chunks):
    argv = ["solve", "--torus", shape, "--json"] + (["--group", group] if group else []) + (
        ["--exchange"] if exchange else [])
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert (res["rounds"], res["chunks"], res["omega"], res["psi"], res["theta"]) == (rounds, chunks, "1", "1", "1")


def test_solve_can_start_from_a_certificate(tmp_path, capsys):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    code, out, _ = run(capsys, "solve", "--torus", "8x8", "--depth", "3", "--time-limit", "3", "--solver",
                       "heuristic", "--out", str(first), "--json")
    assert code == 0
    w = int(json.loads(out)["weight"])
    code, out, err = run(capsys, "solve", "--torus", "8x8", "--depth", "3", "--time-limit", "2", "--solver",
                         "heuristic", "--start", str(first), "--out", str(second), "--json")
    assert code == 0 and int(json.loads(out)["weight"]) <= w
    assert f"started from a tree of weight {w}" in err
    assert json.loads(second.read_text())["solver"]["start_weight"] == w
    assert run(capsys, "check", str(second))[0] == 0
    for argv, msg in [
        (["--torus", "8x8", "--depth", "2"], "more than the depth bound 2"),       # the start is deeper
        (["--torus", "6x6", "--depth", "3"], "is for torus 8x8, not torus 6x6"),
        (["--torus", "8x8"], "--start continues a k-hop tree solve: it needs --depth below the diameter"),
        (["--torus", "8x8", "--depth", "3", "--exchange"], "no --exchange"),
    ]:
        code, out, err = run(capsys, "solve", *argv, "--start", str(first), "--out", "-")
        assert code == 2 and msg in err and len(err.strip().splitlines()) == 1, (argv, err)
    (tmp_path / "junk.json").write_text("{}")
    code, _, err = run(capsys, "solve", "--torus", "8x8", "--depth", "3", "--start", str(tmp_path / "junk.json"))
    assert code == 2 and "cannot read the certificate" in err


def test_solver_choices_are_the_solvers_of_the_khop_module():
    from synth.cli import _parser
    from synth.models._names import SOLVERS as NAMES
    from synth.models.khop import SOLVERS

    assert SOLVERS == NAMES
    commands = _parser()._subparsers._group_actions[0].choices
    for command in ("solve", "sweep"):
        (solver,) = [a for a in commands[command]._actions if a.dest == "solver"]
        assert tuple(solver.choices) == NAMES


def test_scip_solve_keeps_stdout_to_the_result(tmp_path):
    """SCIP's C code may print to file descriptor 1 (it does on Ctrl-C): ``--json`` output stays pure JSON."""
    env = {**os.environ, "SYNTH_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "synth", "solve", "--depth", "2", "--torus", "6x6", "--solver", "scip",
                          "--json", "--out", str(tmp_path / "c.json")], capture_output=True, text=True, env=env,
                         check=True).stdout
    data = json.loads(out)
    assert data["weight"] == "50" and data["valid"] is True  # CP-SAT proves the same optimum
    # the MIP proves 50 optimal; what the stored dual proves (and synth check re-derives) may be less
    assert data["status"] == "optimal" if data["lower_bound"] == 50 else data["status"] == "optimal (solver claim)"


def test_solve_writes_only_with_out_and_dash_is_stdout(tmp_path, capsys):
    code, out, err = run(capsys, "solve", "--torus", "4x4")
    assert code == 0 and "not written (--out FILE writes it)" in out and list(tmp_path.iterdir()) == []
    code, out, err = run(capsys, "solve", "--torus", "4x4", "--out", "-", "--json")
    cert = json.loads(out)                      # stdout is the certificate itself ...
    assert code == 0 and cert["format"] == "synth-certificate"
    assert json.loads(err)["certificate"] == "-"  # ... and the summary went to stderr
    (tmp_path / "c.json").write_text(out)
    assert run(capsys, "check", str(tmp_path / "c.json"))[0] == 0


def test_export_and_baseline_out_dash_and_json(tmp_path, capsys):
    cert = tmp_path / "c.json"
    assert run(capsys, "solve", "--torus", "3x3", "--out", str(cert))[0] == 0
    code, out, err = run(capsys, "export", str(cert), "--out", "-")
    assert code == 0 and json.loads(out.splitlines()[0])["format"] == "synth-explicit" and err.startswith("wrote -")
    code, out, _ = run(capsys, "export", str(cert), "--out", str(tmp_path / "e.jsonl"), "--json")
    assert code == 0 and json.loads(out)["transmissions"] == 576 and (tmp_path / "e.jsonl").exists()
    code, out, err = run(capsys, "baseline", "bucket", "--torus", "4x4", "--out", "-", "--json")
    assert code == 0 and json.loads(out.splitlines()[0])["format"] == "synth-explicit"
    assert json.loads(err)["rounds"] == 12
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json", "e.jsonl"]  # no file named '-'


def test_time_limit_note_and_bound_label(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["solve", "--torus", "4x4", "--depth", "2", "--time-limit", "2", "--solver", "heuristic"]
    code, out, err = run(capsys, *argv)     # stderr is not a terminal here: the note shows all the same
    assert code == 0 and "may take up to --time-limit 2 s (default 60)" in err
    assert re.search(r"^round_lower_bound \(one-hop\) +7$", out, re.M)
    code, out, err = run(capsys, *argv, "--json")  # cached now: no note
    res = json.loads(out)
    assert "may take up to" not in err and "from the cache" in err
    assert res["round_lower_bound"] == 7 and res["round_lower_bound_scope"].startswith("one-hop")
    assert "may take up to" not in run(capsys, "solve", "--torus", "4x4")[2]  # SP-allreduce solves nothing
    code, out, _ = run(capsys, "check", str(ROOT / "instances" / "torus" / "sp-8x8.json"))
    assert code == 0 and "round lower bound (one-hop) 15" in out


def test_help_documents_defaults():
    from synth.cli import _parser

    sub = next(a for a in _parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    text = " ".join(sub.choices["solve"].format_help().split())
    assert "(default 60)" in text and "without --out no file is written" in text


def test_one_size_parser_for_every_command(capsys):
    import synth.runtime.mpi
    from synth.units import parse_size

    assert synth.runtime.mpi.parse_size is parse_size
    for argv in (["solve", "--torus", "4x4", "--size", "0"], ["run", "x.json", "--size", "0"],
                 ["compare", "--torus", "4x4", "--sizes", "0"], ["sweep", "--torus", "4x4", "--sizes", "0"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "must be a positive whole number of bytes" in err, argv


def test_size_reports_each_depth_and_reuses_solved_ones(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SYNTH_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["solve", "--torus", "4x4", "--time-limit", "2", "--solver", "heuristic", "--json"]
    code, out, err = run(capsys, *argv, "--size", "64KiB")
    assert code == 0 and json.loads(out)["chosen"] == "k=1"
    assert "solving 3 of 3 depth bound(s)" in err and "up to --time-limit" in err
    assert [f"k={k} ({k} of 3): solving" in err for k in (1, 2, 3)] == [True] * 3
    code, out, err = run(capsys, *argv, "--size", "256MiB")  # another size: every depth from the cache
    assert code == 0 and json.loads(out)["chosen"] == "exchange"
    # k = 2, 3 from the cache; k = 1 (the star, solved instantly) is never cached
    assert "solving 1 of 3 depth bound(s) (2 cached)" in err and err.count("(cached)") == 2


def test_sweep_depths_are_clipped_before_they_are_expanded(capsys):
    from synth.solving.sweep import parse_depths

    assert parse_depths("1..100000000", 4) == [1, 2, 3, 4]
    code, out, _ = run(capsys, "sweep", "--torus", "4x4", "--depths", "4..100000000", "--sizes", "64KiB", "--json")
    assert code == 0 and [r["k"] for r in json.loads(out)["rows"]] == [4]


def test_docs_document_topology_format_and_exit_codes():
    formats = (ROOT / "docs" / "formats.md").read_text()
    assert "## The `--topology` file" in formats and '"format": "synth-topology"' in formats
    usage = (ROOT / "docs" / "usage.md").read_text()
    assert "exit code 2" in usage and "SIGTERM" in usage and "without `--out`" in usage


def test_option_errors_name_the_flag_of_the_parameter(monkeypatch, capsys):
    """The library names a parameter (``depth``, ``time_limit``); the CLI's one line names its flag."""
    import importlib

    from synth import errors

    for message, line in [("depth must be at least 1, got 0", "--depth must be at least 1, got 0"),
                          ("time_limit must be finite", "--time-limit must be finite"),
                          ("keep_dir x: not a directory", "--workdir x: not a directory"),
                          ("depth-bounded forests need a torus", "depth-bounded forests need a torus")]:
        def boom(*a, message=message, **k):
            raise errors.OptionError(message)

        monkeypatch.setattr(importlib.import_module("synth.cli.solve"), "plan", boom)
        code, out, err = run(capsys, "solve", "--torus", "4x4")
        assert code == 2 and err == f"synth: error: {line}\n", err


def test_only_option_errors_are_rewritten():
    from synth.cli._common import with_flags
    from synth.errors import SynthError

    assert with_flags(SynthError("depth must be at least 1"), "depth must be at least 1") == "depth must be at least 1"


def test_sizes_go_up_to_the_documented_1_pib(capsys):
    """The docs say sizes go up to 1 PiB; the parser refused '1PiB' (no P unit)."""
    from synth.units import MAX_SIZE, format_size, parse_size

    assert parse_size("1PiB") == parse_size("1p") == MAX_SIZE and format_size(MAX_SIZE) == "1PiB"
    assert parse_size("1PB") == 10**15
    code, out, err = run(capsys, "compare", "--torus", "4x4", "--sizes", "1PiB")
    assert code == 0 and "1PiB" in out, err
    code, _, err = run(capsys, "compare", "--torus", "4x4", "--sizes", "2PiB")
    assert code == 2 and "over the limit of 1PiB" in err


def test_topology_names_with_control_characters_print_escaped(tmp_path, capsys):
    """A name from a file cannot forge a line or drive the terminal."""
    path = tmp_path / "evil.json"
    path.write_text(json.dumps({"format": "synth-topology", "version": 1, "name": "ring\n\x1b[31mred\r",
                                "vertices": 4, "links": [[0, 1], [1, 2], [2, 3], [3, 0]]}))
    for argv in (["info", "--topology", str(path)], ["solve", "--topology", str(path)],
                 ["bound", "--topology", str(path)]):
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        assert "\x1b" not in out + err and "\r" not in out + err and "ring\\n\\x1b[31mred\\r" in out, argv
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "synth-topology", "version": 1, "name": "x\x1b[2J", "vertices": 4,
                               "links": [[0, 1]]}))
    code, _, err = run(capsys, "info", "--topology", str(bad))
    assert code == 2 and "\x1b" not in err and len(err.strip().splitlines()) == 1
