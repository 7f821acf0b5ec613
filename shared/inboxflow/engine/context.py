"""What a node sees of the world: ports, the effect journal, and call recording."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from ..clock import Clock
from ..errors import NodeFailed, RetryableError
from ..ports.documents import DocumentStore
from ..ports.llm import LanguageModel, LLMFailed, LLMTask, LLMUsage, Out
from ..ports.wired import Ports
from .bindings import BindingRefused, Bound, refusal
from .effects import EffectJournal
from .tools import ToolRegistry


@dataclass
class NodeContext:
    """Passed to every node: its address, the ports, and what it called."""

    trace_id: str
    graph: str
    node: str
    step: int
    clock: Clock
    store: DocumentStore
    tools: ToolRegistry
    journal: EffectJournal
    ports: Ports
    """The ports this node declares (``Node(ports=...)``); reading another raises ``UndeclaredPort``."""
    resume: Mapping[str, Any] | None = None
    expire_at: float | None = None
    uses_llm: bool = True
    """Whether the node declares ``uses_llm``: deployment grants the model's key only then."""
    bound: Bound = field(default_factory=dict)
    """Who this run's writing tools are bound to (``inboxflow.engine.bindings``): set by the node
    running them, from the email and the state, never from the model."""
    subject: object = None
    """What this run's tools work on, set by the node running them (the support desk's email,
    the agent's view, the planner's thread): each graph's tools check its type."""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    acting: dict[str, Any] | None = None
    """The tool call running (name and arguments): what its effects are for (``effect``'s intent)."""

    @property
    def llm(self) -> LanguageModel:
        """The language model (built on first use: nodes that never ask one never build it)."""
        return self.ports.llm

    def effect(
        self,
        name: str,
        perform: Callable[[str], dict[str, Any]],
        reconcile: Callable[[str], dict[str, Any] | None] | None = None,
        intent: Mapping[str, Any] | None = None,
        store_only: bool = False,
        keyed: bool = False,
    ) -> dict[str, Any]:
        """Run a side effect through the journal (exactly once per trace step and name).

        ``intent`` says what the effect does, for a shadow's journal to record instead
        (default: the tool call running, ``acting``). ``store_only``: ``perform`` writes
        only through ``self.store`` (a ticket opened), so a shadow performs it against
        its held store and goes on with its result (``engine/shadow.py``). ``keyed``: the
        service ``perform`` calls makes it once by the effect key (``EffectJournal``).
        """
        return self.journal.run(
            self.trace_id,
            self.step,
            name,
            perform,
            reconcile,
            self.expire_at,
            intent or self.acting,
            store_only,
            keyed,
        )

    def _handle(self, name: str, params: BaseModel) -> dict[str, Any]:
        """Run tool ``name``'s handler, its call being what the effects it asks are for."""
        outer = self.acting
        self.acting = {"tool": name, "arguments": params.model_dump(mode="json")}
        try:
            return self.tools.get(name).handler(params, self)
        finally:
            self.acting = outer

    def generate(self, task: LLMTask[Out], inputs: Mapping[str, Any]) -> Out:
        """Ask the model for ``task``; the call is recorded on the step (``llm_calls``).

        Each record holds task, model, latency_ms, input/output tokens where the
        model reports them, attempts, outcome (``ok``, ``retried``,
        ``schema_retry``, ``failed``) and, when it failed, the error.

        Raises:
            NodeFailed: the model could not produce a valid answer (message starts
                with the task name).
            RetryableError: a transient failure left to the runtime's retries.
        """
        if not self.uses_llm:
            raise NodeFailed(
                f"node {self.node} asks the model ({task.name}) but does not declare uses_llm=True: "
                "deployed, it would have no model credentials"
            )
        started = time.perf_counter()
        try:
            output, usage = self.llm.generate(task, inputs)
        except LLMFailed as exc:
            self._record_llm(task, started, exc.usage, error=str(exc))
            raise NodeFailed(_prefixed(task.name, str(exc))) from exc
        except RetryableError as exc:
            usage = LLMUsage(model=self.llm.name, outcome="failed")
            self._record_llm(task, started, usage, error=str(exc), retryable=True)
            raise
        except (NodeFailed, ValidationError) as exc:
            usage = LLMUsage(model=self.llm.name, outcome="failed")
            self._record_llm(task, started, usage, error=str(exc))
            raise NodeFailed(_prefixed(task.name, str(exc))) from exc
        self._record_llm(task, started, usage)
        return output

    def _record_llm(
        self,
        task: LLMTask[Any],
        started: float,
        usage: LLMUsage,
        error: str | None = None,
        retryable: bool = False,
    ) -> None:
        record: dict[str, Any] = {
            "task": task.name,
            "model": usage.model,
            "latency_ms": _ms(started),
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "attempts": usage.attempts,
            "outcome": "failed" if error is not None else usage.outcome,
            "error": error,
            "retried_errors": usage.errors or None,
            "retryable": retryable or None,
            **usage.extra,
        }
        self.llm_calls.append({k: v for k, v in record.items() if v is not None})

    def bound_subject(self, subject: str) -> str:
        """The one value ``subject`` is bound to in this run (what an argument-less binding acts on).

        Raises:
            BindingRefused: the subject is not bound to exactly one value.
        """
        values = tuple(self.bound.get(subject, ()))
        if len(values) != 1:
            raise BindingRefused(f"{subject} is bound to {len(values)} values in this run, not one")
        return values[0]

    def check_binding(self, name: str, arguments: Any) -> None:
        """Refuse a call of tool ``name`` outside its declared binding (see ``inboxflow.engine.bindings``).

        ``call_tool`` runs it before every handler; a node that performs a declared
        tool's effect itself runs it before writing. A refusal is recorded on the
        step (``tool_calls``, ``refused: true``).

        Raises:
            BindingRefused: the call names a recipient or subject it is not bound to.
        """
        why = next(
            (
                reason
                for binding in self.tools.get(name).bindings
                if (reason := refusal(name, binding, arguments, self.bound)) is not None
            ),
            None,
        )
        if why is None:
            return
        shown = arguments if isinstance(arguments, Mapping) else arguments.model_dump(mode="json")
        self.tool_calls.append(
            {"name": name, "arguments": dict(shown), "error": why, "refused": True}
        )
        raise BindingRefused(f"refused: {why}")

    def perform(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run a declared tool as a node's own action: bound like ``call_tool``, errors raised.

        For nodes that act on their own (no model chose the call): bad arguments,
        a refused binding and transient failures propagate to the runtime (its
        retries, ``needs_review``) instead of becoming an ``{"error": ...}``
        result. The call is recorded on the step.

        Raises:
            BindingRefused: the call breaks the tool's declared binding; nothing ran.
        """
        started = time.perf_counter()
        params = self.tools.parse(name, dict(arguments))
        self.check_binding(name, params)
        result = self._handle(name, params)
        self.tool_calls.append(
            {
                "name": name,
                "arguments": params.model_dump(mode="json"),
                "result": result,
                "latency_ms": _ms(started),
            }
        )
        return result

    def call_tool(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run one tool; a failure becomes ``{"error": ...}`` for that tool only.

        Every call is recorded on the step (``tool_calls``): name, arguments,
        result or error, latency_ms. Transient failures too (``retryable``):
        the tool's adapter has had its own retries by then.

        Raises:
            BindingRefused: the call breaks the tool's declared binding; nothing ran.
        """
        started = time.perf_counter()
        record: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
        if name not in self.tools:
            result: dict[str, Any] = {"error": f"unknown tool {name!r}"}
        else:
            try:
                params = self.tools.parse(name, dict(arguments))
                self.check_binding(name, params)
                result = self._handle(name, params)
            except BindingRefused:
                raise
            except ValidationError as exc:
                result = {"error": f"invalid arguments for {name}: {exc}"}
            except RetryableError as exc:
                result = {"error": f"{type(exc).__name__}: {exc}"}
                record["retryable"] = True
            except Exception as exc:
                result = {"error": f"{type(exc).__name__}: {exc}"}
        if "error" in result and len(result) == 1:
            record["error"] = result["error"]
        else:
            record["result"] = result
        record["latency_ms"] = _ms(started)
        self.tool_calls.append(record)
        return result


def _prefixed(task_name: str, message: str) -> str:
    return message if message.startswith(f"{task_name}:") else f"{task_name}: {message}"


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
