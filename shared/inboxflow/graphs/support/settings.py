"""The support graph's settings (``inboxflow.yaml`` ``graphs: support:``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...field_defaults import empty_dict, empty_list

if TYPE_CHECKING:
    from ...ports.wired import Ports


class SupportSettings(BaseModel):
    """How the support desk acts.

    Attributes:
        reviewers: who approves replies and is told about escalations (on call);
            empty: the mailbox the email arrived in.
        auto_respond_confidence: a reply goes out without review only at or above this.
        auto_send: send replies (True) or save them as Gmail drafts (False).
        approval_deadline_s: how long a reply waits for a reviewer.
        queues: the reviewers of each specialist queue (``billing``, ``technical``,
            ``general``), told once when a ticket is assigned to it; a queue not
            named here goes to ``reviewers`` (else the mailbox).
        forwarders: addresses outside the mailbox's organisation whose authenticated
            manual forwards are their writer's (a partner's inbox, a web-form relay): the
            forwarded message's writer is then the customer (``mail/forward_writer.py``).
            The mailbox's own organisation needs no entry.
    """

    model_config = ConfigDict(extra="forbid")

    reviewers: list[str] = Field(default_factory=empty_list)
    auto_respond_confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    auto_send: bool = False
    approval_deadline_s: float = Field(default=24 * 3600, gt=0)
    queues: dict[Literal["billing", "technical", "general"], list[str]] = Field(
        default_factory=empty_dict
    )
    forwarders: list[str] = Field(default_factory=empty_list)

    @field_validator("reviewers", "forwarders")
    @classmethod
    def _reviewers(cls, value: list[str]) -> list[str]:
        return _addresses(value)

    @field_validator("queues")
    @classmethod
    def _queue_reviewers(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for queue, reviewers in value.items():
            if not reviewers:
                raise ValueError(f"queue {queue!r} has no reviewers")
            _addresses(reviewers)
        return value

    def queue_reviewers(self, queue: str, mailbox: str) -> list[str]:
        """Who hears of an assignment to ``queue``."""
        named = {str(name): reviewers for name, reviewers in self.queues.items()}
        return list(named.get(queue) or self.reviewers or [mailbox])


def _addresses(value: list[str]) -> list[str]:
    for address in value:
        if "@" not in address or any(c.isspace() for c in address):
            raise ValueError(f"{address!r} is not an email address")
    return value


def support_settings(ports: Ports) -> SupportSettings:
    """The support desk's settings among ``ports.graph_settings``."""
    return ports.graph_settings.of("support", SupportSettings)
