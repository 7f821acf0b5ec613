"""Watch renewal: ``users.watch`` for every registered mailbox (daily, from Cloud Scheduler).

Gmail stops publishing a mailbox's changes about seven days after its last
``users.watch``. Renewal stores the answer's history id (as the cursor of a
mailbox that has none: mail after it is ingested) and expiration. One failing
mailbox does not stop the others; the summary says which failed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from ..clock import Clock
from ..ports.documents import DocumentStore
from ..ports.gmail_reader import INBOX, GmailReader
from .mailboxes import MailboxRegistry

log = logging.getLogger("inboxflow.ingest.watch")

TOPIC_ID = "inboxflow-gmail"


def gmail_topic(environ: dict[str, str] | None = None) -> str:
    """The topic Gmail publishes to: ``INBOXFLOW_GMAIL_TOPIC``, else ``inboxflow-gmail`` of the project.

    A bare topic id is qualified with ``GOOGLE_CLOUD_PROJECT``.
    """
    env = os.environ if environ is None else environ
    topic = env.get("INBOXFLOW_GMAIL_TOPIC") or TOPIC_ID
    if topic.startswith("projects/"):
        return topic
    project = env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT") or "inboxflow-local"
    return f"projects/{project}/topics/{topic}"


def renew_watches(
    store: DocumentStore,
    gmail: GmailReader,
    clock: Clock,
    topic: str | None = None,
    only: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """Call ``users.watch`` for every registered mailbox and record the outcome.

    Args:
        store: holds ``mailboxes/``.
        gmail: the Gmail reader.
        clock: time source.
        topic: full topic name (default ``gmail_topic()``).
        only: renew only mailboxes whose address it accepts.

    Returns:
        ``{"topic", "renewed": [{address, history_id, expiration_ms, cursor}],
        "failed": [{address, error}]}``.
    """
    topic = topic or gmail_topic()
    registry = MailboxRegistry(store)
    renewed: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for mailbox in registry.mailboxes():
        if only is not None and not only(mailbox.address):
            continue
        try:
            result = gmail.watch(mailbox.address, topic, [INBOX])
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
            }
        )
    return {"topic": topic, "renewed": renewed, "failed": failed}
