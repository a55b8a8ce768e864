"""Task specs, content keys and campaign files."""

import json

import pytest

import synth.campaign.spec as spec
from synth.campaign import parse_campaign, read_campaign, task_from_json
from synth.campaign.expand import expand_grid
from synth.errors import CampaignError


def test_the_key_is_the_content_and_json_is_added_once():
    a = task_from_json(["solve", "--torus", "8x8", "--depth", "3"])
    assert a.argv[-1] == "--json" and a.argv.count("--json") == 1
    assert a.key == task_from_json(["solve", "--torus", "8x8", "--depth", "3", "--json"]).key
    assert a.key != task_from_json(["solve", "--torus", "8x8", "--depth", "4"]).key
    assert a.key != task_from_json(["solve", "--depth", "3", "--torus", "8x8"]).key  # order is part of a command
    call = {"call": "synth.units:parse_size", "kwargs": {"text": "1KiB"}}
    assert task_from_json(call).key == task_from_json(json.loads(json.dumps(call))).key


def test_the_key_follows_the_version_and_the_solver_revision_where_it_matters(monkeypatch):
    solve, info = task_from_json(["solve", "--torus", "4x4"]), task_from_json(["info", "--torus", "4x4"])
    call = task_from_json({"call": "synth.campaign.calls:khop_entry", "kwargs": {"shape": [4, 4], "k": 2}})
    before = solve.key, info.key, call.key
    monkeypatch.setattr(spec, "_solver_revision", lambda: 999)
    assert solve.key != before[0] and info.key == before[1] and call.key != before[2]
    monkeypatch.setattr(spec, "__version__", "0.0.0-other")
    assert info.key != before[1]


@pytest.mark.parametrize("entry, words", [
    ([], "non-empty list"),
    (["rm", "-rf"], "synth command that prints JSON"),
    (["solve", 3], "strings"),
    ({"call": "os.system"}, "one of synth's task functions"),
    ({"call": "synth.units:parse_size", "kwargs": [1]}, "'kwargs' must be an object"),
    ({"call": "synth.units:parse_size", "args": [1]}, "unknown field"),
    ("info --torus 4x4", "a task is a list"),
])
def test_bad_tasks_are_refused_with_one_line(entry, words):
    with pytest.raises(CampaignError, match=words) as info:
        task_from_json(entry)
    assert "\n" not in str(info.value)


def test_a_grid_expands_in_written_order_the_last_flag_fastest():
    grid = {"command": "solve", "vary": {"--torus": ["4x4", "6x6"], "--depth": [1, 2], "--exchange": [True, False]},
            "args": ["--time-limit", 10]}
    argvs = expand_grid(grid)
    assert len(argvs) == 8
    assert argvs[0] == ["solve", "--torus", "4x4", "--depth", "1", "--exchange", "--time-limit", "10"]
    assert argvs[1] == ["solve", "--torus", "4x4", "--depth", "1", "--time-limit", "10"]
    assert argvs[-1] == ["solve", "--torus", "6x6", "--depth", "2", "--time-limit", "10"]


def test_tasks_and_grids_together_duplicates_once():
    data = {"tasks": [["info", "--torus", "4x4"], ["solve", "--torus", "4x4", "--depth", "2"]],
            "grids": [{"command": "solve", "vary": {"--torus": ["4x4"], "--depth": [2, 3]}}]}
    tasks = parse_campaign(data)
    assert [t.argv[:-1] for t in tasks] == [("info", "--torus", "4x4"), ("solve", "--torus", "4x4", "--depth", "2"),
                                            ("solve", "--torus", "4x4", "--depth", "3")]


@pytest.mark.parametrize("data", [[], {"tasks": "info"}, {"tasks": []}, {"grids": [{"vary": {}}]},
                                  {"grids": [{"command": "info", "vary": {"--torus": []}}]},
                                  {"grids": [{"command": "info", "vary": {"--torus": [None]}}]}])
def test_malformed_campaigns_are_refused(data):
    with pytest.raises(CampaignError):
        parse_campaign(data)


def test_toml_and_json_files_give_the_same_tasks(tmp_path):
    (tmp_path / "c.toml").write_text('tasks = [["info", "--torus", "4x4"]]\n\n[[grids]]\ncommand = "solve"\n'
                                     'vary = {"--torus" = ["4x4", "6x6"]}\n')
    (tmp_path / "c.json").write_text(json.dumps({"tasks": [["info", "--torus", "4x4"]], "grids": [
        {"command": "solve", "vary": {"--torus": ["4x4", "6x6"]}}]}))
    assert read_campaign(tmp_path / "c.toml") == read_campaign(tmp_path / "c.json")
    (tmp_path / "bad.json").write_text("{tasks: ")
    with pytest.raises(CampaignError, match="bad.json: not JSON"):
        read_campaign(tmp_path / "bad.json")
