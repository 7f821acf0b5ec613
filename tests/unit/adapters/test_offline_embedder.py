"""The offline embedder's hashing: numpy's sums are the Python loop's, bit for bit."""

from __future__ import annotations

import itertools
import math
import struct
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inboxflow.adapters import offline_embedder
from inboxflow.adapters.offline_embedder import (
    _WORD,
    BIGRAM_WEIGHT,
    CONCEPT_WEIGHT,
    TRIGRAMS_WEIGHT,
    WORD_WEIGHT,
    OfflineEmbedder,
    _damped,
    _fold,
    _kept,
    _slot,
    _slot_codes,
    _trigram_keys,
    _words,
    concept_counts,
    features,
    hashed,
    hashed_by_loop,
)
from inboxflow.knowledge import KnowledgeBase
from inboxflow.mail import load_email_file, sample_inbox_dir

ROOT = Path(__file__).resolve().parents[3]


def _bits(vector: list[float]) -> bytes:
    return struct.pack(f"<{len(vector)}d", *vector)


def _same(weights: list[tuple[str, float]], dimensions: int) -> None:
    fast, loop = hashed(weights, dimensions), hashed_by_loop(weights, dimensions)
    assert all(type(value) is float for value in fast)
    assert _bits(fast) == _bits(loop)


_WEIGHTS = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.text(max_size=12), _WEIGHTS), max_size=400),
    st.sampled_from([1, 2, 7, 64, 768]),
)
def test_hashed_is_the_loop_s_sum_bit_for_bit(weights, dimensions) -> None:
    # Few dimensions: many features share a slot, and the order of their sums shows.
    _same(weights, dimensions)


def reference_features(text: str) -> dict[str, float]:
    """:func:`features` as it was: the word pattern's ``findall``, ``1 + log(n)`` each time."""
    folded = _fold(text)
    words = [kept for word in _WORD.findall(folded) if (kept := _kept(word))]
    word_counts = Counter(words)
    weights = {f"w:{w}": WORD_WEIGHT * (1.0 + math.log(n)) for w, n in word_counts.items()}
    for (first, second), n in Counter(itertools.pairwise(words)).items():
        weights[f"b:{first}_{second}"] = BIGRAM_WEIGHT * (1.0 + math.log(n))
    for concept, n in concept_counts(folded).items():
        weights[f"c:{concept}"] = CONCEPT_WEIGHT * (1.0 + math.log(n))
    for word, n in word_counts.items():
        keys = _trigram_keys(word)
        share = TRIGRAMS_WEIGHT * (1.0 + math.log(n)) / len(keys)
        for key in keys:
            weights[key] = weights.get(key, 0.0) + share
    return weights or {"empty": 1.0}


def _same_embedding(text: str) -> None:
    weights = features(text)
    assert list(weights.items()) == list(reference_features(text).items())
    loop = hashed_by_loop(list(weights.items()), 768)
    assert _bits(OfflineEmbedder().embed([text])[0]) == _bits(loop)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x17F), max_size=300) | st.text(max_size=300))
def test_words_are_the_word_pattern_s(text: str) -> None:
    folded = _fold(text)
    assert _words(folded) == _WORD.findall(folded)
    assert _words(text.lower()) == _WORD.findall(text.lower())


def test_every_eval_and_sample_email_embeds_as_before_bit_for_bit() -> None:
    paths = sorted(ROOT.glob("evals/**/*.eml")) + sorted(sample_inbox_dir().glob("**/*.eml"))
    assert len(paths) > 100
    for path in paths:
        email = load_email_file(path)
        for text in (KnowledgeBase.email_text(email), email.body_text, email.subject):
            _same_embedding(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abc dé,'\n-x1 refund twice", max_size=200) | st.text(max_size=200))
def test_any_text_embeds_as_before_bit_for_bit(text: str) -> None:
    _same_embedding(text)


def test_damped_counts_are_one_plus_the_log() -> None:
    for count in range(1, 200):
        assert _damped(count) == 1.0 + math.log(count)


def test_slot_codes_are_the_slots_kept_per_length_and_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(offline_embedder, "_SLOT_CODES", {})
    monkeypatch.setattr(offline_embedder, "SLOTS_KEPT", 50)
    names = [f"w:word{n}" for n in range(120)]
    for dimensions in (768, 5):
        for start in range(0, 120, 30):
            chunk = names[start : start + 30]
            for name, code in zip(chunk, _slot_codes(chunk, dimensions), strict=True):
                index, sign = _slot(name, dimensions)
                assert code == (index if sign > 0 else ~index)
            assert len(offline_embedder._SLOT_CODES[dimensions]) <= 50
    assert offline_embedder._SLOT_CODES[768] != offline_embedder._SLOT_CODES[5]
