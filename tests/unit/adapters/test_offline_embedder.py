"""The offline embedder's hashing: numpy's sums are the Python loop's, bit for bit."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inboxflow.adapters import offline_embedder
from inboxflow.adapters.offline_embedder import (
    OfflineEmbedder,
    _damped,
    _slot,
    _slot_codes,
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


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=600))
def test_a_text_s_embedding_is_the_loop_s_bit_for_bit(text: str) -> None:
    _same(list(features(text).items()), 768)


def test_every_eval_and_sample_email_embeds_as_the_loop_does() -> None:
    paths = sorted(ROOT.glob("evals/**/*.eml")) + sorted(sample_inbox_dir().glob("**/*.eml"))
    assert len(paths) > 100
    embedder = OfflineEmbedder()
    for path in paths:
        text = KnowledgeBase.email_text(load_email_file(path))
        loop = hashed_by_loop(list(features(text).items()), 768)
        assert _bits(embedder.embed([text])[0]) == _bits(loop), path


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
