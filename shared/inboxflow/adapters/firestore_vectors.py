"""Firestore vector index: documents with a ``Vector`` field, searched with ``find_nearest``.

A document ``{collection}/{doc_id}`` holds the fields (encoded as the
checkpoint store encodes documents) plus ``embedding``, a Firestore
``Vector``. ``nearest`` is ``find_nearest(distance_measure=COSINE)``, which
reports the cosine distance in ``vector_distance``. Asked for some
``fields``, it projects the query onto them and ``vector_distance`` (a
projection must name the distance field, or the distance is not returned),
so the vector and the other fields stay on the server.

Production needs a vector index per collection on ``embedding`` (flat, 768
dimensions), with every field used in ``where`` declared ahead of it
(declared in ``inboxflow.schema``); the emulator searches without indexes.

Document ids may contain any character: ``/`` and ``%`` are percent-encoded
(and ids Firestore reserves, ``.``, ``..`` and ``__x__``, are escaped) on the
way in and decoded on the way out.

Only Firestore adapters import ``google.cloud.firestore``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, unquote

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter
from google.cloud.firestore_v1.base_vector_query import DistanceMeasure
from google.cloud.firestore_v1.vector import Vector

from ..ports.documents import Filter
from ..ports.vectors import (
    DISTANCE_FIELD,
    EMBEDDING_FIELD,
    NearestQuery,
    Neighbor,
    VectorDocument,
    VectorIndex,
)
from .firestore_store import decode_value, encode_value, field_path, translated

BATCH_SIZE = 400
"""Writes per batch (Firestore allows 500; vector documents are large, requests max 10 MiB)."""

_RESERVED_ID = re.compile(r"^__.*__$")
_SAFE = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in "/%")


def encode_doc_id(doc_id: str) -> str:
    """A Firestore document id for any string; ``decode_doc_id`` inverts it."""
    encoded = quote(doc_id, safe=_SAFE)
    if encoded in (".", "..") or _RESERVED_ID.match(encoded):
        encoded = "%2E" + encoded[1:] if encoded[0] == "." else "%5F" + encoded[1:]
    return encoded


def decode_doc_id(key: str) -> str:
    """Invert ``encode_doc_id``."""
    return unquote(key)


def _fields_of(data: dict[str, Any]) -> dict[str, Any]:
    data = {k: v for k, v in data.items() if k not in (EMBEDDING_FIELD, DISTANCE_FIELD)}
    decoded: dict[str, Any] = decode_value(data)
    return decoded


class FirestoreVectorIndex(VectorIndex):
    """Vector documents in Firestore collections, searched with ``find_nearest``.

    Args:
        project, database: where the index is, as for ``FirestoreCheckpointStore``.
        client: an existing client, e.g. the checkpoint store's
            (``FirestoreCheckpointStore.client``); then ``project`` and ``database`` are ignored.
    """

    def __init__(
        self,
        project: str | None = None,
        database: str | None = None,
        client: firestore.Client | None = None,
    ) -> None:
        self._owns_client = client is None
        if client is None:
            client = firestore.Client(
                project=project or "inboxflow-local", database=database or "(default)"
            )
        self.client = client

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> FirestoreVectorIndex:
        """The index in the project and database ``environ`` (the entry point's) names."""
        return cls(
            project=environ.get("GOOGLE_CLOUD_PROJECT"),
            database=environ.get("INBOXFLOW_FIRESTORE_DATABASE"),
        )

    def _document(self, doc: VectorDocument) -> dict[str, Any]:
        body: dict[str, Any] = encode_value(doc.fields)
        body[EMBEDDING_FIELD] = Vector([float(x) for x in doc.vector])
        return body

    def _upsert(self, collection: str, document: VectorDocument) -> None:
        body = self._document(document)
        doc_id = document.doc_id
        with translated(f"upsert {collection}/{doc_id}"):
            self.client.collection(collection).document(encode_doc_id(doc_id)).set(body)

    def _upsert_many(self, collection: str, documents: list[VectorDocument]) -> int:
        ref = self.client.collection(collection)
        pending = [(encode_doc_id(doc.doc_id), self._document(doc)) for doc in documents]
        for start in range(0, len(pending), BATCH_SIZE):
            batch = self.client.batch()
            for key, body in pending[start : start + BATCH_SIZE]:
                batch.set(ref.document(key), body)
            with translated(f"upsert into {collection}"):
                batch.commit()
        return len(pending)

    def delete(self, collection: str, doc_id: str) -> None:
        with translated(f"delete {collection}/{doc_id}"):
            self.client.collection(collection).document(encode_doc_id(doc_id)).delete()

    def _replace_fields(self, collection: str, doc_id: str, fields: dict[str, Any]) -> bool:
        ref = self.client.collection(collection).document(encode_doc_id(doc_id))

        @firestore.transactional
        def replace(tx: firestore.Transaction) -> bool:
            snapshot = ref.get(transaction=tx)
            if not snapshot.exists:
                return False
            body: dict[str, Any] = encode_value(fields)
            body[EMBEDDING_FIELD] = (snapshot.to_dict() or {})[EMBEDDING_FIELD]
            tx.set(ref, body)
            return True

        with translated(f"replace the fields of {collection}/{doc_id}"):
            return bool(replace(self.client.transaction()))

    def _nearest(self, collection: str, query: NearestQuery) -> list[Neighbor]:
        found: Any = self.client.collection(collection)
        for name, op, value in query.where:
            found = found.where(filter=FieldFilter(field_path(name), op, encode_value(value)))
        if query.fields is not None:
            found = found.select([*map(field_path, query.fields), field_path(DISTANCE_FIELD)])
        search = found.find_nearest(
            vector_field=EMBEDDING_FIELD,
            query_vector=Vector([float(x) for x in query.vector]),
            distance_measure=DistanceMeasure.COSINE,
            limit=query.limit,
            distance_result_field=DISTANCE_FIELD,
        )
        with translated(f"find_nearest in {collection}"):
            snapshots = list(search.stream())
        neighbors = []
        for snapshot in snapshots:
            data = snapshot.to_dict() or {}
            neighbors.append(
                Neighbor(
                    doc_id=decode_doc_id(snapshot.id),
                    distance=float(data.get(DISTANCE_FIELD, 0.0)),
                    fields=_fields_of(data),
                )
            )
        neighbors.sort(key=lambda n: n.distance)
        return neighbors

    def documents(
        self, collection: str, where: Iterable[Filter] | None = None
    ) -> list[tuple[str, dict[str, Any]]]:
        query: Any = self.client.collection(collection)
        for name, op, value in where or ():
            query = query.where(filter=FieldFilter(field_path(name), op, encode_value(value)))
        with translated(f"query {collection}"):
            rows = [
                (decode_doc_id(snap.id), _fields_of(snap.to_dict() or {}))
                for snap in query.stream()
            ]
        return sorted(rows, key=lambda row: row[0])

    def close(self) -> None:
        if self._owns_client:
            self.client.close()


__all__ = ["FirestoreVectorIndex", "decode_doc_id", "encode_doc_id"]
