"""Pause kinds: what a graph asks a human (or a customer), declared as data.

A graph declares its pause kinds (``Graph.pause_kinds``); a node pauses with
``Pause(kind=...)``. The approval service and the review pages read the
declaration: the choices offered, their labels and outcomes, which payload
fields a reviewer may edit and how each edit is validated. Nothing in
``approvals/`` names a kind.
"""

from __future__ import annotations

import dataclasses
import string
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import getaddresses
from typing import Any, Literal

from ..mail.addresses import address_key_or_none
from ..mail.field_text import (
    DIRECTION_CONTROLS,
    ZERO_WIDTH,
    clean_line,
    clean_text,
    line_refusal,
    text_breaks,
    text_refusal,
)
from .bindings import address_of

ChoiceStyle = Literal["primary", "danger", "neutral"]
FieldKind = Literal["line", "text", "address", "addresses"]
CommentRule = Literal["none", "optional", "required"]

MAX_COMMENT_CHARS = 4000


class EditRejected(ValueError):
    """An edit that a pause kind's field rules refuse; the message names the field.

    Attributes:
        field: the payload key refused (None for the edit as a whole).
        too_long: the refusal is about size (HTTP 413 rather than 400).
    """

    def __init__(self, message: str, field: str | None = None, too_long: bool = False) -> None:
        super().__init__(message)
        self.field = field
        self.too_long = too_long


def hidden_characters(text: str) -> list[str]:
    """Characters a reader cannot see or that reorder text: controls, bidi, zero-width.

    Tab and newline are not counted. Returns the ``U+XXXX`` names, in order of appearance.
    """
    found = []
    for char in text:
        if char in "\t\n":
            continue
        if char in DIRECTION_CONTROLS or char in ZERO_WIDTH or unicodedata.category(char) == "Cc":
            found.append(f"U+{ord(char):04X}")
    return found


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def fill(template: str, values: Mapping[str, Any]) -> str:
    """``template`` with ``{name}`` fields from ``values``; an unknown name stays as written."""
    try:
        return string.Formatter().vformat(template, (), _Blank(values))
    except (ValueError, IndexError, AttributeError, KeyError):
        return template


@dataclass(frozen=True)
class Choice:
    """One decision a reviewer can take: a button on the review page.

    Attributes:
        value: what the form posts as ``decision`` (``approve``, ``reject``, ...).
        label: the button text.
        style: ``primary`` for the expected action, ``danger`` for the one that
            stops the trace, ``neutral`` for the others.
        outcome: what the result page says after this decision: headline and detail.
        applies_edit: the decision carries the reviewer's edits of the payload.
        comment: ``none``, ``optional`` or ``required``: a free-text comment
            (feedback, an instruction) sent with the decision.
    """

    value: str
    label: str
    style: ChoiceStyle = "neutral"
    outcome: tuple[str, str] = ("Decided", "")
    applies_edit: bool = False
    comment: CommentRule = "none"
    comment_label: str = "Comment"

    def filled(self, values: Mapping[str, Any]) -> Choice:
        """This choice with ``{name}`` fields of its label and outcome taken from ``values``."""
        return dataclasses.replace(
            self,
            label=fill(self.label, values),
            outcome=(fill(self.outcome[0], values), fill(self.outcome[1], values)),
        )


@dataclass(frozen=True)
class EditableField:
    """A payload field a reviewer may change before approving.

    Attributes:
        name: the payload key.
        label: shown beside the input.
        kind: ``line`` (one line of text), ``text`` (multi-line), ``address``
            (exactly one email address) or ``addresses`` (comma-separated).
        max_chars: the longest value accepted.
        required: an empty value is refused.
    """

    name: str
    label: str
    kind: FieldKind = "line"
    max_chars: int = 20_000
    required: bool = False

    def validate(self, value: Any) -> str:
        """``value`` checked against this field's kind and normalised.

        Raises:
            EditRejected: naming this field.
        """
        label = self.label
        if not isinstance(value, str):
            raise EditRejected(f"{label}: must be text, not {type(value).__name__}", self.name)
        if len(value) > self.max_chars:
            raise EditRejected(
                f"{label}: {len(value)} characters; at most {self.max_chars} are accepted",
                self.name,
                too_long=True,
            )
        if self.kind == "text":
            text = text_breaks(value)
            bad = next(((c, why) for c in text if (why := text_refusal(c))), None)
            if bad:
                raise EditRejected(f"{label}: {bad[1]} U+{ord(bad[0]):04X}", self.name)
        else:
            bad = next(((c, why) for c in value if (why := line_refusal(c))), None)
            if bad:
                raise EditRejected(
                    f"{label}: must be one line of visible text "
                    f"(found {bad[1]}, U+{ord(bad[0]):04X})",
                    self.name,
                )
            text = value.strip()
        if self.required and not text.strip():
            raise EditRejected(f"{label}: cannot be empty", self.name)
        if self.kind == "address" and text:
            _addresses(text, self, single=True)
        if self.kind == "addresses" and text:
            _addresses(text, self, single=False)
        return text


def clean_payload_value(value: Any, spec: EditableField | None = None) -> Any:
    """An email-derived payload value under the rules an edit of it must meet.

    A string of an editable field is cleaned by the field's kind (``text``: multi-line;
    ``line``: one line, cut to the field's ``max_chars``; an address: one line); any other
    string is one line unless it holds a newline. Lists and objects are cleaned value by
    value; other values are returned as they are.
    """
    if isinstance(value, str):
        kind = spec.kind if spec is not None else ("text" if "\n" in value else "line")
        if kind == "text":
            return clean_text(value)
        line = clean_line(value)
        if spec is not None and spec.kind == "line" and len(line) > spec.max_chars:
            line = line[: spec.max_chars].rstrip()
        return line
    if isinstance(value, list | tuple):
        return [clean_payload_value(item) for item in value]
    if isinstance(value, Mapping):
        return {key: clean_payload_value(item) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class PauseKind:
    """A kind of human (or customer) wait a graph declares.

    Attributes:
        name: the kind, as nodes name it in ``Pause(kind=...)``.
        title: the review page's heading.
        choices: the buttons, in order.
        editable: payload fields the reviewer may edit.
        waits_for: ``reviewer`` (the approval function resumes it) or
            ``customer`` (a reply in the email's thread resumes it, through ingest).
        description: one line for ``inboxflow graphs``.
        defaults: values for ``{name}`` fields in the title, choice labels and
            outcomes when the pause's context lacks them (each pause's context comes first).
        notification: the reviewer email's subject, ``{title}``, ``{sender}`` and
            ``{subject}`` filled in.
        payload_title: the heading above the payload on the pages ("The reply").
        demo_choice: the choice ``inboxflow demo`` takes by itself, as the pause's first
            reviewer, so that its samples run to the end (None: the demo leaves it to a human).
        bulk_safe: the inbox may decide several of this kind at once, unseen, by its
            primary or danger choice (neither may require a comment).
    """

    name: str
    title: str
    choices: tuple[Choice, ...]
    editable: tuple[EditableField, ...] = ()
    waits_for: Literal["reviewer", "customer"] = "reviewer"
    description: str = ""
    defaults: Mapping[str, str] = dataclasses.field(default_factory=dict)
    notification: str = "{title}: {subject}"
    payload_title: str = "What you decide on"
    demo_choice: str | None = None
    bulk_safe: bool = False

    def __post_init__(self) -> None:
        values = [choice.value for choice in self.choices]
        if self.bulk_safe and any(
            c.comment == "required" for c in self.choices if c.style in ("primary", "danger")
        ):
            raise ValueError(f"pause kind {self.name}: a bulk choice requires a comment")
        if len(set(values)) != len(values):
            raise ValueError(f"pause kind {self.name}: duplicate choices {values}")
        if self.demo_choice is not None and self.demo_choice not in values:
            raise ValueError(
                f"pause kind {self.name}: demo_choice {self.demo_choice!r} is not a choice"
            )

    def choice(self, value: str) -> Choice | None:
        """The choice called ``value``, or None."""
        return next((c for c in self.choices if c.value == value), None)

    def styled(self, style: ChoiceStyle) -> Choice | None:
        """The first choice of ``style`` (``primary``: approve, ``danger``: reject), or None."""
        return next((c for c in self.choices if c.style == style), None)

    @property
    def values(self) -> tuple[str, ...]:
        """The decision values this kind accepts."""
        return tuple(choice.value for choice in self.choices)

    def field(self, name: str) -> EditableField | None:
        """The editable field called ``name``, or None."""
        return next((f for f in self.editable if f.name == name), None)

    def for_pause(self, context: Mapping[str, Any]) -> PauseKind:
        """This kind as one pause shows it: title, labels and outcomes filled from its context."""
        values = {**self.defaults, **context}
        return dataclasses.replace(
            self,
            title=fill(self.title, values),
            choices=tuple(choice.filled(values) for choice in self.choices),
        )

    def clean_payload(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """``payload`` under the rules its fields' edits meet, before a reviewer sees it.

        What comes from mail (a hostile subject with U+2028 or U+202E, a body with
        bidi overrides) is cleaned the way an edit would be refused for it, so that
        approving it unchanged passes :meth:`validate_edit` and no mail adapter
        meets a character it cannot write. See :func:`clean_payload_value`.
        """
        return {key: clean_payload_value(value, self.field(key)) for key, value in payload.items()}

    def validate_edit(self, edit: Mapping[str, Any]) -> dict[str, str]:
        """The reviewer's edit, checked field by field and normalised.

        Only declared fields, only strings. ``line``, ``address``, ``addresses``: one
        line, no line separator (``str.splitlines`` semantics, so U+2028 too), bidi,
        zero-width or control character (:func:`~inboxflow.mail.field_text.line_refusal`).
        ``text``: no bidi or control character but tab and newline (CRLF and other
        line separators become LF). ``address``: exactly one email address. ``addresses``:
        one or more, comma-separated. Every field: at most ``max_chars``,
        not blank when ``required``.

        Raises:
            EditRejected: naming the first field refused.
        """
        if not isinstance(edit, Mapping):
            raise EditRejected("the edit must be an object of field values")
        checked: dict[str, str] = {}
        for name, value in edit.items():
            spec = self.field(str(name))
            if spec is None:
                editable = ", ".join(f.name for f in self.editable) or "none"
                raise EditRejected(
                    f"{name!s:.40}: not an editable field (editable: {editable})", str(name)
                )
            checked[spec.name] = spec.validate(value)
        return checked


_ADDRESS_FORBIDDEN = set(' <>()[],;:"\\')


def _addresses(text: str, spec: EditableField, single: bool) -> list[str]:
    """The addresses in ``text`` (``a@x.test`` or ``Name <a@x.test>``), or EditRejected.

    Each part is held to what the effect bindings accept (``bindings.address_of``:
    exactly one ``@`` in the whole part, so no address in the display name, and a
    domain ``mail.addresses`` can key), so that an edit the page approves is one
    dispatch can send.
    """
    parts = [part.strip() for part in text.split(",")]
    if single and len(parts) != 1:
        raise EditRejected(f"{spec.label}: exactly one email address", spec.name)
    found = []
    for part in parts:
        pairs = getaddresses([part])
        address = pairs[0][1] if len(pairs) == 1 else ""
        local, at, domain = address.rpartition("@")
        if (
            not at
            or not local
            or not domain
            or "@" in local
            or any(c in _ADDRESS_FORBIDDEN for c in address)
            or (address != part and not part.endswith(f"<{address}>"))
            or address_of(part) is None
            or address_key_or_none(address) is None
        ):
            raise EditRejected(f"{spec.label}: {part[:80]!r} is not one email address", spec.name)
        found.append(address)
    return found


APPROVE_REJECT = PauseKind(
    "approve",
    "Approval needed",
    (
        Choice("approve", "Approve", "primary", ("Approved", "It goes ahead.")),
        Choice("reject", "Reject", "danger", ("Rejected", "It does not go ahead.")),
    ),
)
"""The kind used for a pause whose graph declares no kind of that name."""


def kind_of(pause_kinds: Mapping[str, PauseKind], name: str) -> PauseKind:
    """The declared kind ``name``, or the plain approve/reject kind."""
    return pause_kinds.get(name) or PauseKind(
        name, APPROVE_REJECT.title, APPROVE_REJECT.choices, description="undeclared kind"
    )


KindLookup = Callable[[str, str], PauseKind]
"""``(graph, kind) -> PauseKind``: a pause's declaration."""


def kind_lookup(graphs: Mapping[str, Any]) -> KindLookup:
    """Find a pause's kind among ``graphs``' declarations (the runtime's graphs, by name).

    A graph not served, or a kind it does not declare, gives the plain approve/reject kind.
    """

    def lookup(graph: str, kind: str) -> PauseKind:
        declared = graphs.get(graph)
        return kind_of(declared.pause_kinds if declared is not None else {}, kind)

    return lookup


def reviewer_kinds(graphs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(name, title)`` of every pause kind ``graphs`` declare that a reviewer answers."""
    kinds = {
        kind.name: kind.title
        for graph in graphs.values()
        for kind in graph.pause_kinds.values()
        if kind.waits_for == "reviewer"
    }
    return sorted(kinds.items())


__all__ = [
    "APPROVE_REJECT",
    "Choice",
    "ChoiceStyle",
    "EditRejected",
    "EditableField",
    "FieldKind",
    "KindLookup",
    "PauseKind",
    "clean_payload_value",
    "fill",
    "hidden_characters",
    "kind_lookup",
    "kind_of",
    "reviewer_kinds",
]
