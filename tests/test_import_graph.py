"""The import graph of synth (and of models/, installed as synth.models) has no cycle.

Every ``import`` counts, at module level or inside a function (a function-level import that closes a
cycle still makes the two modules depend on each other; it only hides it from the interpreter).
Imports under ``if TYPE_CHECKING:`` do not count.  Each function-level import of synth's own modules
carries a comment saying why it waits (start-up speed, an optional solver): the ones that only hid a
cycle are gone.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: source folder -> the package name it is installed as (pyproject's package-dir)
SOURCES = {ROOT / "synth": "synth", ROOT / "models": "synth.models"}


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of synth and synth.models."""
    out = {}
    for folder, package in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join([package, *parts])] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """(node, inside_function) for every import statement that runs, skipping TYPE_CHECKING blocks."""
    def walk(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    yield from walk(ast.Module(body=[sub], type_ignores=[]), in_function)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, in_function
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            yield from walk(child, inner)
    yield from walk(tree, False)


def _targets(node, name: str, path: Path, modules) -> list[str]:
    """The synth modules an import statement in module ``name`` loads."""
    if isinstance(node, ast.Import):
        bases = [alias.name for alias in node.names]
        names = []
    else:
        if node.level:
            package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
            for _ in range(node.level - 1):
                package = package.rsplit(".", 1)[0]
            base = package + ("." + node.module if node.module else "")
        else:
            base = node.module or ""
        bases = [base]
        names = [f"{base}.{alias.name}" for alias in node.names]
    found = {m for m in bases + names if m in modules}
    if isinstance(node, ast.ImportFrom) and all(n in modules for n in names) and name.startswith(bases[0] + "."):
        # ``from <own package> import <submodule>``: the package is already initialized (or initializing)
        # as a parent of this module, so the statement loads the submodule only
        found.discard(bases[0])
    return sorted(found)


def import_graph():
    """Module -> set of synth modules it imports; and the function-level imports as (module, line, target)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    lazy = []
    for name, path in modules.items():
        source = path.read_text()
        lines = source.splitlines()
        for node, in_function in _imports(ast.parse(source, filename=str(path))):
            targets = [t for t in _targets(node, name, path, modules) if t != name]
            graph[name].update(targets)
            if in_function and targets:
                lazy.append((name, path, node.lineno, lines))
    return graph, lazy


def strongly_connected(graph):
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def _explained(lines: list[str], line: int) -> bool:
    """Whether the import on ``line`` (1-based) has a comment: on its own line, on an import line of the
    block of imports it stands in, or on the line just above that block."""
    i = line - 1
    while i >= 0:
        text = lines[i].strip()
        if "#" in text:
            return True
        if not text.startswith(("from ", "import ")):
            return False
        i -= 1
    return False


def test_tarjan_finds_a_cycle_and_only_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_a_comment_above_a_block_of_imports_explains_the_block():
    lines = ["def f():", "    # lazy: start-up speed", "    from a import b", "    import c", "    x = 1",
             "    import d"]
    assert _explained(lines, 3) and _explained(lines, 4) and not _explained(lines, 6)


def test_the_graph_sees_relative_and_function_level_imports():
    tree = ast.parse("from .x import y\ndef f():\n    import synth.z\n")
    found = [(type(n).__name__, inner) for n, inner in _imports(tree)]
    assert found == [("ImportFrom", False), ("Import", True)]


def test_a_submodule_imported_from_its_own_package_is_no_edge_to_the_package():
    modules = {"p": Path("p/__init__.py"), "p.a": Path("p/a.py"), "p.b": Path("p/b.py")}
    node = ast.parse("from p import b").body[0]
    assert _targets(node, "p.a", Path("p/a.py"), modules) == ["p.b"]
    assert _targets(ast.parse("from p import x").body[0], "p.a", Path("p/a.py"), modules) == ["p"]


def test_no_import_cycle():
    graph, _ = import_graph()
    assert len(graph) > 50  # the walk found the code
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_every_function_level_import_says_why():
    """A synth import inside a function has a comment (on it, or above its block of imports) saying why it waits."""
    _, lazy = import_graph()
    silent = [f"{path.relative_to(ROOT)}:{line}" for _, path, line, lines in lazy if not _explained(lines, line)]
    assert not silent, f"{len(silent)} function-level imports without a comment: " + ", ".join(silent[:20])


#: the stages bottom-up (ARCHITECTURE): a module may import its own stage and those below it, never one above
STAGES = [
    ("shared", ("synth._version", "synth.errors", "synth.units", "synth.fileio")),
    ("topology", ("synth.topology",)),
    ("symmetry", ("synth.symmetry",)),
    ("schedule", ("synth.schedule",)),
    ("check", ("synth.check",)),
    ("models", ("synth.models",)),
    ("baselines / runtime", ("synth.baselines", "synth.runtime")),
    # the cost model and the SimGrid replay time a given schedule; the solve stage uses them to choose a
    # depth by message size, so they sit below it, apart from the rest of the analysis
    ("timing", ("synth.analysis.cost", "synth.analysis.simulate")),
    ("solve", ("synth.solving",)),
    ("analysis", ("synth.analysis",)),
    ("campaign", ("synth.campaign",)),
    ("facade", ("synth",)),
    ("cli", ("synth.cli", "synth.__main__")),
]


def stage_of(module: str) -> int:
    """The rank of ``module``'s stage: the longest prefix in STAGES names it."""
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(STAGES):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank is not None, f"{module} belongs to no stage"
    return rank


def upward_imports(graph) -> list[str]:
    return sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets if stage_of(t) > stage_of(m))


def test_every_module_has_a_stage():
    graph, _ = import_graph()
    assert {STAGES[stage_of(m)][0] for m in graph} == {name for name, _ in STAGES}


def test_no_import_runs_up_the_stages():
    graph, _ = import_graph()
    upward = upward_imports(graph)
    assert not upward, f"{len(upward)} upward imports: " + "; ".join(upward[:20])


def test_an_upward_import_is_caught():
    """Add one edge from the checker to a model and from topology to the CLI: the test above would fail."""
    graph, _ = import_graph()
    graph = {m: set(t) for m, t in graph.items()}
    graph["synth.check.claims"].add("synth.models.khop")
    graph["synth.topology.torus"].add("synth.cli")
    assert upward_imports(graph) == ["synth.check.claims -> synth.models.khop", "synth.topology.torus -> synth.cli"]
