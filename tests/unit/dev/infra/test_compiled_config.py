"""The source archive carries ``inboxflow.yaml.json``, the config's compiled form: a deployed
function reads it without importing a YAML parser, and only while it matches the YAML."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from inboxflow.config import (
    COMPILED_SUFFIX,
    CONFIG_VARIABLE,
    ConfigError,
    compile_config,
    load_config,
)
from inboxflow.dev.infra import REPO_ROOT
from inboxflow.dev.infra.archive import build_source_archive
from inboxflow.graphs import graph_registry

RULES = "routing:\n  rules:\n    - {name: vip, route: pipeline, match: {sender_domain: vip.test}}\n"


def _write(folder: Path, text: str, compiled_from: str | None = None) -> Path:
    path = folder / "inboxflow.yaml"
    path.write_text(text, encoding="utf-8")
    compiled = compile_config(compiled_from if compiled_from is not None else text)
    assert compiled is not None
    path.with_name(path.name + COMPILED_SUFFIX).write_text(compiled, encoding="utf-8")
    return path


def test_the_archived_config_is_read_from_its_compiled_form_without_yaml(tmp_path: Path) -> None:
    with zipfile.ZipFile(build_source_archive(tmp_path / "source.zip")) as archive:
        archive.extract("inboxflow.yaml", tmp_path)
        archive.extract("inboxflow.yaml.json", tmp_path)
    script = (
        "import sys\n"
        "from inboxflow.config import load_config\n"
        "from inboxflow.graphs import graph_registry\n"
        f"config = load_config({str(tmp_path / 'inboxflow.yaml')!r}, graph_registry())\n"
        "print('yaml' in sys.modules)\n"
        "print(config.model_dump_json())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    imported_yaml, dumped = done.stdout.splitlines()
    assert imported_yaml == "False"
    assert json.loads(dumped) == json.loads(
        load_config(REPO_ROOT / "inboxflow.yaml", graph_registry()).model_dump_json()
    )


def test_a_compiled_form_of_another_text_is_ignored(tmp_path: Path) -> None:
    stale = RULES.replace("vip.test", "old.test")
    path = _write(tmp_path, RULES, compiled_from=stale)
    config = load_config(None, graph_registry(), environ={CONFIG_VARIABLE: str(path)})
    assert config.routing.rules[0].match.sender_domain == "vip.test"


def test_a_compiled_form_made_from_this_text_is_what_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path, RULES)
    compiled = path.with_name(path.name + COMPILED_SUFFIX)
    document = json.loads(compiled.read_text(encoding="utf-8"))
    document["config"]["routing"]["rules"][0]["match"]["sender_domain"] = "json.test"
    compiled.write_text(json.dumps(document), encoding="utf-8")
    assert load_config(path, graph_registry()).routing.rules[0].match.sender_domain == "json.test"


@pytest.mark.parametrize(
    "text",
    [
        "graphs:\n  pipeline:\n    since: 2026-01-01\n",  # a date: JSON has none
        "graphs:\n  pipeline:\n    1: one\n",  # an integer key: JSON makes it a string
    ],
)
def test_data_json_cannot_carry_unchanged_is_not_compiled(text: str) -> None:
    assert compile_config(text) is None


def test_invalid_yaml_is_not_compiled() -> None:
    with pytest.raises(ConfigError, match=r"not valid YAML \(line 3\)"):
        compile_config("routing:\n  rules: [\n")
