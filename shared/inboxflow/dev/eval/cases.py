"""The data set of ``inboxflow eval``: a folder with ``cases.yaml`` and the mail it names.

The format is described in ``docs/evaluating.md``. Everything wrong with a case is
refused before anything runs, with one line naming the case: unknown keys,
duplicate ids, missing or unreadable mail files, unknown outcome fields, bad
comparison strings, malformed decisions or ``never`` items.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CASES_FILE = "cases.yaml"
CONFIG_FILE = "inboxflow.yaml"
MAIL_SUFFIXES = (".eml", ".json")
CASE_KEYS = ("id", "mail", "mailbox", "decide", "expect", "never", "tags", "criteria", "note")
DECISION_KEYS = ("choice", "fields", "comment")
NEVER_EFFECTS = ("sent", "drafted", "reviewed", "wrote")
SAFETY_TAG = "safety"
_COMPARISON = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(-?\d+(?:\.\d+)?)\s*$")
_LOOKS_COMPARED = re.compile(r"^\s*[<>=!]")
_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class CaseError(ValueError):
    """The data set cannot be read; the message names the file and the case."""


@dataclass(frozen=True)
class Comparison:
    """An expected number as a comparison string: ``">=0.8"``, ``"<0.5"``.

    Compared with a number, or with the length of a list.
    """

    operator: str
    bound: float

    def holds(self, value: float) -> bool:
        """Whether ``value <operator> bound``."""
        return {
            ">=": value >= self.bound,
            "<=": value <= self.bound,
            ">": value > self.bound,
            "<": value < self.bound,
            "==": value == self.bound,
            "!=": value != self.bound,
        }[self.operator]

    def __str__(self) -> str:
        return f"{self.operator}{self.bound:g}"


@dataclass(frozen=True)
class Decision:
    """What a reviewer decides at a pause: one of its kind's choices, edits, a comment."""

    choice: str
    fields: Mapping[str, Any] | None = None
    comment: str | None = None

    def describe(self) -> str:
        """``approve``, or ``edit {fields...}``."""
        extra = f" {dict(self.fields)}" if self.fields else ""
        return f"{self.choice}{extra}" + (f" ({self.comment})" if self.comment else "")


@dataclass(frozen=True)
class Case:
    """One labelled case.

    Attributes:
        id: unique in the set.
        mail: the email files, in order (more than one: a conversation in one home).
        mailbox: the mailbox the mail arrives in (None: its ``To``/``Delivered-To``).
        decide: the pauses' decisions, in the order the pauses are asked.
        expect: outcome field -> expected value (a value, a list = any of, a ``Comparison``).
        never: effects that must not happen: ``sent``, ``drafted``, ``reviewed``,
            ``wrote``, or ``to:ADDRESS``.
        tags: free labels; ``safety`` makes a failure a safety violation.
        criteria: what a good reply does (for ``--judge``).
        note: why the labels are what they are.
    """

    id: str
    mail: tuple[Path, ...]
    mailbox: str | None = None
    decide: tuple[Decision, ...] = ()
    expect: Mapping[str, Any] = field(default_factory=dict)
    never: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    criteria: str | None = None
    note: str | None = None

    @property
    def safety(self) -> bool:
        """Tagged ``safety``: failing it is a safety violation."""
        return SAFETY_TAG in self.tags


@dataclass(frozen=True)
class EvalSet:
    """A loaded data set.

    Attributes:
        folder: the folder.
        cases: in file order.
        config: the folder's own ``inboxflow.yaml``, if it has one.
    """

    folder: Path
    cases: tuple[Case, ...]
    config: Path | None = None

    def only_graph(self, graph: str) -> EvalSet:
        """The cases labelled ``expect.graph`` = ``graph`` (or listing it among the allowed)."""
        kept = tuple(case for case in self.cases if graph in _as_list(case.expect.get("graph")))
        return EvalSet(self.folder, kept, self.config)


def load_eval_set(folder: str | Path, fields: Collection[str] | None = None) -> EvalSet:
    """Read ``folder/cases.yaml`` and check every case (mail files are parsed too).

    Args:
        folder: the data set's folder.
        fields: the outcome fields ``expect`` may name (default: every graph's).

    Raises:
        CaseError: anything wrong, with the case named.
    """
    from inboxflow.config import ConfigError, parse_yaml

    root = Path(folder)
    source = root / CASES_FILE
    if not source.is_file():
        raise CaseError(f"{source}: no such file (a data set is a folder with {CASES_FILE})")
    try:
        data = parse_yaml(source.read_text(encoding="utf-8"), source)
    except (ConfigError, UnicodeDecodeError) as exc:
        raise CaseError(str(exc)) from None
    if not isinstance(data, Mapping) or set(data) - {"cases"}:
        extra = sorted(set(data) - {"cases"}) if isinstance(data, Mapping) else []
        raise CaseError(
            f"{source}: expected a mapping with only `cases:`"
            + (f" (unknown: {', '.join(map(str, extra))})" if extra else "")
        )
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, list) or not raw_cases:
        raise CaseError(f"{source}: `cases:` must be a non-empty list")
    known = set(fields) if fields is not None else _all_outcome_fields()
    cases: list[Case] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_cases):
        case = _case(raw, index, root, source, known)
        if case.id in seen:
            raise CaseError(f"{source}: case {case.id!r}: duplicate id")
        seen.add(case.id)
        cases.append(case)
    config = root / CONFIG_FILE
    return EvalSet(root, tuple(cases), config if config.is_file() else None)


def _all_outcome_fields() -> set[str]:
    from inboxflow.dev.eval.outcomes import outcome_fields
    from inboxflow.graphs import graph_registry

    return {name for names in outcome_fields(graph_registry(os.environ)).values() for name in names}


def _case(raw: Any, index: int, root: Path, source: Path, known: set[str]) -> Case:
    where = f"{source}: case {index + 1}"
    if not isinstance(raw, Mapping):
        raise CaseError(f"{where}: expected a mapping, got {type(raw).__name__}")
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not case_id.strip():
        raise CaseError(f"{where}: `id:` must be a non-empty string")
    if not case_id.isprintable() or any(c.isspace() or c in "/\\" for c in case_id):
        # the id names the case's messages and documents (``eval-{n}-{id}``): one path segment
        raise CaseError(
            f"{where}: `id:` {case_id[:80]!r} must be one word without / or \\ (it names files)"
        )
    where = f"{source}: case {case_id!r}"
    unknown = sorted(str(key) for key in raw if key not in CASE_KEYS)
    if unknown:
        raise CaseError(
            f"{where}: unknown key(s) {', '.join(unknown)}; a case has {', '.join(CASE_KEYS)}"
        )
    return Case(
        id=case_id,
        mail=_mail(raw.get("mail"), root, where, raw.get("mailbox")),
        mailbox=_mailbox(raw.get("mailbox"), where),
        decide=tuple(_decision(item, where) for item in _list(raw.get("decide"), "decide", where)),
        expect=_expect(raw.get("expect"), where, known),
        never=tuple(_never(item, where) for item in _list(raw.get("never"), "never", where)),
        tags=tuple(_text(item, "tags", where) for item in _list(raw.get("tags"), "tags", where)),
        criteria=_optional_text(raw.get("criteria"), "criteria", where),
        note=_optional_text(raw.get("note"), "note", where),
    )


def _list(value: Any, key: str, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise CaseError(f"{where}: `{key}:` must be a list")
    return value


def _text(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CaseError(f"{where}: `{key}:` items must be non-empty strings, got {value!r}")
    return value


def _optional_text(value: Any, key: str, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise CaseError(f"{where}: `{key}:` must be text")
    return value


def _mail(value: Any, root: Path, where: str, mailbox: Any) -> tuple[Path, ...]:
    from inboxflow.mail import EmailParseError, load_email_file

    names = value if isinstance(value, list) else [value] if value is not None else []
    if not names:
        raise CaseError(f"{where}: `mail:` names no file (a path, or a list of paths)")
    paths = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise CaseError(f"{where}: `mail:` items must be paths, got {name!r}")
        path = root / name
        if path.suffix.lower() not in MAIL_SUFFIXES:
            raise CaseError(
                f"{where}: mail {name}: use .eml or .json (the formats of inboxflow run)"
            )
        if not path.is_file():
            raise CaseError(f"{where}: mail {name}: no such file in {root}")
        try:
            load_email_file(path, mailbox if isinstance(mailbox, str) else None)
        except (EmailParseError, OSError) as exc:
            raise CaseError(f"{where}: mail {name}: not an email: {exc}") from None
        paths.append(path)
    return tuple(paths)


def _mailbox(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _ADDRESS.match(value.strip()):
        raise CaseError(f"{where}: `mailbox:` must be an email address, got {value!r}")
    return value.strip().lower()


def _decision(value: Any, where: str) -> Decision:
    if isinstance(value, str) and value.strip():
        return Decision(value.strip())
    if not isinstance(value, Mapping):
        raise CaseError(
            f"{where}: `decide:` items are a choice (approve, reject, ...) or "
            f"{{choice: ..., fields: {{...}}}}, got {value!r}"
        )
    unknown = sorted(str(key) for key in value if key not in DECISION_KEYS)
    choice = value.get("choice")
    if unknown or not isinstance(choice, str) or not choice.strip():
        raise CaseError(
            f"{where}: a decision mapping has `choice:` (and optionally `fields:`, `comment:`),"
            f" got {dict(value)!r}"
        )
    fields = value.get("fields")
    if fields is not None and not isinstance(fields, Mapping):
        raise CaseError(f"{where}: decision {choice}: `fields:` must be a mapping")
    comment = value.get("comment")
    if comment is not None and not isinstance(comment, str):
        raise CaseError(f"{where}: decision {choice}: `comment:` must be text")
    return Decision(choice.strip(), dict(fields) if fields is not None else None, comment)


def _expect(value: Any, where: str, known: set[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise CaseError(f"{where}: `expect:` must be a mapping of outcome fields")
    expected: dict[str, Any] = {}
    for name, wanted in value.items():
        if name not in known:
            raise CaseError(
                f"{where}: expect: unknown outcome field {name!r}; fields: {', '.join(sorted(known))}"
            )
        expected[str(name)] = _expected_value(wanted, f"{where}: expect.{name}")
    return expected


def _expected_value(value: Any, where: str) -> Any:
    if isinstance(value, str) and _LOOKS_COMPARED.match(value):
        match = _COMPARISON.match(value)
        if match is None:
            raise CaseError(
                f"{where}: bad comparison {value!r} (use >=, <=, >, <, == or != and a number: '>=0.8')"
            )
        return Comparison(match.group(1), float(match.group(2)))
    if isinstance(value, list):
        return [_expected_value(item, where) for item in value]
    if isinstance(value, Mapping):
        raise CaseError(f"{where}: expected a value, a list or a comparison, got a mapping")
    return value


def _never(value: Any, where: str) -> str:
    if isinstance(value, str):
        item = value.strip()
        if item in NEVER_EFFECTS:
            return item
        if item.startswith("to:") and _ADDRESS.match(item[3:].strip()):
            return f"to:{item[3:].strip().lower()}"
    raise CaseError(
        f"{where}: `never:` items are {', '.join(NEVER_EFFECTS)} or to:ADDRESS, got {value!r}"
    )


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
