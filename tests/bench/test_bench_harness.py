"""The bench harness (bench/_harness.py): instance sets, --only parsing and the ratio table."""

import doctest
import importlib.util
import io
import json
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "_harness.py"
_spec = importlib.util.spec_from_file_location("_harness", _PATH)
harness = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("_harness", harness)  # as the bench scripts import it (bench/ is not a package)
_spec.loader.exec_module(harness)

SETS = {"quick": [("8x8", 2), ("8x8", 3)], "big": [("32x32", 6)]}


def test_docstring_examples_run():
    assert doctest.testmod(harness).failed == 0


def test_set_and_only():
    ap = harness.parser("Doc.", SETS, time_limit=5.0, seed=0)
    assert harness.parse_args(ap, []).instances == SETS["quick"]
    assert harness.parse_args(ap, ["--set", "big"]).instances == [("32x32", 6)]
    a = harness.parse_args(ap, ["--set", "big", "--only", "4x4:1, 6x6:2", "--seed", "3"])
    assert (a.instances, a.seed, a.time_limit, a.json) == ([("4x4", 1), ("6x6", 2)], 3, 5.0, None)
    assert harness.parse_only("12x12:3:192,10x10:4", (str, int, int), 2) == [("12x12", 3, 192), ("10x10", 4, None)]
    for bad in ("4x4", "4x4:1:2", "4x4:one"):
        with pytest.raises(ValueError, match="4x4"):
            harness.parse_only(bad)
        with pytest.raises(SystemExit):
            harness.parse_args(ap, ["--only", bad])


def test_ratio_against_baseline_rows_and_within_rows(tmp_path):
    out = io.StringIO()
    cols = [harness.Col("torus", "shape", ">5"), harness.Col("eng", fmt=">4"), harness.Col("s", fmt=">5.1f"),
            harness.Ratio("x a", "s", fmt=">5.2f"), harness.Ratio("ex", "w", minus="p1", fmt=">5.2f")]
    table = harness.Table(cols, baseline=lambda r: r["eng"] == "a", group=("shape",), out=out,
                          json=str(tmp_path / "rows.jsonl"))
    rows = [{"shape": "4x4", "eng": "a", "s": 2.0, "w": 20, "p1": 15},
            {"shape": "4x4", "eng": "b", "s": 5.0, "w": 19, "p1": 15},
            {"shape": "6x6", "eng": "b", "s": 1.0, "w": 40, "p1": 35}]  # no baseline row in its group
    got = [table.add(r) for r in rows]
    assert [r["x a"] for r in got] == [1.0, 2.5, None]
    assert [r["ex"] for r in got[:2]] == [1.0, 0.8]  # (19 - 15) / (20 - 15): the baseline row's w
    lines = out.getvalue().splitlines()
    assert lines[0] == "torus  eng     s   x a    ex"
    assert lines[2] == "  4x4    b   5.0  2.50  0.80" and lines[3].endswith("-     -")
    kept = [json.loads(x) for x in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [r["x a"] for r in kept] == [1.0, 2.5, None]


def test_json_stdout_replaces_the_table_and_ratio_keys_are_distinct():
    out = io.StringIO()
    table = harness.Table([harness.Col("v"), harness.Ratio("r", "v", "u")], json="-", out=out)
    table.add({"v": 3, "u": 4})
    table.note("not in JSON output")
    assert [json.loads(x) for x in out.getvalue().splitlines()] == [{"v": 3, "u": 4, "r": 0.75}]
    with pytest.raises(ValueError, match="key"):
        harness.Table([harness.Ratio("r", "a"), harness.Ratio("r", "b")], out=out)
