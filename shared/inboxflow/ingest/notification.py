"""The Gmail watch notification: ``{"emailAddress", "historyId"}`` as Pub/Sub message data."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from ..envelope import json_object, pubsub_data
from ..mail.addresses import address_key_or_none, ascii_lower

MAX_NOTIFICATION_BYTES = 4096


class BadNotification(ValueError):
    """The message is not a Gmail watch notification; the text says what is wrong."""


@dataclass(frozen=True)
class GmailNotification:
    """A mailbox changed; its history id is now at least ``history_id``."""

    email_address: str
    history_id: int

    def to_pubsub_message(self, message_id: str = "0") -> dict[str, Any]:
        """The Pub/Sub ``message`` Gmail publishes for this change."""
        body = json.dumps({"emailAddress": self.email_address, "historyId": self.history_id})
        return {"data": base64.b64encode(body.encode()).decode(), "messageId": message_id}


def pubsub_message_of(event: Any) -> Any:
    """The Pub/Sub ``message`` of a CloudEvent, its ``data``, or a push body."""
    data = getattr(event, "data", event)
    if isinstance(data, dict) and isinstance(data.get("message"), dict):
        return data["message"]
    return data


def decode_notification(message: Any) -> GmailNotification:
    """Decode a Pub/Sub message carrying a Gmail notification.

    Raises:
        BadNotification: no data, not base64, not JSON, or fields missing or wrong.
    """
    body = pubsub_data(message, MAX_NOTIFICATION_BYTES, BadNotification)
    parsed = json_object(body, "notification", BadNotification)
    address = parsed.get("emailAddress")
    if not isinstance(address, str) or "@" not in address:
        raise BadNotification(f"notification has no usable emailAddress: {address!r}")
    history = parsed.get("historyId")
    if isinstance(history, bool) or not isinstance(history, int | str):
        raise BadNotification(f"notification has no usable historyId: {history!r}")
    try:
        history_id = int(history)
    except ValueError:
        raise BadNotification(f"historyId is not a number: {history!r}") from None
    if history_id <= 0:
        raise BadNotification(f"historyId must be positive: {history_id}")
    return GmailNotification(
        address_key_or_none(address) or ascii_lower(address.strip()), history_id
    )
