"""Which modules of ``inboxflow`` the deployed functions can load, read from the source.

A module is reachable when an entry point (``functions/main.py``, ``inboxflow/entry/*``)
imports it, or a reachable module does: at module level, inside a function, under
``TYPE_CHECKING``, or by a string reference the code imports at run time
(``"inboxflow.graphs.pipeline.graph:PIPELINE"``, ``lazy(f"{NODES}.classify:classify")``,
``offline_heuristic(f"{__package__}.offline:classify_offline")``). Importing
``a.b.c`` loads the packages ``a`` and ``a.b`` as well.

The archive test uses it to prove nothing dev-only is deployed; run as a script it prints
the modules outside ``inboxflow/dev/`` that no entry point reaches (the candidates to move
under ``dev/``).
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "inboxflow"
_REFERENCE = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")


def package_modules(root: Path = REPO_ROOT) -> dict[str, Path]:
    """Every module of ``shared/inboxflow`` by dotted name (a package by its own name)."""
    base = root / "shared"
    modules: dict[str, Path] = {}
    for path in sorted((base / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if "__pycache__" in parts:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _package_of(name: str, path: Path) -> str:
    """The package relative imports in module ``name`` resolve against."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _string_constants(tree: ast.Module, names: Mapping[str, str]) -> dict[str, str]:
    """Module-level ``NAME = "text"`` (or f-string of known names) assignments: the
    prefixes of the string references (``NODES = f"{PACKAGE}.nodes"``)."""
    constants = dict(names)
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        value = getattr(node, "value", None)
        text = _text(value, constants) if isinstance(value, ast.AST) else None
        if text is not None:
            for target in targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = text
    return constants


def _text(node: ast.AST, names: Mapping[str, str]) -> str | None:
    """The value of a string constant, or of an f-string whose parts are all known."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    pieces = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            pieces.append(str(part.value))
        elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name):
            if part.value.id not in names:
                return None
            pieces.append(names[part.value.id])
        else:
            return None
    return "".join(pieces)


def imported_names(name: str, path: Path) -> set[str]:
    """The dotted names module ``name`` (at ``path``) imports or refers to by string."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _package_of(name, path)
    names = _string_constants(tree, {"__package__": package, "__name__": name})
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant | ast.JoinedStr):
            text = _text(node, names)
            if text and text.startswith(f"{PACKAGE}.") and _REFERENCE.match(text):
                found.add(text.partition(":")[0])
    return found


def _loaded(name: str, modules: Mapping[str, Path]) -> set[str]:
    """The modules importing ``name`` loads: it (when it is a module) and its packages."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & modules.keys()


def reachable(entries: Iterable[Path], root: Path = REPO_ROOT) -> set[str]:
    """The modules of ``inboxflow`` the files ``entries`` load, directly or through others."""
    modules = package_modules(root)
    seen: set[str] = set()
    todo: list[str] = []
    for entry in entries:
        entry_name = next((n for n, p in modules.items() if p == entry), entry.stem)
        for imported in imported_names(entry_name, entry):
            todo.extend(_loaded(imported, modules))
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for imported in imported_names(current, modules[current]):
            todo.extend(_loaded(imported, modules) - seen)
    return seen


def entry_points(root: Path = REPO_ROOT) -> list[Path]:
    """``functions/main.py`` and the modules of ``inboxflow/entry/``."""
    entry = root / "shared" / PACKAGE / "entry"
    return [root / "functions" / "main.py", *sorted(entry.glob("*.py"))]


def dev_only(root: Path = REPO_ROOT) -> list[str]:
    """Modules outside ``inboxflow.dev`` that no entry point reaches."""
    deployed = reachable(entry_points(root), root)
    return sorted(
        name
        for name in package_modules(root)
        if name not in deployed and not (name + ".").startswith(f"{PACKAGE}.dev.")
    )


if __name__ == "__main__":
    found = dev_only()
    print("\n".join(found) or "every module outside inboxflow/dev/ is deployed")
    sys.exit(1 if found else 0)
