"""The offline embedder, chunking, and the knowledge base on the embedded vector index."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import types
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inboxflow.adapters.offline_embedder import (
    _CONCEPT_PATTERNS,
    CONCEPTS,
    OfflineEmbedder,
    _fold,
    concept_counts,
    features,
    stem,
)
from inboxflow.adapters.sqlite_store import SqliteCheckpointStore
from inboxflow.adapters.sqlite_vectors import SqliteVectorIndex, dot
from inboxflow.knowledge import (
    EMAIL_HIT_FIELDS,
    KB_HIT_FIELDS,
    KnowledgeBase,
    check_category,
    chunk_document,
    excerpt,
    knowledge_base_for,
    sample_kb_paths,
    seed_knowledge,
)
from inboxflow.mail import load_email_file, sample_inbox_dir
from inboxflow.ports.documents import DocumentStore
from inboxflow.ports.embeddings import EMBEDDING_DIMENSIONS, Embedder, EmbeddingPurpose
from inboxflow.ports.vectors import check_document
from inboxflow.schema import EMAIL_VECTORS, KB_CHUNKS
from inboxflow.services import default_embedder, make_vector_index
from inboxflow.settings import Settings
from tests.harness.runtimes import ports_for

# --- the offline embedder ------------------------------------------------------------------


def cosine_distance(a: Sequence[float], b: Sequence[float]) -> float:
    return 1.0 - dot(a, b) / math.sqrt(dot(a, a) * dot(b, b))


def test_offline_vectors_are_768_long_unit_and_deterministic():
    texts = ["Please refund the duplicate payment", "", "Grüße aus Köln!"]
    first = OfflineEmbedder().embed(texts)
    again = OfflineEmbedder().embed(texts, purpose="query")
    assert first == again
    for vector in first:
        assert len(vector) == EMBEDDING_DIMENSIONS
        assert math.fsum(x * x for x in vector) == pytest.approx(1.0)
    assert first[0] != first[2]


def test_offline_vectors_do_not_depend_on_the_process_hash_seed():
    code = (
        "from inboxflow.adapters.offline_embedder import OfflineEmbedder;"
        "print(repr(OfflineEmbedder().embed(['Charged twice for January'])[0][:768]))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert outputs.pop().strip() == repr(OfflineEmbedder().embed(["Charged twice for January"])[0])


@pytest.mark.parametrize(
    ("text", "paraphrase", "unrelated"),
    [
        (
            "I was charged twice this month, please refund the duplicate payment.",
            "We got billed two times for January - can we get our money back?",
            "Could we schedule a call on Tuesday afternoon about the rollout?",
        ),
        (
            "How much does the Business plan cost for 40 seats?",
            "Could you send a quote with pricing for forty users?",
            "Our scheduled PDF export fails with error 502.",
        ),
        (
            "Is single sign-on with Okta included?",
            "Do you support SAML SSO through our identity provider?",
            "Thank you for the lovely onboarding session yesterday!",
        ),
        (
            "Can dashboards be emailed automatically every Monday as a PDF?",
            "Is there a way to schedule a weekly export of a report?",
            "We'd like a nonprofit discount for our charity.",
        ),
    ],
)
def test_paraphrases_are_nearer_than_unrelated_texts(text, paraphrase, unrelated):
    a, b, c = OfflineEmbedder().embed([text, paraphrase, unrelated])
    assert cosine_distance(a, b) < cosine_distance(a, c) - 0.1
    assert cosine_distance(a, a) == pytest.approx(0.0, abs=1e-9)


def test_features_fold_accents_stem_and_map_concepts():
    found = features("Café refunds REFUNDED reimbursement")
    assert "w:cafe" in found and "w:refund" in found
    assert found["w:refund"] > found["w:cafe"]  # twice, sub-linear
    assert "c:refund" in found  # reimbursement is the same concept
    assert "w:the" not in features("the of and")
    assert stem("charges") == "charg" and stem("rolling") == "roll" and stem("sso") == "sso"
    assert features("") == {"empty": 1.0}


def test_folding_drops_marks_only_and_keeps_other_characters():
    assert _fold("Café Léveillé — naïve 日本") == "cafe leveille — naive 日本"
    assert _fold("ASCII Only") == "ascii only"


def _findall_counts(folded: str) -> dict[str, int]:
    """What concept_counts stands for: each concept pattern's findall, tried everywhere."""
    counts = {concept: len(pattern.findall(folded)) for pattern, concept in _CONCEPT_PATTERNS}
    return {concept: n for concept, n in counts.items() if n}


_PIECES = [
    *sorted({_fold(p) for phrases in CONCEPTS.values() for p in phrases}),
    *(" ", "  ", "s", "es", "ed", "ing", "x", "-", ".", "un", "re", "\n", "é"),
]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_concept_counts_are_the_patterns_findall_counts(text: str) -> None:
    assert concept_counts(text) == _findall_counts(text)


def test_concept_counts_go_past_each_match_as_findall_does() -> None:
    # "seat" inside "licence seat" is not counted again; "doubled" is no "double" + suffix.
    text = "licence seat seat: charged twice, twice twice and doubled; refunds reimbursements"
    assert concept_counts(text) == _findall_counts(text)
    assert concept_counts(text) == {"refund": 2, "charge": 1, "duplicate": 3, "plan": 1, "seat": 2}
    assert concept_counts("prepaid recharge") == {}  # no word starts with a phrase


def test_a_vector_with_nan_or_infinity_is_refused_and_a_large_finite_one_is_not() -> None:
    check_document("a", [1e308, 1e308, -1e308], {})  # its sum overflows; each is finite
    for odd in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="NaN or infinity"):
            check_document("a", [0.5, odd, 0.5], {})
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_document("a", [math.inf, -math.inf], {})  # the sum is NaN


# --- chunking ------------------------------------------------------------------------------

DOC = """# Refunds

Intro paragraph about refunds.

## Duplicate charges

A duplicate payment is refunded in full.

- first item
- second item

## Long section

{long}
"""


def test_chunks_follow_headings_and_stay_under_the_limit():
    sentences = " ".join(f"Sentence number {i} says something useful." for i in range(60))
    chunks = chunk_document(DOC.format(long=sentences), "refunds.md", max_chars=300)
    assert [c.chunk_id for c in chunks[:3]] == [
        "refunds.md#000",
        "refunds.md#001",
        "refunds.md#002",
    ]
    assert chunks[0].section == "Refunds" and chunks[0].text == "Intro paragraph about refunds."
    assert chunks[1].section == "Duplicate charges"
    assert chunks[1].text == (
        "A duplicate payment is refunded in full.\n\n- first item\n\n- second item"
    )
    long = [c for c in chunks if c.section == "Long section"]
    assert len(long) >= 7 and all(len(c.text) <= 300 for c in chunks)
    assert " ".join(c.text for c in long) == sentences  # nothing lost, split between sentences
    assert all(c.title == "Refunds" for c in chunks)
    assert chunks[1].embedding_text.startswith("Refunds: Duplicate charges\n")


def test_plain_text_takes_its_title_from_the_file_name():
    chunks = chunk_document("one paragraph\n\nanother one", "shipping_times.txt")
    assert [(c.title, c.text) for c in chunks] == [
        ("Shipping times", "one paragraph\n\nanother one")
    ]
    assert chunk_document("  \n\n ", "empty.md") == []
    word = "x" * 2000  # one unbreakable word still ends up in pieces
    assert all(len(c.text) <= 800 for c in chunk_document(word, "w.txt"))


def test_excerpt_cuts_at_a_word():
    assert excerpt("short   text\n") == "short text"
    cut = excerpt("word " * 100, 50)
    assert len(cut) <= 50 and cut.endswith("\u2026") and "wor\u2026" not in cut


# --- the knowledge base --------------------------------------------------------------------


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase(OfflineEmbedder(), SqliteVectorIndex(tmp_path / "kb.sqlite"))


def test_seeded_sample_kb_answers_questions_with_the_right_document(kb: KnowledgeBase):
    added = seed_knowledge(kb)
    assert {d.source for d in added} == {p.name for p in sample_kb_paths()}
    assert len(sample_kb_paths()) >= 6
    cases = {
        "We were charged twice, please refund one payment": "billing-and-refunds.md",
        "How much is the Business plan per user?": "pricing-and-plans.md",
        "Our scheduled export fails with error 502 renderer unavailable": (
            "exports-and-scheduled-delivery.md"
        ),
        "Can you complete our security questionnaire?": "security-and-compliance.md",
        "When will you countersign the renewal order form?": "renewals-and-contracts.md",
        "Do you give charities a discount?": "pricing-and-plans.md",
    }
    for question, source in cases.items():
        best = kb.search(question, limit=3)[0]
        assert best.fields["source"] == source, question
        assert best.fields["text"] and best.fields["title"]


def test_re_adding_a_document_replaces_its_chunks(kb: KnowledgeBase, tmp_path: Path):
    path = tmp_path / "faq.md"
    path.write_text(
        "# FAQ\n\n## One\n\nfirst answer\n\n## Two\n\nsecond answer\n\n## Three\n\nthird"
    )
    (doc,) = kb.add_documents([path])
    assert (doc.source, doc.title, doc.chunks) == ("faq.md", "FAQ", 3)
    path.write_text("# FAQ v2\n\nonly one answer now")
    kb.add_documents([path])
    assert [d for d, _ in kb.vectors.documents(KB_CHUNKS.name)] == ["faq.md#000"]
    listed = kb.documents()
    assert [(d.source, d.title, d.chunks) for d in listed] == [("faq.md", "FAQ v2", 1)]
    assert kb.remove_document("faq.md") == 1
    assert kb.documents() == [] and kb.remove_document("faq.md") == 0


def test_add_documents_refuses_other_files(kb: KnowledgeBase, tmp_path: Path):
    pdf = tmp_path / "policy.pdf"
    pdf.write_bytes(b"%PDF-1.4")
    with pytest.raises(ValueError, match="only"):
        kb.add_documents([pdf])
    empty = tmp_path / "empty.md"
    empty.write_text("\n\n")
    with pytest.raises(ValueError, match="no text"):
        kb.add_documents([empty])


def test_a_documents_category_comes_from_its_front_matter_or_is_given(
    kb: KnowledgeBase, tmp_path: Path
):
    refunds = tmp_path / "refunds.md"
    refunds.write_text(
        "---\ncategory: billing\nowner: finance\n---\n# Refunds\n\nWe refund in 5 days."
    )
    plain = tmp_path / "plain.md"
    plain.write_text("# Plain\n\nNo category here.")
    kb.add_documents([refunds, plain])
    assert {d.source: d.category for d in kb.documents()} == {
        "refunds.md": "billing",
        "plain.md": "",
    }
    (chunk,) = [f for _, f in kb.vectors.documents(KB_CHUNKS.name) if f["source"] == "refunds.md"]
    assert chunk["text"] == "We refund in 5 days." and "category" not in chunk["text"]
    (given,) = kb.add_documents([refunds], category="technical")  # the given one wins
    assert given.category == "technical"
    with pytest.raises(ValueError, match=r"refunds.md: category 'Billing Team'"):
        kb.add_text("refunds.md", "---\ncategory: Billing Team\n---\ntext")
    assert check_category("") == "" and check_category("sales-eu") == "sales-eu"


def test_search_filters_on_categories_in_the_index(kb: KnowledgeBase):
    seed_knowledge(kb)
    categories = {d.source: d.category for d in kb.documents()}
    assert set(categories.values()) == {"billing", "technical", "general"}  # the samples
    question = "Our scheduled export fails with error 502 renderer unavailable"
    assert kb.search(question, limit=1)[0].fields["source"] == "exports-and-scheduled-delivery.md"
    billing = kb.search(question, limit=4, categories=["billing"])
    assert len(billing) == 4 and {n.fields["category"] for n in billing} == {"billing"}
    assert [n.distance for n in billing] == sorted(n.distance for n in billing)
    both = kb.search(question, limit=30, categories=["billing", "general"])
    assert {n.fields["category"] for n in both} == {"billing", "general"}
    assert kb.search(question, limit=3, categories=["nothing-here"]) == []


def test_set_category_keeps_the_text_and_refuses_unknown_documents(kb: KnowledgeBase):
    seed_knowledge(kb)
    before = {
        d: f["text"] for d, f in kb.vectors.documents(KB_CHUNKS.name) if d.startswith("demos")
    }
    moved = kb.set_category("demos-and-meetings.md", "sales")
    assert moved.category == "sales" and moved.chunks == len(before)
    after = {d: f for d, f in kb.vectors.documents(KB_CHUNKS.name) if d.startswith("demos")}
    assert {d: f["text"] for d, f in after.items()} == before
    assert {f["category"] for f in after.values()} == {"sales"}
    with pytest.raises(KeyError):
        kb.set_category("nope.md", "sales")
    with pytest.raises(ValueError, match="lower-case"):
        kb.set_category("demos-and-meetings.md", "Sales!")


class OtherEmbedder(Embedder):
    """Same length as the offline vectors, different model."""

    name = "other-model"

    def embed(
        self, texts: Sequence[str], purpose: EmbeddingPurpose = "document"
    ) -> list[list[float]]:
        return OfflineEmbedder().embed(texts, purpose)


def test_search_only_sees_vectors_of_the_same_embedder(tmp_path: Path):
    vectors = SqliteVectorIndex(tmp_path / "kb.sqlite")
    KnowledgeBase(OtherEmbedder(), vectors).add_text("other.md", "refund policy for charges")
    offline = KnowledgeBase(OfflineEmbedder(), vectors)
    assert offline.search("refund policy for charges") == []
    offline.add_text("mine.md", "refund policy for charges")
    assert [n.fields["source"] for n in offline.search("refund", limit=5)] == ["mine.md"]


def test_index_email_and_retrieve_never_return_the_email_itself(kb: KnowledgeBase):
    seed_knowledge(kb)
    broken_report = load_email_file(sample_inbox_dir() / "05-complaint-prompt-injection.json")
    broken_exports = load_email_file(sample_inbox_dir() / "15-complaint-exports-broken.eml")
    thanks = load_email_file(sample_inbox_dir() / "13-other-thank-you.json")
    kb.index_email(thanks, "other")
    first = kb.retrieve(broken_report, "complaint")
    assert first.knowledge[0].fields["source"] == "exports-and-scheduled-delivery.md"
    assert all(n.doc_id != broken_report.message_id for n in first.similar_emails)
    second = kb.retrieve(broken_exports, "complaint")
    assert second.similar_emails[0].doc_id == broken_report.message_id
    assert second.similar_emails[0].fields["category"] == "complaint"
    # a re-run gives the same answer: indexing is an upsert and the email excludes itself
    assert kb.retrieve(broken_exports, "complaint") == second
    ids = sorted(d for d, _ in kb.vectors.documents(EMAIL_VECTORS.name))
    assert ids == sorted([thanks.message_id, broken_report.message_id, broken_exports.message_id])


def test_searches_return_the_fields_their_callers_read_not_whole_documents(kb: KnowledgeBase):
    seed_knowledge(kb)
    report = load_email_file(sample_inbox_dir() / "05-complaint-prompt-injection.json")
    exports = load_email_file(sample_inbox_dir() / "15-complaint-exports-broken.eml")
    kb.index_email(report, "complaint")
    found = kb.retrieve(exports, "complaint")
    chunks = [
        *found.knowledge,
        *kb.search("refund", limit=3),
        *kb.search("refund", limit=3, categories=["billing", ""]),
    ]
    assert chunks and all(set(n.fields) == set(KB_HIT_FIELDS) for n in chunks)
    assert [set(n.fields) for n in found.similar_emails] == [set(EMAIL_HIT_FIELDS)]
    # stored, but read by no caller of a search:
    assert {"position", "embedder", "added_at"} <= set(kb.vectors.documents(KB_CHUNKS.name)[0][1])


def test_results_beyond_max_distance_are_dropped(tmp_path: Path):
    vectors = SqliteVectorIndex(tmp_path / "kb.sqlite")
    kb = KnowledgeBase(OfflineEmbedder(), vectors)
    assert kb.max_distance == 0.85
    seed_knowledge(kb)
    spam = load_email_file(sample_inbox_dir() / "08-obvious-spam.eml")
    assert kb.retrieve(spam, index=False).knowledge == []
    loose = KnowledgeBase(OfflineEmbedder(), vectors, max_distance=2.0)
    assert len(loose.retrieve(spam, index=False).knowledge) == 3
    assert KnowledgeBase(OtherEmbedder(), vectors).max_distance is None


# --- construction ------------------------------------------------------------------------


def test_the_sqlite_store_keeps_its_vector_index_in_the_same_file(tmp_path: Path):
    settings = Settings(
        home=tmp_path,
        project="p",
        store="sqlite",
        bus="inprocess",
        tasks="sqlite",
        environ=dict(os.environ),
    )
    store = SqliteCheckpointStore(settings.sqlite_path)
    index = make_vector_index(store)
    assert isinstance(index, SqliteVectorIndex) and index.path == settings.sqlite_path
    index.upsert("c", "d", [1.0, 0.0], {"a": 1})
    assert SqliteVectorIndex(settings.sqlite_path).documents("c") == [("d", {"a": 1})]
    store.set("traces/t", {"ok": True})  # both live in one file, side by side
    assert store.get("traces/t") == {"ok": True}


def test_knowledge_base_for_uses_the_ports_and_the_root_defaults_beside_the_store(
    tmp_path: Path,
):
    store = SqliteCheckpointStore(tmp_path / "store.sqlite")
    kb = knowledge_base_for(ports_for(tmp_path, store=store))
    assert isinstance(kb.embedder, OfflineEmbedder)
    assert isinstance(kb.vectors, SqliteVectorIndex) and kb.vectors.path == store.path
    mine = SqliteVectorIndex(":memory:")
    configured = knowledge_base_for(
        ports_for(tmp_path, store=store, vectors=mine, embedder=OtherEmbedder())
    )
    assert configured.vectors is mine and configured.embedder.name == "other-model"


def test_a_store_without_vectors_says_so():
    class NullStore(DocumentStore):
        def get(self, path):
            return None

        def create(self, path, doc):
            return True

        def set(self, path, doc):
            return None

        def select(self, listing):
            return []

        def run_transaction(self, fn):
            raise NotImplementedError

    with pytest.raises(NotImplementedError, match="NullStore keeps no vector index"):
        make_vector_index(NullStore())


def test_default_embedder_asks_llm_selection(monkeypatch: pytest.MonkeyPatch):
    chosen: list[object] = []
    module = types.ModuleType("inboxflow.llm_selection")

    def choose_embedder(environ=None):
        chosen.append(environ)
        return OtherEmbedder() if environ and environ.get("GEMINI_API_KEY") else None

    module.choose_embedder = choose_embedder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "inboxflow.llm_selection", module)
    assert isinstance(default_embedder({}), OfflineEmbedder)
    assert default_embedder({"GEMINI_API_KEY": "k"}).name == "other-model"
    assert chosen == [{}, {"GEMINI_API_KEY": "k"}]
