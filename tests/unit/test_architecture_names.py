"""docs/architecture.md names only modules that exist (issue 40).

The layout of §2 is read as a tree: a directory entry (``approvals/``) opens a folder for the
lines indented under it, and every ``name.py`` on a line (in its name column or its
description) must be a file of that folder (a name with a ``/`` is taken from
``shared/inboxflow/``, or from the checkout root for ``functions/``, ``tests/``, ``bench/``).
Everywhere else in the page a ``path.py`` must be the end of a file of the checkout, and a
dotted ``inboxflow.x.y`` must be a module of the package.

Mutation: name ``approvals/logs.py`` in the layout, or list ``graph.py`` under
``shared/inboxflow/`` after it moved to ``engine/`` -> red.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "shared" / "inboxflow"
PAGE = ROOT / "docs" / "architecture.md"
PY = re.compile(r"(?<![\w/.-])([\w/]+\.py)\b")
DOTTED = re.compile(r"\binboxflow(?:\.[a-z_][a-z0-9_]*)+")
FROM_ROOT = ("functions/", "tests/", "bench/", "shared/", "infra/", "evals/")


def _layout_and_rest(text: str) -> tuple[list[str], list[str]]:
    """The lines of §2's layout block, and every other line of the page."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("## 2."))
    fence = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
    return lines[fence + 1 : end], lines[:fence] + lines[end + 1 :]


def _resolve(name: str, folder: Path) -> Path:
    if name.startswith(FROM_ROOT):
        return ROOT / name
    if "/" in name:
        return PACKAGE / name
    return folder / name


def layout_problems(block: list[str]) -> list[str]:
    """Each ``name.py`` or ``folder/`` of the layout that is not where the tree puts it."""
    problems: list[str] = []
    stack: list[tuple[int, Path]] = [(-1, ROOT)]
    for number, line in enumerate(block, 1):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        name_column = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        first = name_column.split()[0]
        folders = [t for t in name_column.split() if t.endswith("/")]
        entry = re.fullmatch(r"[\w./-]+/", first) is not None and indent < 24
        if entry:
            for folder in folders:
                if not (parent / folder).is_dir():
                    problems.append(f"layout line {number}: no folder {parent / folder}")
            here = parent / first if len(folders) == 1 else parent
            stack.append((indent, here))
        else:
            here = parent
        for name in PY.findall(line):
            if not _resolve(name, here).is_file():
                problems.append(f"layout line {number}: no module {_resolve(name, here)}")
    return problems


def _files() -> list[str]:
    return [
        p.relative_to(ROOT).as_posix()
        for top in ("shared", "functions", "tests", "bench", "dev")
        if (ROOT / top).is_dir()
        for p in (ROOT / top).rglob("*.py")
    ]


def prose_problems(lines: list[str]) -> list[str]:
    """Each ``path.py`` no file ends with, and each ``inboxflow.x`` that is no module."""
    files = _files()
    problems: list[str] = []
    for number, line in enumerate(lines, 1):
        for name in PY.findall(line):
            # ``graphs/NAME/guards.py``: a capitalised part stands for any name
            pattern = re.compile("(^|.*/)" + re.sub(r"[A-Z]+", r"\\w+", re.escape(name)) + "$")
            if not any(pattern.match(f) for f in files):
                problems.append(f"line {number}: no file ends with {name}")
        for dotted in DOTTED.findall(line):
            parts = dotted.split(".")[1:]
            path = PACKAGE.joinpath(*parts)
            exists = path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()
            if not exists and dotted != "inboxflow.yaml":
                problems.append(f"line {number}: no module {dotted}")
    return problems


def test_the_layout_names_only_modules_where_they_are() -> None:
    block, _ = _layout_and_rest(PAGE.read_text(encoding="utf-8"))
    assert layout_problems(block) == []


def test_the_page_names_only_modules_that_exist() -> None:
    _, rest = _layout_and_rest(PAGE.read_text(encoding="utf-8"))
    assert prose_problems(rest) == []


def test_a_module_that_is_not_there_is_found() -> None:
    """The checks themselves: a moved or missing module in either part is reported."""
    block = [
        "shared/inboxflow/        the package",
        "  graph.py               moved to engine/",
        "  approvals/             split: decisions.py, logs.py",
    ]
    found = layout_problems(block)
    assert any(p.endswith("shared/inboxflow/graph.py") for p in found), found
    assert any(p.endswith("approvals/logs.py") for p in found), found
    assert not any("decisions.py" in p for p in found), found
    assert prose_problems(["see `no_such_module.py` and `inboxflow.no_such`"]) == [
        "line 1: no file ends with no_such_module.py",
        "line 1: no module inboxflow.no_such",
    ]
