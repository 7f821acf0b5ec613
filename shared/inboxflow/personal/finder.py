"""Finding everything held about a person, collection by collection, as ``schema.py`` declares.

Every top-level collection that can hold personal data is read (through the
documents port, or the vector port for a collection of vectors) and each
document matched against the collection's ``PersonKey`` declarations. A
document found gives identifiers that find more (``PersonalData.leads_to``: a
trace's id finds its effects, approvals, claims...), so the walk repeats until
no new identifier turns up. Sub-collections are read under the documents
found: all of a deleted parent's children go with it; the children of a
shared (redacted) document are matched one by one.

The walk reads whole collections: an access or erasure request is rare and
must not miss a document that no index would lead to (an address in a body).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..ports.crm import guest_customer
from ..ports.documents import DocumentStore
from ..ports.vectors import VectorIndex
from ..schema import COLLECTIONS, Collection
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
    """

    collection: Collection
    path: str
    doc_id: str
    doc: dict[str, Any]
    matched: tuple[str, ...]

    @property
    def is_vector(self) -> bool:
        """Whether it lives in the vector index (deleted through the vector port)."""
        return bool(self.collection.vector_indexes)


@dataclass
class Holdings:
    """What is held about one person."""

    person: Identifiers
    held: list[Held] = field(default_factory=list)

    def of(self, collection: Collection) -> list[Held]:
        """The documents found in ``collection``, by path."""
        return [h for h in self.held if h.collection is collection]

    def counts(self) -> dict[str, int]:
        """How many documents per collection (only collections with some), in schema order."""
        counts = {c.name: len(self.of(c)) for c in COLLECTIONS}
        return {name: n for name, n in counts.items() if n}

    def __len__(self) -> int:
        return len(self.held)


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
        person.add("customer_id", guest_customer(person.address).customer_id)
        listings: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        found: dict[str, Held] = {}
        top = [c for c in self.collections if c.parent is None and _personal(c)]
        grew = True
        while grew:
            grew = False
            for collection in top:
                if collection.name not in listings:
                    listings[collection.name] = self._read(collection)
                for doc_id, doc in listings[collection.name]:
                    grew |= self._match(
                        collection, collection.path(doc_id), doc_id, doc, person, found
                    )
        for child in (c for c in self.collections if c.parent is not None and _personal(c)):
            self._children(child, person, found, listings)
        return Holdings(person, sorted(found.values(), key=_order))

    def _match(
        self,
        collection: Collection,
        path: str,
        doc_id: str,
        doc: dict[str, Any],
        person: Identifiers,
        found: dict[str, Held],
    ) -> bool:
        """Record the document if it is about ``person``; True when it gave a new identifier."""
        assert collection.personal is not None
        keys = matching_keys(doc_id, doc, collection.personal.found_by, person)
        if not keys:
            return False
        found[path] = Held(
            collection, path, doc_id, doc, tuple(dict.fromkeys(k.kind for k in keys))
        )
        grew = False
        for lead in collection.personal.leads_to:
            for value in values_at(doc_id, doc, lead.field):
                grew |= person.add(lead.kind, value)
        return grew

    def _children(
        self,
        child: Collection,
        person: Identifiers,
        found: dict[str, Held],
        listings: dict[str, list[tuple[str, dict[str, Any]]]],
    ) -> None:
        parent = next(c for c in self.collections if c.name == child.parent)
        assert child.personal is not None
        if parent.personal is not None and parent.personal.erase == "redact":
            # A shared document: any of them may hold the person in its history.
            if parent.name not in listings:
                listings[parent.name] = self._read(parent)
            parents = [parent.path(doc_id) for doc_id, _ in listings[parent.name]]
        else:
            parents = [h.path for h in found.values() if h.collection is parent]
        for parent_path in parents:
            for doc_id, doc in self.documents.list(f"{parent_path}/{child.name}"):
                path = f"{parent_path}/{child.name}/{doc_id}"
                if child.personal.erase == "delete" and parent_path in found:
                    found[path] = Held(child, path, doc_id, doc, ("parent",))
                else:
                    self._match(child, path, doc_id, doc, person, found)

    def _read(self, collection: Collection) -> list[tuple[str, dict[str, Any]]]:
        if collection.vector_indexes:
            return self.vectors.documents(collection.name)
        return self.documents.list(collection.name)


def _personal(collection: Collection) -> bool:
    return collection.personal is not None and collection.personal.holds_personal_data


def _order(held: Held) -> tuple[int, str]:
    return (COLLECTIONS.index(held.collection) if held.collection in COLLECTIONS else -1, held.path)
