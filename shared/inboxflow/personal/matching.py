"""Whether a document is about a person, and the document with the person taken out.

A person is their address (its ``address_key``: ASCII case aside, exactly that
address; a look-alike is somebody else), the identifiers that lead to them (``Identifiers``:
their traces, quotes, Gmail threads, message ids, guest customer id) and the
text of their mail (subjects and body lines, as their own documents hold it).
A ``PersonKey`` of a collection names where a document can hold one
(``schema.py``). ``redact`` takes all of it out of a document that only
mentions them; ``mentioning`` keeps only what names them (for the access
document, which must not hand them other people's records).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import idna

from ..mail.addresses import address_key
from ..schema import ANYWHERE, DOCUMENT_ID, KEY_KINDS, KeyKind, PersonKey

ERASED = "[erased]"
"""What an erased mention is replaced with in a redacted document."""

MIN_TEXT_CHARS = 20
"""The shortest subject or body line of a person's mail that counts as theirs elsewhere
(a shorter one, ``Thanks,`` or a first name, is anybody's)."""

_ID_SEPARATORS = ":/-"


def address_pattern(address: str) -> re.Pattern[str]:
    """Finds the address of key ``address`` in text, not inside a longer address
    (``xjana@...``, ``...@a.b.c``).

    Its ASCII letters match in either case and nothing else is folded (``re.ASCII`` over the
    address only): a look-alike (``gma\u0131l.com``, the Kelvin sign, fullwidth forms) is not
    the address. The domain matches as the key writes it (IDNA) or in its Unicode form.
    """
    local, _, domain = address_key(address).rpartition("@")
    forms = dict.fromkeys([domain, _unicode_domain(domain)])
    domains = "|".join(re.escape(form) for form in forms)
    return re.compile(
        r"(?<![\w.%+-])(?ai:" + re.escape(local) + "@(?:" + domains + r"))(?![\w-]|\.[\w])"
    )


def _unicode_domain(domain: str) -> str:
    try:
        return idna.decode(domain)
    except idna.IDNAError:
        return domain


@dataclass
class Identifiers:
    """Everything a person is found by: the address and, per key kind, identifiers."""

    address: str
    found: dict[KeyKind, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.address = address_key(self.address)
        self.pattern = address_pattern(self.address)

    def of(self, kind: KeyKind) -> set[str]:
        """The identifiers of ``kind`` known so far."""
        return self.found.setdefault(kind, set())

    def add(self, kind: KeyKind, value: str) -> bool:
        """Add one identifier (``mail_text``: each long enough line of it); True when new."""
        if kind == "address" or not value:
            return False
        known = self.of(kind)
        values = _text_lines(value) if kind == "mail_text" else [value]
        new = [v for v in values if v not in known]
        known.update(new)
        return bool(new)

    def names(self, kind: KeyKind, text: str) -> bool:
        """Whether ``text`` holds the person's address (``address``) or a known ``kind``."""
        if kind == "address":
            return bool(self.pattern.search(text))
        if kind == "mail_text":
            return any(line in text for line in self.of(kind))
        return any(id_matches(text, identifier) for identifier in self.of(kind))

    def pieces_in(self, text: str) -> list[str]:
        """What of the person ``text`` holds, in order: the address as written, the text of
        their mail, their identifiers."""
        found = [(m.start(), m.group(0)) for m in self.pattern.finditer(text)]
        for kind, known in self.found.items():
            for piece in known:
                hit = piece in text if kind == "mail_text" else id_matches(text, piece)
                if hit:
                    found.append((text.find(piece), piece))
        return list(dict.fromkeys(piece for _, piece in sorted(found)))

    def erased_from(self, text: str) -> str:
        """``text`` with the address, the text of their mail and their identifiers replaced."""
        text = self.pattern.sub(ERASED, text)
        for line in sorted(self.of("mail_text"), key=len, reverse=True):
            text = text.replace(line, ERASED)
        for kind, known in self.found.items():
            if kind == "mail_text":
                continue
            for identifier in known:
                if id_matches(text, identifier):
                    text = text.replace(identifier, ERASED)
        return text

    def as_json(self) -> dict[str, list[str]]:
        """The identifiers by kind, sorted (without the address)."""
        return {kind: sorted(self.found[kind]) for kind in KEY_KINDS if self.found.get(kind)}


def _text_lines(text: str) -> list[str]:
    """The lines of ``text`` long enough to be the person's (quote marks and spaces trimmed)."""
    lines = (line.strip().lstrip(">").strip() for line in text.splitlines())
    return [line for line in lines if len(line) >= MIN_TEXT_CHARS]


def values_at(doc_id: str, doc: Mapping[str, Any], path: str) -> Iterator[str]:
    """The strings at ``path`` in ``doc`` (``DOCUMENT_ID``: the id; ``ANYWHERE``: all of them)."""
    if path == DOCUMENT_ID:
        yield doc_id
        return
    if path == ANYWHERE:
        yield doc_id
        yield from _strings(doc)
        return
    current: list[Any] = [doc]
    for part in path.split("."):
        following: list[Any] = []
        for value in current:
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, Mapping) and part in item:
                    following.append(item[part])
        current = following
    for value in current:
        yield from _strings(value)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def id_matches(value: str, identifier: str) -> bool:
    """Whether ``value`` is ``identifier`` or has it as one separated part (``{id}:3:notify``)."""
    if not identifier:
        return False
    start = value.find(identifier)
    while start != -1:
        end = start + len(identifier)
        before = start == 0 or value[start - 1] in _ID_SEPARATORS
        after = end == len(value) or value[end] in _ID_SEPARATORS
        if before and after:
            return True
        start = value.find(identifier, start + 1)
    return False


def matching_keys(
    doc_id: str, doc: Mapping[str, Any], keys: tuple[PersonKey, ...], person: Identifiers
) -> list[PersonKey]:
    """The keys of ``keys`` by which the document is about ``person``."""
    return [
        key
        for key in keys
        if any(person.names(key.kind, value) for value in values_at(doc_id, doc, key.field))
    ]


def mentions(value: Any, person: Identifiers) -> bool:
    """Whether any string in ``value`` names the person's address or one of their identifiers."""
    return any(_mentioned(text, person) for text in _strings(value))


def _mentioned(text: str, person: Identifiers) -> bool:
    return person.names("address", text) or any(person.names(kind, text) for kind in person.found)


def redact(value: Any, person: Identifiers) -> Any:
    """``value`` without the person: list items that mention them dropped, their address,
    the text of their mail and their identifiers in the remaining text replaced by ``ERASED``."""
    if isinstance(value, str):
        return person.erased_from(value)
    if isinstance(value, Mapping):
        return {key: redact(item, person) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact(item, person) for item in value if not mentions(item, person)]
    return value


def without_others(doc: Mapping[str, Any], paths: tuple[str, ...], person: Identifiers) -> Any:
    """``doc`` (a document about the person) with each list at ``paths`` (other people's records
    copied into it, ``PersonalData.others``) keeping of each item only what is the person's own
    (``mentioning``): an item with nothing of theirs is dropped. ``doc`` is not changed."""
    for path in paths:
        doc = _others_at(doc, path.split("."), person)
    return doc


def _others_at(value: Any, parts: list[str], person: Identifiers) -> Any:
    if not parts:
        if not isinstance(value, list | tuple):
            return value
        kept = (mentioning(item, person) for item in value)
        return [item for item in kept if item is not None]
    if not isinstance(value, Mapping) or parts[0] not in value:
        return value
    return {**value, parts[0]: _others_at(value[parts[0]], parts[1:], person)}


ELIDED = " \u2026 "
"""What joins the pieces of a person's own in another person's text (``mentioning``)."""


def mentioning(value: Any, person: Identifiers) -> Any:
    """Only what of the person ``value`` holds (None when nothing): in each string, their
    address, the text of their mail and their identifiers (joined by ``ELIDED``), and the
    maps and lists on the way to them; the rest is somebody else's."""
    if isinstance(value, str):
        return ELIDED.join(person.pieces_in(value)) or None
    if isinstance(value, Mapping):
        kept = {key: mentioning(item, person) for key, item in value.items()}
        return {key: item for key, item in kept.items() if item is not None} or None
    if isinstance(value, list | tuple):
        items = [mentioning(item, person) for item in value]
        return [item for item in items if item is not None] or None
    return None
