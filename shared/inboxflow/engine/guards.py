"""Guards: rules a graph keeps whatever its model answers.

A node proposes a ``Step`` (often from the model's answer); before the runtime
routes or commits it, each guard the node declares may replace it: raise an
urgency, send the trace to a person instead of the customer, end it with an
escalation. The replacement goes through the same route check as the node's own
step, and every guard that fired is recorded in the step's log
(``StepLog.guards``: which guard, and why), so ``inboxflow trace`` shows it.

A guard reads the state the node ran on, the step it proposed and the node's
context (the email, the graph's settings); it decides from that alone: no
model call, no I/O beyond what the context offers. The one exception is the safety
screen (``graphs/screen.py``), which asks the model its own question through the
context, once per trace, and fails safe. A guard that fails fails the
step (the trace needs review): a broken rule never lets the proposal through
unchecked.

See docs/architecture.md §9, "Guards".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..lazy import Lazy, import_reference
from .step import Step

if TYPE_CHECKING:
    from .context import NodeContext


@dataclass(frozen=True)
class Verdict:
    """A guard's answer when it fires: the step to take instead, and why.

    Attributes:
        step: the step that replaces the node's (its ``goto`` must be one of the node's routes).
        reason: one line for the step log and ``inboxflow trace``, e.g.
            ``security signal "password was changed": urgency low -> critical``.
        quiet: the step only gains a record and no judgment changed (the safety screen
            found nothing): it is taken, but the guard is not listed as having fired.
    """

    step: Step
    reason: str
    quiet: bool = False


GuardCheck = Callable[[Any, "Step", "NodeContext"], "Verdict | None"]
"""``(state, proposed step, ctx) -> Verdict | None``: ``None`` lets the step through."""


class Guard:
    """One named rule on one node's steps.

    Args:
        name: short and stable (``urgency_floor``); shown in the trace and the eval report.
        check: the rule, or ``"module:function"`` naming it (imported on its first use,
            so declaring a guard imports nothing).
    """

    def __init__(self, name: str, check: GuardCheck | str) -> None:
        if not name or not name.replace("_", "").isalnum():
            raise ValueError(f"guard name {name!r}: letters, digits and underscores only")
        self.name = name
        self._label = (
            check if isinstance(check, str) else getattr(check, "__qualname__", repr(check))
        )
        self._check: Lazy[GuardCheck] = Lazy(
            (lambda: _import_check(name, check)) if isinstance(check, str) else (lambda: check)
        )

    def __call__(self, state: Any, step: Step, ctx: NodeContext) -> Verdict | None:
        verdict = self._check.get()(state, step, ctx)
        if verdict is not None and not isinstance(verdict, Verdict):
            raise TypeError(
                f"guard {self.name} returned {type(verdict).__name__}, expected Verdict"
            )
        return verdict

    def __repr__(self) -> str:
        return f"Guard({self.name!r}, {self._label!r})"


def _import_check(name: str, reference: str) -> GuardCheck:

    check = import_reference(reference, f"guard {name}")
    if not callable(check):
        raise ValueError(f"guard {name}: {reference!r} is not callable")
    return check  # type: ignore[no-any-return]


def apply_guards(
    guards: tuple[Guard, ...], state: Any, step: Step, ctx: NodeContext
) -> tuple[Step, list[dict[str, str]]]:
    """Run ``guards`` in order over the proposed ``step``; each sees the step the last one left.

    Returns:
        The step to take, and ``[{"guard": name, "reason": why}]`` for every guard that fired
        (a ``quiet`` verdict is taken but not listed).
    """
    fired: list[dict[str, str]] = []
    for guard in guards:
        verdict = guard(state, step, ctx)
        if verdict is None:
            continue
        step = verdict.step
        if not verdict.quiet:
            fired.append({"guard": guard.name, "reason": verdict.reason})
    return step, fired


__all__ = ["Guard", "GuardCheck", "Verdict", "apply_guards"]
