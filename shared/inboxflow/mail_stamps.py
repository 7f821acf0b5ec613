"""The stamp on every message we write: ``X-Inboxflow-Trace`` and our Message-ID.

Each write (a reply, a draft, a reviewer notification) is an effect with a key
(``{trace_id}:{step}:{name}``, the effect journal's). What goes out in the
message must not reveal that key: a customer who saw ``trace_id`` could compute
the Message-ID of the next review email and answer it "from" a reviewer. So
the message carries a **stamp** instead: 128 random bits, drawn once per effect
key and kept in ``mail_stamps/{sha256(key)}`` (``{trace_key, trace_id, stamp,
created_at, expire_at}``), nothing anyone can derive from the trace, the step,
the round or the reviewer.

- ``X-Inboxflow-Trace: {stamp}``: loop protection knows our own mail by the
  header being there (``mail/loop_guard.py``); a crashed send finds its message
  again by its value (``find_by_trace_key`` of the Gmail adapter).
- ``Message-ID: <inboxflow.{stamp}@{domain}>``: a reply to a review email leads
  back to it through the stamp's own document, which a review email's stamp is
  drawn with the approval's id in (``about``; ``approvals/review_mails.py``,
  ``approvals/replies.py``): one document per review email, found by its key
  or by its stamp.

A stamp is drawn before the message is sent (create-only, so two runs of one
effect agree on it) and read back, never drawn again, when the effect is
reconciled. Where it is kept:

- a review email's stamp (drawn with ``about``: the approval's id) in its own
  ``mail_stamps`` document, for 90 days, since a reply finds the approval by it;
- any other message's stamp in the effect journal's ``started`` entry of the
  effect that writes it (``effects/{key}``, drawn with the entry:
  ``engine/effects.py``): no write of its own. It expires with the entry (the
  trace's retention, 30 days), which is as long as anything looks it up: only the
  reconciliation of that effect does (``find_by_trace_key``), and it runs only
  while the entry exists. Loop protection knows our mail by the header alone;
  a customer's reply finds its trace by its thread, never by the stamp.

A ``mail_stamps`` document already there wins (a review email's, or one drawn
before stamps went into the journal), then the journal's entry; a write outside
any effect (no entry) draws a ``mail_stamps`` document as before.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Mapping
from typing import Any

from .naming import effect_path
from .ports.documents import DocumentStore
from .schema import EFFECTS, MAIL_STAMPS

RETENTION_S = 90 * 86400
"""How long a stamp is kept: longer than any effect is reconciled or a review waits."""
DEFAULT_DOMAIN = "inboxflow.invalid"
_STAMP = re.compile(r"[0-9a-f]{32}")


def stamp_path(trace_key: str) -> str:
    """Where the stamp of the write with effect key ``trace_key`` is kept."""
    return MAIL_STAMPS.path(hashlib.sha256(trace_key.encode("utf-8")).hexdigest()[:32])


def stamp_for(
    store: DocumentStore,
    trace_key: str,
    now: float | None = None,
    about: Mapping[str, Any] | None = None,
) -> str:
    """The stamp of the write with effect key ``trace_key``, drawn the first time (32 hex digits).

    Args:
        store: where stamps are kept.
        trace_key: the effect journal's key of the write.
        now: the time of the first draw (default: the wall clock).
        about: fields kept with the stamp when it is drawn (a review email's approval id),
            read back by ``stamped``; the effect key fixes them, so a later run of the
            same effect, which finds the stamp drawn, has nothing else to add.
    """
    path = stamp_path(trace_key)
    found = store.get(path)
    if found is not None:
        return str(found["stamp"])
    if about is None:
        journaled = _journal_stamp(store, trace_key)
        if journaled is not None:
            return journaled
    at = time.time() if now is None else now
    stamp = secrets.token_hex(16)
    doc: dict[str, Any] = {
        **(about or {}),
        "trace_key": trace_key,
        "trace_id": trace_key.partition(":")[0],
        "stamp": stamp,
        "created_at": at,
        "expire_at": at + RETENTION_S,
    }
    if store.create(path, doc):
        return stamp
    raced = store.get(path)  # another run of the same effect drew it first
    if raced is None:
        raise RuntimeError(f"the stamp of {trace_key} was created and is gone")
    return str(raced["stamp"])


def stamp_of(store: DocumentStore, trace_key: str) -> str | None:
    """The stamp already drawn for ``trace_key``, or None (nothing was written with it)."""
    found = store.get(stamp_path(trace_key))
    return str(found["stamp"]) if found is not None else _journal_stamp(store, trace_key)


def _journal_stamp(store: DocumentStore, trace_key: str) -> str | None:
    """The stamp drawn with the effect journal's entry of ``trace_key``, or None."""
    if trace_key.count(":") < 2:  # not an effect key: no journal entry to look in
        return None
    trace_id, step, name = trace_key.split(":", 2)
    entry = store.get(effect_path(trace_id, int(step), name)) if step.isdigit() else None
    stamp = entry.get("stamp") if entry is not None else None
    return str(stamp) if stamp else None


def stamped(store: DocumentStore, stamp: str) -> dict[str, Any] | None:
    """The document of a stamp (its effect key, trace and ``about`` fields), or None."""
    stamp = stamp.strip().lower()
    if not _STAMP.fullmatch(stamp):
        return None
    rows = store.list(MAIL_STAMPS.name, where=[("stamp", "==", stamp)], limit=1)
    return rows[0][1] if rows else None


def trace_key_of(store: DocumentStore, stamp: str) -> str | None:
    """The effect key a stamp was drawn for (which trace wrote a message), or None."""
    found = stamped(store, stamp)
    if found is not None:
        return str(found["trace_key"])
    stamp = stamp.strip().lower()
    if not _STAMP.fullmatch(stamp):
        return None
    rows = store.list(EFFECTS.name, where=[("stamp", "==", stamp)], limit=1)
    return rows[0][0] if rows else None


def stamped_message_id(stamp: str, domain: str = DEFAULT_DOMAIN) -> str:
    """The Message-ID (with angle brackets) of the message carrying ``stamp``."""
    return f"<inboxflow.{stamp}@{domain}>"


__all__ = [
    "DEFAULT_DOMAIN",
    "RETENTION_S",
    "stamp_for",
    "stamp_of",
    "stamp_path",
    "stamped",
    "stamped_message_id",
    "trace_key_of",
]
