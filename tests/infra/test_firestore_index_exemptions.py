"""Single-field index exemptions (``infra/firestore.tf``, ``not_indexed``): each one really
turns indexing off, and none covers a field the code filters or orders on (Firestore would
answer such a query with FAILED_PRECONDITION in production; the emulator never does)."""

from __future__ import annotations

import ast
from pathlib import Path

import inboxflow
from inboxflow.dev.infra import export as infra_export
from tests.infra.test_terraform_structure import first

PACKAGE = Path(inboxflow.__file__).resolve().parent
OPERATORS = {"==", "!=", "<", "<=", ">", ">=", "in", "not-in", "array_contains"}


def queried_fields(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Every field the package's code filters or orders on, with the files that do.

    A filter is a ``(field, operator, value)`` tuple with a literal field and operator
    (the ports' ``Filter``), wherever it is built; an order is a literal ``order_by=``.
    """
    found: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            fields: list[str] = []
            if isinstance(node, ast.Tuple) and len(node.elts) == 3:
                field, op = node.elts[0], node.elts[1]
                if (
                    isinstance(field, ast.Constant)
                    and isinstance(field.value, str)
                    and isinstance(op, ast.Constant)
                    and op.value in OPERATORS
                ):
                    fields.append(field.value)
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg == "order_by" and isinstance(keyword.value, ast.Constant):
                        fields.append(str(keyword.value.value))
            for field_name in fields:
                found.setdefault(field_name.split(".")[0], set()).add(path.name)
    return found


def test_the_scan_finds_the_queries_the_store_runs() -> None:
    found = queried_fields()
    # traces by status, newest first (inboxflow traces); a trace's steps in order
    assert {"status", "updated_at", "step_order"} <= set(found)
    assert "checkpoint.py" in found["step_order"]


def test_no_exemption_covers_a_queried_or_indexed_field() -> None:
    queried = queried_fields()
    exempt = {(item["collection"], item["field"]) for item in infra_export.INDEX_EXEMPTIONS}
    assert len(exempt) == len(infra_export.INDEX_EXEMPTIONS), "an exemption is listed twice"
    for collection, field in sorted(exempt):
        assert field not in queried, (
            f"{collection}.{field} is exempt from indexing but {sorted(queried[field])} query it"
        )
    in_indexes = {
        (index["collection"], f["field_path"].split(".")[0])
        for index in infra_export.COMPOSITE_INDEXES
        for f in index["fields"]
    } | {
        (index["collection"], name)
        for index in infra_export.VECTOR_INDEXES
        for name in index["prefix_fields"]
    }
    assert not exempt & in_indexes


def test_the_step_protocol_fields_written_every_hop_are_exempt() -> None:
    exempt = {(item["collection"], item["field"]) for item in infra_export.INDEX_EXEMPTIONS}
    assert {
        ("traces", "state"),
        ("traces", "next"),
        ("traces", "lease"),
        ("steps", "output_delta"),
        ("steps", "output_patch"),
        ("steps", "tool_calls"),
        ("steps", "llm_calls"),
    } <= exempt


def test_what_each_email_stores_that_no_query_reads_is_exempt() -> None:
    """Issue 42: the index entries an email leaves are stored 30 days; these fields are written
    for every email that pauses or runs an effect and no query reads them."""
    exempt = {(item["collection"], item["field"]) for item in infra_export.INDEX_EXEMPTIONS}
    assert {
        ("effects", "result"),
        ("approvals", "payload_hash"),
        ("approvals", "notify_errors"),
        ("approval_tokens", "form_key"),
        ("quote_keys", "result"),
        ("mail_stamps", "approval_id"),
        ("steps", "guards"),
    } <= exempt


def test_terraform_turns_every_exemption_s_indexes_off(infra) -> None:
    field = infra.root.resource("google_firestore_field", "not_indexed").body
    assert "var.firestore_index_exemptions" in field["for_each"]
    assert '"${item.collection}.${item.field}"' in field["for_each"]  # one resource per field
    assert field["collection"] == "${each.value.collection}"
    assert field["field"] == "${each.value.field}"
    # An index_config without indexes blocks is an empty `indexes` override: no single-field
    # index on the field or its subfields (firebase.google.com/docs/reference/firestore/indexes).
    assert first(field["index_config"]) == {}
    assert "ttl_config" not in field
    assert infra.tfvars["firestore_index_exemptions"] == [
        dict(item) for item in infra_export.INDEX_EXEMPTIONS
    ]
