# ruff: noqa: RUF001  (fullwidth forms are the data)
"""Cue matching (``inboxflow.graphs.cue_matching``): folded, stems, compounds, Japanese."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from inboxflow.graphs.cue_matching import (
    _LATIN_END,
    _QUOTES,
    Cue,
    CueMatch,
    CueSet,
    CueSets,
    _fold_char,
    _unspaced_script,
    cue_set,
    fold,
    fold_one_for_one,
)


def words(cues: CueSet, text: str) -> list[str]:
    return [match.cue.words for match in cues.find(text)]


def test_fold_drops_latin_marks_and_keeps_japanese_voicing():
    assert fold("Stížnost ÚČTU Straße") == "stiznost uctu strasse"
    assert fold("ダッシュボード") == "ダッシュボード"
    assert fold("ＡＢＣ？") == "abc?"


def test_a_stem_finds_inflections_with_or_without_diacritics():
    cues = CueSet([Cue("nespokojen")])
    for text in ("jsem nespokojený", "Jsme NESPOKOJENI", "nespokojena zakaznice"):
        assert words(cues, text) == ["nespokojen"]
    assert words(cues, "byl spokojen") == []


def test_a_cue_starts_at_a_word_unless_marked_as_inside():
    assert words(CueSet([Cue("refund")]), "refurbished, not refunded?") == ["refund"]
    assert words(CueSet([Cue("erstatt")]), "die Rückerstattung") == []
    assert words(CueSet([Cue("*erstatt")]), "die Rückerstattung") == ["*erstatt"]


def test_spaces_match_any_whitespace_and_the_longest_cue_wins():
    cues = cue_set({"en": {"charged twice": 3.0, "charged": 1.0}})
    found = cues.find("we were\n charged   twice")
    assert [(m.cue.words, m.cue.weight, m.cue.label) for m in found] == [
        ("charged twice", 3.0, "en")
    ]


def test_japanese_cues_match_inside_unspaced_text():
    cues = CueSet([Cue("返金"), Cue("二重請求")])
    assert words(cues, "料金が二重請求でした。返金を希望します") == ["二重請求", "返金"]


def test_each_cue_is_reported_once():
    assert words(CueSet([Cue("refund")]), "refund, refund, REFUND") == ["refund"]


def test_fold_one_for_one_keeps_every_offset():
    text = "Código Řidičský ３ Děkuji"
    folded = fold_one_for_one(text)
    assert folded == "codigo ridicsky 3 dekuji"
    assert len(folded) == len(text)


def reference_find(cues: list[Cue], text: str, *, folded: bool = False) -> list[CueMatch]:
    """The matcher before the automaton, kept as the reference: one ``re`` alternation of every
    cue, longest first, a look-behind for a word's start and a tail to the word's end."""
    by_words: dict[str, Cue] = {}
    for cue in cues:
        key = fold(cue.words.strip())
        if key.lstrip("*") and key not in by_words:
            by_words[key] = cue
    ordered = sorted(by_words.items(), key=lambda item: len(item[0].lstrip("*")), reverse=True)
    alternatives = []
    for key, _ in ordered:
        words = key.lstrip("*")
        body = r"\s+".join(re.escape(part) for part in words.split())
        start = "" if key.startswith("*") else r"(?<!\w)"
        alternatives.append(f"({body})" if _unspaced_script(words) else f"{start}({body})[\\w'-]*")
    pattern = re.compile("|".join(alternatives) or r"(?!x)x")
    seen: set[int] = set()
    found: list[CueMatch] = []
    for match in pattern.finditer(text if folded else fold(text)):
        index = (match.lastindex or 1) - 1
        if index not in seen:
            seen.add(index)
            found.append(CueMatch(ordered[index][1], match.group(0).strip()))
    return found


# Letters that fold (É, ß, a fullwidth A, the typographic quote), word joiners (- ' _), every kind
# of whitespace, digits, Japanese, and the * of a cue that may start inside a word.
_ALPHABET = "abAÉeéßＡ’'-_ 1\n\t\xa0返金ダ*."
_cue_words = st.text(alphabet=_ALPHABET, min_size=1, max_size=6)


@settings(max_examples=3000, deadline=None)
@given(
    cues=st.lists(
        st.builds(Cue, _cue_words, st.sampled_from([1.0, 2.5]), st.sampled_from(["en", "ja"])),
        max_size=8,
    ),
    text=st.text(alphabet=_ALPHABET, max_size=40),
    folded=st.booleans(),
)
def test_the_automaton_finds_what_the_regular_expression_found(cues, text, folded):
    assert CueSet(cues).find(text, folded=folded) == reference_find(cues, text, folded=folded)


_cue_lists = st.lists(
    st.builds(Cue, _cue_words, st.sampled_from([1.0, 2.5]), st.sampled_from(["en", "ja"])),
    max_size=6,
)


@settings(max_examples=1500, deadline=None)
@given(
    lists=st.lists(_cue_lists, min_size=1, max_size=4),
    text=st.text(alphabet=_ALPHABET, max_size=40),
    folded=st.booleans(),
)
def test_cue_sets_find_in_one_read_what_each_set_finds(lists, text, folded):
    sets = {f"set{i}": CueSet(cues) for i, cues in enumerate(lists)}
    found = CueSets(sets).find(text, folded=folded)
    assert list(found) == list(sets)
    assert found == {name: cues.find(text, folded=folded) for name, cues in sets.items()}


def test_cue_sets_keep_each_sets_own_order_and_hiding():
    # "charged twice" hides "twice" in its own set only; the other set finds its "twice".
    first = CueSet([Cue("charged twice"), Cue("charge")])
    second = CueSet([Cue("twice", label="second"), Cue("charged", label="second")])
    found = CueSets({"first": first, "second": second}).find("Charged  twice today")
    assert [m.text for m in found["first"]] == ["charged  twice"]
    assert [m.text for m in found["second"]] == ["charged", "twice"]
    assert CueSets({"empty": CueSet([])}).find("anything") == {"empty": []}


def test_a_match_hides_the_cues_inside_it_and_keeps_the_whitespace_it_spans():
    cues = [Cue("charged twice"), Cue("twice"), Cue("*fund"), Cue("refund")]
    text = "we were charged\n\ntwice, refunded, xrefund"
    expected = [("charged twice", "charged\n\ntwice"), ("refund", "refunded"), ("*fund", "fund")]
    for found in (CueSet(cues).find(text), reference_find(cues, text)):
        assert [(m.cue.words, m.text) for m in found] == expected


@settings(max_examples=2000, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=0x3100)))
def test_fold_drops_latin_marks_as_it_did_one_character_at_a_time(text):
    assert fold(text) == reference_fold(text)


def test_fold_drops_the_marks_of_every_latin_letter_as_it_did():
    every = "".join(map(chr, range(_LATIN_END)))
    assert fold(every) == reference_fold(every)


def reference_fold(text: str) -> str:
    """:func:`fold` before the translation table: a Python call per character."""
    plain = unicodedata.normalize("NFKC", text).casefold().translate(_QUOTES)
    return "".join(_fold_char(ch) if ord(ch) < _LATIN_END else ch for ch in plain)


def test_fold_translates_every_character_it_changes_even_alone_in_other_non_ascii_text():
    # fold copies a non-ASCII text without one of the characters its translations change:
    # each such character, alone among others that stay ("·", "東"), must still be folded.
    from inboxflow.graphs.cue_matching import _latin_marks

    changed = sorted({*_QUOTES, *_latin_marks()})
    assert len(changed) > 250
    for code in changed:
        text = f"a · 東 {chr(code)} b"
        assert fold(text) == reference_fold(text), hex(code)
    assert fold("a · 東 b") == "a · 東 b"
