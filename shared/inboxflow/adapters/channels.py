"""Each reviewer through their own channel (``reviewers:`` of ``inboxflow.yaml``).

``ChannelNotifier`` is the notifier the approval service (and every graph that
notifies) is given: it settles each reviewer's ``Delivery`` from the config
and hands the message to that channel's adapter, built on first use (so boto3
is imported only by a function that really emails an SES reviewer).

Delivery (``INBOXFLOW_NOTIFY_DELIVERY``): ``live`` sends through SES and
webhooks; ``outbox`` keeps each channel's messages in the store's outbox
(``inboxflow outbox --channel ses``) and sends nothing. Default: ``live`` on
Cloud Functions (``K_SERVICE``), ``outbox`` elsewhere (the demo, tests, the dev
cloud). Gmail follows the workspace, as before: Gmail when it is Google's,
else the outbox.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..config import Delivery, InboxflowConfig, check_webhook_url, webhook_format
from ..ports.documents import DocumentStore
from ..ports.notifier import Notification, NotificationRefused, Notifier
from .built_per_key import BuiltPerKey
from .notifiers import OutboxNotifier, find_copy, outbox_messages

DELIVERY_ENV = "INBOXFLOW_NOTIFY_DELIVERY"

ChannelFactory = Callable[[Delivery], Notifier]


def live_delivery(environ: Mapping[str, str]) -> bool:
    """Whether SES and webhooks really send (see the module docstring).

    Raises:
        ValueError: ``INBOXFLOW_NOTIFY_DELIVERY`` is neither ``live`` nor ``outbox``.
    """
    value = environ.get(DELIVERY_ENV, "").strip()
    if value not in ("", "live", "outbox"):
        raise ValueError(f"{DELIVERY_ENV}={value!r}: expected live or outbox")
    return value == "live" or (not value and bool(environ.get("K_SERVICE")))


class ChannelNotifier(Notifier):
    """Routes each notification to the channel of its reviewer.

    Args:
        config: where ``reviewers:`` and ``channels:`` are read.
        build: makes the adapter of a delivery (called once per distinct delivery).
        store: where receipts of unsearchable channels live (``find`` reads them).
        gmail: the Gmail adapter, for ``find`` of messages only Gmail knows.
    """

    def __init__(
        self,
        config: InboxflowConfig,
        build: ChannelFactory,
        store: DocumentStore,
        gmail: Notifier | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.gmail = gmail
        self._adapters: BuiltPerKey[Delivery, Notifier] = BuiltPerKey(build)

    def adapter(self, delivery: Delivery) -> Notifier:
        """The adapter of ``delivery`` (built now if needed)."""
        return self._adapters.get(delivery)

    def send(self, note: Notification) -> dict[str, Any]:
        delivery = self.config.delivery(note.to)
        receipt = self.adapter(delivery).send(replace(note, to=delivery.address))
        return {**receipt, "channel": delivery.channel}

    def messages(self, to: str | None = None, channel: str | None = None) -> list[dict[str, Any]]:
        """The outbox copies (links redacted), oldest first; see ``outbox_messages``."""
        return outbox_messages(self.store, channel=channel, to=to)

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        # Outbox copies and the receipts of SES and webhooks share one collection.
        found = find_copy(self.store, trace_key)
        if found is None and self.gmail is not None:
            found = self.gmail.find(trace_key, sender)
        return found


def channel_factory(
    store: DocumentStore,
    clock: Any,
    environ: Mapping[str, str],
    gmail: Notifier | None,
) -> ChannelFactory:
    """How each delivery is made: Gmail (or its outbox), SES, webhook, or their outboxes.

    Args:
        store: the outbox and receipts.
        clock: stamps copies.
        environ: delivery mode, credentials, webhook URLs given by ``url_env``.
        gmail: the Gmail adapter (None: the workspace is embedded, Gmail mail goes to the outbox).
    """
    live = live_delivery(environ)

    def build(delivery: Delivery) -> Notifier:
        if delivery.channel == "gmail":
            return gmail if gmail is not None else OutboxNotifier(store, clock, channel="gmail")
        if not live:
            return OutboxNotifier(store, clock, channel=delivery.channel)
        if delivery.channel == "ses":
            from .ses_notifier import SesNotifier

            assert delivery.region and delivery.sender  # checked by the config
            return SesNotifier(store, delivery.region, delivery.sender, clock, environ)
        if delivery.channel == "webhook":
            from .webhook_notifier import WebhookNotifier

            url = _webhook_url(delivery, environ)
            return WebhookNotifier(store, url, webhook_format(url, delivery.format), clock)
        raise ValueError(f"unknown channel {delivery.channel!r}")

    return build


def _webhook_url(delivery: Delivery, environ: Mapping[str, str]) -> str:
    url = delivery.url or environ.get(delivery.url_env or "", "").strip()
    if not url:
        raise NotificationRefused("webhook", f"{delivery.url_env} is not set")
    problem = check_webhook_url(url)
    if problem:
        raise NotificationRefused("webhook", f"{delivery.url_env}: {problem}")
    return url
