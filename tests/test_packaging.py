"""pyproject.toml's package list is the tree: every folder with an ``__init__.py`` under synth/ and models/ is
listed (as installed: models/ is synth.models), and nothing listed is missing."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: source folder -> the package name it installs as (pyproject's package-dir)
SOURCES = {"synth": "synth", "models": "synth.models"}


def packages_on_disk(root: Path = ROOT) -> set:
    out = set()
    for folder, package in SOURCES.items():
        for init in (root / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(root / folder).parts
            out.add(".".join((package, *parts)))
    return out


def test_pyproject_lists_exactly_the_packages_of_the_tree():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert config["package-dir"] == {"synth": "synth", "synth.models": "models"}
    listed = set(config["packages"])
    on_disk = packages_on_disk()
    assert len(on_disk) > 20
    assert not on_disk - listed, f"not in pyproject.toml: {sorted(on_disk - listed)}"
    assert not listed - on_disk, f"in pyproject.toml, not in the tree: {sorted(listed - on_disk)}"


def test_a_new_package_is_seen(tmp_path):
    (tmp_path / "synth" / "new").mkdir(parents=True)
    (tmp_path / "synth" / "new" / "__init__.py").write_text("")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    assert packages_on_disk(tmp_path) == {"synth.new", "synth.models"}
