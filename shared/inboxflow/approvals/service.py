"""The approval protocol (docs/architecture.md §6) as one object: notify, check links, decide,
time out.

``ApprovalService`` is what the pausing node (through ``Runtime.on_pause``),
the approval HTTP function, reviewer replies and the CLI share. It composes
the parts, each one job: ``tokens`` (links and form tokens), ``decisions``
(first decision wins, the resume), ``notifications`` (reviewer emails) and
``deadlines`` (the deadline task and the timeout policy); the reviewer's
inbox adds ``inbox`` (its queries), ``sign_ins`` and ``sessions``.

Callers use the part that owns a step: ``service.tokens.check(...)``,
``service.decisions.decide(...)``, ``service.deadlines.on_timeout(...)``; each
signature lives once, on its part. The service itself holds only what spans
parts: the wiring, ``after_pause`` (notify, schedule, digest) and the reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..clock import Clock, SystemClock
from ..engine.effects import EffectJournal
from ..engine.pause_kinds import kind_lookup
from ..engine.waits import Approval, read_approval
from ..lazy import Lazy
from ..ports.documents import DocumentStore
from ..ports.notifier import Notifier
from ..ports.tasks import TaskQueue
from .deadlines import Deadlines
from .decisions import Decisions
from .digests import Digests
from .grounds import Grounds
from .inbox import Inbox
from .notify import Notifications
from .records import pending_approvals
from .sessions import Sessions
from .settings import ApprovalConfig
from .sign_in import SignIns
from .tokens import Tokens

if TYPE_CHECKING:
    from ..config import InboxflowConfig
    from ..engine.graph import Graph
    from ..ports.wired import Ports


class ApprovalService:
    """Notify reviewers, verify links, record decisions, apply deadlines.

    Args:
        store: where approvals and token records live.
        tasks: the queue that holds deadlines (a ``Lazy`` one is built on first use).
        notifier: sends reviewer emails (a ``Lazy`` one is built on first send).
        resume: publishes the envelope that resumes a trace (``waits.publish_resume``).
        clock: time source.
        config: links and limits.
        settings: ``inboxflow.yaml`` (who gets digests and when); default: none do.
        sign_in: ``reviewer -> URL`` of a single-use inbox sign-in (default: ``SignIns.issue``).
        graphs: the runtime's graphs, by name: the pause kinds a decision is checked against.
    """

    def __init__(
        self,
        store: DocumentStore,
        tasks: TaskQueue | Lazy[TaskQueue],
        notifier: Notifier | Lazy[Notifier],
        resume: Callable[[str, Mapping[str, Any]], Any],
        clock: Clock | None = None,
        config: ApprovalConfig | None = None,
        settings: InboxflowConfig | None = None,
        sign_in: Callable[[str], str] | None = None,
        *,
        graphs: Mapping[str, Graph],
    ) -> None:
        from ..config import InboxflowConfig

        self.store = store
        self.clock = clock or SystemClock()
        self.config = config or ApprovalConfig()
        self.settings = settings or InboxflowConfig()
        self.journal = EffectJournal(store, self.clock)
        grounds = Grounds(store, self.clock, self.config)
        self.tokens = Tokens(grounds)
        self.graphs = graphs
        self.decisions = Decisions(grounds, self.tokens, resume, kind_lookup(graphs))
        self.digests = Digests(
            grounds, notifier, sign_in or self.sign_in_link, lambda: self.settings
        )
        self.notifications = Notifications(
            grounds, notifier, self.journal, self.tokens, self.view, each=self.digests.wants_each
        )
        self.deadlines = Deadlines(grounds, tasks, self.decisions, self.after_pause)
        self.decisions.on_published = self.deadlines.cancel_round
        self.inbox = Inbox(store, self.clock, lambda: sorted(graphs))
        self.sign_ins = SignIns(grounds)
        self.sessions = Sessions(store, self.clock)

    @property
    def tasks(self) -> TaskQueue:
        """The queue that holds deadlines."""
        return self.deadlines.tasks

    @property
    def notifier(self) -> Notifier:
        """The channel reviewer emails go through (graphs send their own notices by it too)."""
        return self.notifications.notifier

    @notifier.setter
    def notifier(self, notifier: Notifier) -> None:
        self.notifications.notifier = notifier
        self.digests.notifier = notifier

    @property
    def resume(self) -> Callable[[str, Mapping[str, Any]], Any]:
        """Publishes the envelope that resumes a trace (``Runtime.resume``)."""
        return self.decisions.resume

    @resume.setter
    def resume(self, resume: Callable[[str, Mapping[str, Any]], Any]) -> None:
        self.decisions.resume = resume

    def after_pause(self, approval: Approval) -> None:
        """Notify the reviewers of the current round and schedule its deadline, once each.

        Safe to call again (a redelivery of the pausing step): each email is an
        effect, recorded in the journal and reconciled by key; the deadline task is
        named after the approval's round, which the queue takes once. The
        round's reviewers who take digests get theirs if one is due
        (``Digests.on_pause``; each digest is claimed once on the reviewer's record).
        """
        current = self.get(approval.approval_id) or approval
        if current.status != "pending":
            return
        unavailable = self.notifications.notify_round(current)
        self.deadlines.schedule_round(current)
        unavailable = self.digests.on_pause(current) or unavailable
        if unavailable is not None:
            raise unavailable  # redelivered: the reviewers already notified are skipped

    def sign_in_link(self, reviewer: str) -> str:
        """A single-use sign-in URL to ``reviewer``'s inbox (``SignIns.issue``)."""
        return self.sign_ins.issue(reviewer)

    def get(self, approval_id: str) -> Approval | None:
        """An approval by id, or None."""
        return read_approval(self.store, approval_id)

    def pending(self, reviewer: str | None = None) -> list[Approval]:
        """Pending approvals (for ``reviewer`` when given), soonest deadline first."""
        return pending_approvals(self.store, reviewer)

    def view(self, approval: Approval, reviewer: str) -> Any:
        """The page model of an approval as ``reviewer`` sees it."""
        from .pages import view_of

        return view_of(approval, self.decisions.kind(approval), reviewer)


def approval_service(ports: Ports) -> ApprovalService:
    """The approval service the root built into ``ports`` (``build_runtime``), as its type.

    ``Ports.approvals`` promises only what the ports may know of it (``ports.wired.Approvals``);
    the features and the tooling above the approvals package read it whole through this.
    """
    return cast("ApprovalService", ports.approvals)
