"""How the shadow did beside the live graph: ``inboxflow eval shadow`` (docs/evaluating.md).

Each shadow trace (``Checkpoint.shadow``, ``engine/shadow.py``) is compared with its
live trace at the point they can be compared: the live trace at its first pause
(its state then, folded from its step log) or at its end, the shadow at its end
(a shadow ends at the pause it would have made). Compared are:

- ``decision``: ``ask:{kind}`` where a person was (or would have been) asked, else
  the trace's status;
- ``effects``: what each did outside itself up to that point (the live trace's
  performed effects, the shadow's held ones, an index suffix dropped; the
  reviewer's notification and deadline, and a shadow's held store writes, left out);
- the graph's own outcome fields (``Graph.outcome``) of those states.

Where the live trace's reviewer decided, the shadow's proposal is compared with
the decision: the same payload as approved (or as the reviewer's edit) agrees;
the payload the reviewer rejected disagrees. A deadline decides nothing.

The shadow's cost is its LLM calls and tokens (the step logs' ``llm_calls``),
priced as ``bench/cost.py`` prices them when the checkout has it.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine.runtime import fold
from ...engine.shadow import HELD
from ...engine.waits import TIMEOUT_REVIEWER, Approval, payload_hash
from ...ports.checkpoint import Checkpoint, CheckpointStore, StepLog
from ...ports.documents import DocumentStore
from ...schema import APPROVALS, TRACES
from .outcomes import APPROVAL_EFFECTS, Effect, effect_label, effects_of

if TYPE_CHECKING:
    from ...engine.graph import Graph

COST_SCRIPT = Path(__file__).resolve().parents[4] / "bench" / "cost.py"
"""Where the checkout's price list is (``llm_price``): the report prices tokens with it."""
_HELD_WRITE = re.compile(r"^write-\d+$")
Pricer = Callable[[str, float, float], float]


@dataclass(frozen=True)
class Side:
    """What one trace came to where the two are compared.

    Attributes:
        trace_id: the trace.
        decision: ``ask:{kind}`` when it asked (or would have asked) a person, else its status.
        effects: what it did (or would have done) outside itself, in order.
        fields: the graph's outcome fields of its state there.
        payload: what it put up for a decision (None: it asked nothing).
    """

    trace_id: str
    decision: str
    effects: tuple[str, ...]
    fields: Mapping[str, Any]
    payload: Mapping[str, Any] | None = None

    def compared(self) -> dict[str, Any]:
        """The values compared, by name."""
        return {"decision": self.decision, "effects": list(self.effects), **self.fields}


@dataclass(frozen=True)
class ShadowCase:
    """One shadow trace beside its live trace.

    Attributes:
        graph: the graph both ran.
        live: the live trace's side (None: the live trace is gone).
        shadow: the shadow's side.
        differs: the compared values that differ, ``{name: {"live": ..., "shadow": ...}}``.
        reviewer: what the live trace's reviewer decided (``approved``, ``edited``,
            ``rejected``; None: nobody decided).
        agrees_with_reviewer: the shadow's proposal against that decision (None: unknown).
    """

    graph: str
    live: Side | None
    shadow: Side
    differs: Mapping[str, Mapping[str, Any]]
    reviewer: str | None = None
    agrees_with_reviewer: bool | None = None

    @property
    def agrees(self) -> bool:
        """The shadow came to what the live trace came to."""
        return self.live is not None and not self.differs


@dataclass
class Cost:
    """LLM calls and tokens, and their price where known."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float | None = 0.0
    models: dict[str, int] = field(default_factory=dict)

    def add(self, logs: Sequence[StepLog], price: Pricer | None) -> None:
        """Count the LLM calls of ``logs`` (priced with ``price``; None: no price known)."""
        for entry in logs:
            for call in entry.llm_calls:
                model = str(call.get("model") or "?")
                tokens_in = int(call.get("input_tokens") or 0)
                tokens_out = int(call.get("output_tokens") or 0)
                self.calls += 1
                self.input_tokens += tokens_in
                self.output_tokens += tokens_out
                self.models[model] = self.models.get(model, 0) + 1
                if price is None:
                    self.usd = None
                elif self.usd is not None:
                    self.usd += price(model, tokens_in, tokens_out)


@dataclass
class ShadowReport:
    """Every shadow trace since a time, compared; the shadow's cost beside the live one's."""

    cases: list[ShadowCase]
    shadow_cost: Cost
    live_cost: Cost
    priced: bool

    def by_graph(self) -> dict[str, dict[str, Any]]:
        """Per graph: traces compared, agreement with the live graph and with reviewers."""
        summary: dict[str, dict[str, Any]] = {}
        for case in self.cases:
            row = summary.setdefault(
                case.graph,
                {"traces": 0, "agree": 0, "decided": 0, "agree_with_reviewers": 0, "differing": []},
            )
            row["traces"] += 1
            row["agree"] += case.agrees
            if case.agrees_with_reviewer is not None:
                row["decided"] += 1
                row["agree_with_reviewers"] += case.agrees_with_reviewer
            if not case.agrees:
                row["differing"].append(case.shadow.trace_id)
        for row in summary.values():
            row["agreement"] = round(row["agree"] / row["traces"], 3)
        return summary

    def as_json(self) -> dict[str, Any]:
        """The report as JSON: per graph, every case, the costs."""
        return {
            "graphs": self.by_graph(),
            "cases": [
                {
                    "graph": case.graph,
                    "live_trace_id": case.live.trace_id if case.live else None,
                    "shadow_trace_id": case.shadow.trace_id,
                    "agrees": case.agrees,
                    "differs": case.differs,
                    "reviewer": case.reviewer,
                    "agrees_with_reviewer": case.agrees_with_reviewer,
                }
                for case in self.cases
            ],
            "cost": {"shadow": vars(self.shadow_cost), "live": vars(self.live_cost)},
            "priced": self.priced,
        }


def shadow_report(
    store: DocumentStore,
    checkpoints: CheckpointStore,
    graphs: Mapping[str, Graph],
    since: float | None = None,
    price: Pricer | None = None,
) -> ShadowReport:
    """Compare each shadow trace created at or after ``since`` (epoch seconds) with its live trace.

    Args:
        store: the documents (approvals, the effect journal).
        checkpoints: the traces and their step logs.
        graphs: the graph declarations (pause kinds, outcome projections).
        since: the earliest creation time of a shadow trace taken (None: all).
        price: USD of ``(model, input_tokens, output_tokens)`` (default: ``bench/cost.py``'s,
            when the checkout has it).
    """
    price = price if price is not None else checkout_prices()
    shadow_cost, live_cost = Cost(), Cost()
    journal: dict[str, list[Effect]] = {}
    for effect in effects_of(store):  # read once: a live trace's entries name it only in their ids
        journal.setdefault(effect.trace_id, []).append(effect)
    cases = []
    for _, doc in sorted(
        store.list(TRACES.name, where=[("shadow", "==", True)]),
        key=lambda item: item[1].get("created_at", 0),
    ):
        shadow = Checkpoint.model_validate(doc)
        if since is not None and shadow.created_at < since:
            continue
        shadow_cost.add(checkpoints.step_logs(shadow.trace_id), price)
        live = checkpoints.get_trace(shadow.shadow_of or "")
        if live is not None:
            live_cost.add(checkpoints.step_logs(live.trace_id), price)
        cases.append(_case(store, checkpoints, graphs, journal, shadow, live))
    return ShadowReport(cases, shadow_cost, live_cost, price is not None)


def checkout_prices() -> Pricer | None:
    """``llm_price`` of the checkout's ``bench/cost.py`` (None where there is none)."""
    if not COST_SCRIPT.is_file():
        return None
    spec = importlib.util.spec_from_file_location("inboxflow_bench_cost", COST_SCRIPT)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    priced: Pricer = module.llm_price
    return priced


def _case(
    store: DocumentStore,
    checkpoints: CheckpointStore,
    graphs: Mapping[str, Graph],
    journal: Mapping[str, Sequence[Effect]],
    shadow: Checkpoint,
    live: Checkpoint | None,
) -> ShadowCase:
    graph = graphs.get(shadow.graph)
    shadow_side = _shadow_side(journal.get(shadow.trace_id, ()), graph, shadow)
    if live is None:
        return ShadowCase(shadow.graph, None, shadow_side, {"live": {"live": None, "shadow": "-"}})
    approval = _first_approval(store, graph, live.trace_id)
    live_side = _live_side(journal.get(live.trace_id, ()), checkpoints, graph, live, approval)
    ours, theirs = live_side.compared(), shadow_side.compared()
    differs = {
        name: {"live": ours.get(name), "shadow": theirs.get(name)}
        for name in dict.fromkeys([*ours, *theirs])
        if ours.get(name) != theirs.get(name)
    }
    reviewer, agrees = _reviewer(graph, approval, shadow_side)
    return ShadowCase(shadow.graph, live_side, shadow_side, differs, reviewer, agrees)


def _shadow_side(effects: Sequence[Effect], graph: Graph | None, shadow: Checkpoint) -> Side:
    pause = shadow.pause or {}
    asked = pause.get("kind") if pause.get("held") else None
    held = [
        effect
        for effect in effects
        if effect.doc.get("status") == HELD and not _HELD_WRITE.match(effect.name)
    ]
    return Side(
        shadow.trace_id,
        f"ask:{asked}" if asked else shadow.status,
        _labels(held),
        _fields(graph, shadow),
        pause.get("payload") if asked else None,
    )


def _live_side(
    effects: Sequence[Effect],
    checkpoints: CheckpointStore,
    graph: Graph | None,
    live: Checkpoint,
    approval: Approval | None,
) -> Side:
    if approval is None:
        return Side(live.trace_id, live.status, _labels(effects), _fields(graph, live))
    step = approval.step
    state = fold(checkpoints.step_logs(live.trace_id), upto=step, checkpoint_state=live.state)
    before = [
        effect
        for effect in effects
        if effect.step < step
        or (effect.step == step and not effect.name.startswith(APPROVAL_EFFECTS))
    ]
    at_pause = live.model_copy(update={"state": state})
    return Side(
        live.trace_id,
        f"ask:{approval.kind}",
        _labels(before),
        _fields(graph, at_pause),
        approval.payload,
    )


def _labels(effects: Sequence[Effect]) -> tuple[str, ...]:
    return tuple(effect_label(effect.name) for effect in effects)


def _fields(graph: Graph | None, checkpoint: Checkpoint) -> dict[str, Any]:
    if graph is None:
        return {}
    own = dict(graph.outcome(checkpoint))
    return {name: own.get(name) for name in graph.outcome_fields}


def _first_approval(store: DocumentStore, graph: Graph | None, trace_id: str) -> Approval | None:
    """The live trace's first pause that asked a reviewer (a customer's wait is no review)."""
    kinds = graph.pause_kinds if graph is not None else {}
    found = [
        Approval.model_validate(doc)
        for _, doc in store.list(APPROVALS.name, where=[("trace_id", "==", trace_id)])
    ]
    asked = [
        approval
        for approval in found
        if getattr(kinds.get(approval.kind), "waits_for", "reviewer") == "reviewer"
    ]
    return min(asked, key=lambda approval: approval.step) if asked else None


def _reviewer(
    graph: Graph | None, approval: Approval | None, shadow: Side
) -> tuple[str | None, bool | None]:
    """What the reviewer decided, and whether the shadow's proposal agrees with it."""
    if (
        approval is None
        or approval.status != "decided"
        or approval.decided_by
        in (
            None,
            TIMEOUT_REVIEWER,
            "timeout",
        )
    ):
        return None, None
    kind = graph.pause_kinds.get(approval.kind) if graph is not None else None
    styles = {choice.value: choice.style for choice in getattr(kind, "choices", ())}
    proposed = payload_hash(shadow.payload) if shadow.payload is not None else None
    same_kind = shadow.decision == f"ask:{approval.kind}"
    if styles.get(str(approval.decision)) == "danger":
        return "rejected", (False if same_kind and proposed == approval.payload_hash else None)
    if approval.edited:
        return "edited", same_kind and proposed == approval.applied_payload_hash
    return "approved", same_kind and proposed == approval.payload_hash
