"""Reviewer digests over any document store: pending approvals seeded as records, reviewers'
channels as an outbox that also hands each message (link included) to the test."""

from __future__ import annotations

import contextlib
import re
import threading
from datetime import datetime
from typing import Any

from inboxflow.adapters.notifiers import OutboxNotifier
from inboxflow.approvals.digests import DigestOutcome, Digests, FaultHook
from inboxflow.approvals.grounds import Grounds
from inboxflow.approvals.settings import ApprovalConfig
from inboxflow.approvals.sign_in import SignIns
from inboxflow.clock import FakeClock
from inboxflow.config import InboxflowConfig, parse_config
from inboxflow.engine.waits import Approval, approval_path
from inboxflow.errors import RetryableError
from inboxflow.ports.documents import DocumentStore
from inboxflow.ports.notifier import Notification, Notifier

BASE_URL = "http://approvals.test"
URL = re.compile(r"https?://[^\s\"'<>)]+")
SIGN_IN = re.compile(r"https?://[^\s\"'<>]+/inbox/sign-in\?token=([A-Za-z0-9_%-]+)")


def utc(text: str) -> float:
    """Epoch seconds of ``2027-01-15 08:00`` (UTC)."""
    return datetime.fromisoformat(text + "+00:00").timestamp()


def digest_config(
    reviewers: dict[str, Any], digest: dict[str, Any] | None = None, **more: Any
) -> InboxflowConfig:
    """``inboxflow.yaml`` with these ``reviewers:`` (and top-level ``digest:``, ``more`` keys)."""
    data: dict[str, Any] = {"reviewers": reviewers, **more}
    if digest is not None:
        data["digest"] = digest
    return parse_config(data, graphs={})


def no_fault(point: str) -> None:
    """No crash anywhere."""


class DigestWorld:
    """Approvals in ``store``, reviewers' digests sent to ``inbox`` (tokens included).

    Args:
        store: the document store (SQLite or Firestore).
        clock: a fake clock.
        config: the reviewers' modes and schedules.
    """

    def __init__(self, store: DocumentStore, clock: FakeClock, config: InboxflowConfig) -> None:
        self.store = store
        self.clock = clock
        self.config = config
        self.approval_config = ApprovalConfig(base_url=BASE_URL)
        self.inbox: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._count = 0
        self.digests = self.make()

    def deliver(self, message: dict[str, Any]) -> None:
        with self._lock:
            self.inbox.append(message)

    def outbox(self, store: DocumentStore | None = None) -> OutboxNotifier:
        """The embedded channel over ``store`` (default the world's), delivering to ``inbox``."""
        return OutboxNotifier(store or self.store, self.clock, deliver=self.deliver)

    def make(
        self,
        store: DocumentStore | None = None,
        notifier: Notifier | None = None,
        fault: FaultHook = no_fault,
    ) -> Digests:
        """A ``Digests`` as one function instance would have it (its own store client)."""
        store = store or self.store
        grounds = Grounds(store, self.clock, self.approval_config)
        return Digests(
            grounds,
            notifier or self.outbox(store),
            SignIns(grounds).issue,
            lambda: self.config,
            fault,
        )

    def pend(
        self,
        reviewers: list[str],
        graph: str = "pipeline",
        deadline_in_s: float = 86400.0,
        status: str = "pending",
    ) -> Approval:
        """A pending approval of ``graph`` for ``reviewers``, created now."""
        with self._lock:
            self._count += 1
            n = self._count
        now = self.clock.now()
        approval = Approval(
            approval_id=f"t{n}-3",
            trace_id=f"t{n}",
            graph=graph,
            step=3,
            resume_node="review",
            kind="draft_approval",
            payload={"draft": f"draft {n}"},
            payload_hash="h",
            reviewers=reviewers,
            status=status,  # type: ignore[arg-type]
            deadline=now + deadline_in_s,
            window_s=deadline_in_s,
            created_at=now,
            expire_at=now + 30 * 86400,
        )
        self.store.set(approval_path(approval.approval_id), approval.model_dump())
        return approval

    def decide(self, approval: Approval) -> None:
        """Mark ``approval`` decided (it leaves every pending count)."""
        self.store.set(
            approval_path(approval.approval_id),
            {**approval.model_dump(), "status": "decided", "decision": "approve"},
        )

    def digests_to(self, reviewer: str) -> list[dict[str, Any]]:
        """The digests ``reviewer`` received, oldest first."""
        return [
            m for m in self.inbox if m["to"] == reviewer and m["trace_key"].startswith("digest-")
        ]


class BlockingNotifier(Notifier):
    """Holds each send until ``release`` is set (or 5 s pass): racing callers overlap."""

    def __init__(self, inner: Notifier, release: threading.Event) -> None:
        self.inner = inner
        self.release = release

    def send(self, note: Notification) -> dict[str, Any]:
        self.release.wait(5)
        return self.inner.send(note)

    def find(self, trace_key: str, sender: str | None = None) -> dict[str, Any] | None:
        return self.inner.find(trace_key, sender)


def race(
    world: DigestWorld, reviewer: str, stores: list[DocumentStore], retries: int = 5
) -> list[DigestOutcome]:
    """``len(stores)`` function instances ask for ``reviewer``'s digest at once.

    Each has its own store client; a barrier holds them until all have read what they
    need to claim, and the winner's send is held until another caller has its answer,
    so they overlap.
    Contention (``RetryableError``) is retried, as a redelivery would.
    """
    barrier = threading.Barrier(len(stores))
    release = threading.Event()
    answered = threading.Semaphore(0)
    outcomes: list[DigestOutcome] = []
    lock = threading.Lock()

    def together(point: str) -> None:
        # Every caller has read the record and the approvals before any claims: only the
        # claim's transaction can keep the second from sending.
        if point == "before_claim":
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait(10)

    def instance(store: DocumentStore) -> None:
        digests = world.make(store, BlockingNotifier(world.outbox(store), release), together)
        outcome: DigestOutcome | None = None
        for _ in range(retries):
            try:
                outcome = digests.send_due(reviewer)
                break
            except RetryableError:
                continue
        with lock:
            outcomes.append(outcome or DigestOutcome(reviewer, "gave_up"))
        answered.release()

    threads = [threading.Thread(target=instance, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    # The first answer is the loser's ("busy") unless the claim is broken and both send.
    answered.acquire(timeout=10)
    release.set()
    for thread in threads:
        thread.join(60)
    return outcomes
