"""The layouts of a Crisp notification, read by structure (the text, after HTML is rendered).

A notification names the patient in one of two ways, then gives their message:

- a **head line**: ``New message from NAME (ADDRESS)`` (``Nová zpráva od``, ``Nová správa od``,
  ``Neue Nachricht von``...; the address in ``()``, ``<>`` or ``[]``, or left to a field);
- a **labelled block**: ``Label: value`` lines (``Od:``/``Jméno:``/``Name:``/``Von:`` for the
  name, ``E-mail:``/``Email:`` for the address, ``Stránka:``/``Page:``/``Seite:`` for the page;
  :data:`LABELS` per language), one per line or one per paragraph (HTML ``<p>`` or table rows
  rendered by ``mail/html_text.py``), between dashed separators or not.

A few lines may come first (a title, ``Crisp · site``). The message is what follows the
block (or a ``Message:`` field), up to the next separator line or Crisp's footer (a line
that names Crisp or links to it: ``Reply in Crisp``, ``Odpovědět v Crispu``). Labels are
compared without case, accents, spaces or hyphens (``E-Mail`` is ``email``).

What names the patient is checked, never guessed: the address must parse
(``mail/addresses.address_key_or_none``); the head line, the name field and the e-mail
field must not name two addresses; an e-mail field in the message is refused (a visitor
can type one). A text that has such a layout but cannot be read so raises
:class:`Unreadable` with the reason; a text without one gives None.

Known limit: HTML renders ``<hr>`` as a blank line, so in an HTML layout with neither a
separator line nor a ``Message:`` label, a first paragraph of the message that is itself an
``E-mail:`` field line reads as the block's (when the block has no e-mail of its own).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ...mail.addresses import address_key_or_none

LABELS: dict[str, dict[str, tuple[str, ...]]] = {
    "cs": {
        "name": ("Od", "Jméno", "Jméno a příjmení", "Návštěvník"),
        "email": ("E-mail", "E-mailová adresa"),
        "meta": ("Stránka", "Web", "Webová stránka", "Konverzace", "Předmět"),
        "message": ("Zpráva",),
    },
    "sk": {
        "name": ("Od", "Meno", "Meno a priezvisko", "Návštevník"),
        "email": ("E-mail", "E-mailová adresa"),
        "meta": ("Stránka", "Web", "Webová stránka", "Konverzácia", "Predmet"),
        "message": ("Správa",),
    },
    "en": {
        "name": ("Name", "From", "Visitor", "Full name"),
        "email": ("Email", "E-mail", "Email address"),
        "meta": ("Page", "Website", "Web", "URL", "Conversation", "Subject"),
        "message": ("Message",),
    },
    "de": {
        "name": ("Name", "Von", "Besucher"),
        "email": ("E-Mail", "E-Mail-Adresse"),
        "meta": ("Seite", "Webseite", "Website", "Unterhaltung", "Betreff"),
        "message": ("Nachricht",),
    },
}
"""The field labels of Crisp's notifications, per language: ``name``, ``email``, ``meta``
(the page, the site, the conversation: Crisp's, never the message) and ``message``."""

HEADS: dict[str, tuple[str, ...]] = {
    "cs": ("Nová zpráva od", "Máte novou zprávu od"),
    "sk": ("Nová správa od", "Máte novú správu od"),
    "en": ("New message from", "You have a new message from"),
    "de": ("Neue Nachricht von", "Sie haben eine neue Nachricht von"),
}
"""The words of the head line before the patient's name, per language."""

MAX_PREAMBLE_LINES = 4
"""Lines (a title, ``Crisp · site``) allowed before the head line or the block."""


def label_key(label: str) -> str:
    """A label as it is compared: no accents, casefolded, letters and digits only."""
    decomposed = unicodedata.normalize("NFKD", label)
    return "".join(c for c in decomposed if c.isalnum()).casefold()


def _kinds() -> dict[str, str]:
    kinds: dict[str, str] = {}
    for table in LABELS.values():
        for kind, labels in table.items():
            for label in labels:
                key = label_key(label)
                if kinds.setdefault(key, kind) != kind:
                    raise ValueError(f"label {label!r} is both {kinds[key]} and {kind}")
    return kinds


KINDS = _kinds()
"""``label_key(label)`` -> its kind, over every language."""

_HEAD = re.compile(
    r"^\s*(?:"
    + "|".join(re.escape(head) for heads in HEADS.values() for head in heads)
    + r")\s+(?P<name>[^\n()<>\[\]@:]*?)\s*(?:[(<\[]\s*(?P<email>[^()<>\[\]\s]*)\s*[)>\]])?\s*:?\s*$",
    re.IGNORECASE,
)
_FIELD = re.compile(r"^\s*(?P<label>[^\W\d_][^:\n]{0,39}?)\s*:(?:\s+(?P<value>.*?))?\s*$")
_NAMED_ADDRESS = re.compile(r"^(?P<name>.*?)\s*[(<\[]\s*(?P<email>[^()<>\[\]\s]*)\s*[)>\]]$")
_SEPARATOR = re.compile(r"^\s*[-_=*~\u2013\u2014\u2500\u2501]{2,}\s*$")
_FOOTER = re.compile(
    r"crisp\.(?:chat|email|help|im)\b|\bcrisp(?:u|e|a|em|om)?\b|^\s*(?:Reply to this email|"
    r"Odpovězte na tento e-?mail|Odpovedzte na tento e-?mail|You are receiving this|"
    r"Tento e-?mail jste obdrželi|Tento e-?mail ste dostali)",
    re.IGNORECASE,
)


class Unreadable(ValueError):
    """The text has a Crisp layout, but does not name one patient and a message."""


@dataclass(frozen=True)
class Notification:
    """What a Crisp notification says.

    Attributes:
        name: the patient's name (their address when none is given).
        address: the patient's address (``address_key``).
        message: the patient's words, without Crisp's header, fields and footer.
    """

    name: str
    address: str
    message: str


@dataclass(frozen=True)
class _Field:
    kind: str | None
    label: str
    value: str


def _field(line: str) -> _Field | None:
    match = _FIELD.match(line)
    if match is None:
        return None
    label = match.group("label")
    return _Field(KINDS.get(label_key(label)), label.strip(), (match.group("value") or "").strip())


def _blank(line: str) -> bool:
    return not line.strip()


def read(text: str) -> Notification | None:
    """The patient and message of a Crisp notification's text; None if it has no such layout.

    Raises:
        Unreadable: the layout is there, but what it says is missing, twice, or not an address.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = _start(lines)
    if start is None:
        return None
    head = _HEAD.match(lines[start])
    index = start + 1 if head else start
    fields, index, first = _block(lines, index)
    if head is None and not any(f.kind in ("name", "email") for f in fields):
        return None
    names = [f.value for f in fields if f.kind == "name"]
    addresses: list[tuple[str, str]] = []  # (where, as written)
    if head is not None and head.group("email") is not None:
        addresses.append(("the head line", head.group("email")))
    for field in fields:
        if field.kind == "email":
            addresses.append((f"the {field.label} field", field.value))
    named = ""
    for value in names:
        match = _NAMED_ADDRESS.match(value)
        if match is not None:
            addresses.append(("the name field", match.group("email")))
            value = match.group("name")
        elif address_key_or_none(value) is not None:
            addresses.append(("the name field", value))
            value = ""
        named = named or _clean_name(value)
    if head is not None and not named:
        named = _clean_name(head.group("name"))
    message_lines = _message(lines, index, first)
    typed = [f for f in map(_field, message_lines) if f is not None and f.kind == "email"]
    if typed:
        raise Unreadable(f"the message holds an e-mail field of its own ({typed[0].label}:)")
    address = _one_address(addresses)
    message = _tidy_message(message_lines)
    if not message:
        raise Unreadable("no message from the patient")
    return Notification(name=named or address, address=address, message=message)


def _start(lines: list[str]) -> int | None:
    """The line of the head line or the block's first name/e-mail field, after a short preamble."""
    preamble = 0
    for index, line in enumerate(lines):
        if _blank(line) or _SEPARATOR.match(line):
            continue
        if _HEAD.match(line):
            return index
        field = _field(line)
        if field is not None and field.kind in ("name", "email"):
            return index
        preamble += 1
        if preamble > MAX_PREAMBLE_LINES:
            return None
    return None


def _block(lines: list[str], index: int) -> tuple[list[_Field], int, str | None]:
    """The ``Label: value`` lines from ``index``: (the fields, where the rest starts, the
    value of a ``Message:`` field). Blank lines may come between fields (HTML paragraphs);
    a separator ends the block; lines of unknown labels count only between known ones."""
    fields: list[_Field] = []
    end = index
    while index < len(lines):
        line = lines[index]
        if _blank(line):
            index += 1
            continue
        if _SEPARATOR.match(line):
            break
        field = _field(line)
        if field is None:
            break
        if field.kind == "message":
            known = [f for f in fields if f.kind is not None]
            return known, index + 1, field.value
        fields.append(field)
        index += 1
        if field.kind is not None:
            end = index
    # unknown labels after the last known one are the message's, not the block's
    kept = [f for f in fields if f.kind is not None]
    return kept, end, None


def _message(lines: list[str], index: int, first: str | None) -> list[str]:
    """The message's lines: from ``index`` (Crisp's separators and page lines skipped) to the
    next separator or Crisp's footer."""
    kept: list[str] = [first] if first else []
    while index < len(lines) and not kept:
        line = lines[index]
        field = _field(line)
        if _blank(line) or _SEPARATOR.match(line) or (field is not None and field.kind == "meta"):
            index += 1
            continue
        if field is not None and field.kind == "message":
            kept.append(field.value)
            index += 1
        break
    for line in lines[index:]:
        if _SEPARATOR.match(line) or _FOOTER.search(line.lstrip("[")):
            break
        kept.append(line)
    return kept


def _one_address(addresses: list[tuple[str, str]]) -> str:
    if not addresses:
        raise Unreadable("no e-mail address of the patient")
    keys: list[str] = []
    for where, written in addresses:
        key = address_key_or_none(written)
        if key is None:
            raise Unreadable(f"{where} is not one e-mail address: {written[:80]!r}")
        if key not in keys:
            keys.append(key)
    if len(keys) > 1:
        raise Unreadable(f"two addresses for the patient: {', '.join(keys[:3])}")
    return keys[0]


def _clean_name(value: str) -> str:
    return " ".join(value.split()).strip("\"'\u201c\u201d").strip()[:200]


def _tidy_message(lines: list[str]) -> str:
    """The message without surrounding blank lines, a ``>`` quote or typographic quotes."""
    body = "\n".join(line.rstrip() for line in lines).strip()
    unquoted = [
        line.removeprefix(">").strip() if line.startswith(">") else line
        for line in body.splitlines()
    ]
    return "\n".join(unquoted).strip().strip('\u201c\u201d"').strip()


__all__ = ["HEADS", "KINDS", "LABELS", "Notification", "Unreadable", "label_key", "read"]
