# ruff: noqa: RUF001  (fullwidth forms are the data)
"""Cue matching (``inboxflow.graphs.cue_matching``): folded, stems, compounds, Japanese."""

from __future__ import annotations

from inboxflow.graphs.cue_matching import (
    Cue,
    CueSet,
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
