"""Offline model of infra/: the HCL files of the root and of every local
module parsed with python-hcl2, and the instance count of every resource type
worked out from graph.auto.tfvars.json.

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
    module: str  # "root" or the module's directory name

    @property
    def address(self) -> str:
        prefix = "" if self.module == "root" else f"module.<{self.module}>."
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


def _unwrap(expression: Any) -> str:
    text = str(expression).strip()
    if text.startswith("${") and text.endswith("}"):
        text = text[2:-1].strip()
    while True:  # toset(...) / tomap(...) do not change the count of a literal or a map
        wrapped = re.fullmatch(r"to(?:set|map)\((.*)\)", text, re.S)
        if not wrapped:
            return text
        text = wrapped.group(1).strip()


@dataclass
class Infra:
    """The root module, the local modules and the generated tfvars.

    ``resource_counts`` expands ``for_each`` the way plan would, from the
    generated tfvars. The root's computed locals are sized by hand below, in
    Python that mirrors their HCL; an expression this file does not know
    fails loudly so the sizing is taught rather than guessed.
    """

    root: TerraformDir
    modules_by_dir: dict[str, TerraformDir]
    tfvars: dict[str, Any]

    @property
    def node_module(self) -> TerraformDir:
        return self.modules_by_dir["node_function"]

    @property
    def http_module(self) -> TerraformDir:
        return self.modules_by_dir["http_function"]

    @staticmethod
    def load_hcl(path: Path) -> dict[str, Any]:
        """Parse an extra file (e.g. envs/*.tfvars) the same way."""
        return load_hcl(path)

    def variable_values(self) -> dict[str, Any]:
        """Root variable values as plan would see them with only the generated tfvars."""
        values = {name: body.get("default") for name, body in self.root.variables.items()}
        values.update(self.tfvars)
        return values

    # --- sizing ------------------------------------------------------------------

    def _local_value(self, name: str, each_key: str | None) -> Any:
        """A root local, as a value whose len() is what for_each would see."""
        nodes = self.variable_values()["node_functions"]
        if name == "pushed_functions":  # every node plus the Gmail ingest
            return [*nodes, "ingest"]
        if name == "node_publish_grants":
            return [(key, topic) for key, node in nodes.items() for topic in node["publishes_to"]]
        if name == "pausing_nodes":
            return [key for key, node in nodes.items() if node["pauses"]]
        llm = self.variable_values().get("llm")
        if name == "gmail_secret":
            return [name]
        if name == "gemini_secret":  # main.tf: the key only with llm = "gemini_api"
            return [name] if llm == "gemini_api" else []
        if name == "runtime_secret_ids":  # secrets.tf: secret_ids + the key with gemini_api
            ids = list(self.variable_values()["secret_ids"])
            return sorted(set(ids + (["GEMINI_API_KEY"] if llm == "gemini_api" else [])))
        if name == "enabled_apis":  # apis.tf: + Vertex AI with llm = "vertex"
            return list(self.root.locals["apis"]) + (
                ["aiplatform.googleapis.com"] if llm == "vertex" else []
            )
        if name == "vertex_users":  # main.tf: the LLM nodes' identities with llm = "vertex"
            return [key for key, node in nodes.items() if llm == "vertex" and node["uses_llm"]]
        ses = ["INBOXFLOW_SES_CREDENTIALS"] if self.variable_values().get("ses_enabled") else []
        if name in ("ses_secret_ids", "ses_secret"):  # ses.tf: one secret when ses_enabled
            return ses
        if name == "approve_secrets":
            return ["gmail_secret", *ses]
        if name == "node_secrets" and each_key is not None:
            node = nodes[each_key]
            flags = [flag for flag in ("uses_llm", "uses_gmail") if node[flag]]
            if llm != "gemini_api" and "uses_llm" in flags:  # no key to mount
                flags.remove("uses_llm")
            return flags + (ses if node.get("notifies") else [])
        if name == "gmail_functions":  # main.tf: every function acting as a mailbox
            gmail_nodes = [key for key, node in nodes.items() if node["uses_gmail"]]
            return [*gmail_nodes, "ingest", "approve", "renew_watch"]
        if name == "gmail_delegation_signers":  # iam.tf: only with gmail_keyless_delegation
            if not self.variable_values().get("gmail_keyless_delegation"):
                return []
            return self._local_value("gmail_functions", None)
        literal = self.root.locals.get(name)
        if isinstance(literal, (dict, list)):
            return literal
        raise KeyError(f"cannot size local.{name}: teach tests/infra/conftest.py")

    def evaluate(
        self,
        expression: Any,
        scope: dict[str, Any] | None,
        each_key: str | None = None,
    ) -> Any:
        """Value (for its length) of a for_each or module argument expression.

        ``scope`` is None in the root module, else the evaluated arguments of
        the module call (``var.X`` inside a module means the caller's ``X``).
        """
        if isinstance(expression, (list, dict)):
            return expression
        text = _unwrap(expression)
        if text == "[]" or text == "{}":
            return []
        literal = re.fullmatch(r"\[(.*)\]", text, re.S)
        if literal:
            return sorted(set(re.findall(r'"([^"]+)"', literal.group(1))))
        ref = re.fullmatch(r"(var|local)\.(\w+)(\[each\.key\])?", text)
        if ref:
            kind, name, indexed = ref.groups()
            key = each_key if indexed else None
            if kind == "local":
                if scope is not None:
                    raise KeyError(f"module local.{name}: teach tests/infra/conftest.py")
                return self._local_value(name, key)
            if scope is not None:
                return scope.get(name, [])
            return self.variable_values()[name]
        comprehension = re.match(r"\{\s*for\s+\w+(?:\s*,\s*\w+)?\s+in\s+var\.(\w+)\s*:", text)
        if comprehension and " if " not in text:
            return self.variable_values()[comprehension.group(1)]
        raise ValueError(f"unsupported expression {text!r}: teach tests/infra/conftest.py")

    def count_of(self, expression: Any, scope: dict[str, Any] | None) -> int:
        """Value of a ``count``: a literal or ``var.X [== "v" | != "v"] ? A : B``."""
        text = _unwrap(expression)
        if text.isdigit():
            return int(text)
        condition = re.fullmatch(
            r'var\.(\w+)(?:\s*(==|!=)\s*"([^"]*)")?\s*\?\s*(\d+)\s*:\s*(\d+)', text
        )
        if not condition:
            raise ValueError(f"unsupported count {text!r}: teach tests/infra/conftest.py")
        name, operator, literal, when_true, when_false = condition.groups()
        values = self.variable_values() if scope is None else scope
        value = values.get(name)
        holds = bool(value) if operator is None else (value == literal) == (operator == "==")
        return int(when_true if holds else when_false)

    def _size(self, expression: Any, scope: dict[str, Any] | None, each_key: str | None) -> int:
        value = self.evaluate(expression, scope, each_key)
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return len(set(value))  # toset() of a list of strings
        return len(value)

    def _module_dir(self, call: dict[str, Any]) -> TerraformDir:
        return self.modules_by_dir[Path(call["source"]).name]

    def _call_scope(
        self, call: dict[str, Any], scope: dict[str, Any] | None, each_key: str | None
    ) -> dict[str, Any]:
        """The arguments of a module call that for_each inside it may read."""
        args: dict[str, Any] = {}
        for name, value in call.items():
            if name in ("source", "for_each", "depends_on"):
                continue
            try:
                args[name] = self.evaluate(value, scope, each_key)
            except (KeyError, ValueError):
                continue  # not a collection anything is sized by
        return args

    def _count_dir(
        self,
        tf: TerraformDir,
        scope: dict[str, Any] | None,
        each_key: str | None,
        counts: Counter[str],
    ) -> None:
        for res in tf.resources:
            if "for_each" in res.body:
                each = self._size(res.body["for_each"], scope, each_key)
            elif "count" in res.body:
                each = self.count_of(res.body["count"], scope)
            else:
                each = 1
            counts[res.type] += each
        for call in tf.modules.values():
            if "for_each" in call:
                keys = list(self.evaluate(call["for_each"], scope, each_key))
            else:
                keys = [each_key]
            for key in keys:
                child = self._call_scope(call, scope, key)
                self._count_dir(self._module_dir(call), child, key, counts)

    def resource_counts(self) -> Counter[str]:
        """Instances per resource type, as a plan with the generated tfvars would create."""
        counts: Counter[str] = Counter()
        self._count_dir(self.root, None, None, counts)
        return counts


@pytest.fixture(scope="session")
def infra() -> Infra:
    tfvars = json.loads((INFRA / "graph.auto.tfvars.json").read_text(encoding="utf-8"))
    modules = {
        path.name: TerraformDir.load(path, path.name)
        for path in sorted((INFRA / "modules").iterdir())
        if path.is_dir()
    }
    return Infra(TerraformDir.load(INFRA, "root"), modules, tfvars)
