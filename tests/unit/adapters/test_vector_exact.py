"""The embedded vector index is exact: the same neighbours as scoring every document by hand.

Writes (new documents, overwrites, a changed vector length, deletes) go through
one instance while another reads the file, so both the rows updated in place
and a reload are checked, with and without a ``where`` filter.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from inboxflow.adapters.sqlite_vectors import SqliteVectorIndex

COLLECTION = "kb"


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def brute_force(
    docs: dict[str, tuple[list[float], dict]], query: list[float], limit: int, team: str | None
) -> list[tuple[str, float]]:
    """Every document of the query's length scored in double precision, best first."""
    q = _unit(query)
    scored = [
        (sum(a * b for a, b in zip(q, _unit(vector), strict=True)), doc_id)
        for doc_id, (vector, fields) in docs.items()
        if len(vector) == len(q) and (team is None or fields["team"] == team)
    ]
    scored.sort(reverse=True)
    return [(doc_id, 1.0 - similarity) for similarity, doc_id in scored[:limit]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_nearest_matches_brute_force_through_writes_and_reloads(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    writer = SqliteVectorIndex(tmp_path / "v.db")
    reader = SqliteVectorIndex(tmp_path / "v.db")
    docs: dict[str, tuple[list[float], dict]] = {}

    def vector(size: int = 24) -> list[float]:
        return [rng.uniform(-1, 1) for _ in range(size)]

    for round_ in range(6):
        for _ in range(150):
            doc_id = f"d{rng.randrange(400)}"
            size = 24 if rng.random() > 0.05 else 12  # a few documents of another length
            docs[doc_id] = (vector(size), {"team": rng.choice(["a", "b", "c"])})
            writer.upsert(COLLECTION, doc_id, *docs[doc_id])
        for doc_id in rng.sample(sorted(docs), 20):
            writer.delete(COLLECTION, doc_id)
            del docs[doc_id]
        for index in (writer, reader):
            for _ in range(5):
                query, limit = vector(rng.choice([24, 24, 12])), rng.choice([1, 5, 40])
                team = rng.choice([None, "a"])
                where = [("team", "==", team)] if team else None
                got = index.nearest(COLLECTION, query, limit, where=where)
                expected = brute_force(docs, query, limit, team)
                assert [n.doc_id for n in got] == [doc_id for doc_id, _ in expected], round_
                for neighbour, (_, distance) in zip(got, expected, strict=True):
                    assert neighbour.distance == pytest.approx(distance, abs=1e-5)
                    assert neighbour.fields == docs[neighbour.doc_id][1]
    assert writer.nearest(COLLECTION, vector(7), 3) == []
    writer.close()
    reader.close()


def _normalised_over_every_slot(vector: list[float]) -> bytes:
    """``normalised`` as it was: the norm's exact sum over every slot, zeros included."""
    import numpy as np

    values = np.asarray(vector, dtype=np.float64)
    norm = math.sqrt(math.fsum((values * values).tolist()))
    scale = 1.0 / norm if norm > 0 else 0.0
    return (values * scale).astype(np.float32).tobytes()


def test_the_norm_over_the_non_zero_slots_is_the_norm_over_all_of_them() -> None:
    from inboxflow.adapters.sqlite_vectors import normalised

    rng = random.Random(7)
    for _ in range(500):
        size = rng.choice([1, 3, 768])
        vector = [
            rng.choice([0.0, -0.0, rng.uniform(-1, 1), rng.uniform(-1e-160, 1e-160)])
            for _ in range(size)
        ]
        assert normalised(vector).tobytes() == _normalised_over_every_slot(vector)
