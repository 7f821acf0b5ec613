"""One configuration, read from the environment by the entry points only (issue 40, item 4).

An entry point (``entry/``, the dev CLI under ``dev/``) reads ``os.environ`` once and
builds the ``Configuration``; every other deployed module takes its values from that
object or from an argument. This test reads the deployed source (``shared/inboxflow``
without ``dev/``) and fails on any other read of the process's environment.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

import inboxflow
from inboxflow.configuration import Configuration

PACKAGE = Path(inboxflow.__file__).resolve().parent

ENTRY_MODULES = frozenset({"entry/__init__.py"})
"""The deployed modules that read the process's environment: the functions' entry point."""

READERS = ("environ", "environb", "getenv", "getenvb")


def environment_reads(source: str) -> list[int]:
    """Lines of ``source`` that read the process's environment (``os.environ``, ``os.getenv``,
    ``environ``/``getenv`` imported from ``os``)."""
    tree = ast.parse(source)
    lines = []
    for node in ast.walk(tree):
        attribute = (
            isinstance(node, ast.Attribute)
            and node.attr in READERS
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        )
        imported = (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(alias.name in READERS for alias in node.names)
        )
        if attribute or imported:
            lines.append(node.lineno)
    return sorted(lines)


def deployed_modules() -> list[Path]:
    """The deployed source: the package without ``dev/``."""
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).parts[0] != "dev" and "__pycache__" not in path.parts
    )


def test_only_the_entry_points_read_the_environment() -> None:
    readers = {
        path.relative_to(PACKAGE).as_posix(): environment_reads(path.read_text(encoding="utf-8"))
        for path in deployed_modules()
    }
    found = {name: lines for name, lines in readers.items() if lines}
    unexpected = {name: lines for name, lines in found.items() if name not in ENTRY_MODULES}
    assert unexpected == {}, "read the environment in an entry point and pass the value down"


@pytest.mark.parametrize(
    "source",
    [
        "import os\nx = os.environ.get('A')\n",
        "import os\nx = os.getenv('A')\n",
        "from os import environ\n",
        "import os\ndef f(e=None):\n    return os.environ if e is None else e\n",
    ],
)
def test_the_scan_sees_each_way_of_reading_the_environment(source: str) -> None:
    assert environment_reads(source)


def test_the_configuration_is_built_from_the_environment_it_is_given(tmp_path: Path) -> None:
    environ = {
        "INBOXFLOW_HOME": str(tmp_path),
        "INBOXFLOW_APPROVAL_URL": "https://approve.example/",
        "INBOXFLOW_AUTHSERV_ID": "mx.relay.example",
        "INBOXFLOW_CONFIG": str(tmp_path / "missing-is-no-rules.yaml"),
    }
    (tmp_path / "missing-is-no-rules.yaml").write_text("{}\n", encoding="utf-8")
    configuration = Configuration.from_environ(environ)
    assert configuration.settings.home == tmp_path and configuration.settings.store == "sqlite"
    assert configuration.approvals.base_url == "https://approve.example"
    assert configuration.config.authserv_id == "mx.relay.example"
    assert configuration.environ == environ and "pipeline" in configuration.graphs
    assert os.environ.get("INBOXFLOW_APPROVAL_URL") != "https://approve.example/"
