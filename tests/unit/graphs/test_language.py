"""Language detection: the fast scoring gives py3langid's own probabilities, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inboxflow.graphs import language
from inboxflow.graphs.language import (
    _IDENTIFIER,
    _SCORES,
    AUTOMATON_DEPTH,
    READ_CHARS,
    UNKNOWN,
    _scores,
    by_rank,
    detect_language,
)
from inboxflow.mail import load_email_file, sample_inbox_dir

ROOT = Path(__file__).resolve().parents[3]


def _same_as_rank(text: str) -> None:
    scores = _SCORES.get()
    ranked = dict(_IDENTIFIER.get().rank(text))
    probabilities = scores.probabilities(text)
    first_column = {code: at for at, code in reversed(list(enumerate(scores.classes)))}
    assert {code: float(probabilities[at]) for code, at in first_column.items()} == ranked


def test_the_automaton_state_depends_on_the_last_bytes_only() -> None:
    # The depth of a state (the length of the n-gram it stands for) is its distance from the
    # start state: a breadth-first walk over every byte finds the greatest one.
    scores = _SCORES.get()
    moves, rows = scores._moves, scores._rows
    depth = np.full(len(rows), -1)
    depth[0], frontier, level = 0, np.array([0]), 0
    while len(frontier):
        level += 1
        reached = moves[(rows[frontier][:, None] + np.arange(256)[None, :]).ravel()]
        depth[reached[depth[reached] < 0]] = level
        frontier = np.flatnonzero(depth == level)
    assert depth.min() == 0
    assert depth.max() <= AUTOMATON_DEPTH


def test_the_features_are_the_byte_walk_s() -> None:
    identifier = _IDENTIFIER.get()
    data = identifier._encode("Grüße aus Köln, 東京 and a plain English line, again and again")
    state, walked = 0, []
    for byte in data:
        state = identifier.tk_nextmove[identifier._rowbase[state] + byte]
        if identifier.tk_output[state] >= 0:
            walked.append(identifier.tk_output[state])
    assert _SCORES.get().features(data).tolist() == walked


def test_a_shallower_walk_would_miss_features(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "the quick brown fox jumps over the lazy dog; ¿qué tal? ça va"
    data = _IDENTIFIER.get()._encode(text)
    full = _SCORES.get().features(data).tolist()
    monkeypatch.setattr(language, "AUTOMATON_DEPTH", 1)
    assert _SCORES.get().features(data).tolist() != full


_ALPHABETS = [
    "abcdefghijklmnopqrstuvwxyz      .,",
    "áéíóúñüçàèâêîôûäöß ABCDEFGH qwerty",
    "Привет мир как дела спасибо",
    "日本語のテキストです東京大阪",
    "مرحبا بالعالم كيف حالك",
    "".join(map(chr, range(0x20, 0x2500, 37))),
]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_ALPHABETS).flatmap(
        lambda alphabet: st.text(alphabet=alphabet, max_size=READ_CHARS)
    )
)
def test_probabilities_are_rank_s_bit_for_bit(text: str) -> None:
    _same_as_rank(text)
    assert detect_language(text) == by_rank(text)


def test_every_eval_and_sample_email_gets_the_same_language() -> None:
    paths = sorted(ROOT.glob("evals/**/*.eml")) + sorted(sample_inbox_dir().glob("**/*.eml"))
    assert len(paths) > 100
    for path in paths:
        email = load_email_file(path)
        for text in (f"{email.subject}\n{email.body_text}", email.body_text[:READ_CHARS]):
            _same_as_rank(text[:READ_CHARS])
            assert detect_language(text) == by_rank(text), path


def test_no_letters_is_undetermined_and_english_needs_its_floor() -> None:
    assert detect_language("12:30 -- 555 0100") == UNKNOWN
    assert detect_language("Thank you, see you on Monday") == "en"
    assert detect_language("Muchas gracias por su ayuda, nos vemos el lunes") == "es"


def test_a_py3langid_without_the_model_s_arrays_answers_through_rank(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Bare:
        """An identifier that keeps its model to itself (another py3langid version)."""

        def rank(self, text: str) -> list[tuple[str, float]]:
            return _IDENTIFIER.get().rank(text)

    monkeypatch.setattr(language, "_IDENTIFIER", language.Lazy(Bare))
    monkeypatch.setattr(language, "_SCORES", language.Lazy(_scores))
    assert _scores() is None
    assert detect_language("Muchas gracias por su ayuda, nos vemos el lunes") == "es"
    assert detect_language("Thank you, see you on Monday") == "en"
