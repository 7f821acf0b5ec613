"""The vector index contract, run against every adapter ``tests/contract/adapters.py`` lists."""

from __future__ import annotations

import math
import random

import pytest
from tests.contract.conftest import IndexFactory

from inboxflow.ports.vectors import MAX_LIMIT, VectorDocument, VectorIndex


def unit(*components: float) -> list[float]:
    return list(components)


def angle(degrees: float) -> list[float]:
    """A 2-d unit vector at ``degrees`` from the x axis."""
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees))]


def test_nearest_orders_by_cosine_distance(index: VectorIndex) -> None:
    for degrees in (0, 30, 60, 90, 180):
        index.upsert("shapes", f"d{degrees}", angle(degrees), {"degrees": degrees})
    found = index.nearest("shapes", angle(10), limit=5)
    assert [n.doc_id for n in found] == ["d0", "d30", "d60", "d90", "d180"]
    for neighbor in found:
        expected = 1 - math.cos(math.radians(neighbor.fields["degrees"] - 10))
        assert neighbor.distance == pytest.approx(expected, abs=1e-5)
    assert found[0].fields == {"degrees": 0}


def test_cosine_ignores_length(index: VectorIndex) -> None:
    index.upsert("v", "long", [10.0, 0.0, 0.0], {})
    index.upsert("v", "short-diagonal", [0.1, 0.1, 0.0], {})
    found = index.nearest("v", [3.0, 0.2, 0.0], limit=2)
    assert [n.doc_id for n in found] == ["long", "short-diagonal"]
    assert found[0].distance == pytest.approx(1 - 3 / math.sqrt(9.04), abs=1e-5)


def test_limit_caps_results(index: VectorIndex) -> None:
    for i in range(8):
        index.upsert("many", f"doc-{i}", angle(i * 10), {"i": i})
    found = index.nearest("many", angle(0), limit=3)
    assert [n.doc_id for n in found] == ["doc-0", "doc-1", "doc-2"]
    with pytest.raises(ValueError):
        index.nearest("many", angle(0), limit=0)
    with pytest.raises(ValueError):
        index.nearest("many", angle(0), limit=MAX_LIMIT + 1)


def test_upsert_replaces_vector_and_fields(index: VectorIndex) -> None:
    index.upsert("kb", "a", angle(0), {"title": "old", "tags": ["x"]})
    index.upsert("kb", "b", angle(45), {"title": "b"})
    index.upsert("kb", "a", angle(90), {"title": "new"})
    found = index.nearest("kb", angle(90), limit=5)
    assert [(n.doc_id, n.fields) for n in found] == [("a", {"title": "new"}), ("b", {"title": "b"})]
    assert found[0].distance == pytest.approx(0.0, abs=1e-6)


def test_delete_removes_and_is_idempotent(index: VectorIndex) -> None:
    index.upsert("kb", "a", angle(0), {})
    index.upsert("kb", "b", angle(5), {})
    index.delete("kb", "a")
    index.delete("kb", "a")
    index.delete("kb", "never-there")
    assert [n.doc_id for n in index.nearest("kb", angle(0), limit=5)] == ["b"]
    assert [doc_id for doc_id, _ in index.documents("kb")] == ["b"]


def test_replace_fields_keeps_the_vector(index: VectorIndex) -> None:
    index.upsert("mail", "a", angle(0), {"excerpt": "from jana@example.org", "year": 2026})
    index.upsert("mail", "b", angle(60), {"excerpt": "b"})
    index.nearest("mail", angle(0), limit=2)  # a loaded copy, if the adapter keeps one
    assert index.replace_fields("mail", "a", {"excerpt": "from [erased]", "year": 2026})
    assert not index.replace_fields("mail", "never-there", {"excerpt": "x"})
    found = index.nearest("mail", angle(0), limit=2, where=[("year", "==", 2026)])
    assert [(n.doc_id, n.fields) for n in found] == [
        ("a", {"excerpt": "from [erased]", "year": 2026})
    ]
    assert found[0].distance == pytest.approx(0.0, abs=1e-6)
    assert dict(index.documents("mail"))["a"] == {"excerpt": "from [erased]", "year": 2026}
    assert [doc_id for doc_id, _ in index.documents("mail")] == ["a", "b"]
    with pytest.raises(ValueError):
        index.replace_fields("mail", "a", {"embedding": "x"})


def test_collections_are_separate(index: VectorIndex) -> None:
    index.upsert("kb_chunks", "same-id", angle(0), {"kind": "chunk"})
    index.upsert("email_vectors", "same-id", angle(90), {"kind": "email"})
    assert index.nearest("kb_chunks", angle(90), limit=5)[0].fields == {"kind": "chunk"}
    assert index.nearest("empty_collection", angle(0), limit=5) == []


def test_where_filters_before_ranking(index: VectorIndex) -> None:
    index.upsert("mail", "near-spam", angle(1), {"category": "spam", "year": 2026})
    index.upsert("mail", "far-inquiry", angle(80), {"category": "inquiry", "year": 2027})
    index.upsert("mail", "mid-inquiry", angle(40), {"category": "inquiry", "year": 2025})
    index.upsert("mail", "no-category", angle(0), {"year": 2027})
    found = index.nearest("mail", angle(0), limit=2, where=[("category", "==", "inquiry")])
    assert [n.doc_id for n in found] == ["mid-inquiry", "far-inquiry"]
    found = index.nearest(
        "mail", angle(0), limit=5, where=[("category", "in", ["spam", "inquiry"])]
    )
    assert [n.doc_id for n in found] == ["near-spam", "mid-inquiry", "far-inquiry"]
    assert [doc_id for doc_id, _ in index.documents("mail", where=[("year", "==", 2027)])] == [
        "far-inquiry",
        "no-category",
    ]


def test_only_vectors_of_the_query_length_match(index: VectorIndex) -> None:
    index.upsert("dims", "two", [1.0, 0.0], {})
    index.upsert("dims", "three", [1.0, 0.0, 0.0], {})
    assert [n.doc_id for n in index.nearest("dims", [1.0, 0.1, 0.0], limit=5)] == ["three"]


def test_ids_and_fields_round_trip(index: VectorIndex) -> None:
    odd_ids = [
        "<CAF=abc/def%20@mail.gmail.com>",
        "kb:pricing.md:003",
        "..",
        "__reserved__",
        "Grüße 日本",
    ]
    fields = {"title": "Plans & pricing", "nested": {"a": [1, 2.5, None]}, "empty": ""}
    for i, doc_id in enumerate(odd_ids):
        index.upsert("odd", doc_id, angle(i * 20), fields)
    found = index.nearest("odd", angle(0), limit=10)
    assert [n.doc_id for n in found] == odd_ids
    assert all(n.fields == fields for n in found)
    assert sorted(doc_id for doc_id, _ in index.documents("odd")) == sorted(odd_ids)


def test_refuses_what_it_cannot_store(index: VectorIndex) -> None:
    with pytest.raises(ValueError):
        index.upsert("kb", "", angle(0), {})
    with pytest.raises(ValueError):
        index.upsert("kb", "a", [], {})
    with pytest.raises(ValueError):
        index.upsert("kb", "a", [float("nan"), 1.0], {})
    with pytest.raises(ValueError):
        index.upsert("kb", "a", angle(0), {"embedding": "mine"})
    assert index.documents("kb") == []


def test_upsert_many_checks_every_document_before_writing_any(index: VectorIndex) -> None:
    good, bad = VectorDocument("good", angle(0), {}), VectorDocument("bad", [], {})
    with pytest.raises(ValueError):
        index.upsert_many("kb", iter([good, bad]))
    assert index.documents("kb") == []
    index.upsert("kb", "a", angle(0), {"title": "a"})
    with pytest.raises(ValueError):
        index.replace_fields("kb", "a", {"embedding": "mine"})
    assert index.documents("kb") == [("a", {"title": "a"})]


def test_upsert_many_and_another_connection_sees_the_writes(make_index: IndexFactory) -> None:
    writer, reader = make_index(), make_index()
    rng = random.Random(7)
    docs = [
        VectorDocument(f"doc-{i:03d}", [rng.uniform(-1, 1) for _ in range(16)], {"i": i})
        for i in range(120)
    ]
    assert writer.upsert_many("bulk", docs) == 120
    target = docs[42].vector
    assert reader.nearest("bulk", target, limit=1)[0].doc_id == "doc-042"
    # A later write by the other connection is seen by the first one's loaded copy too.
    reader.upsert("bulk", "doc-042", [-x for x in target], {"i": -1})
    reader.upsert("bulk", "late", list(target), {"i": 999})
    assert writer.nearest("bulk", target, limit=1)[0].doc_id == "late"
    assert len(writer.documents("bulk")) == 121


def test_results_match_brute_force(index: VectorIndex) -> None:
    rng = random.Random(3)
    vectors = {f"v{i:02d}": [rng.gauss(0, 1) for _ in range(32)] for i in range(60)}
    index.upsert_many("brute", [VectorDocument(k, v, {}) for k, v in vectors.items()])
    query = [rng.gauss(0, 1) for _ in range(32)]

    def cosine_distance(a: list[float], b: list[float]) -> float:
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        return 1 - dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

    expected = sorted(vectors, key=lambda k: cosine_distance(query, vectors[k]))[:7]
    found = index.nearest("brute", query, limit=7)
    assert [n.doc_id for n in found] == expected
    for neighbor in found:
        assert neighbor.distance == pytest.approx(
            cosine_distance(query, vectors[neighbor.doc_id]), abs=1e-4
        )


ODD_NAMES = ("a.b", "with space", "back`tick", "__dunder__", "~tilde", "Grüße")


def test_nearest_returns_only_the_fields_asked_for(index: VectorIndex) -> None:
    index.upsert("kb", "near", angle(0), {"title": "T", "text": "long body", "position": 3})
    index.upsert("kb", "far", angle(60), {"text": "no title here", "position": 4})
    found = index.nearest("kb", angle(10), limit=5, fields=["title", "position"])
    assert [(n.doc_id, n.fields) for n in found] == [
        ("near", {"title": "T", "position": 3}),
        ("far", {"position": 4}),  # a field the document lacks is absent, not None
    ]
    assert found[0].distance == pytest.approx(1 - math.cos(math.radians(10)), abs=1e-5)
    assert found[1].distance == pytest.approx(1 - math.cos(math.radians(50)), abs=1e-5)
    nothing = index.nearest("kb", angle(10), limit=5, fields=[])
    assert [(n.doc_id, n.fields) for n in nothing] == [("near", {}), ("far", {})]
    assert nothing[1].distance == pytest.approx(found[1].distance, abs=1e-6)
    everything = index.nearest("kb", angle(10), limit=1, fields=None)
    assert everything[0].fields == {"title": "T", "text": "long body", "position": 3}


def test_asked_fields_keep_filters_on_fields_not_asked_for(index: VectorIndex) -> None:
    index.upsert("mail", "near-spam", angle(1), {"category": "spam", "subject": "win"})
    index.upsert("mail", "mid-inquiry", angle(40), {"category": "inquiry", "subject": "hi"})
    index.upsert("mail", "far-inquiry", angle(80), {"category": "inquiry", "subject": "yo"})
    found = index.nearest(
        "mail", angle(0), limit=5, where=[("category", "==", "inquiry")], fields=["subject"]
    )
    assert [(n.doc_id, n.fields) for n in found] == [
        ("mid-inquiry", {"subject": "hi"}),
        ("far-inquiry", {"subject": "yo"}),
    ]
    assert found[0].distance == pytest.approx(1 - math.cos(math.radians(40)), abs=1e-5)


def test_asked_fields_with_odd_names_and_nested_values(index: VectorIndex) -> None:
    fields = {name: f"value of {name}" for name in ODD_NAMES}
    fields |= {"nested": {"a": [1, [2, 3]], "__k": None}, "other": 1}
    index.upsert("odd", "doc", angle(0), fields)
    (found,) = index.nearest("odd", angle(0), limit=1, fields=[*ODD_NAMES, "nested"])
    assert found.fields == {k: v for k, v in fields.items() if k != "other"}
    (one,) = index.nearest("odd", angle(0), limit=1, fields=["a.b", "a.b"])
    assert one.fields == {"a.b": "value of a.b"}  # one field named "a.b", not a path into "a"


def test_the_vector_and_the_distance_are_never_fields(index: VectorIndex) -> None:
    index.upsert("kb", "a", angle(0), {"title": "a"})
    for asked in (None, ["title"], []):
        (found,) = index.nearest("kb", angle(0), limit=1, fields=asked)
        assert not {"embedding", "vector_distance"} & set(found.fields), asked
    for reserved in ("embedding", "vector_distance"):
        with pytest.raises(ValueError, match="reserved"):
            index.nearest("kb", angle(0), limit=1, fields=["title", reserved])
    with pytest.raises(TypeError):
        index.nearest("kb", angle(0), limit=1, fields="title")
