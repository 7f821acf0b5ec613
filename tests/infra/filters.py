"""A small evaluator for the filters infra/monitoring.tf writes, to check
which records a filter selects rather than only how it is spelled.

It reads one shape only: clauses joined by ``AND``, each ``[NOT ]FIELD OP
VALUE`` with OP one of ``=``, ``!=``, ``>=`` and ``:`` (has a substring) and
VALUE a quoted string or, for ``severity``, a LogSeverity name. That is the
common subset of the Cloud Monitoring filter and the Logging query language.
Anything else raises ``UnsupportedFilter``, so a filter written past this
subset fails its test instead of being half-understood.

Records are flat dicts keyed by the field paths the filters name
(``resource.labels.queue_id``, ``metric.labels.response_code``, ``logName``,
``severity``); a field a record lacks compares as absent (never equal, never
containing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# google.logging.type.LogSeverity: the order `severity>=X` compares by.
SEVERITIES = {
    "DEFAULT": 0,
    "DEBUG": 100,
    "INFO": 200,
    "NOTICE": 300,
    "WARNING": 400,
    "ERROR": 500,
    "CRITICAL": 600,
    "ALERT": 700,
    "EMERGENCY": 800,
}

_CLAUSE = re.compile(
    r"""(?P<not>NOT\s+)?
        (?P<field>[A-Za-z_][\w.]*)\s*
        (?P<op>!=|>=|=|:)\s*
        (?:"(?P<quoted>[^"]*)"|(?P<bare>[A-Z]+))""",
    re.X,
)


class UnsupportedFilter(ValueError):
    """The filter uses syntax outside the subset this module evaluates."""


def clauses(text: str) -> list[tuple[bool, str, str, str]]:
    """Split a filter into (negated, field, operator, value) clauses."""
    out = []
    for part in re.split(r"\s+AND\s+", text.strip()):
        found = _CLAUSE.fullmatch(part.strip())
        if not found:
            raise UnsupportedFilter(f"cannot evaluate clause {part!r}")
        value = found["quoted"] if found["quoted"] is not None else found["bare"]
        if found["bare"] is not None and found["field"] != "severity":
            raise UnsupportedFilter(f"unquoted value in {part!r}")
        out.append((bool(found["not"]), found["field"], found["op"], value))
    return out


def _holds(record: Mapping[str, str], field: str, op: str, value: str) -> bool:
    actual = record.get(field)
    if actual is None:
        return False
    if field == "severity":
        if value not in SEVERITIES or actual not in SEVERITIES:
            raise UnsupportedFilter(f"unknown severity in {value!r} / {actual!r}")
        if op == ">=":
            return SEVERITIES[actual] >= SEVERITIES[value]
        if op == "=":
            return actual == value
        raise UnsupportedFilter(f"severity{op}{value}")
    if op == "=":
        return actual == value
    if op == "!=":
        return actual != value
    if op == ":":
        return value in actual
    raise UnsupportedFilter(f"{field}{op}{value}: ordering applies to severity only")


def matches(text: str, record: Mapping[str, str]) -> bool:
    """Whether ``record`` is selected by the filter ``text``."""
    return all(
        _holds(record, field, op, value) != negated for negated, field, op, value in clauses(text)
    )
