"""The effect journal: what a step did outside the trace, done once (docs/architecture.md §4, rule 3).

Every side effect a node or the approval service performs (a mail sent, a
ticket opened, a reviewer notified) runs through ``EffectJournal.run``, keyed
by the trace, the step and the effect's name, so that a re-run of the step
returns the recorded result instead of acting again.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..clock import Clock
from ..naming import effect_path
from ..ports.documents import DocumentStore
from ..schema import EFFECTS

FaultHook = Callable[[str], None]


def _no_fault(point: str) -> None:
    return None


@dataclass(frozen=True)
class EffectCall:
    """One effect a step asks of the journal (``EffectJournal.run``'s arguments)."""

    trace_id: str
    step: int
    name: str
    perform: Callable[[str], dict[str, Any]]
    reconcile: Callable[[str], dict[str, Any] | None] | None = None
    expire_at: float | None = None
    intent: Mapping[str, Any] | None = None
    store_only: bool = False
    keyed: bool = False

    @property
    def path(self) -> str:
        """Its journal entry: ``effects/{trace_id}:{step}:{name}``."""
        return effect_path(self.trace_id, self.step, self.name)

    @property
    def key(self) -> str:
        """Its effect key (what ``perform`` and ``reconcile`` get): the entry's id."""
        return self.path.removeprefix(f"{EFFECTS.name}/")


@dataclass(eq=False)
class EffectJournal:
    """Wraps side effects so that a re-run never repeats one (rule 3).

    ``effects/{trace_id}:{step}:{name}`` is written ``started`` before the
    effect and ``done`` with its result after. A re-run returns the recorded
    result; a ``started`` without ``done`` is reconciled (the effect looks for
    the trace of itself, e.g. the ``X-Inboxflow-Trace`` header) before acting again.

    A ``keyed`` effect is one the service it calls makes once by the effect key
    itself (the quoting API's idempotency key: the same key returns the first
    result and changes nothing more). It is written once, ``done`` after the call
    (or ``started`` when the call raised, as before); no ``started`` goes before
    it, because a re-run after a crash that left no entry calls again with the
    same key and gets the first result, which is what a ``started`` without
    ``reconcile`` led to anyway.

    A ``started`` entry carries the effect's mail **stamp** (``stamp``: 128 random
    bits, drawn with the entry, create-only): a message the effect writes carries it
    (``mail_stamps.stamp_for`` reads it here instead of writing a document of its
    own), and the reconciliation that looks for the message runs only while this
    entry exists, so the stamp lives exactly as long as it is looked up.

    Args:
        store: where ``effects/`` live.
        clock: time source.
        fault: fault injection (tests).
    """

    store: DocumentStore
    clock: Clock
    fault: FaultHook = _no_fault

    def run(
        self,
        trace_id: str,
        step: int,
        name: str,
        perform: Callable[[str], dict[str, Any]],
        reconcile: Callable[[str], dict[str, Any] | None] | None = None,
        expire_at: float | None = None,
        intent: Mapping[str, Any] | None = None,
        store_only: bool = False,
        keyed: bool = False,
    ) -> dict[str, Any]:
        """Perform the effect once. ``perform`` and ``reconcile`` get the effect key.

        ``intent`` (the tool call that asked the effect) is what a shadow's journal
        (``engine/shadow.HeldJournal``) records instead of performing, and ``store_only``
        (``perform`` writes only through the node's store) lets it perform against its
        held store; this journal ignores both. ``keyed``: ``perform`` acts at most once
        per key by itself and returns the first result to a repeat (see the class).
        """
        call = EffectCall(
            trace_id, step, name, perform, reconcile, expire_at, intent, store_only, keyed
        )
        return self.once(call)

    def once(self, call: EffectCall) -> dict[str, Any]:
        """What ``run`` does with its arguments: perform ``call`` unless it was done."""
        path, key = call.path, call.key
        entry = self.store.get(path)
        if entry is not None and entry.get("status") == "done":
            return dict(entry.get("result") or {})
        if call.keyed:
            return self._keyed(call, entry)
        if entry is not None and call.reconcile is not None:
            found = call.reconcile(key)
            if found is not None:
                self._finish(path, entry, found, reconciled=True)
                return found
        if entry is None:
            entry = {
                "status": "started",
                "started_at": self.clock.now(),
                "attempts": 1,
                "expire_at": call.expire_at,
                "stamp": secrets.token_hex(16),
            }
            if not self.store.create(path, entry):
                return self.once(call)
        else:
            entry["attempts"] = int(entry.get("attempts", 1)) + 1
            self.store.set(path, entry)
        self.fault(f"before_effect:{call.name}")
        result = call.perform(key)
        self.fault(f"after_effect:{call.name}")
        self._finish(path, entry, result, reconciled=False)
        return result

    def _keyed(self, call: EffectCall, entry: dict[str, Any] | None) -> dict[str, Any]:
        """A ``keyed`` effect not done yet: call, then write the entry once (``done``).

        A call that raises leaves ``started`` (attempts counted), as ``once`` does; a
        crash leaves what was there, and the re-run calls again with the same key.
        """
        entry = {
            "status": "started",
            "started_at": self.clock.now(),
            "attempts": int((entry or {}).get("attempts", 0)) + 1,
            "expire_at": call.expire_at,
        }
        self.fault(f"before_effect:{call.name}")
        try:
            result = call.perform(call.key)
        except Exception:
            self.store.set(call.path, entry)
            raise
        self.fault(f"after_effect:{call.name}")
        self._finish(call.path, entry, result, reconciled=False)
        return result

    def _finish(
        self, path: str, entry: dict[str, Any], result: dict[str, Any], reconciled: bool
    ) -> None:
        self.store.set(
            path,
            {
                **entry,
                "status": "done",
                "result": result,
                "done_at": self.clock.now(),
                "reconciled": reconciled,
            },
        )
