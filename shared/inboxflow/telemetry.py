"""Tracing: one OpenTelemetry trace per email, across every function it passes through.

The trace begins where inboxflow's trace begins (``Runtime.start``, in the
ingest function for mail): a root span ``start {graph}``. Its W3C
``traceparent`` travels in each envelope, so every step's span (``step
{graph}.{node}``, in whichever node function runs it) is the child of the span
that published its envelope, and the checkpoint stores the traceparent of its
latest span: the approval function (``Runtime.resume``) continues the trace
from there, and the resumed step continues from the approval's span. LLM and
tool calls are child spans of their step.

Where spans go is ``INBOXFLOW_TRACING``:

| value        | exporter                                            |
|--------------|-----------------------------------------------------|
| ``gcp``      | Cloud Trace (``opentelemetry-exporter-gcp-trace``); default on Cloud Functions |
| ``console``  | one JSON document per span on stderr                |
| ``memory``   | kept in this process (``exporter().get_finished_spans()``) |
| ``jsonl:PATH`` | one JSON line per span appended to PATH (tests and ``inboxflow dev``) |
| ``off``      | none, and nothing of OpenTelemetry is imported; default elsewhere |

The entry point reads it (``configure``: the functions' ``entry``, the CLI's
``main``); a process whose entry point did not records no spans. The SDK (~25 ms
of imports) is imported on the first span of a process that traces, never by
one that does not.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Link, Span, Tracer

TRACING_VARIABLE = "INBOXFLOW_TRACING"
MODES = ("off", "gcp", "console", "memory", "jsonl")
PREFIX = "inboxflow."

log = logging.getLogger("inboxflow.runtime")

_lock = threading.Lock()
_provider: TracerProvider | None = None
_tracer: Tracer | None = None
_exporter: SpanExporter | None = None
_mode: str | None = None
_chosen: tuple[str, str | None, str | None] = ("off", None, None)
"""``(mode, service, project)`` the entry point configured: what the first span sets up."""


def mode_from_env(env: Mapping[str, str]) -> str:
    """``INBOXFLOW_TRACING``, else ``gcp`` on Cloud Functions (``K_SERVICE``), else ``off``.

    Raises:
        ValueError: an unknown value (or ``jsonl:`` without a path).
    """
    chosen = env.get(TRACING_VARIABLE, "").strip()
    if not chosen:
        return "gcp" if env.get("K_SERVICE") else "off"
    kind, _, path = chosen.partition(":")
    if kind not in MODES or (kind == "jsonl") != bool(path):
        raise ValueError(
            f"{TRACING_VARIABLE} must be off, gcp, console, memory or jsonl:PATH, not {chosen!r}"
        )
    return chosen


def configure(environ: Mapping[str, str]) -> None:
    """Where this process's spans go, from the environment its entry point read; set up on the
    first span (``setup`` applies it now). Without it, a process records no spans.

    Raises:
        ValueError: ``INBOXFLOW_TRACING`` is not valid (see ``mode_from_env``).
    """
    global _chosen
    _chosen = (
        mode_from_env(environ),
        environ.get("INBOXFLOW_NODE") or environ.get("K_SERVICE"),
        environ.get("GOOGLE_CLOUD_PROJECT"),
    )


def setup(
    mode: str | None = None, service: str | None = None, project: str | None = None
) -> SpanExporter | None:
    """Choose where spans go for this process (again: the previous provider is shut down).

    Args:
        mode: see the module table (default: the ``configure``d one, else ``off``).
        service: ``service.name`` of the spans (default: the ``configure``d
            ``INBOXFLOW_NODE`` or ``K_SERVICE``, else ``inboxflow``).
        project: the Cloud Trace project of ``gcp`` (default: the ``configure``d
            ``GOOGLE_CLOUD_PROJECT``).

    Returns:
        The exporter (``None`` when off): tests read ``memory`` spans from it.
    """
    global _provider, _tracer, _exporter, _mode
    configured_mode, configured_service, configured_project = _chosen
    chosen = configured_mode if mode is None else mode
    with _lock:
        if _provider is not None:
            _provider.shutdown()
        _provider = _tracer = _exporter = None
        _mode = chosen
        if chosen == "off":
            return None
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        try:
            exporter = _make_exporter(chosen, project or configured_project)
        except ImportError as exc:
            # Tracing must never stop a function: without its exporter, it runs untraced.
            log.error("tracing is off: %s=%s needs %s", TRACING_VARIABLE, chosen, exc.name)
            _mode = "off"
            return None
        name = service or configured_service
        # Resource(...), not Resource.create(...): the latter scans entry points (~15 ms).
        provider = TracerProvider(resource=Resource({"service.name": name or "inboxflow"}))
        # Cloud Trace gets batches (flushed at the end of each invocation, ``flush``);
        # the local exporters write each span as it ends.
        processor = BatchSpanProcessor if chosen == "gcp" else SimpleSpanProcessor
        provider.add_span_processor(processor(exporter))
        _provider, _exporter = provider, exporter
        _tracer = provider.get_tracer("inboxflow")
        return exporter


def _make_exporter(mode: str, project: str | None) -> SpanExporter:
    kind, _, path = mode.partition(":")
    if kind == "gcp":
        from opentelemetry.exporter.cloud_trace import CloudTraceSpanExporter

        return CloudTraceSpanExporter(project_id=project)
    if kind == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if kind == "memory":
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        return InMemorySpanExporter()
    return _jsonl_exporter(path)


def _jsonl_exporter(path: str) -> SpanExporter:
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class JsonLinesSpanExporter(SpanExporter):
        """Appends one JSON line per span (``span_record``); processes may share the file."""

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            data = "".join(json.dumps(span_record(s)) + "\n" for s in spans).encode()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)  # one append: lines of processes never interleave
            finally:
                os.close(fd)
            return SpanExportResult.SUCCESS

    return JsonLinesSpanExporter()


def span_record(span: ReadableSpan) -> dict[str, Any]:
    """A finished span as plain JSON: ids in hex, times in ns, attributes, links."""
    context = span.get_span_context()
    assert context is not None
    return {
        "name": span.name,
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_id": f"{span.parent.span_id:016x}" if span.parent else None,
        "service": span.resource.attributes.get("service.name"),
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status": span.status.status_code.name,
        "attributes": dict(span.attributes or {}),
        "links": [
            {"trace_id": f"{link.context.trace_id:032x}", "span_id": f"{link.context.span_id:016x}"}
            for link in span.links
        ],
    }


def exporter() -> SpanExporter | None:
    """The current exporter (after ``setup``, or the first span)."""
    return _exporter


def _active_tracer() -> Tracer | None:
    if _mode is None:
        setup()
    return _tracer


def enabled() -> bool:
    """Whether this process records spans (sets up from the environment on first call)."""
    return _active_tracer() is not None


def flush(timeout_ms: int = 5000) -> None:
    """Export what is buffered (end of an invocation: the instance may be frozen after it)."""
    if _provider is not None:
        _provider.force_flush(timeout_ms)


def _attributes(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {
        PREFIX + name: value if isinstance(value, str | int | float | bool) else str(value)
        for name, value in fields.items()
        if value is not None
    }


def _parent_context(traceparent: str | None) -> Any:
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    return TraceContextTextMapPropagator().extract({"traceparent": traceparent or ""})


def traceparent() -> str | None:
    """The W3C ``traceparent`` of the current span (None when not tracing)."""
    if _tracer is None:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get("traceparent")


def current_span_ids() -> tuple[str, str, bool] | None:
    """``(trace id, span id, sampled)`` in hex of the current span, for log lines; None when none."""
    if _tracer is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}", context.trace_flags.sampled


@contextmanager
def span(
    name: str,
    parent: str | None = None,
    root: bool = False,
    kind: str = "INTERNAL",
    **fields: Any,
) -> Iterator[Span | None]:
    """A span around the block, current inside it (yields None when not tracing).

    Args:
        name: the span's name.
        parent: a ``traceparent`` to continue (a span of another process);
            default: the current span.
        root: begin a new trace, linked to the current span if there is one.
        kind: ``INTERNAL``, ``SERVER``, ``CONSUMER`` or ``PRODUCER``.
        **fields: attributes, named ``inboxflow.<field>``.
    """
    tracer = _active_tracer()
    if tracer is None:
        yield None
        return
    from opentelemetry import context as otel_context
    from opentelemetry import trace

    links: list[Link] = []
    if root:
        current = trace.get_current_span().get_span_context()
        if current.is_valid:
            links.append(trace.Link(current))
        parent_context: Any = otel_context.Context()
    elif parent:
        parent_context = _parent_context(parent)
    else:
        parent_context = None
    with tracer.start_as_current_span(
        name,
        context=parent_context,
        kind=trace.SpanKind[kind],
        attributes=_attributes(fields),
        links=links,
    ) as current_span:
        yield current_span


def annotate(**fields: Any) -> None:
    """Set attributes (``inboxflow.<field>``) on the current span."""
    if _tracer is None:
        return
    from opentelemetry import trace

    trace.get_current_span().set_attributes(_attributes(fields))


def link(traceparent_of_other: str | None) -> None:
    """Note on the current span a related span of another trace (a fork's origin)."""
    if _tracer is None or not traceparent_of_other:
        return
    from opentelemetry import trace

    other = trace.get_current_span(_parent_context(traceparent_of_other)).get_span_context()
    if other.is_valid:
        trace.get_current_span().add_link(other, {PREFIX + "relation": "forked_from"})


class CallSpans(list[dict[str, Any]]):
    """A step's ``llm_calls`` / ``tool_calls`` list that also records each call as a child span.

    A call is appended when it ends, with its ``latency_ms``: the span is placed
    back in time from there, under the step's span.
    """

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def extend(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            self.append(record)

    def append(self, record: dict[str, Any]) -> None:
        super().append(record)
        tracer = _active_tracer()
        if tracer is None:
            return
        end = time.time_ns()
        start = end - int(float(record.get("latency_ms") or 0) * 1_000_000)
        if self.kind == "llm":
            name = f"llm {record.get('task')}"
            attributes = {
                "gen_ai.request.model": record.get("model"),
                "gen_ai.usage.input_tokens": record.get("input_tokens"),
                "gen_ai.usage.output_tokens": record.get("output_tokens"),
                PREFIX + "task": record.get("task"),
                PREFIX + "attempts": record.get("attempts"),
                PREFIX + "outcome": record.get("outcome"),
            }
        else:
            name = f"tool {record.get('name')}"
            attributes = {
                PREFIX + "tool": record.get("name"),
                PREFIX + "outcome": "error" if "error" in record else "ok",
            }
        attributes[PREFIX + "latency_ms"] = record.get("latency_ms")
        call = tracer.start_span(
            name,
            start_time=start,
            attributes={k: v for k, v in attributes.items() if v is not None},
        )
        if record.get("error"):
            from opentelemetry.trace import Status, StatusCode

            call.set_status(Status(StatusCode.ERROR, str(record["error"])[:200]))
        call.end(end_time=end)


def step_committed(
    trace_id: str,
    node: str,
    step: int,
    status_change: tuple[str, str],
    attempt: int,
    latency_ms: float,
    error: str | None,
) -> None:
    """A step committed: annotate its span and log its one line.

    The line carries ``outcome`` (the new status) only when the trace's status
    changed (``status_change`` is ``(before, after)``), so that there is exactly
    one such line per status change.
    """
    before, status = status_change
    annotate(attempt=attempt, outcome=status, latency_ms=latency_ms)
    extra: dict[str, Any] = {"attempt": attempt}
    if status != before:
        extra["outcome"] = status
    where = f"trace {trace_id} step {step} ({node})"
    if error is not None:
        log.warning("%s failed, trace needs review: %s", where, error, extra=extra)
    elif status in ("needs_review", "failed", "rejected"):
        log.warning("%s committed, trace %s", where, status, extra=extra)
    else:
        log.info("%s committed, trace %s", where, status, extra=extra)


def guard_fired(trace_id: str, node: str, guard: str, reason: str) -> None:
    """A node's guard replaced the step its node proposed: one line, and on the span."""
    annotate(guard=guard)
    log.warning(
        "trace %s (%s): guard %s replaced the step: %s",
        trace_id,
        node,
        guard,
        reason,
        extra={"guard": guard},
    )


__all__ = [
    "TRACING_VARIABLE",
    "CallSpans",
    "annotate",
    "configure",
    "current_span_ids",
    "enabled",
    "exporter",
    "flush",
    "guard_fired",
    "link",
    "mode_from_env",
    "setup",
    "span",
    "span_record",
    "step_committed",
    "traceparent",
]
