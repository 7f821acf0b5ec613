"""Watch renewal: ``users.watch`` for every registered mailbox (daily, from Cloud Scheduler).

Gmail stops publishing a mailbox's changes about seven days after its last
``users.watch``. Renewal stores the answer's history id (as the cursor of a
mailbox that has none: mail after it is ingested) and expiration. One failing
mailbox does not stop the others; the summary says which failed.

A mailbox whose watch had lapsed (expired, or failed to renew), or whose
cursor is behind the watch's history id (notifications acknowledged while it
was disconnected), may hold mail nobody was told of: once renewed,
``catch_up(address, history_id)`` ingests it at once (the history from its cursor, or a catch-up listing when Gmail no
longer has it), so what arrived during the lapse is not left waiting for the
next mail. A disconnected mailbox (``invalid_grant``) is skipped: it needs a
person (``inboxflow mailbox connect``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..clock import Clock
from ..ports.documents import DocumentStore
from ..ports.gmail_reader import INBOX, GmailReader, MailboxDisconnected
from .mailboxes import DISCONNECTED, MailboxRegistry

log = logging.getLogger("inboxflow.ingest.watch")

TOPIC_ID = "inboxflow-gmail"


def gmail_topic(environ: Mapping[str, str]) -> str:
    """The topic Gmail publishes to: ``INBOXFLOW_GMAIL_TOPIC``, else ``inboxflow-gmail`` of the project.

    A bare topic id is qualified with ``GOOGLE_CLOUD_PROJECT``. ``environ`` is the entry
    point's environment.
    """
    env = environ
    topic = env.get("INBOXFLOW_GMAIL_TOPIC") or TOPIC_ID
    if topic.startswith("projects/"):
        return topic
    project = env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT") or "inboxflow-local"
    return f"projects/{project}/topics/{topic}"


def renew_watches(
    store: DocumentStore,
    gmail: GmailReader,
    clock: Clock,
    topic: str,
    only: Callable[[str], bool] | None = None,
    catch_up: Callable[[str, int], Any] | None = None,
) -> dict[str, Any]:
    """Call ``users.watch`` for every registered mailbox and record the outcome.

    Args:
        store: holds ``mailboxes/``.
        gmail: the Gmail reader.
        clock: time source.
        topic: full topic name (``gmail_topic`` of the environment).
        only: renew only mailboxes whose address it accepts.
        catch_up: ``(address, history_id)``: ingest a mailbox whose watch had lapsed or
            whose cursor is behind its history.

    Returns:
        ``{"topic", "renewed": [{address, history_id, expiration_ms, cursor, lapsed}],
        "failed": [{address, error}], "disconnected": [address]}``.
    """
    registry = MailboxRegistry(store)
    renewed: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    disconnected: list[str] = []
    for mailbox in registry.mailboxes():
        if only is not None and not only(mailbox.address):
            continue
        if mailbox.health == DISCONNECTED:
            disconnected.append(mailbox.address)
            continue
        now_ms = clock.now() * 1000
        lapsed = mailbox.history_id is not None and (
            mailbox.watch_error is not None
            or mailbox.watch_expiration_ms is None
            or mailbox.watch_expiration_ms <= now_ms
        )
        try:
            result = gmail.watch(mailbox.address, topic, [INBOX])
        except MailboxDisconnected as exc:
            disconnected.append(mailbox.address)
            if registry.mark_disconnected(mailbox.address, str(exc), clock.now()):
                log.error(
                    "mailbox disconnected: %s (%s); reconnect it with "
                    "`inboxflow mailbox connect %s`",
                    mailbox.address,
                    exc,
                    mailbox.address,
                    extra={"outcome": "mailbox_disconnected"},
                )
            continue
        except Exception as exc:  # one mailbox's failure (API, credentials) never stops the rest
            error = f"{type(exc).__name__}: {exc}"
            log.error("users.watch failed for %s: %s", mailbox.address, error)
            failed.append({"address": mailbox.address, "error": error})
            try:
                registry.record_watch(mailbox.address, clock.now(), error=error)
            except Exception:  # the failure is already in the summary
                log.exception("could not record the watch failure of %s", mailbox.address)
            continue
        updated = registry.record_watch(
            mailbox.address,
            clock.now(),
            history_id=result.history_id,
            expiration_ms=result.expiration_ms,
        )
        renewed.append(
            {
                "address": mailbox.address,
                "history_id": result.history_id,
                "expiration_ms": result.expiration_ms,
                "cursor": updated.history_id,
                "lapsed": lapsed,
            }
        )
        behind = mailbox.history_id is not None and result.history_id > mailbox.history_id
        if (lapsed or behind) and catch_up is not None:
            try:
                catch_up(mailbox.address, result.history_id)
            except Exception as exc:  # the next notification lists from the cursor anyway
                log.warning(
                    "catch-up of %s after its lapsed watch failed: %s", mailbox.address, exc
                )
    return {"topic": topic, "renewed": renewed, "failed": failed, "disconnected": disconnected}
