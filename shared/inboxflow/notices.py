"""Notices to reviewers outside a pause (escalations, queue assignments, human review).

One place for the rule every such notice follows: each reviewer is told once
through the effect journal, even when the step is redelivered or crashes after
sending; a channel's refusal (``NotificationRefused``, e.g. an unverified SES
recipient) is journaled as final and the other reviewers are still told.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from .engine.context import NodeContext
from .ports.notifier import Notification, NotificationRefused, Notifier

HAND_OFF = "hand_off"
"""Marks a journaled notice's result: a person was handed the email (``inboxflow eval``'s
``reviewed`` counts it when the channel took it)."""


def notify_once(
    ctx: NodeContext,
    notifier: Notifier,
    reviewers: Sequence[str],
    subject: str,
    text: str,
    effect: str,
    sender: str | None = None,
) -> list[str]:
    """Send ``text`` (and its HTML-escaped copy) to each reviewer, once per trace step.

    Args:
        ctx: the node's context (its effect journal).
        notifier: the approval service's notifier.
        reviewers: addresses or configured reviewer names.
        subject: the subject line.
        text: the plain-text body; email content in it is escaped for the HTML part.
        effect: the journal name of each notice, with ``{index}`` for the reviewer's position.
        sender: the mailbox the notice is sent from (default: the notifier's).

    Returns:
        The reviewers who were told (refused ones left out).
    """
    page = f"<pre>{escape(text)}</pre>"
    told: list[str] = []
    for index, reviewer in enumerate(reviewers):

        def send(key: str, to: str = reviewer) -> dict[str, Any]:
            try:
                sent = dict(notifier.send(Notification(to, subject, text, page, key, sender)))
            except NotificationRefused as exc:  # journaled: final; the others are still told
                return {"to": to, "error": str(exc)}
            return {**sent, HAND_OFF: True}

        def find(key: str) -> dict[str, Any] | None:
            found = notifier.find(key, sender)
            return None if found is None else {**found, HAND_OFF: True}

        intent = {"action": "notify", "to": reviewer, "subject": subject}
        if not ctx.effect(effect.format(index=index), send, find, intent).get("error"):
            told.append(reviewer)
    return told
