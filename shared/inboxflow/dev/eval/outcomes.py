"""What a trace came to, as named fields: the ones every graph has, and the graph's own.

``trace_outcome`` is what ``inboxflow eval`` compares with a case's labels. The
common fields come from the checkpoint, the approvals and the effect journal;
the graph's own from its declaration (``Graph.outcome``, ``Graph.outcome_fields``).
Reading every effect of the store, it is meant for an evaluation's home (one
case per store), not for a production database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email.utils import getaddresses
from typing import TYPE_CHECKING, Any

from ...notices import HAND_OFF
from ...ports.checkpoint import Checkpoint
from ...ports.documents import DocumentStore
from ...schema import APPROVALS, EFFECTS, MAILBOX_DRAFTS, MAILBOX_SENT

if TYPE_CHECKING:
    from ...engine.graph import Graph

COMMON_FIELDS = (
    "graph",
    "rule",
    "profile",
    "status",
    "end_reason",
    "loop_protected",
    "reviewed",
    "sent",
    "drafted",
    "wrote",
    "greeting",
    "sign_off",
)
"""The outcome fields of every graph:

- ``graph``, ``rule``, ``profile``: where routing sent the email;
- ``status`` of the trace; ``end_reason``: why it ended (loop protection, the graph's reason,
  or the error);
- ``loop_protected``: loop protection stopped the email (or refused its reply's recipient);
- ``reviewed``: a person was asked to decide at least once, or was handed the email by a notice
  their channel took (an escalation, a queue assignment, the planner's human review:
  ``notices.notify_once``); a customer's wait does not count;
- ``sent``, ``drafted``: the recipients of the mail the trace sent, or left as drafts (from the
  effect journal: the messages its effects wrote), lowercased and sorted;
- ``wrote``: the names of the other effects the trace had outside itself (a ticket opened, an
  escalation notice, a reservation, a calendar event...), an index suffix dropped; the
  notification and deadline of a reviewer's pause are ``reviewed``, not ``wrote``;
- ``greeting``, ``sign_off``: of the last reply the trace wrote (sent or drafted), its first
  line and its closing (the last line ending in a comma, without it: ``Best regards``); None
  without a reply or a closing. What a reviewer's edit teaches is seen here in the next draft.
"""

APPROVAL_EFFECTS = ("notify-", "deadline-")
"""Effect names the approval service journals at a pause's step (``ApprovalService.after_pause``)."""
_INDEX_SUFFIX = re.compile(r"[_#-]\d+$")


@dataclass(frozen=True)
class Effect:
    """One entry of the effect journal: ``effects/{trace_id}:{step}:{name}``."""

    key: str
    trace_id: str
    step: int
    name: str
    doc: Mapping[str, Any]


def effects_of(store: DocumentStore, trace_id: str | None = None) -> list[Effect]:
    """The journal's effects (of one trace, when given), by step."""
    found = []
    for key, doc in store.list(EFFECTS.name):
        owner, _, rest = key.partition(":")
        step, _, name = rest.partition(":")
        if trace_id is not None and owner != trace_id:
            continue
        found.append(Effect(key, owner, int(step) if step.isdigit() else -1, name, doc))
    return sorted(found, key=lambda effect: (effect.step, effect.name))


def written_messages(store: DocumentStore, keys: Iterable[str]) -> dict[str, list[str]]:
    """Recipients of the embedded workspace's messages stamped with one of ``keys``.

    Returns:
        ``{"sent": [...], "drafted": [...]}``, addresses lowercased, sorted, once each.
    """
    wanted = set(keys)
    found: dict[str, set[str]] = {"sent": set(), "drafted": set()}
    for field, collection in (("sent", MAILBOX_SENT), ("drafted", MAILBOX_DRAFTS)):
        for _, doc in store.list(collection.name):
            if doc.get("trace_key") in wanted:
                found[field].update(recipients(doc.get("to")))
    return {field: sorted(addresses) for field, addresses in found.items()}


def last_reply(store: DocumentStore, keys: Iterable[str]) -> str | None:
    """The body of the last message (sent or drafted) stamped with one of ``keys``, or None."""
    wanted = set(keys)
    written = [
        doc
        for collection in (MAILBOX_SENT, MAILBOX_DRAFTS)
        for _, doc in store.list(collection.name)
        if doc.get("trace_key") in wanted
    ]
    if not written:
        return None
    return str(max(written, key=lambda doc: float(doc.get("created_at") or 0)).get("body") or "")


def greeting_and_sign_off(body: str | None) -> tuple[str | None, str | None]:
    """A reply's first line and its closing (the last line ending in a comma, without it)."""
    lines = [line.strip() for line in (body or "").splitlines() if line.strip()]
    if not lines:
        return None, None
    closings = [line[:-1].strip() for line in lines[1:] if line.endswith(",")]
    return lines[0], (closings[-1] if closings else None)


def recipients(value: Any) -> list[str]:
    """The addresses of a ``to`` value (a string of one or more addresses, or a list)."""
    items = value if isinstance(value, list) else [value]
    pairs = getaddresses([str(item) for item in items if item])
    return [address.strip().lower() for _, address in pairs if "@" in address]


def effect_label(name: str) -> str:
    """An effect's name as ``wrote`` lists it: without an index suffix (``reservation#0``)."""
    return _INDEX_SUFFIX.sub("", name)


def trace_outcome(
    store: DocumentStore, graphs: Mapping[str, Graph], checkpoint: Checkpoint
) -> dict[str, Any]:
    """Every outcome field of ``checkpoint``: the common ones, then the graph's own.

    A graph's projection may also give ``end_reason`` (used when the trace has no
    other: no loop protection, no ``end_reason`` in its state, no error) and
    ``loop_protected`` (a refused recipient).
    """
    graph = graphs.get(checkpoint.graph)
    route = checkpoint.route
    approvals = [
        doc
        for _, doc in store.list(APPROVALS.name, where=[("trace_id", "==", checkpoint.trace_id)])
    ]
    kinds = graph.pause_kinds if graph is not None else {}
    reviewed = any(
        doc.get("reviewers")
        and getattr(kinds.get(str(doc.get("kind"))), "waits_for", "reviewer") == "reviewer"
        for doc in approvals
    )
    pause_steps = {int(doc.get("step", -1)) for doc in approvals}
    effects = effects_of(store, checkpoint.trace_id)
    reviewed = reviewed or any(_handed_off(effect) for effect in effects)
    outside = [
        effect
        for effect in effects
        if not (effect.step in pause_steps and effect.name.startswith(APPROVAL_EFFECTS))
    ]
    keys = [effect.key for effect in effects]
    messages = written_messages(store, keys)
    greeting, sign_off = greeting_and_sign_off(last_reply(store, keys))
    blocked = route.blocked if route is not None else None
    fields: dict[str, Any] = {
        "graph": checkpoint.graph,
        "rule": route.rule if route is not None else None,
        "profile": route.profile if route is not None else None,
        "status": checkpoint.status,
        "end_reason": blocked or checkpoint.state.get("end_reason") or checkpoint.error,
        "loop_protected": blocked is not None,
        "reviewed": reviewed,
        "sent": messages["sent"],
        "drafted": messages["drafted"],
        "wrote": list(dict.fromkeys(effect_label(effect.name) for effect in outside)),
        "greeting": greeting,
        "sign_off": sign_off,
    }
    own = dict(graph.outcome(checkpoint)) if graph is not None else {}
    reason = own.pop("end_reason", None)
    fields["end_reason"] = fields["end_reason"] or reason
    fields["loop_protected"] = fields["loop_protected"] or bool(own.pop("loop_protected", False))
    if graph is not None:
        for name in graph.outcome_fields:
            fields[name] = own.get(name)
    return fields


def _handed_off(effect: Effect) -> bool:
    """Whether the effect is a notice that handed the email to a person (and was taken)."""
    result = effect.doc.get("result") or {}
    return bool(result.get(HAND_OFF)) and not result.get("error")


def outcome_fields(graphs: Mapping[str, Graph]) -> dict[str, tuple[str, ...]]:
    """Each graph's outcome field names, the common ones first."""
    return {name: COMMON_FIELDS + graph.outcome_fields for name, graph in graphs.items()}
