"""Where review links point and what the approval function accepts (from the environment the
entry point read: ``configuration.Configuration.approvals``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class ApprovalConfig:
    """Where links point and what is accepted.

    Attributes:
        base_url: public URL of the approval function (links and the timeout endpoint).
        audience: OIDC audience of the deadline tasks (default ``tasks_url``, else ``base_url``).
        tasks_url: where the deadline tasks call the function (None: ``base_url``). Behind a
            load balancer Cloud Run admits a task only on the function's own URL.
        max_edit_chars: the largest edited draft accepted.
        api_key: bearer key of the pending-approvals list for chat integrations (None: disabled).
        notify_from: the address reviewer emails are sent from (None: the mailbox
            under review). Its Sent folder keeps every link sent.
        iap_audience: the Identity-Aware Proxy audience the inbox verifies
            ``X-Goog-IAP-JWT-Assertion`` for (None: IAP is off).
        iap_keys_url: where IAP's public keys are (None: Google's).
    """

    base_url: str = "http://127.0.0.1:8088"
    audience: str | None = None
    tasks_url: str | None = None
    max_edit_chars: int = 20_000
    api_key: str | None = None
    notify_from: str | None = None
    iap_audience: str | None = None
    iap_keys_url: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> ApprovalConfig:
        """``INBOXFLOW_APPROVAL_URL``, ``INBOXFLOW_TASKS_AUDIENCE``, ``INBOXFLOW_TASKS_URL``,
        ``INBOXFLOW_MAX_EDIT_CHARS``,
        ``INBOXFLOW_API_KEY``, ``INBOXFLOW_NOTIFY_FROM``, ``INBOXFLOW_IAP_AUDIENCE``,
        ``INBOXFLOW_IAP_KEYS_URL``."""
        env = environ
        return cls(
            base_url=env.get("INBOXFLOW_APPROVAL_URL", cls.base_url).rstrip("/"),
            audience=env.get("INBOXFLOW_TASKS_AUDIENCE") or None,
            tasks_url=(env.get("INBOXFLOW_TASKS_URL") or "").rstrip("/") or None,
            max_edit_chars=int(env.get("INBOXFLOW_MAX_EDIT_CHARS", cls.max_edit_chars)),
            api_key=env.get("INBOXFLOW_API_KEY") or None,
            notify_from=env.get("INBOXFLOW_NOTIFY_FROM") or None,
            iap_audience=env.get("INBOXFLOW_IAP_AUDIENCE") or None,
            iap_keys_url=env.get("INBOXFLOW_IAP_KEYS_URL") or None,
        )

    def link(self, approval_id: str, token: str) -> str:
        """The review link sent to a reviewer."""
        return f"{self.base_url}/a/{approval_id}?t={token}"

    @property
    def timeout_url(self) -> str:
        """The endpoint the deadline task calls."""
        return f"{self.tasks_url or self.base_url}/timeout"

    @property
    def tasks_audience(self) -> str:
        """The OIDC audience of the deadline tasks: what the function is called at, by default."""
        return self.audience or self.tasks_url or self.base_url
