"""Finding everything held about a person, collection by collection, as ``schema.py`` declares.

Every top-level collection that can hold personal data is read (through the
documents port, or the vector port for a collection of vectors) and each
document matched against the collection's ``PersonKey`` declarations, in two
passes. First the documents *about* the person (``PersonalData.found_by``):
each gives identifiers that find more (``leads_to``: a trace's id finds its
effects, approvals, claims...; its email's text), so this pass repeats until
nothing new turns up. Then, among the rest, the documents that only *mention*
them (``mentioned_in``: their email retrieved into another person's trace, a
memory note): these are redacted, never followed, so another person's trace
does not make its effects, vectors or claims the person's. Sub-collections
are read under the documents found: a document about them takes all its
children with it; the children of any other are matched one by one (under
every document of a collection that is only ever mentioned, such as memory).

The walk reads whole collections: an access or erasure request is rare and
must not miss a document that no index would lead to (an address in a body).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..ports.documents import DocumentStore
from ..ports.vectors import VectorIndex
from ..schema import COLLECTIONS, Collection, guest_customer_id
from .matching import Identifiers, matching_keys, values_at


@dataclass(frozen=True)
class Held:
    """One document about the person.

    Attributes:
        collection: its collection's declaration.
        path: its document path (``collection/doc_id``, deeper for a sub-collection).
        doc_id: its id in the collection.
        doc: its content (a vector document: its fields, without the vector).
        matched: what it was found by (key kinds, or ``parent`` for a child of a found document).
        mentioned: it only mentions the person (another person's record): erasing redacts it.
    """

    collection: Collection
    path: str
    doc_id: str
    doc: dict[str, Any]
    matched: tuple[str, ...]
    mentioned: bool = False

    @property
    def is_vector(self) -> bool:
        """Whether it lives in the vector index (deleted through the vector port)."""
        return bool(self.collection.vector_indexes)


@dataclass
class Holdings:
    """What is held about one person, and the other records that mention them."""

    person: Identifiers
    held: list[Held] = field(default_factory=list)
    """The documents about them (deleted by an erasure)."""
    mentions: list[Held] = field(default_factory=list)
    """Other documents that mention them (redacted by an erasure)."""

    def of(self, collection: Collection) -> list[Held]:
        """The documents about them in ``collection``, by path."""
        return [h for h in self.held if h.collection is collection]

    def mentions_of(self, collection: Collection) -> list[Held]:
        """The documents of ``collection`` that only mention them, by path."""
        return [h for h in self.mentions if h.collection is collection]

    def counts(self) -> dict[str, int]:
        """Documents about them per collection (only collections with some), in schema order."""
        return _counts(self.held)

    def mention_counts(self) -> dict[str, int]:
        """Documents that only mention them per collection, in schema order."""
        return _counts(self.mentions)

    def everything(self) -> list[Held]:
        """Both groups."""
        return [*self.held, *self.mentions]

    def __len__(self) -> int:
        return len(self.held) + len(self.mentions)


class PersonFinder:
    """Finds a person's documents in the store and the vector index.

    Args:
        documents: the documents port.
        vectors: the vector index beside it.
        collections: the declarations to walk (default: every collection of ``schema.py``).
    """

    def __init__(
        self,
        documents: DocumentStore,
        vectors: VectorIndex,
        collections: Iterable[Collection] = COLLECTIONS,
    ) -> None:
        self.documents = documents
        self.vectors = vectors
        self.collections = tuple(collections)

    def find(self, address: str) -> Holdings:
        """Everything held about ``address`` (and the identifiers that led to it).

        Raises:
            ValueError: ``address`` is not an email address.
        """
        person = Identifiers(address)
        person.add("customer_id", guest_customer_id(person.address))
        listings: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        found: dict[str, Held] = {}
        top = [c for c in self.collections if c.parent is None and _personal(c)]
        for collection in top:
            listings[collection.name] = self._read(collection)
        grew = True
        while grew:
            grew = False
            for collection in top:
                for doc_id, doc in listings[collection.name]:
                    path = collection.path(doc_id)
                    if _record(collection, path, doc_id, doc, person, found, mentioned=False):
                        grew |= _follow(collection, doc_id, doc, person)
        for collection in top:
            for doc_id, doc in listings[collection.name]:
                path = collection.path(doc_id)
                if path not in found:
                    _record(collection, path, doc_id, doc, person, found, mentioned=True)
        for child in (c for c in self.collections if c.parent is not None and _personal(c)):
            self._children(child, person, found, listings)
        held = sorted(found.values(), key=_order)
        return Holdings(
            person, [h for h in held if not h.mentioned], [h for h in held if h.mentioned]
        )

    def _children(
        self,
        child: Collection,
        person: Identifiers,
        found: dict[str, Held],
        listings: dict[str, list[tuple[str, dict[str, Any]]]],
    ) -> None:
        parent = next(c for c in self.collections if c.name == child.parent)
        assert child.personal is not None
        if parent.personal is not None and not parent.personal.found_by:
            # Only ever mentions people: any of them may hold the person in its history.
            if parent.name not in listings:
                listings[parent.name] = self._read(parent)
            parents = [parent.path(doc_id) for doc_id, _ in listings[parent.name]]
        else:
            parents = [h.path for h in found.values() if h.collection is parent]
        for parent_path in parents:
            about = parent_path in found and not found[parent_path].mentioned
            for doc_id, doc in self.documents.list(f"{parent_path}/{child.name}"):
                path = f"{parent_path}/{child.name}/{doc_id}"
                if about:
                    found[path] = Held(child, path, doc_id, doc, ("parent",))
                    continue
                if _record(child, path, doc_id, doc, person, found, mentioned=False):
                    _follow(child, doc_id, doc, person)
                else:
                    _record(child, path, doc_id, doc, person, found, mentioned=True)

    def _read(self, collection: Collection) -> list[tuple[str, dict[str, Any]]]:
        if collection.vector_indexes:
            return self.vectors.documents(collection.name)
        return self.documents.list(collection.name)


def _record(
    collection: Collection,
    path: str,
    doc_id: str,
    doc: dict[str, Any],
    person: Identifiers,
    found: dict[str, Held],
    *,
    mentioned: bool,
) -> bool:
    """Add the document to ``found`` if its declared keys (about, or mentioning) match ``person``."""
    assert collection.personal is not None
    declared = collection.personal.mentioned_in if mentioned else collection.personal.found_by
    keys = matching_keys(doc_id, doc, declared, person)
    if keys:
        kinds = tuple(dict.fromkeys(k.kind for k in keys))
        found[path] = Held(collection, path, doc_id, doc, kinds, mentioned=mentioned)
    return bool(keys)


def _follow(collection: Collection, doc_id: str, doc: dict[str, Any], person: Identifiers) -> bool:
    """Add what a document about ``person`` leads to; True when it gave something new."""
    assert collection.personal is not None
    grew = False
    for lead in collection.personal.leads_to:
        for value in values_at(doc_id, doc, lead.field):
            grew |= person.add(lead.kind, value)
    return grew


def _personal(collection: Collection) -> bool:
    return collection.personal is not None and collection.personal.holds_personal_data


def _counts(held: list[Held]) -> dict[str, int]:
    counts = {c.name: sum(1 for h in held if h.collection is c) for c in COLLECTIONS}
    return {name: n for name, n in counts.items() if n}


def _order(held: Held) -> tuple[int, str]:
    return (COLLECTIONS.index(held.collection) if held.collection in COLLECTIONS else -1, held.path)
