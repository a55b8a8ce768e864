"""A campaign file is untrusted: it makes synth run synth and nothing else, and writes no file on the workers.

Calls are limited to synth's own task functions (``CALLS``) with known keyword arguments; command lines
are judged by what synth's parser makes of them (no abbreviations), both when the file is read and on
the worker.  Every refusal is one line and exit 2, before any task runs, and leaves no file behind.
"""

import argparse
import inspect
import json

import pytest

from synth.campaign import parse_campaign, task_from_json
from synth.campaign.execute import execute
from synth.campaign.spec import CALLS
from synth.cli import _parser, main, task_main, task_vetter
from synth.errors import CampaignError, SynthError

HOSTILE_CALLS = [
    {"call": "os:system", "kwargs": {"command": "touch x"}},
    {"call": "subprocess:run", "kwargs": {"args": ["touch", "x"]}},
    {"call": "builtins:exec", "kwargs": {"source": "open('x', 'w')"}},
    {"call": "synth.fileio:write_atomic", "kwargs": {"path": "x", "lines": "owned"}},
    {"call": "synth.campaign.calls:khop_solver", "kwargs": {"cluster": "serial"}},
    {"call": ["os", "system"], "kwargs": {}},
]

HOSTILE_LINES = [
    ["solve", "--torus", "4x4", "--out", "x.json"],
    ["solve", "--torus", "4x4", "--out=x.json"],
    ["solve", "--torus", "4x4", "--ou", "x.json"],
    ["solve", "--torus", "4x4", "--ou=x.json"],
    ["solve", "--torus", "4x4", "--o", "x.json"],
    ["sweep", "--torus", "4x4", "--depths", "1", "--ou", "x.json"],
    ["baseline", "ring", "--torus", "4x4", "--out", "x.json"],
    ["run", "c.json", "--workdir", "w"],
    ["run", "c.json", "--work", "w"],
    ["run", "c.json", "--mpiexec", "touch x"],
    ["run", "c.json", "--mpi", "touch x"],
    ["sweep", "--torus", "8x8", "--jobs", "256"],
    ["solve", "--torus", "4x4", "--size", "1MiB", "--cluster", "local:2"],
    ["compare", "--torus", "4x4", "--engine", "simgrid", "--cluster", "tcp://127.0.0.1:1"],
    ["info", "--torus", "4x4", "--help"],
    ["info", "--torus", "4x4", "--", "--out", "x.json"],
]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """An empty current folder: a task that wrote a relative file would leave it here."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("entry", HOSTILE_CALLS, ids=lambda e: str(e["call"]))
def test_only_synths_task_functions_may_be_called(entry, workdir):
    with pytest.raises(CampaignError, match="'call' must be one of synth's task functions"):
        task_from_json(entry)
    assert list(workdir.iterdir()) == []


@pytest.mark.parametrize("entry", HOSTILE_CALLS[:4], ids=lambda e: str(e["call"]))
def test_a_campaign_run_with_a_foreign_call_is_one_line_and_exit_2(entry, workdir, capsys):
    (workdir / "c.json").write_text(json.dumps({"tasks": [["info", "--torus", "4x4"], entry]}))
    assert main(["campaign", "run", "c.json", "--cluster", "serial"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synth: error: c.json: task ") and err.count("\n") == 1
    assert sorted(p.name for p in workdir.iterdir()) == ["c.json"]  # no x, and no store either


def test_the_allowed_calls_name_exactly_their_functions_arguments():
    import importlib

    for name, (required, optional) in CALLS.items():
        module, _, function = name.partition(":")
        params = inspect.signature(getattr(importlib.import_module(module), function)).parameters.values()
        assert tuple(p.name for p in params if p.default is inspect.Parameter.empty) == required, name
        assert tuple(p.name for p in params if p.default is not inspect.Parameter.empty) == optional, name


@pytest.mark.parametrize("kwargs, words", [
    ({"text": "1KiB", "path": "/tmp/x"}, "unknown keyword argument"),
    ({}, "missing keyword argument"),
])
def test_a_call_takes_only_its_own_keyword_arguments(kwargs, words):
    with pytest.raises(CampaignError, match=words):
        task_from_json({"call": "synth.units:parse_size", "kwargs": kwargs})


@pytest.mark.parametrize("kwargs, words", [
    ({"shape": "4x4", "k": 2}, "shape: expected a list"),
    ({"shape": [4, 4], "k": 10**30}, "k must be at most"),
    ({"shape": [4, 4], "k": 2, "time_limit": 1e300}, "time_limit must be"),
    ({"shape": [4, 4], "k": 2, "seed": -1}, "seed must be at least 0"),
    ({"shape": [4, 4], "k": 2, "cache": "no"}, "cache: expected a bool"),
])
def test_the_khop_call_checks_its_arguments_as_the_cli_checks_flags(kwargs, words):
    out = execute(task_from_json({"call": "synth.campaign.calls:khop_entry", "kwargs": kwargs}))
    assert out["status"] == "failed" and words in out["error"], out


def _all_parsers(parser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _all_parsers(sub)


def test_no_parser_takes_abbreviations():
    parsers = list(_all_parsers(_parser()))
    assert len(parsers) > 15 and all(p.allow_abbrev is False for p in parsers)


@pytest.mark.parametrize("flag", ["--ou", "--o", "--ou=x.json"])
def test_an_abbreviated_flag_is_an_error_not_the_flag(flag, workdir, capsys):
    argv = ["solve", "--torus", "4x4", *([flag] if "=" in flag else [flag, "x.json"])]
    assert main(argv) == 2
    assert "unrecognized arguments" in capsys.readouterr().err
    assert list(workdir.iterdir()) == []


@pytest.mark.parametrize("argv", HOSTILE_LINES, ids=" ".join)
def test_a_command_task_that_would_write_run_or_reach_out_is_refused_when_read(argv, workdir, capsys):
    with pytest.raises(CampaignError):
        parse_campaign({"tasks": [argv]}, vet=task_vetter())
    (workdir / "c.json").write_text(json.dumps({"tasks": [["info", "--torus", "4x4"], argv]}))
    assert main(["campaign", "run", "c.json", "--cluster", "serial"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synth: error: c.json: task ") and err.count("\n") == 1, err
    assert sorted(p.name for p in workdir.iterdir()) == ["c.json"]


@pytest.mark.parametrize("argv", [a for a in HOSTILE_LINES if "--help" not in a], ids=" ".join)
def test_the_worker_refuses_them_too(argv, workdir, capsys):
    """A task that reaches a worker some other way (a library caller) is judged again before it runs."""
    out = execute(task_from_json(argv), entry=task_main)
    assert out["status"] == "failed" and out["error"].startswith("exit 2: synth: error:"), out
    assert list(workdir.iterdir()) == []


def test_what_a_task_may_do_still_runs():
    tasks = parse_campaign({"tasks": [["info", "--torus", "4x4"], ["solve", "--torus", "4x4", "--depth", "0"]]},
                           vet=task_vetter())
    outs = [execute(t, entry=task_main) for t in tasks]
    assert outs[0]["status"] == "done" and outs[0]["result"]["vertices"] == 16
    assert outs[1]["error"].startswith("exit 2: synth: error: synth solve: argument --depth: 0 is out of range")


def test_vet_reports_a_bad_value_to_the_row_not_the_file():
    vet = task_vetter()
    vet(["solve", "--torus", "4x4", "--depth", "0"])  # fails as its row, with argparse's line
    with pytest.raises(SynthError, match="has no argument"):
        vet(["solve", "--torus", "4x4", "--deph", "2"])


def test_a_line_of_a_shape_that_passed_is_not_parsed_again_and_others_still_are():
    vet = task_vetter()
    vet(["solve", "--torus", "4x4", "--depth", "2"])
    vet.parser = None  # a second parse would fail here
    vet(["solve", "--torus", "8x8", "--depth", "3"])
    with pytest.raises(AttributeError):
        vet(["solve", "--torus", "8x8", "--out", "x.json"])
