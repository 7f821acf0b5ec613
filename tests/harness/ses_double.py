"""Amazon SES for tests: moto, plus the two rules moto leaves out.

Moto keeps SES's verified identities and refuses an unverified *sender*, but
models neither the sandbox (every *recipient* must be verified too) nor
throttling. ``SesDouble`` adds both inside moto's SES backend (its
``send_email`` is wrapped while the double runs), raising moto's own service
errors, so moto answers exactly as SES v2 does on the wire and boto3 parses
them into the same ``ClientError`` a real refusal gives:

- ``mock_aws``: moto in-process, behind botocore;
- ``server``: moto's ``ThreadedMotoServer``; the client talks HTTP to it
  (``AWS_ENDPOINT_URL_SESV2``, as a deployed function would be configured).

What moto sent is counted from moto itself: its backend (``mock_aws``) or its
``/moto-api/data.json`` endpoint (``server``). Each SendEmail request is also
recorded as the client sent it (moto keeps only the HTML part).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests

REGION = "eu-west-1"
ACCOUNT = "123456789012"
CREDENTIALS = json.dumps({"aws_access_key_id": "testing", "aws_secret_access_key": "testing"})


class SesDouble:
    """Moto's SES with the sandbox rule and throttling on demand.

    Attributes:
        mode: ``mock_aws`` or ``server``.
        throttle_next: answer this many next SendEmail calls with 429 ``TooManyRequestsException``.
        sandbox: refuse unverified recipients (``MessageRejected``), as SES's sandbox does.
        arrived: every SendEmail request body as it arrived (refused ones included).
        endpoint: the URL the client talks to (``server`` mode).
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.throttle_next = 0
        self.sandbox = True
        self.arrived: list[dict[str, Any]] = []
        self.endpoint: str | None = None
        self._moto_url: str | None = None
        self._lock = threading.Lock()

    # --- the rules moto lacks ------------------------------------------------------

    def _backend(self) -> Any:
        from moto.ses.models import ses_backends

        return ses_backends[ACCOUNT][REGION]

    def fault(self, destinations: list[str]) -> Exception | None:
        """The moto error SES answers this SendEmail with, or None to let moto send it."""
        from moto.ses.exceptions import MessageRejectedError

        with self._lock:
            if self.throttle_next > 0:
                self.throttle_next -= 1
                return _throttled()
        if self.sandbox:
            for address in destinations:
                if not self._backend()._is_verified_address(address):
                    return MessageRejectedError(
                        "Email address is not verified. The following identities failed "
                        f"the check in region {REGION.upper()}: {address}"
                    )
        return None

    # --- what the tests use --------------------------------------------------------

    def environ(self) -> dict[str, str]:
        """The environment a deployed function would have (credentials secret, endpoint)."""
        env = {"INBOXFLOW_SES_CREDENTIALS": CREDENTIALS}
        if self.endpoint:
            env["AWS_ENDPOINT_URL_SESV2"] = self.endpoint
        return env

    def client(self) -> Any:
        """A real boto3 ``sesv2`` client, built as ``SesNotifier`` builds its own."""
        from inboxflow.adapters.ses_notifier import build_client

        client = build_client(REGION, self.environ())
        client.meta.events.register("before-send.sesv2.SendEmail", self._record)
        return client

    def verify(self, *identities: str) -> None:
        """Verify identities (addresses or domains) in moto, through the SES API."""
        client = self.client()
        for identity in identities:
            client.create_email_identity(EmailIdentity=identity)

    def sent(self) -> list[dict[str, Any]]:
        """What moto accepted: ``{id, source, to, subject, body}`` (body: the HTML part)."""
        if self.mode == "server":
            assert self._moto_url is not None
            data = requests.get(f"{self._moto_url}/moto-api/data.json", timeout=10).json()
            messages = data.get("ses", {}).get("Message", [])
            rows = [
                (m["id"], m["source"], m["destinations"], m["subject"], m["body"]) for m in messages
            ]
        else:
            rows = [
                (m.id, m.source, m.destinations, m.subject, m.body)
                for m in self._backend().sent_messages
            ]
        return [
            {"id": i, "source": s, "to": d.get("ToAddresses", []), "subject": sub, "body": b}
            for i, s, d, sub, b in rows
        ]

    def sent_to(self, address: str) -> list[dict[str, Any]]:
        """What moto accepted for ``address``."""
        return [m for m in self.sent() if address in m["to"]]

    def requests_to(self, address: str) -> list[dict[str, Any]]:
        """SendEmail bodies that moto accepted for ``address`` (text and HTML parts)."""
        accepted = {m["subject"] for m in self.sent_to(address)}
        return [
            r
            for r in self.arrived
            if address in r.get("Destination", {}).get("ToAddresses", [])
            and r["Content"]["Simple"]["Subject"]["Data"] in accepted
        ]

    # --- plumbing ------------------------------------------------------------------

    def _record(self, request: Any, **_: Any) -> None:
        with self._lock:
            self.arrived.append(json.loads(request.body or b"{}"))

    @contextmanager
    def _sandboxed(self) -> Iterator[None]:
        from moto.ses.models import SESBackend

        original = SESBackend.send_email
        double = self

        def send_email(
            backend: Any,
            source: str,
            subject: str,
            body: str,
            destinations: Any,
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            refused = double.fault(list(destinations.get("ToAddresses", [])))
            if refused is not None:
                raise refused
            return original(backend, source, subject, body, destinations, *args, **kwargs)

        SESBackend.send_email = send_email  # type: ignore[method-assign]
        try:
            yield
        finally:
            SESBackend.send_email = original  # type: ignore[method-assign]

    @contextmanager
    def running(self) -> Iterator[SesDouble]:
        """Moto for the double's mode, reset before and after."""
        if self.mode == "mock_aws":
            from moto import mock_aws

            with mock_aws(), self._sandboxed():
                yield self
            return
        from moto.server import ThreadedMotoServer

        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        self._moto_url = self.endpoint = f"http://{host}:{port}"
        requests.post(f"{self._moto_url}/moto-api/reset", timeout=10)
        try:
            with self._sandboxed():
                yield self
        finally:
            requests.post(f"{self._moto_url}/moto-api/reset", timeout=10)
            server.stop()


def _throttled() -> Exception:
    """SES v2's 429: moto serialises it from the sesv2 model (the class lives outside moto)."""
    from moto.core.exceptions import ServiceException

    class TooManyRequests(ServiceException):
        code = "TooManyRequestsException"

    return TooManyRequests("Maximum sending rate exceeded.")
