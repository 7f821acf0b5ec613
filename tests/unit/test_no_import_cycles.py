"""No import cycle among the package's modules, counting what import-linter does not see.

``make lint``'s contracts leave out imports under ``TYPE_CHECKING``; this reads every import
from the source (module level, inside functions, type-checking only) and finds the strongly
connected components of the module graph, as ``../shared/tools/import-cycles.py`` does.
Issue 40 brought them to none.

Mutation: import ``inboxflow.engine.graph`` under TYPE_CHECKING in ``engine/step.py`` -> red.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "inboxflow"


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules it imports, at any place in the file."""
    files = {_module(p, root): p for p in root.rglob("*.py")}
    edges: dict[str, set[str]] = {m: set() for m in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - node.level + 1]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            else:
                continue
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                inside = files.get(target, path).name == "__init__.py" and name.startswith(
                    target + "."
                )
                if target and target != name and not inside:
                    edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_the_package_has_no_import_cycle() -> None:
    assert [sorted(c) for c in cycles(import_graph())] == []


def test_a_type_checking_import_back_is_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "inboxflow"
    (package / "engine").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "engine" / "__init__.py").write_text("")
    (package / "engine" / "graph.py").write_text("from .step import Step\n")
    (package / "engine" / "step.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .graph import Graph\n"
    )
    assert [sorted(c) for c in cycles(import_graph(package))] == [
        ["inboxflow.engine.graph", "inboxflow.engine.step"]
    ]
