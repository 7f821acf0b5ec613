"""Deadlines: the task that fires when an approval's round ends, and the timeout policy.

Each round of an approval gets one Cloud Tasks task (``{approval_id}-d{round}``: the queue
refuses a second task of a name, so scheduling it again is harmless and needs no journal);
a wait longer than Cloud Tasks schedules ahead re-schedules itself in hops. When
it fires on a pending approval the pause's ``on_timeout`` policy applies:
escalate (a second round with its own notifications), reject (the kind's stopping
choice, decided by ``TIMEOUT_REVIEWER``) or leave the trace needing review.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

from ..engine.waits import TIMEOUT_REVIEWER, Approval, approval_path, read_approval
from ..lazy import Lazy
from ..ports.documents import Transaction
from ..ports.tasks import ScheduledTask, TaskQueue
from .decisions import Decisions
from .errors import ApprovalError
from .grounds import Grounds, LazyMember, Part

log = logging.getLogger(__name__)

MAX_SCHEDULE_AHEAD_S = 30 * 86400
"""Cloud Tasks schedules at most 30 days ahead; a longer wait re-schedules itself."""


def task_name(approval_id: str, round_: int, hop: int) -> str:
    """The deadline task's name: ``{approval_id}-d{round}``, ``-h{hop}`` after the first hop."""
    return f"{approval_id}-d{round_}" + (f"-h{hop}" if hop else "")


class Deadlines(Part):
    """Schedule each round's deadline and apply the timeout policy when it fires.

    Args:
        grounds: the store (approvals), the clock, the config (the timeout endpoint and the tasks' audience).
        tasks: the queue that holds deadlines.
        decisions: the kinds and the resume of a decided approval.
        announce: notifies the reviewers of a new round (after an escalation).
    """

    tasks = LazyMember[TaskQueue]("The queue that holds deadlines (built on first use).")

    def __init__(
        self,
        grounds: Grounds,
        tasks: TaskQueue | Lazy[TaskQueue],
        decisions: Decisions,
        announce: Callable[[Approval], None],
    ) -> None:
        super().__init__(grounds)
        self.tasks = tasks
        self.decisions = decisions
        self.announce = announce

    def schedule_round(self, approval: Approval) -> None:
        """Schedule the deadline of the approval's current round, once.

        The task's name is the approval's and the round's, and ``TaskQueue.schedule`` refuses
        a second task of that name: a redelivered pause schedules nothing twice. No effect
        record is kept (it was two writes and a read per pause for what the name already
        guarantees). Cloud Tasks frees a name about an hour after its task ran: a pause
        redelivered later than that on a still pending approval (a wait of over 30 days, in
        hops) schedules a second task, which is harmless, as the timeout policy applies once,
        in a transaction, to a pending approval of its round.
        """
        self.schedule(approval, approval.round, 0)

    def cancel_round(self, approval: Approval) -> bool:
        """Delete the deadline task of the decided approval's round (its first hop).

        Called once the decision's resume is published (``Decisions.on_published``): the
        task would only publish it again (``on_timeout`` on a decided approval), so it is a
        delivery, a request and two reads saved for one Cloud Tasks operation. Never
        before the publish: a decision whose publish failed keeps its task, which publishes
        the lost resume at the deadline. A failed or impossible delete leaves the task, which
        then does nothing but that. A wait over 30 days in hops keeps its later hop's task.
        """
        if approval.status != "decided":
            return False
        return self.tasks.cancel(task_name(approval.approval_id, approval.round, 0))

    def schedule(self, approval: Approval, round_: int, hop: int) -> dict[str, Any]:
        """Schedule the deadline task of round ``round_`` (hop ``hop`` of a wait over 30 days)."""
        run_at = min(approval.deadline, self.clock.now() + MAX_SCHEDULE_AHEAD_S)
        name = task_name(approval.approval_id, round_, hop)
        created = self.tasks.schedule(
            ScheduledTask(
                name=name,
                url=self.config.timeout_url,
                payload={"approval_id": approval.approval_id, "round": round_, "hop": hop},
                run_at=run_at,
                audience=self.config.tasks_audience,
            )
        )
        return {"task": name, "run_at": run_at, "created": created}

    def on_timeout(self, approval_id: str, hop: int = 0) -> dict[str, Any]:
        """The deadline task fired: apply the timeout policy if the approval is still pending.

        Does nothing to a decided approval (except publishing a resume that may
        have been lost), so deleting the task once a decision's resume is published
        (``cancel_round``) is only an optimisation. A task that fires before the
        deadline (the 30-day hop of a long wait) re-schedules itself as hop ``hop + 1``.

        Raises:
            ApprovalError: 400 when ``hop`` is not one this approval's window can
                reach (nothing is scheduled).
        """
        if isinstance(hop, bool) or not isinstance(hop, int) or hop < 0:
            raise ApprovalError(400, "Bad request", "hop must be a whole number >= 0")
        approval = read_approval(self.store, approval_id)
        if approval is None:
            return {"action": "none", "reason": "no such approval"}
        if approval.status == "decided":
            self.decisions.publish_resume(approval)
            return {"action": "none", "reason": f"already {approval.decision}"}
        if approval.status != "pending":
            return {"action": "none", "reason": f"already {approval.status}"}
        now = self.clock.now()
        if hop > math.ceil(approval.window_s / MAX_SCHEDULE_AHEAD_S):
            raise ApprovalError(400, "Bad request", f"no hop {hop} in this approval's window")
        if now < approval.deadline:
            scheduled = self.schedule(approval, approval.round, hop + 1)
            return {"action": "rescheduled", **scheduled}
        policy = approval.on_timeout
        if policy == "escalate" and approval.round == 0 and approval.escalate_to:
            return self._escalate(approval, now)
        if policy == "reject":
            return self._reject_on_timeout(approval, now)
        return self._needs_review(approval, now)

    def _escalate(self, approval: Approval, now: float) -> dict[str, Any]:
        def bump(tx: Transaction) -> Approval | None:
            current = Approval.model_validate(tx.get(approval_path(approval.approval_id)))
            if current.status != "pending" or current.round != approval.round:
                return None
            escalated = current.model_copy(
                update={
                    "round": current.round + 1,
                    "deadline": now + current.window_s,
                    "expire_at": max(current.expire_at, now + current.window_s + 7 * 86400),
                }
            )
            tx.set(approval_path(current.approval_id), escalated.model_dump())
            return escalated

        escalated = self.store.run_transaction(bump)
        if escalated is None:
            return {"action": "none", "reason": "changed meanwhile"}
        self.announce(escalated)
        return {"action": "escalated", "to": escalated.escalate_to, "deadline": escalated.deadline}

    def _reject_on_timeout(self, approval: Approval, now: float) -> dict[str, Any]:
        # The kind's choice that stops the trace (its "danger" one). A kind without one has
        # nothing the deadline may decide for the reviewer: the trace needs review instead.
        stop = next(
            (c.value for c in self.decisions.kind(approval).choices if c.style == "danger"), None
        )
        if stop is None:
            return self._needs_review(approval, now)

        def reject(tx: Transaction) -> Approval | None:
            current = Approval.model_validate(tx.get(approval_path(approval.approval_id)))
            if current.status != "pending":
                return None
            decided = current.decided(stop, TIMEOUT_REVIEWER, now, timed_out_at=now)
            tx.set(approval_path(current.approval_id), decided.model_dump())
            return decided

        decided = self.store.run_transaction(reject)
        if decided is None:
            return {"action": "none", "reason": "decided meanwhile"}
        self.decisions.publish_resume(decided)
        return {"action": "rejected"}

    def _needs_review(self, approval: Approval, now: float) -> dict[str, Any]:
        from ..naming import trace_path

        trace_changed: list[bool] = []

        def give_up(tx: Transaction) -> bool:
            trace_changed.clear()  # a retried transaction starts over
            current = Approval.model_validate(tx.get(approval_path(approval.approval_id)))
            trace = tx.get(trace_path(current.trace_id))
            if current.status != "pending":
                return False
            tx.set(
                approval_path(current.approval_id),
                {**current.model_dump(), "status": "timed_out", "timed_out_at": now},
            )
            if (
                trace is not None
                and trace.get("status") == "waiting"
                and trace.get("step") == current.resume_step
            ):
                hours = current.window_s / 3600
                tx.set(
                    trace_path(current.trace_id),
                    {
                        **trace,
                        "status": "needs_review",
                        "error": f"approval {current.approval_id} got no decision within "
                        f"{hours:g} h (timeout policy {current.on_timeout})",
                        "updated_at": now,
                    },
                )
                trace_changed.append(True)
            return True

        changed = self.store.run_transaction(give_up)
        if trace_changed:
            log.warning(
                "approval %s timed out, trace needs review",
                approval.approval_id,
                extra={"trace_id": approval.trace_id, "outcome": "needs_review"},
            )
        return {"action": "needs_review" if changed else "none"}
