"""Runs cases: each on a fresh embedded home with a fixed clock, through the real runtime.

A case's mail goes in through ``inboxflow.dev.file_inbox`` (what ``inboxflow run``
does): routing from ``inboxflow.yaml``, loop protection, a reply resuming its
thread's trace, the effect journal. After each email, the pauses that wait for
a reviewer take the case's ``decide:`` items in order, through the approval
service (``decide_as``, as a reviewer's API call). Between the emails of a
conversation the clock moves ``GAP_S`` on. Cases run in worker processes (each
imports the graphs once) when there are several.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal

from ...approvals.service import approval_service
from ...schema import TRACES
from .cases import Case, Decision
from .checks import FieldCheck, check

Model = Literal["offline", "gemini"]
CLOCK_START = 1_800_000_000.0
"""The fixed clock every case starts at: 2027-01-15T08:00:00Z."""
GAP_S = 600.0
"""How far the clock moves between the emails of a conversation."""
STEP_DELTA_CHARS = 800
ISOLATED_PREFIXES = ("INBOXFLOW_",)
KEPT_VARIABLES = frozenset({"INBOXFLOW_LLM"})
KEPT_PREFIXES = ("INBOXFLOW_GEMINI_",)
"""The environment a case sees: no ``INBOXFLOW_*`` setting of the shell (reviewers, auto-send,
a CRM or quoting URL, a Gmail double...) but the Gemini ones, so that a case's result depends
on the data set, the code and the model only."""


@dataclass(frozen=True)
class RunOptions:
    """How the cases run.

    Attributes:
        model: ``offline`` (the deterministic model) or ``gemini`` (through the LLM port's
            selection: ``GEMINI_API_KEY``, Vertex settings, or ``INBOXFLOW_GEMINI_BASE_URL``).
        judge: score each reply against the case's ``criteria:``.
        config: the ``inboxflow.yaml`` routing the mail (None: none, every email to pipeline).
        environ: the environment to start from (default: this process's).
    """

    model: Model = "offline"
    judge: bool = False
    config: Path | None = None
    environ: Mapping[str, str] | None = None

    def case_environ(self) -> dict[str, str]:
        """The environment of a case's runtime (see ``KEPT_PREFIXES``)."""
        base = dict(os.environ if self.environ is None else self.environ)
        env = {
            name: value
            for name, value in base.items()
            if not name.startswith(ISOLATED_PREFIXES)
            or name in KEPT_VARIABLES
            or name.startswith(KEPT_PREFIXES)
        }
        env["INBOXFLOW_LLM"] = self.model
        if self.config is not None:
            env["INBOXFLOW_CONFIG"] = str(self.config)
        else:
            env["INBOXFLOW_CONFIG"] = os.devnull
        return env


@dataclass
class CaseResult:
    """What one case came to.

    Attributes:
        case_id: the case.
        graph: the graph of the outcome trace (None: no trace).
        trace_id: the trace whose outcome is compared (the last email's, or the one it continued).
        trace_ids: every trace of the case, in order.
        actions: what ingest did with each email (``started``, ``resumed``...).
        outcome: every outcome field of that trace.
        checks: one per ``expect:`` field.
        never_broken: the ``never:`` items that happened (anywhere in the case's home).
        notes: decisions left unused, refused decisions, a mail that made no trace.
        error: why the case could not run to its outcome (a crash, a refused decision).
        steps: the outcome trace's step log, condensed.
        judge: the judge's verdict on the reply, with ``--judge``.
        seconds: wall time of the case.
    """

    case_id: str
    graph: str | None = None
    trace_id: str | None = None
    trace_ids: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    outcome: dict[str, Any] = field(default_factory=dict)
    checks: list[FieldCheck] = field(default_factory=list)
    never_broken: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    judge: dict[str, Any] | None = None
    reply: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """Every label holds, no ``never`` broken, no error."""
        return self.error is None and not self.never_broken and all(c.ok for c in self.checks)


def run_case(case: Case, options: RunOptions) -> CaseResult:
    """Run ``case`` on a fresh home; never raises (a crash is the result's ``error``)."""
    started = time.perf_counter()
    result = CaseResult(case.id)
    with tempfile.TemporaryDirectory(prefix="inboxflow-eval-") as home:
        runtime = None
        try:
            runtime = case_runtime(Path(home), options)
            _play(case, runtime, result)
            _score(case, runtime, result, options)
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}"
            result.notes.append(traceback.format_exc(limit=6))
        finally:
            if runtime is not None:
                close_runtime(runtime)
    result.seconds = round(time.perf_counter() - started, 3)
    return result


def case_runtime(home: Path, options: RunOptions) -> Any:
    """An embedded runtime on ``home`` as a case runs on: SQLite, the in-process bus, the
    embedded workspace with the sample CRM, knowledge base and calendar, the fixed clock."""
    from inboxflow.clock import FakeClock
    from inboxflow.knowledge import knowledge_base_for, seed_knowledge
    from inboxflow.services import build_runtime
    from inboxflow.settings import Settings
    from inboxflow.workspace import seed_workspace

    settings = Settings(
        home=home,
        project="inboxflow-eval",
        store="sqlite",
        bus="inprocess",
        tasks="sqlite",
        workspace="store",
        environ=options.case_environ(),
    )
    runtime = build_runtime(settings, clock=FakeClock(CLOCK_START))
    seed_workspace(runtime.store, runtime.clock.now())
    seed_knowledge(knowledge_base_for(runtime.ports))
    return runtime


def close_runtime(runtime: Any) -> None:
    """Close the home's SQLite connections (the vector index has its own) before it is removed."""
    vectors = runtime.ports.vectors if runtime.ports.built("vectors") else None
    if vectors is not None and hasattr(vectors, "close"):
        vectors.close()
    runtime.store.close()


def _play(case: Case, runtime: Any, result: CaseResult) -> None:
    """Deliver the case's mail in order, deciding reviewer pauses after each email."""
    from inboxflow.dev.file_inbox import FileInbox
    from inboxflow.mail import load_email_file

    inbox = FileInbox(runtime, runtime.ports.config)
    decisions = list(case.decide)
    for index, path in enumerate(case.mail):
        if index:
            runtime.clock.advance(GAP_S)
        email = load_email_file(path, case.mailbox)
        delivered = inbox.deliver(email, gmail_id=f"eval-{index}-{case.id}")
        runtime.bus.drain()
        result.actions.append(delivered.action)
        if delivered.trace_id is None:
            result.notes.append(
                f"{path.name}: {delivered.action}, no trace ({delivered.reason or 'no reason'})"
            )
        else:
            result.trace_id = delivered.trace_id
            if delivered.trace_id not in result.trace_ids:
                result.trace_ids.append(delivered.trace_id)
        _decide(runtime, decisions, result)
    if decisions:
        result.notes.append(
            "decide: no pause asked for " + ", ".join(decision.describe() for decision in decisions)
        )


def _decide(runtime: Any, decisions: list[Decision], result: CaseResult) -> None:
    """Give the pending reviewer pauses the next decisions, oldest pause first."""
    from inboxflow.approvals.errors import ApprovalError
    from inboxflow.schema import APPROVALS

    service = approval_service(runtime.ports)
    while decisions:
        pending = sorted(
            (
                doc
                for _, doc in runtime.store.list(
                    APPROVALS.name, where=[("status", "==", "pending")]
                )
            ),
            key=lambda doc: (float(doc.get("created_at") or 0), str(doc.get("approval_id"))),
        )
        waiting = [doc for doc in pending if doc.get("reviewers")]
        if not waiting:
            return
        approval = waiting[0]
        decision = decisions.pop(0)
        current = service.get(str(approval["approval_id"]))
        if current is None:
            raise RuntimeError(f"approval {approval['approval_id']} vanished while waiting")
        kind = service.decisions.kind(current)
        choice = _choice(decision.choice, kind)
        try:
            service.decisions.decide_as(
                str(approval["approval_id"]),
                str(approval["reviewers"][0]),
                choice,
                edit=decision.fields,
                comment=decision.comment,
            )
        except ApprovalError as exc:
            raise ValueError(
                f"decide: {decision.describe()} at a {approval.get('kind')} pause "
                f"(choices: {', '.join(kind.values)}): {exc.message}"
            ) from None
        runtime.bus.drain()


def _choice(wanted: str, kind: Any) -> str:
    """``edit`` is the kind's choice that applies edits when the kind has no ``edit`` choice."""
    if wanted == "edit" and kind.choice("edit") is None:
        editing = next((c.value for c in kind.choices if c.applies_edit), None)
        return editing or wanted
    return wanted


def _score(case: Case, runtime: Any, result: CaseResult, options: RunOptions) -> None:
    from inboxflow.dev.eval.outcomes import trace_outcome

    store = runtime.store
    checkpoint = store.get_trace(result.trace_id) if result.trace_id else None
    if checkpoint is not None:
        result.graph = checkpoint.graph
        result.outcome = trace_outcome(store, runtime.graphs, checkpoint)
        result.steps = condensed_steps(store, checkpoint.trace_id)
        result.reply = _reply(store, checkpoint)
    for name, expected in case.expect.items():
        result.checks.append(check(name, expected, result.outcome.get(name)))
    result.never_broken = _broken(case.never, store, runtime.graphs)
    if options.judge and case.criteria:
        result.judge = _judged(case, runtime, result)


def _broken(never: Iterable[str], store: Any, graphs: Mapping[str, Any]) -> list[str]:
    """The ``never`` items that happened in any trace of the home."""
    from inboxflow.dev.eval.outcomes import trace_outcome

    never = list(never)
    if not never:
        return []
    seen: dict[str, Any] = {"sent": set(), "drafted": set(), "wrote": set(), "reviewed": False}
    for trace_id, _ in store.list(TRACES.name):
        checkpoint = store.get_trace(trace_id)
        if checkpoint is None:
            continue
        outcome = trace_outcome(store, graphs, checkpoint)
        for name in ("sent", "drafted", "wrote"):
            seen[name].update(outcome[name])
        seen["reviewed"] = seen["reviewed"] or outcome["reviewed"]
    broken = []
    for item in never:
        if item.startswith("to:"):
            if item[3:] in seen["sent"] | seen["drafted"]:
                broken.append(item)
        elif seen[item]:
            broken.append(item)
    return broken


def _reply(store: Any, checkpoint: Any) -> str | None:
    """The last message the trace wrote to someone, or the draft its pause holds."""
    from inboxflow.dev.eval.outcomes import effects_of
    from inboxflow.schema import MAILBOX_DRAFTS, MAILBOX_SENT

    keys = {effect.key for effect in effects_of(store, checkpoint.trace_id)}
    written = [
        doc
        for collection in (MAILBOX_SENT.name, MAILBOX_DRAFTS.name)
        for _, doc in store.list(collection)
        if doc.get("trace_key") in keys
    ]
    if written:
        return str(max(written, key=lambda doc: float(doc.get("created_at") or 0)).get("body"))
    payload = (checkpoint.pause or {}).get("payload") or {}
    for name in ("draft", "reply", "content", "body"):
        value = payload.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _judged(case: Case, runtime: Any, result: CaseResult) -> dict[str, Any]:
    from inboxflow.mail import load_email_file

    from .judge import judge_reply

    if not result.reply:
        return {"score": None, "reasoning": "no reply to judge", "model": None}
    email = load_email_file(case.mail[-1], case.mailbox)
    text = f"From: {email.sender.formatted()}\nSubject: {email.subject}\n\n{email.body_text}"
    try:
        return judge_reply(runtime.llm, case.criteria or "", text, result.reply)
    except Exception as exc:
        return {"score": None, "reasoning": f"the judge failed: {exc}", "model": None}


def condensed_steps(store: Any, trace_id: str) -> list[dict[str, Any]]:
    """The trace's step log for a report: node, error, calls, and the state it changed (shortened)."""
    steps = []
    for log in store.step_logs(trace_id):
        delta = json.dumps(
            {**log.output_delta, **{k: v for k, v in log.output_patch.items()}},
            ensure_ascii=False,
            default=str,
        )
        steps.append(
            {
                "step": log.step_order,
                "node": log.step_name,
                "routed_to": log.routed_to,
                "error": log.error,
                "tools": [str(call.get("name")) for call in log.tool_calls],
                "llm": [str(call.get("task")) for call in log.llm_calls],
                "delta": delta
                if len(delta) <= STEP_DELTA_CHARS
                else delta[:STEP_DELTA_CHARS] + "…",
            }
        )
    return steps


# --- many cases -----------------------------------------------------------------------------------


def _warm_worker() -> None:
    """Import what every case needs once per worker process (graphs, nodes, tools, parsers)."""
    import logging

    from inboxflow.graphs import graph_registry

    logging.disable(logging.WARNING)
    for graph in graph_registry(os.environ).values():
        graph.import_code()
    from inboxflow.mail import mime  # noqa: F401


def run_cases(
    cases: Iterable[Case],
    options: RunOptions,
    jobs: int | None = None,
    on_done: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Run every case (in ``jobs`` worker processes when more than one); results in case order.

    Args:
        cases: the cases.
        options: how they run.
        jobs: worker processes (default: the CPU count; 1 runs them in this process).
        on_done: called with each result as it arrives (a progress bar).
    """
    cases = list(cases)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(cases)))
    results: dict[str, CaseResult] = {}
    if jobs == 1:
        for case in cases:
            results[case.id] = run_case(case, options)
            if on_done is not None:
                on_done(results[case.id])
    else:
        context = get_context("spawn")
        with ProcessPoolExecutor(jobs, mp_context=context, initializer=_warm_worker) as pool:
            futures = {pool.submit(run_case, case, options): case for case in cases}
            for future in as_completed(futures):
                result = future.result()
                results[result.case_id] = result
                if on_done is not None:
                    on_done(result)
    return [results[case.id] for case in cases]
