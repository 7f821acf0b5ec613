"""Reviewer emails through Amazon SES v2 (``send_email``) with boto3.

``boto3`` is imported when the first email is sent, never at import time: a
function that never notifies does not pay for it at cold start.

Credentials: ``INBOXFLOW_SES_CREDENTIALS`` (JSON ``{"aws_access_key_id",
"aws_secret_access_key"[, "aws_session_token"]}``, a Secret Manager secret
mounted as an environment variable, see ``infra/ses.tf``), else boto3's own
chain (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, ...).
``AWS_ENDPOINT_URL_SESV2`` (or ``AWS_ENDPOINT_URL``) points it elsewhere (moto).

Answers are sorted once:

=================================================================  ==========================
answer                                                             outcome
=================================================================  ==========================
``TooManyRequestsException``, ``Throttling*``, 5xx, no answer      retried with backoff, then
                                                                   ``RetryableError``
``MessageRejected`` (sandbox: unverified recipient or sender),     ``NotificationRefused``
``MailFromDomainNotVerified``, ``AccountSuspended``,               (recorded on the approval)
``SendingPaused``, ``NotFound``, ``BadRequest``, other 4xx
=================================================================  ==========================

SES cannot be searched for a message afterwards: the moment it accepts one,
its ``MessageId`` is kept with the outbox copy, which is what ``find`` reads.

SES v2 ``SendEmail`` takes no idempotency token (its request has no
``ClientToken``-like member; the SES tokens are on other APIs, e.g. Mail
Manager's ``CreateArchive``), so a crash after SES accepted an email and before
its copy is kept makes the re-run send it again: a known leftover, unlike
Google Chat webhooks (see ``webhook_notifier``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import RetryableError
from ..ports.documents import DocumentStore
from ..ports.notifier import Notification, NotificationRefused, Notifier
from .notifiers import find_copy, keep_copy, outbox_id, outbox_message

log = logging.getLogger(__name__)

CREDENTIALS_ENV = "INBOXFLOW_SES_CREDENTIALS"
THROTTLED = frozenset(
    {"TooManyRequestsException", "Throttling", "ThrottlingException", "RequestThrottled"}
)
MAX_BACKOFF_S = 8.0


class SesNotifier(Notifier):
    """Sends each notification as one SES v2 email (text + HTML).

    Args:
        store: where the receipt (the redacted outbox copy) is kept.
        region: the SES region.
        sender: the verified identity emails come from (``sender`` of ``send`` is ignored:
            SES sends only as verified identities).
        clock: stamps ``sent_at``.
        environ: where credentials and endpoint are read (the entry point's environment;
            None: none, boto3's own chain).
        client: a ready ``sesv2`` client (tests); default built on first send.
        attempts: tries per email when throttled or unavailable.
        sleep: waits between tries (tests pass a recorder).
    """

    channel = "ses"

    def __init__(
        self,
        store: DocumentStore,
        region: str,
        sender: str,
        clock: Any = None,
        environ: Mapping[str, str] | None = None,
        client: Any = None,
        attempts: int = 4,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.region = region
        self.sender = sender
        self.clock = clock
        self.environ = environ or {}
        self._client = client
        self.attempts = max(1, attempts)
        self.sleep = sleep

    @property
    def client(self) -> Any:
        """The ``sesv2`` client (boto3 imported and the client built now if needed)."""
        if self._client is None:
            self._client = build_client(self.region, self.environ)
        return self._client

    def send(self, note: Notification) -> dict[str, Any]:
        request = {
            "FromEmailAddress": self.sender,
            "Destination": {"ToAddresses": [note.to]},
            "Content": {
                "Simple": {
                    "Subject": {"Data": note.subject, "Charset": "UTF-8"},
                    "Body": {
                        "Text": {"Data": note.text, "Charset": "UTF-8"},
                        "Html": {"Data": note.html, "Charset": "UTF-8"},
                    },
                }
            },
            # Tag values allow [A-Za-z0-9_-]: the key's hash, which names the outbox copy too.
            "EmailTags": [{"Name": "inboxflow-effect", "Value": outbox_id(note.trace_key)}],
        }
        answer = self._call(request, note.to)
        message_id = str(answer.get("MessageId") or "")
        now = float(self.clock.now()) if self.clock is not None else time.time()
        message = outbox_message(note, self.sender, now, self.channel)
        return keep_copy(self.store, message, delivered=True, message_id=message_id)

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        return find_copy(self.store, trace_key)

    def _call(self, request: dict[str, Any], to: str) -> dict[str, Any]:
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

        last = ""
        for attempt in range(1, self.attempts + 1):
            try:
                return dict(self.client.send_email(**request))
            except (ValueError, NoCredentialsError) as exc:  # no or bad credentials: deployment
                raise NotificationRefused(self.channel, f"{to}: {exc}") from exc
            except ClientError as exc:
                error = exc.response.get("Error", {})
                code = str(error.get("Code", ""))
                status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
                reason = f"{code or status}: {error.get('Message', '')}".strip()
                if code not in THROTTLED and status < 500 and status != 429:
                    raise NotificationRefused(self.channel, f"{to}: {reason}") from exc
                last = reason
            except BotoCoreError as exc:  # no answer: connection, timeout
                last = f"{type(exc).__name__}: {exc}"
            if attempt < self.attempts:
                delay = min(MAX_BACKOFF_S, 0.5 * 2 ** (attempt - 1))
                log.info("SES send to %s: %s; try %s in %.1fs", to, last, attempt + 1, delay)
                self.sleep(delay)
        raise RetryableError(f"ses: {self.attempts} tries failed, last: {last}")


def build_client(region: str, environ: Mapping[str, str]) -> Any:
    """A ``sesv2`` client for ``region``: our credentials secret, else boto3's chain.

    botocore's own retries are off: ``SesNotifier`` retries (and says so) itself.
    """
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"total_max_attempts": 1, "mode": "standard"},
        connect_timeout=5,
        read_timeout=15,
    )
    options: dict[str, Any] = {"region_name": region, "config": config}
    endpoint = environ.get("AWS_ENDPOINT_URL_SESV2") or environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        options["endpoint_url"] = endpoint
    raw = environ.get(CREDENTIALS_ENV, "").strip()
    if raw:
        options.update(_credentials(raw))
    return boto3.session.Session().client("sesv2", **options)


def _credentials(raw: str) -> dict[str, str]:
    try:
        values = json.loads(raw)
        found = {
            name: str(values[name])
            for name in ("aws_access_key_id", "aws_secret_access_key", "aws_session_token")
            if values.get(name)
        }
    except (ValueError, AttributeError, TypeError):
        found = {}
    if "aws_access_key_id" not in found or "aws_secret_access_key" not in found:
        raise ValueError(
            f"{CREDENTIALS_ENV}: expected JSON with aws_access_key_id and aws_secret_access_key"
        )
    return found
