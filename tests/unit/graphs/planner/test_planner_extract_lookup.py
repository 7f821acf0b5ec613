"""The planner's reading finds its labels, state names, car makes and phrases by lookup
(:class:`inboxflow.graphs.planner.folding.Phrases`) where it compiled one regular expression
per list before session 16 (issue 42, item 6: the compile was most of the module's import).
The reading must not change: generated labelled lines, sentences, bullets, separators,
languages, apostrophes, case and whitespace are read by the new module and by the old one
(``extract_oracle.py``, kept as it was) and must give the same values, and each search the
old module made with a large expression must find the same span."""

from __future__ import annotations

import re
from datetime import date

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from inboxflow.graphs.cue_matching import fold_one_for_one
from inboxflow.graphs.planner import extract as new
from inboxflow.graphs.planner.cues import CAR_MAKES, LABELS, NO_ACCIDENTS, STATE_NAMES
from inboxflow.graphs.planner.folding import _UNDECOMPOSED, PhraseLists, fold, phrases
from tests.unit.graphs.planner import extract_oracle as old

TODAY = date(2026, 11, 29)
MANY = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))

ALL_LABELS = sorted({w for f in LABELS.values() for ws in f.values() for w in ws})
STATES = sorted(STATE_NAMES)
CODES = sorted(set(STATE_NAMES.values()))
PHRASE_LISTS = {"labels": ALL_LABELS, "states": STATES, "makes": list(CAR_MAKES)}
PHRASE_LISTS["no accidents"] = list(NO_ACCIDENTS)

BULLETS = ("", "- ", "* ", "\u2022 ", "> ", "  ", "\t", "-", "** ", " >> ")
SUFFIXES = ("", " #", " no.", "nr", " number", " num.", " n°", "no")
NOTES = ("", " (VIN)", "(s)", " (YYYY-MM-DD)", " (two letters)")
SEPARATORS = (":", " : ", "=", " - ", "\u2013", "\uff1a", "", " ", ":  ", "-")
VALUES = (
    "Ana Ruiz",
    "José Luis Hernández",
    "1988-03-12",
    "3 March 1988",
    "12/03/1988",
    "D123-4567-8901 (Ohio), since 2009",
    "E1234 56789 01234",
    "S530-4123-1234 issued in IL",
    "1HGCM82633A004352",
    "1FTFW1E50MFA12345",
    "43004",
    "55408 (Minneapolis, MN)",
    "none",
    "2",
    "about 12,000 miles",
    "12k",
    "2018 Toyota Corolla LE",
    "Škoda Octavia 1.5 TSI, 2019",
    "New Jersey",
    "OH",
    "ok",
    "since 2011",
    "9 years",
    "keine",
)
WORDS = (
    "my name is",
    "I'm",
    "I\u2019m",
    "born",
    "licensed in",
    "issued in",
    "expedida en",
    "delivre au",
    "since",
    "seit",
    "driver's",
    "driver\u2019s",
    "drivers",
    "license",
    "licence",
    "number",
    "numero",
    "is",
    "(",
    ")",
    ",",
    ".",
    ";",
    ":",
    "#",
    "-",
    "'",
    "\u2019",
    "no accidents",
    "accident free",
    "2 accidents",
    "miles a year",
    "about",
    "zip",
    "vin",
    "the",
    "and",
    "a",
    "ok",
    "OK",
    "IL",
    "ny",
    "R4417 20583 75402",
    "B 516 742 309",
    "1HGCM82633A004352",
    "2016",
    "1995",
    "43004",
    "Derek Olsen",
    "Fri, Jan 15, 2027",
)
SPACES = (" ", " ", " ", "  ", "\t", "\u00a0", " \t ")


def _phrase(draw: st.DrawFn, phrases: list[str]) -> str:
    """A phrase of a list as a customer may write it: case, apostrophes, spaces."""
    text = draw(st.sampled_from(phrases))
    case = draw(st.sampled_from((str, str.upper, str.title, str.capitalize)))
    text = case(text)
    text = text.replace("'", draw(st.sampled_from(("'", "\u2019", ""))))
    return text.replace(" ", draw(st.sampled_from(SPACES)))


@st.composite
def labelled_lines(draw: st.DrawFn) -> str:
    """``- Label #(note): value`` in every shape the reading knows, and near misses."""
    label = _phrase(draw, ALL_LABELS)
    if draw(st.booleans()):
        label += draw(st.sampled_from(("s", "x", "name", "")))  # a longer word, a label in it
    value = draw(st.sampled_from(VALUES))
    return (
        draw(st.sampled_from(BULLETS))
        + label
        + draw(st.sampled_from(SUFFIXES))
        + draw(st.sampled_from(NOTES))
        + draw(st.sampled_from(SEPARATORS))
        + value
    )


@st.composite
def sentences(draw: st.DrawFn) -> str:
    """Words, labels, state names and codes, makes and phrases in any order."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 9))):
        kind = draw(st.sampled_from(("word", "word", "value", *PHRASE_LISTS, "code", "model")))
        if kind == "word":
            parts.append(draw(st.sampled_from(WORDS)))
        elif kind == "value":
            parts.append(draw(st.sampled_from(VALUES)))
        elif kind == "code":
            parts.append(draw(st.sampled_from(CODES)))
        elif kind == "model":
            parts.append(draw(st.sampled_from(("Corolla", "CR-V EX", "Sentra SV", "2019", "x5"))))
        else:
            parts.append(_phrase(draw, PHRASE_LISTS[kind]))
    glue = draw(
        st.lists(st.sampled_from((" ", "", ", ", " (", ") ", ": ", "  ", "\t")), min_size=1)
    )
    out = parts[0]
    for index, part in enumerate(parts[1:]):
        out += glue[index % len(glue)] + part
    return draw(st.sampled_from(BULLETS)) + out


LICENCE_LABELS = sorted({w for ws in LABELS["license_number"].values() for w in ws})


@st.composite
def licence_sentences(draw: st.DrawFn) -> str:
    """A state, maybe "driver's", a licence label and its number: the shapes the state and
    licence searches read (``MN driver's dl D-514-337``, ``Licencia de Ohio (oh)``)."""
    state = draw(
        st.one_of(
            st.sampled_from(CODES), st.just("ok"), st.builds(str.title, st.sampled_from(STATES))
        )
    )
    drivers = draw(st.sampled_from(("", "driver's ", "drivers ", "driver\u2019s ", "driver's\t")))
    tail = draw(
        st.sampled_from(
            ("", " D-514-337-891-224", ": R4417 20583", " (IL)", " issued in OH", " since 2009")
        )
    )
    words = [state + draw(st.sampled_from(SPACES)) + drivers + _phrase(draw, LICENCE_LABELS) + tail]
    if draw(st.booleans()):
        words.insert(0, draw(st.sampled_from(WORDS)))
    return draw(st.sampled_from(BULLETS)) + " ".join(words)


@st.composite
def messages(draw: st.DrawFn) -> str:
    lines = draw(
        st.lists(
            st.one_of(labelled_lines(), sentences(), licence_sentences()), min_size=1, max_size=6
        )
    )
    return draw(st.sampled_from(("\n", "\r\n"))).join(lines)


ASKED = st.lists(st.sampled_from(sorted(new.FIELD_LABELS)), max_size=4, unique=True)


def _span(match: re.Match[str] | None) -> tuple[int, int] | None:
    if match is None:
        return None
    index = next(i for i, group in enumerate(match.groups(), 1) if group)
    return match.span(index)


def _same_searches(line: str) -> None:
    """Each search the old module made with a large expression finds what it found."""
    folded = fold(line)
    was = old._LABELLED_LINE.match(folded)
    assert new._labelled_line(folded) == ((was.group("label"), was.start("value")) if was else None)
    assert new._state_after(folded) == _span(old._STATE_AFTER.search(folded))
    assert new._state_before(folded) == _span(old._STATE_BEFORE.search(folded))
    assert new._state_first(folded) == _span(old._STATE_FIRST.search(folded))
    for pos in (0, len(folded) // 2):
        assert new._state_named(folded, pos) == _span(old._STATE_NAMED.search(folded, pos))
        assert new._make(folded, pos) == _span(old._MAKE.search(folded, pos))
    licensed = old._LICENSED.search(folded)
    assert new._licensed(folded) == (licensed.start() if licensed else None)
    licence = old._INLINE_LICENCE.search(folded) or old._LICENCE_NUMBER_LATER.search(folded)
    found = new._licence_number(folded)
    assert (found.span(1) if found else None) == (licence.span(1) if licence else None)
    dob = old._DOB_WORD.search(folded)
    assert (new._first(new._DOB_LABELS, folded) or (None, None))[:2] == (
        dob.span() if dob else (None, None)
    )
    for listed, after, pattern in (
        (new._ZIP_LABELS, new._ZIP_WORD, old._ZIP_WORD),
        (new._VIN_LABELS, new._INLINE_VIN, old._INLINE_VIN),
    ):
        found_after = new._first(listed, folded, after=after)
        was_after = pattern.search(folded)
        assert (found_after[2].span(1) if found_after and found_after[2] else None) == (
            was_after.span(1) if was_after else None
        )
    no_accidents = new._first(new._NO_ACCIDENT_PHRASES, folded, before=new._WORD_START, after=None)
    assert bool(no_accidents) == bool(old._NO_ACCIDENTS.search(folded))


def _same_reading(text: str, asked: list[str]) -> None:
    now, was = new.read_message(text, asked, TODAY), old.read_message(text, asked, TODAY)
    assert (now.values, now.refused) == (was.values, was.refused)
    assert new.vehicles_named(text) == old.vehicles_named(text)
    for line in text.splitlines():
        _same_searches(line)


@MANY
@given(labelled_lines(), ASKED)
@example("Nom(s): Ruiz", [])
@example("Licence No.: D123-456", [])  # "licence no" fails before "." ; "licence" + "no." reads
@example("Licencia de conducir n\u00b0: X1234567", [])
@example("- Driver\u2019s  License #: D123-456-789 (Ohio), since 2009", [])
@example("Drivers' license: D123", [])
@example("Date of\tbirth (YYYY-MM-DD)\uff1a1988-03-12", [])
def test_a_labelled_line_reads_as_before(line: str, asked: list[str]) -> None:
    _same_reading(line, asked)


@MANY
@given(st.one_of(sentences(), licence_sentences()), ASKED)
@example("Ohio driver's dl D-514-337-891-224", [])
@example("I have a MN license D-514-337-891-224 since 2011", [])
@example("Ohio driver's license (ok) issued in new  jersey", ["license_state"])
@example("(New Jersey) license, issued in OH", [])
@example("OK, my license is R4417 20583 75402", ["license_number"])
@example("ok", ["license_state"])
@example("Ho la patente del New Jersey dal 1995, numero R4417 20583 75402", [])
@example("2018 Mercedes  Benz C300, un Toyota Camry din 2023 ... vechiului Ford Fusion", [])
def test_a_sentence_reads_as_before(line: str, asked: list[str]) -> None:
    _same_reading(line, asked)


@MANY
@given(messages(), ASKED)
def test_a_message_reads_as_before(text: str, asked: list[str]) -> None:
    _same_reading(text, asked)


def test_the_phrase_lists_keep_what_a_lookup_needs() -> None:
    """Each phrase matches one span at a place: single spaces, no other whitespace, no space
    or apostrophe first or last, no typographic apostrophe (the text's is optional)."""
    for name, written in PHRASE_LISTS.items():
        for phrase in {fold(p) for p in written}:
            assert phrase == " ".join(phrase.split()), (name, phrase)
            assert not re.search(r"[^\S ]|^['\s]|['\s]$|\u2019", phrase), (name, phrase)


def test_phrases_are_found_longest_first_at_each_start() -> None:
    listed = phrases(["new york", "new", "york", "driver's license"])
    assert listed.ranked == ("driver's license", "new york", "york", "new")
    assert listed.found("new  york") == ((0, 9, 1), (0, 3, 3), (5, 9, 2))
    assert listed.found("drivers license") == ((0, 15, 0),)
    assert listed.found("driver\u2019s license") == ((0, 16, 0),)
    assert listed.found("drive's license") == ()


def test_lists_read_together_keep_their_own_ranks() -> None:
    lists = PhraseLists({"a": ["ohio", "io"], "b": ["io", "hi"]})
    assert lists["a"].found("ohio") == ((0, 4, 0), (2, 4, 1))
    assert lists["b"].found("ohio") == ((1, 3, 0), (2, 4, 1))


@MANY
@given(st.text(alphabet=st.characters(max_codepoint=0x7F)), st.text(max_size=8))
def test_an_ascii_text_folds_as_character_by_character(text: str, other: str) -> None:
    """:func:`fold` takes an ASCII text's ``lower()``: what the folding one character for one
    gives it (any other text still goes through it)."""
    for written in (text, other, text + other):
        assert fold(written) == fold_one_for_one(written).translate(_UNDECOMPOSED)
