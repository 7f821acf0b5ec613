"""Shadow runs: a model or profile run beside the live graph with every effect held
(docs/architecture.md §15).

A shadow trace (``Checkpoint.shadow``, id ``{live}-shadow``) runs the live trace's
graph on the same email through the same runtime and step protocol. What makes it
a shadow is only what its node context is given (``Runtime._context``):

- ``HeldJournal`` as its effect journal: an effect is recorded ``held``, with what
  it would have done (the tool call that asked it), and never performed: no mail,
  draft, ticket, reservation, quote, calendar event or notice;
- ``HeldDocuments`` as its store: a node's own writes (an audit record, a ticket
  saved, a memory change) are held in the journal too, and read back by the later
  steps of the same shadow trace, never written where they would go;
- the shadow's model in place of the live one (``Runtime.shadow_llm``).

A shadow pause asks nobody (``held_pause``): the trace ends ``done`` at the pause,
its checkpoint keeping what it would have asked (kind, payload, reviewers), with
no approval record, so no reviewer is notified, no deadline task is scheduled and
the reviewer inbox lists nothing.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..naming import effect_path
from ..ports.documents import DocumentStore, Listing, Transaction
from ..schema import EFFECTS
from .effects import EffectCall, EffectJournal
from .step import Pause
from .waits import jsonable

T = TypeVar("T")

SHADOW_SUFFIX = "-shadow"
"""What a shadow trace's id adds to its live trace's id."""
HELD = "held"
"""The effect journal status of an effect a shadow held."""
_MAX_TRACE_ID = 64


def shadow_trace_id(live_trace_id: str) -> str:
    """The id of the shadow of trace ``live_trace_id`` (within the envelope's 64 characters)."""
    return f"{live_trace_id[: _MAX_TRACE_ID - len(SHADOW_SUFFIX)]}{SHADOW_SUFFIX}"


def held_result(name: str) -> dict[str, Any]:
    """What a held effect returns to the node that asked it."""
    return {"held": True, "effect": name}


@dataclass(eq=False)
class HeldJournal(EffectJournal):
    """The effect journal of a shadow trace: each effect recorded ``held``, never performed.

    ``effects/{trace_id}:{step}:{name}`` is created ``{status: held, would, result}``:
    ``would`` is what the effect would have done (the tool and its arguments, or the
    effect's name when a node acted on its own). A re-run finds it and returns the
    same result; ``perform`` and ``reconcile`` are never called.
    """

    def once(self, call: EffectCall) -> dict[str, Any]:
        """Record the effect as held (once) and return ``held_result``; nothing is performed.

        A ``store_only`` effect is performed (its writes go to the node's held store,
        ``HeldDocuments``) and its result kept with the held entry, so the node goes on
        as it would have.
        """
        would = dict(call.intent or {"effect": call.name})
        if not call.store_only:
            return self.hold(call.trace_id, call.step, call.name, would, call.expire_at)
        entry = self.store.get(call.path)
        if entry is not None:
            return dict(entry.get("result") or held_result(call.name))
        result = {**call.perform(call.key), "held": True}
        return self.hold(call.trace_id, call.step, call.name, would, call.expire_at, result=result)

    def hold(
        self,
        trace_id: str,
        step: int,
        name: str,
        would: dict[str, Any],
        expire_at: float | None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Create the held entry ``name`` of the step (first one wins) and return its result.

        ``fields`` are set on the entry (``result``: what the node gets instead of
        ``held_result``).
        """
        path = effect_path(trace_id, step, name)
        entry = {
            "status": HELD,
            "trace_id": trace_id,
            "step": step,
            "name": name,
            "would": would,
            "result": held_result(name),
            "held_at": self.clock.now(),
            "expire_at": expire_at,
            **fields,
        }
        if not self.store.create(path, entry):
            entry = self.store.get(path) or entry
        return dict(entry.get("result") or held_result(name))


@dataclass(eq=False)
class HeldDocuments(DocumentStore):
    """The store a shadow trace's nodes see: reads pass, writes are held in the journal.

    A write (``set``, ``create``, a transaction's writes) becomes a held effect
    ``write-{n}`` of the step, ``would: {op, path, doc}``, with ``held_path`` so the
    later steps of the same trace read it back (``get``): a ticket the shadow opened
    at intake is there at its next node, and nowhere else. Listings (``list``) read
    the real store only.

    The live trace runs at the same time, and what it writes must not change what
    the shadow sees (a ticket the live trace opened in the thread would make the
    shadow continue it): a document naming an effect key of the live trace (a
    top-level value starting ``{live_trace_id}:``, as ``opened_by`` or ``trace_key``
    do) reads as absent.

    Args:
        base: the real store (read, and where the journal lives).
        journal: the shadow's held journal.
        trace_id: the shadow trace.
        step: the step running.
        expire_at: the journal entries' expiry.
        live_trace_id: the live trace the shadow runs beside (None: hide nothing).
    """

    base: DocumentStore
    journal: HeldJournal
    trace_id: str
    step: int
    expire_at: float | None = None
    live_trace_id: str | None = None
    _written: dict[str, dict[str, Any] | None] = field(default_factory=dict, init=False)
    _count: int = field(default=0, init=False)

    def get(self, path: str) -> dict[str, Any] | None:
        """This step's held write of ``path``, else an earlier step's, else the real document."""
        if path in self._written:
            held = self._written[path]
            return None if held is None else dict(held)
        earlier = self.base.list(
            EFFECTS.name, where=[("trace_id", "==", self.trace_id), ("held_path", "==", path)]
        )
        if earlier:
            _, latest = max(earlier, key=_held_order)
            would = latest.get("would") or {}
            return None if would.get("op") == "delete" else dict(would.get("doc") or {})
        doc = self.base.get(path)
        return None if doc is None or self._live_wrote(doc) else doc

    def create(self, path: str, doc: dict[str, Any]) -> bool:
        """Held: False when the document exists (really or held), else held as created."""
        if self.get(path) is not None:
            return False
        self._hold("create", path, doc)
        return True

    def set(self, path: str, doc: dict[str, Any]) -> None:
        """Held, never written."""
        self._hold("set", path, doc)

    def select(self, listing: Listing) -> builtins.list[tuple[str, dict[str, Any]]]:
        """The real store's answer, less the live trace's writes (held writes are not listed)."""
        return [(key, doc) for key, doc in self.base.select(listing) if not self._live_wrote(doc)]

    def run_transaction(self, fn: Callable[[Transaction], T]) -> T:
        """Run ``fn`` on a transaction whose reads are ``get`` and whose writes are held."""
        transaction = _HeldTransaction(self)
        result = fn(transaction)
        for op, path, doc in transaction.writes:
            self._hold(op, path, doc)
        return result

    def _live_wrote(self, doc: Mapping[str, Any]) -> bool:
        """Whether ``doc`` names an effect key of the live trace (it is the live trace's write)."""
        if self.live_trace_id is None:
            return False
        mark = f"{self.live_trace_id}:"
        return any(isinstance(value, str) and value.startswith(mark) for value in doc.values())

    def _hold(self, op: str, path: str, doc: dict[str, Any] | None) -> None:
        self._written[path] = None if op == "delete" else dict(doc or {})
        name = f"write-{self._count}"
        self._count += 1
        would = {"op": op, "path": path} | ({} if doc is None else {"doc": doc})
        self.journal.hold(self.trace_id, self.step, name, would, self.expire_at, held_path=path)


def _held_order(item: tuple[str, Mapping[str, Any]]) -> tuple[int, int]:
    """Where a held write comes among a trace's: its step, then its ``write-{n}`` number."""
    doc = item[1]
    return int(doc.get("step", 0)), int(str(doc.get("name", "write-0")).rpartition("-")[2] or 0)


class _HeldTransaction:
    """A transaction of ``HeldDocuments``: reads through it, writes kept for holding."""

    def __init__(self, documents: HeldDocuments) -> None:
        self.documents = documents
        self.writes: list[tuple[str, str, dict[str, Any] | None]] = []

    def get(self, path: str) -> dict[str, Any] | None:
        return self.documents.get(path)

    def set(self, path: str, doc: dict[str, Any]) -> None:
        self.writes.append(("set", path, doc))

    def create(self, path: str, doc: dict[str, Any]) -> None:
        self.writes.append(("create", path, doc))

    def delete(self, path: str) -> None:
        self.writes.append(("delete", path, None))


def held_pause(pause: Pause, now: float) -> dict[str, Any]:
    """What a shadow trace that paused would have asked (its checkpoint's ``pause``)."""
    return {
        "held": True,
        "kind": pause.kind,
        "payload": jsonable(pause.payload),
        "reviewers": list(pause.reviewers),
        "resume_node": pause.resume_node,
        "paused_at": now,
    }
