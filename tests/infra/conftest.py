"""Offline model of infra/: the HCL files parsed with python-hcl2, and the
instance count of every resource type worked out from graph.auto.tfvars.json.

No provider can be downloaded here, so `terraform validate`/`plan` cannot
run; these fixtures let the structural tests read the configuration the way
plan would expand it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
INFRA = REPO_ROOT / "infra"
MODULE = INFRA / "modules" / "node_function"


def _strip(value: Any) -> Any:
    """Normalise python-hcl2 output: unquote strings, drop ``__meta__`` keys."""
    if isinstance(value, dict):
        return {
            _strip(key): _strip(item)
            for key, item in value.items()
            if not str(key).startswith("__")
        }
    if isinstance(value, list):
        return [_strip(item) for item in value]
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value


def load_hcl(path: Path) -> dict[str, Any]:
    """Parse one .tf/.tfvars file into plain dicts and lists (python-hcl2 >= 4)."""
    hcl2 = pytest.importorskip(
        "hcl2", reason="python-hcl2 is not installed (pip install python-hcl2)"
    )
    with path.open(encoding="utf-8") as handle:
        return _strip(hcl2.load(handle))


@dataclass
class Resource:
    """One ``resource`` block."""

    type: str
    name: str
    body: dict[str, Any]
    file: str
    module: str  # "root" or "node_function"

    @property
    def address(self) -> str:
        prefix = "" if self.module == "root" else "module.<node_function>."
        return f"{prefix}{self.type}.{self.name}"


@dataclass
class TerraformDir:
    """The blocks of every .tf file in one directory."""

    path: Path
    label: str
    files: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path, label: str) -> TerraformDir:
        found = cls(path, label)
        for tf in sorted(path.glob("*.tf")):
            found.files[tf.name] = load_hcl(tf)
        return found

    def blocks(self, kind: str) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for name, parsed in self.files.items():
            for block in parsed.get(kind, []):
                out.append((name, block))
        return out

    @property
    def resources(self) -> list[Resource]:
        out = []
        for file, block in self.blocks("resource"):
            for rtype, named in block.items():
                for rname, body in named.items():
                    out.append(Resource(rtype, rname, body, file, self.label))
        return out

    def resource(self, rtype: str, rname: str) -> Resource:
        for res in self.resources:
            if res.type == rtype and res.name == rname:
                return res
        raise KeyError(f"{self.label}: no resource {rtype}.{rname}")

    @property
    def variables(self) -> dict[str, dict[str, Any]]:
        return {name: body for _, block in self.blocks("variable") for name, body in block.items()}

    @property
    def outputs(self) -> dict[str, dict[str, Any]]:
        return {name: body for _, block in self.blocks("output") for name, body in block.items()}

    @property
    def locals(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for _, block in self.blocks("locals"):
            merged.update(block)
        return merged

    @property
    def modules(self) -> dict[str, dict[str, Any]]:
        return {name: body for _, block in self.blocks("module") for name, body in block.items()}


def first(value: Any) -> Any:
    """Nested blocks come back as a list of one dict; attributes as the value."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        return value[0]
    return value


@dataclass
class Infra:
    """The root module, the node_function module and the generated tfvars."""

    root: TerraformDir
    module: TerraformDir
    tfvars: dict[str, Any]

    @staticmethod
    def load_hcl(path: Path) -> dict[str, Any]:
        """Parse an extra file (e.g. envs/*.tfvars) the same way."""
        return load_hcl(path)

    def variable_values(self) -> dict[str, Any]:
        """Root variable values as plan would see them with only the generated tfvars."""
        values = {name: body.get("default") for name, body in self.root.variables.items()}
        values.update(self.tfvars)
        return values

    # --- for_each expansion ------------------------------------------------------

    def _local_size(self, name: str, values: dict[str, Any]) -> int:
        nodes = values["node_functions"]
        if name == "pushed_functions":  # every node plus the Gmail ingest
            return len(nodes) + 1
        if name == "node_publish_grants":
            return sum(len(node["publishes_to"]) for node in nodes.values())
        literal = self.root.locals.get(name)
        if isinstance(literal, (dict, list)):
            return len(literal)
        raise KeyError(f"cannot size local.{name}: teach tests/infra/conftest.py")

    def for_each_size(
        self, expression: Any, values: dict[str, Any], module_args: dict[str, Any] | None = None
    ) -> int:
        """Instances created by a ``for_each`` expression of this configuration."""
        if isinstance(expression, (list, dict)):
            return len(expression)
        text = str(expression).strip()
        inner = text[2:-1].strip() if text.startswith("${") and text.endswith("}") else text
        literal = re.fullmatch(r"toset\(\[(.*)\]\)", inner, re.S)
        if literal:
            return len(set(re.findall(r'"([^"]+)"', literal.group(1))))
        ref = re.fullmatch(r"(?:toset\()?(var|local)\.(\w+)\)?", inner)
        if ref:
            kind, name = ref.groups()
            if kind == "local":
                return self._local_size(name, values)
            if module_args is not None:
                return self.for_each_size(module_args.get(name, []), values)
            return len(set(values[name])) if isinstance(values[name], list) else len(values[name])
        comprehension = re.match(r"\{\s*for\s+\w+(?:\s*,\s*\w+)?\s+in\s+var\.(\w+)\s*:", inner)
        if comprehension:
            return len(values[comprehension.group(1)])
        raise ValueError(f"unsupported for_each expression {text!r}: teach tests/infra/conftest.py")

    def _module_arg_values(self, call: dict[str, Any]) -> dict[str, Any]:
        """Module arguments whose size matters (literal lists, or locals that are maps)."""
        args: dict[str, Any] = {}
        for key, value in call.items():
            if isinstance(value, list):
                args[key] = value
            elif isinstance(value, str):
                ref = re.fullmatch(r"\$\{local\.(\w+)\}", value.strip())
                if ref and isinstance(self.root.locals.get(ref.group(1)), dict):
                    args[key] = self.root.locals[ref.group(1)]
        return args

    def resource_counts(self) -> Counter[str]:
        """Instances per resource type, as a plan with the generated tfvars would create."""
        values = self.variable_values()
        counts: Counter[str] = Counter()
        for res in self.root.resources:
            counts[res.type] += (
                self.for_each_size(res.body["for_each"], values) if "for_each" in res.body else 1
            )
        for call in self.root.modules.values():
            instances = self.for_each_size(call["for_each"], values) if "for_each" in call else 1
            args = self._module_arg_values(call)
            for res in self.module.resources:
                each = (
                    self.for_each_size(res.body["for_each"], values, args)
                    if "for_each" in res.body
                    else 1
                )
                counts[res.type] += instances * each
        return counts


@pytest.fixture(scope="session")
def infra() -> Infra:
    tfvars = json.loads((INFRA / "graph.auto.tfvars.json").read_text(encoding="utf-8"))
    return Infra(
        TerraformDir.load(INFRA, "root"), TerraformDir.load(MODULE, "node_function"), tfvars
    )
