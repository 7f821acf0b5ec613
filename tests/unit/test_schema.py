"""``inboxflow.schema``: one declaration per collection, the only place naming one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import inboxflow
from inboxflow import schema
from inboxflow.dev.infra import export as infra_export

PACKAGE = Path(inboxflow.__file__).parent
NAMES = {collection.name for collection in schema.COLLECTIONS}
STORE_CALLS = {"get", "set", "create", "delete", "list", "documents", "upsert", "search"}
STORES = {"store", "_store", "tx", "vectors"}
"""Receivers of store calls, as the code names them (``ctx.store``, ``self.vectors``, ``tx``)."""
NOT_COLLECTIONS = {("dev/emulators.py", "tasks")}
"""Literals that equal a collection name and mean something else (a gcloud emulator)."""


def _store(receiver: ast.expr) -> bool:
    if isinstance(receiver, ast.Name):
        return receiver.id in STORES
    return isinstance(receiver, ast.Attribute) and receiver.attr in STORES


def test_every_collection_is_declared_once() -> None:
    assert len(NAMES) == len(schema.COLLECTIONS)
    assert schema.collection("trace_replies") is schema.TRACE_REPLIES
    with pytest.raises(LookupError, match="no collection"):
        schema.collection("nope")


def test_declarations_refuse_bad_shapes() -> None:
    with pytest.raises(ValueError, match="one path segment"):
        schema.Collection("a/b")
    with pytest.raises(ValueError, match="order or array_config"):
        schema.IndexField("status")
    with pytest.raises(ValueError, match="order or array_config"):
        schema.IndexField("status", order="ASCENDING", array_config="CONTAINS")
    with pytest.raises(ValueError, match="lives under traces"):
        schema.STEPS.path("x")
    assert schema.TRACES.path("t1") == "traces/t1"


def test_the_export_reads_the_declarations() -> None:
    extra = schema.Collection(
        "scratch",
        ttl_field=schema.TTL_FIELD,
        composite_indexes=(
            schema.CompositeIndex(
                (schema.IndexField("a", order="ASCENDING"), schema.IndexField("b", "DESCENDING"))
            ),
        ),
        vector_indexes=(schema.VectorIndex(("kind",)),),
        index_exemptions=("blob",),
    )
    assert infra_export.ttl_collections([extra]) == ("scratch",)
    assert infra_export.composite_indexes([extra]) == (
        {
            "collection": "scratch",
            "fields": [
                {"field_path": "a", "order": "ASCENDING"},
                {"field_path": "b", "order": "DESCENDING"},
            ],
        },
    )
    assert infra_export.vector_indexes([extra]) == (
        {
            "collection": "scratch",
            "prefix_fields": ["kind"],
            "field_path": "embedding",
            "dimension": 768,
        },
    )
    assert infra_export.index_exemptions([extra]) == ({"collection": "scratch", "field": "blob"},)
    tfvars = infra_export.export_graph_tfvars()
    assert tfvars["firestore_ttl_collections"] == [
        c.name for c in schema.COLLECTIONS if c.ttl_field
    ]
    assert "steps" in tfvars["firestore_ttl_collections"]
    assert "mailboxes" not in tfvars["firestore_ttl_collections"]


def test_a_ttl_field_terraform_does_not_know_is_refused() -> None:
    with pytest.raises(ValueError, match="expire_at"):
        infra_export.ttl_collections([schema.Collection("x", ttl_field="gone_at")])


def _literal_paths(tree: ast.AST) -> list[tuple[int, str]]:
    """String literals that name a collection the way code builds paths with one."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        value = (
            getattr(node, "value", None) if isinstance(node, ast.Assign | ast.AnnAssign) else None
        )
        if isinstance(value, ast.Constant) and value.value in NAMES:
            found.append((node.lineno, str(value.value)))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in STORE_CALLS
            and _store(node.func.value)
            and node.args
        ):
            first = node.args[0]
            text = first.value if isinstance(first, ast.Constant) else None
            if isinstance(first, ast.JoinedStr) and isinstance(first.values[0], ast.Constant):
                text = first.values[0].value
            if isinstance(text, str) and text.split("/")[0] in NAMES:
                found.append((node.lineno, text))
        if isinstance(node, ast.JoinedStr) and node.values:
            head = node.values[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                segment, slash, _ = head.value.partition("/")
                if slash and segment in NAMES:
                    found.append((node.lineno, head.value))
    return found


def test_no_module_but_schema_spells_a_collection_name() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "schema.py" and path.parent == PACKAGE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(PACKAGE).as_posix()
        offenders += [
            f"{where}:{line}: {text!r}"
            for line, text in _literal_paths(tree)
            if (where, text) not in NOT_COLLECTIONS
        ]
    assert offenders == []


def test_the_literal_finder_sees_the_shapes_it_forbids() -> None:
    source = (
        'COLLECTION = "trace_replies"\n'
        'store.list("traces")\n'
        'settings.get("memory")\n'
        'store.get(f"tickets/{x}")\n'
        'path = f"failures/{x}"\n'
        "ctx.store.list(schema.TRACES.name)\n"
        'mode = "memory" if x else "off"\n'
    )
    assert sorted(line for line, _ in _literal_paths(ast.parse(source))) == [1, 2, 4, 4, 5]
