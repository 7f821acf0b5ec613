"""Log lines: JSON for Cloud Logging in production, readable text on a terminal.

On Cloud Functions (``K_SERVICE`` set), or with ``INBOXFLOW_LOG_FORMAT=json``,
every line is one JSON object that Cloud Logging parses into a structured
entry::

    {"severity": "WARNING", "message": "...", "trace_id": "...", "graph": "pipeline",
     "node": "review", "step": 6, "attempt": 1, "outcome": "needs_review",
     "logging.googleapis.com/trace": "projects/P/traces/0af7...",
     "logging.googleapis.com/spanId": "b7ad6b7169203331", ...}

``trace_id`` is inboxflow's trace (one email); the ``logging.googleapis.com``
fields name the OpenTelemetry trace and span (``inboxflow.telemetry``) so the
line sits under its span in Cloud Trace. ``outcome`` is set on exactly one
line per status change of a trace (alerts and log-based metrics filter on
it). The fields come from ``bound(...)`` (the runtime binds trace, node and
step around a step) and from ``extra={...}`` of one call.

Whatever the format, every line passes through ``redact_tokens``: a review
link's ``t=`` (a reviewer's credential) never reaches a log.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, TextIO

from .redaction import redact_access_logs, redact_tokens

FORMAT_VARIABLE = "INBOXFLOW_LOG_FORMAT"
"""``json`` or ``text``; default ``json`` on Cloud Functions (``K_SERVICE``), else ``text``."""
FIELDS = ("trace_id", "graph", "node", "step", "attempt", "outcome")
"""Fields a line carries where known, from ``bound`` or a call's ``extra``."""

_bound: ContextVar[Mapping[str, Any] | None] = ContextVar("inboxflow_log_fields", default=None)


@contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """Add ``fields`` (those not None) to every line logged inside the block, in this context."""
    token = _bound.set(
        {**(_bound.get() or {}), **{k: v for k, v in fields.items() if v is not None}}
    )
    try:
        yield
    finally:
        _bound.reset(token)


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The ``FIELDS`` of a record: bound ones, overridden by the call's ``extra``."""
    fields = dict(_bound.get() or {})
    for name in FIELDS:
        value = getattr(record, name, None)
        if value is not None:
            fields[name] = value
    return fields


def json_selected(env: Mapping[str, str]) -> bool:
    """Whether lines should be JSON: ``INBOXFLOW_LOG_FORMAT``, else whether on Cloud Functions."""
    chosen = env.get(FORMAT_VARIABLE, "").strip().lower()
    if chosen and chosen not in ("json", "text"):
        raise ValueError(f"{FORMAT_VARIABLE} must be json or text, not {chosen!r}")
    return chosen == "json" if chosen else bool(env.get("K_SERVICE"))


class CloudLoggingFormatter(logging.Formatter):
    """One JSON object per record, in the shape Cloud Logging reads from stdout.

    Args:
        project: the Google Cloud project the trace names live in
            (``GOOGLE_CLOUD_PROJECT``); without one, no trace link.
    """

    def __init__(self, project: str | None = None) -> None:
        super().__init__()
        self.project = project

    def format(self, record: logging.LogRecord) -> str:
        from .telemetry import current_span_ids

        message = record.getMessage()
        if record.exc_info:
            message = f"{message}\n{self.formatException(record.exc_info)}"
        entry: dict[str, Any] = {
            "severity": _severity(record.levelno),
            "message": message,
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "logger": record.name,
            **fields_of(record),
        }
        ids = current_span_ids()
        if ids is not None and self.project:
            trace_hex, span_hex, sampled = ids
            entry["logging.googleapis.com/trace"] = f"projects/{self.project}/traces/{trace_hex}"
            entry["logging.googleapis.com/spanId"] = span_hex
            entry["logging.googleapis.com/trace_sampled"] = sampled
        entry["logging.googleapis.com/sourceLocation"] = {
            "file": record.pathname,
            "line": record.lineno,
            "function": record.funcName,
        }
        # Redacted before encoding: in JSON text a quote is escaped, and the escape
        # would be taken for part of the token.
        return json.dumps(
            {k: redact_tokens(v) if isinstance(v, str) else v for k, v in entry.items()},
            default=lambda value: redact_tokens(str(value)),
            ensure_ascii=False,
        )


class TextFormatter(logging.Formatter):
    """``LEVEL logger [trace node#step]: message`` for people, tokens redacted."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(where)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        fields = fields_of(record)
        where = " ".join(
            str(part)
            for part in (
                fields.get("trace_id"),
                f"{fields['node']}#{fields.get('step', '?')}" if "node" in fields else None,
                f"-> {fields['outcome']}" if "outcome" in fields else None,
            )
            if part is not None
        )
        record.where = f" [{where}]" if where else ""
        return redact_tokens(super().format(record))


def _severity(level: int) -> str:
    if level >= logging.CRITICAL:
        return "CRITICAL"
    if level >= logging.ERROR:
        return "ERROR"
    if level >= logging.WARNING:
        return "WARNING"
    if level >= logging.INFO:
        return "INFO"
    return "DEBUG"


def configure(
    as_json: bool | None = None,
    level: int = logging.INFO,
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> logging.Handler:
    """Send every log line through one handler on the root logger, in the chosen format.

    Safe to call again: the handler it installed before is replaced, handlers of
    others are left alone. Also puts the token filter on the web servers' access
    loggers (``redaction.redact_access_logs``).

    Args:
        as_json: JSON lines (default: ``json_selected(environ)``).
        level: the root logger's level.
        stream: where lines go (default: stdout for JSON, which Cloud Functions
            collects, stderr for text).
        environ: the environment the entry point read (the format, the project of trace
            links); None: none.

    Returns:
        The installed handler.
    """
    env = environ or {}
    as_json = json_selected(env) if as_json is None else as_json
    handler = logging.StreamHandler(stream or (sys.stdout if as_json else sys.stderr))
    project = env.get("GOOGLE_CLOUD_PROJECT")
    handler.setFormatter(CloudLoggingFormatter(project) if as_json else TextFormatter())
    handler.inboxflow = True  # type: ignore[attr-defined]
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "inboxflow", False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    redact_access_logs()
    return handler


def configure_for_function(environ: Mapping[str, str]) -> None:
    """What a function instance does once: ``configure()``, unless someone chose already.

    ``environ`` is the environment the entry point read.

    On Cloud Functions, or with ``INBOXFLOW_LOG_FORMAT`` set, lines always go
    through ``configure()``. Otherwise a root logger that has handlers (the CLI
    set it up, or a test runner captures) is left as it is.
    """
    root = logging.getLogger()
    others = [h for h in root.handlers if not getattr(h, "inboxflow", False)]
    if environ.get("K_SERVICE") or environ.get(FORMAT_VARIABLE) or not others:
        configure(environ=environ)


__all__ = [
    "FIELDS",
    "FORMAT_VARIABLE",
    "CloudLoggingFormatter",
    "TextFormatter",
    "bound",
    "configure",
    "configure_for_function",
    "fields_of",
    "json_selected",
]
