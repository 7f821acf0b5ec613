"""Whether a document is about a person, and the document with the person taken out.

A person is their address and the identifiers that lead to them (``Identifiers``:
their traces, quotes, Gmail threads, message ids, guest customer id). A
``PersonKey`` of a collection names where a document can hold one (``schema.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..schema import ANYWHERE, DOCUMENT_ID, KEY_KINDS, KeyKind, PersonKey

ERASED = "[erased]"
"""What an erased mention is replaced with in a redacted document."""

_ID_SEPARATORS = ":/-"


def normalize_address(address: str) -> str:
    """The address as it is matched: trimmed, lowercase, without angle brackets.

    Raises:
        ValueError: not one plausible address (``local@domain``, no spaces).
    """
    cleaned = address.strip().strip("<>").strip().lower()
    if not re.fullmatch(r"[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+", cleaned):
        raise ValueError(f"not an email address: {address!r}")
    return cleaned


def address_pattern(address: str) -> re.Pattern[str]:
    """Finds ``address`` in text, not inside a longer address (``xjana@...``, ``...@a.b.c``)."""
    return re.compile(
        r"(?<![\w.%+-])" + re.escape(address) + r"(?![\w-]|\.[\w])", flags=re.IGNORECASE
    )


@dataclass
class Identifiers:
    """Everything a person is found by: the address and, per key kind, identifiers."""

    address: str
    found: dict[KeyKind, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.address = normalize_address(self.address)
        self.pattern = address_pattern(self.address)

    def of(self, kind: KeyKind) -> set[str]:
        """The identifiers of ``kind`` known so far."""
        return self.found.setdefault(kind, set())

    def add(self, kind: KeyKind, value: str) -> bool:
        """Add one identifier; True when it was new."""
        if kind == "address" or not value:
            return False
        known = self.of(kind)
        if value in known:
            return False
        known.add(value)
        return True

    def as_json(self) -> dict[str, list[str]]:
        """The identifiers by kind, sorted (without the address)."""
        return {kind: sorted(self.found[kind]) for kind in KEY_KINDS if self.found.get(kind)}


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
    matched = []
    for key in keys:
        values = values_at(doc_id, doc, key.field)
        if key.kind == "address":
            hit = any(person.pattern.search(value) for value in values)
        else:
            known = person.of(key.kind)
            hit = bool(known) and any(id_matches(v, i) for v in values for i in known)
        if hit:
            matched.append(key)
    return matched


def mentions(value: Any, person: Identifiers) -> bool:
    """Whether any string in ``value`` names the person's address or one of their identifiers."""
    return any(_mentioned(text, person) for text in _strings(value))


def _mentioned(text: str, person: Identifiers) -> bool:
    if person.pattern.search(text):
        return True
    return any(id_matches(text, i) for known in person.found.values() for i in known)


def redact(value: Any, person: Identifiers) -> Any:
    """``value`` without the person: list items that mention them dropped, their address
    (and identifiers) in the remaining text replaced by ``ERASED``."""
    if isinstance(value, str):
        text = person.pattern.sub(ERASED, value)
        for known in person.found.values():
            for identifier in known:
                if id_matches(text, identifier):
                    text = text.replace(identifier, ERASED)
        return text
    if isinstance(value, Mapping):
        return {key: redact(item, person) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact(item, person) for item in value if not mentions(item, person)]
    return value
