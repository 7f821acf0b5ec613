"""What ``inboxflow eval collect`` took, recorded in the deployment, and checked later.

``eval_collected/{approval_id}`` per decision a case holds (the approval and trace, when it
was decided and collected, the case, and the SHA-256 of each address of the case as erasure
records name them): the reviewer inbox's history reads it, and ``check_collected`` reads it
with ``collected.json``, the data set's list of each case's approval ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ...engine.waits import Approval
from ...personal.erasure import address_hash
from ...ports.documents import DocumentStore
from ...schema import ERASURES, EVAL_COLLECTED

SIDECAR = "collected.json"


def record_collected(
    store: DocumentStore,
    approvals: Iterable[Approval],
    graph: str,
    people: Iterable[str],
    case_id: str,
    out: Path,
    now: float,
) -> None:
    """One ``eval_collected`` record per approval of the case (never the approval itself)."""
    hashes = sorted(address_hash(address) for address in people if _is_address(address))
    for approval in approvals:
        store.set(
            EVAL_COLLECTED.path(approval.approval_id),
            {
                "approval_id": approval.approval_id,
                "trace_id": approval.trace_id,
                "graph": graph,
                "decided_at": approval.decided_at,
                "collected_at": now,
                "case_id": case_id,
                "dataset": out.name,
                "people": hashes,
            },
        )


def _is_address(address: str) -> bool:
    try:
        address_hash(address)
    except ValueError:
        return False
    return True


def check_collected(store: DocumentStore, out: Path) -> list[str]:
    """The cases of ``out`` that must go: a person of theirs was erased since (their erasure
    record exists, or the erasure deleted the collection record with the trace).

    Raises:
        ValueError: ``out`` has no readable ``collected.json``.
    """
    try:
        sidecar = json.loads((out / SIDECAR).read_text(encoding="utf-8"))
        cases = dict(sidecar["cases"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{out / SIDECAR}: not a collected data set's record: {exc}") from None
    problems = []
    for case_id, approval_ids in cases.items():
        for approval_id in approval_ids:
            record = store.get(EVAL_COLLECTED.path(str(approval_id)))
            if record is None:
                problems.append(
                    f"{case_id}: approval {approval_id} has no collection record "
                    "(erased with its trace, or collected elsewhere): remove the case"
                )
                break
            if any(store.get(ERASURES.path(str(h))) for h in record.get("people") or []):
                problems.append(f"{case_id}: a person of this case was erased: remove the case")
                break
    return problems
