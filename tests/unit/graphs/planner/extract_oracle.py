"""The planner's rule reading as it was before session 16 (one regular expression per phrase list),
kept as the oracle of test_planner_extract_lookup.py: the reading by lookup must read the same.
Only the reading is kept (``read_message``, ``vehicles_named`` and the patterns the test compares);
merging, asking and rejecting did not change and live in ``extract.py`` alone.

What the customer told us, read from their emails by rules (the offline model's reading).

Each field comes from its own line (:func:`read_message`): a labelled line in any of the
label tables' languages, or a sentence; every value meets :mod:`.checks`. Later messages
win over earlier ones (a corrected VIN replaces the first), each filling only what it
states; a value found wrong before (``CustomerInfo.rejected``) is never taken again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

from inboxflow.graphs.planner.checks import checked, state_code
from inboxflow.graphs.planner.cues import (
    ACCIDENT_WORDS,
    CAR_MAKES,
    LABELS,
    LICENSED_FOR,
    MILE_WORDS,
    NO_ACCIDENTS,
    NONE_WORDS,
    STATE_NAMES,
)
from inboxflow.graphs.planner.dates import first_date
from inboxflow.graphs.planner.folding import fold

_BULLET = r"^[ \t]*(?:[*\-\u2022>]+[ \t]*)?"
_SUFFIX = r"(?:[ \t]*(?:#|no\.?|nr\.?|number|num\.?|n[°o]))?"
_SEP = r"[ \t]*(?:[:=\-\u2013]|\uff1a)[ \t]*"
_ID_TOKEN = r"[a-z]{0,4}\d[a-z0-9]*"
_ID = rf"(?<![a-z0-9])((?:{_ID_TOKEN}|[a-z]{{1,3}}(?=[ \-]\d))(?:[ \-]{_ID_TOKEN})*)(?![a-z0-9])"
"""A licence number over folded text: letters and digits, spaces and dashes kept whole
(``E1234 56789 01234``, ``S530-4123-1234``, ``B 516 742 309``); every group has a digit but
a first one of up to three letters."""


def _alternation(phrases: Iterable[str]) -> str:
    unique = sorted({fold(p) for p in phrases}, key=len, reverse=True)
    return "|".join(re.escape(p).replace("\\ ", r"\s+").replace("'", "['\u2019]?") for p in unique)


def _labels(field: str) -> str:
    return _alternation(p for words in LABELS[field].values() for p in words)


def _label_key(label: str) -> str:
    """A label as the table knows it: folded, one space, no apostrophe (``drivers license``)."""
    return re.sub(r"\s+", " ", re.sub("['\u2019]", "", fold(label)))


def _label_fields() -> dict[str, tuple[str, str]]:
    """Every folded label -> (its field, its language); a label names one field."""
    table: dict[str, tuple[str, str]] = {}
    for name, languages in LABELS.items():
        for language, words in languages.items():
            for word in words:
                key = _label_key(word)
                if table.get(key, (name, ""))[0] != name:
                    raise ValueError(f"label {word!r} names {table[key][0]} and {name}")
                table.setdefault(key, (name, language))
    return table


_LABEL_FIELDS = _label_fields()
_LABELLED_LINE = re.compile(
    rf"{_BULLET}(?P<label>{_alternation(w for f in LABELS.values() for ws in f.values() for w in ws)}){_SUFFIX}(?![a-z0-9])(?:[ \t]*\([^()\n]{{0,30}}\))?{_SEP}(?P<value>.*)$"
)
"""``Label: value`` at the start of a line (a list bullet allowed, a note in brackets after the
label: ``Chassisnummer (VIN):``, ``Apellido(s):``): the value is the rest of that line and
never more, over folded text."""

_LICENCE_WORD = rf"(?<![a-z])(?:{_labels('license_number')})(?![a-z])"
_INLINE_LICENCE = re.compile(
    rf"{_LICENCE_WORD}{_SUFFIX}[ \t]*(?:(?:is|es|ist|est|je|e|jest)[ \t]+)?(?:[:#\-][ \t]*)?{_ID}"
)
_LICENCE_NUMBER_LATER = re.compile(
    rf"{_LICENCE_WORD}[^.\n]{{0,80}}?(?<![a-z])(?:number|numero|nummer|numer|cislo|nr|no|n[°o])"
    rf"\.?[ \t]*(?:is|es|ist|est|je|e|jest)?[ \t]*[:#]?[ \t]*{_ID}"
)
"""A sentence about the licence that gives its number after a word for "number" (``Ho la
patente del New Jersey dal 1995, numero R4417 20583 75402``)."""
_STATE_NAME = _alternation(STATE_NAMES)
_STATE_AFTER = re.compile(
    rf"\(\s*([a-z]{{2}}|{_STATE_NAME})\s*\)"
    rf"|\b(?:issued\s+(?:in|by)|licen[cs]ed\s+in|expedida\s+en|ausgestellt\s+in|delivre\s+(?:en|au|dans)"
    rf"|afgegeven\s+in|rilasciata\s+in|emitida\s+em|wydane\s+w|vydany\s+v)\s+({_STATE_NAME}|[a-z]{{2}})(?![a-z])"
)
"""The state that issued a licence, written after it: ``(IL)``, ``(New Jersey)``, ``issued in OH``."""
_STATE_BEFORE = re.compile(
    rf"(?<![a-z])([a-z]{{2}}|{_STATE_NAME})[ \t]+(?:driver'?s[ \t]+)?(?:{_labels('license_number')})(?![a-z])"
)
"""The state written before the licence word: ``MN license D-514-337-891-224``, ``Ohio driver's
license`` (a code only in capitals)."""
_STATE_NAMED = re.compile(rf"(?<![a-z])({_STATE_NAME})(?![a-z])")
"""A state's full name anywhere (on a line about the licence: ``Licencia de Ohio``,
``S 482 193 67 - Massachusetts``, ``J525-3318-9047, Illinois, sinds 2011``)."""
_STATE_FIRST = re.compile(
    rf"^[ \t]*\(?({_STATE_NAME})\)?(?=[ \t]*(?:[,;.)]|$))|^[ \t]*([a-z]{{2}})[ \t.]*$"
)
"""A reply that opens with a state's name (``Ohio, licensed since 1997``), or is only its code
(``OK, my license is ...`` is no Oklahoma)."""
_SINCE_YEAR = re.compile(
    r"\b(?:since|from|desde|depuis|seit|sinds|dal|da|od(?:\s+roku)?|from\s+the\s+year)"
    r"\s+(?:(?:the\s+)?year\s+)?((?:19|20)\d\d)\b"
)
_LICENSED = re.compile(rf"licen[cs]|{_LICENCE_WORD}|rijbewijs|patente|habilita|prawo\s+jazdy|ridic")
_DOB_WORD = re.compile(rf"(?<![a-z])(?:{_labels('date_of_birth')})(?![a-z])")
_MY_NAME = re.compile(
    r"\b(?:my\s+name\s+is|i\s+am|i'm|me\s+llamo|mi\s+nombre\s+es|je\s+m'appelle|ich\s+heisse"
    r"|mein\s+name\s+ist|mijn\s+naam\s+is|ik\s+ben|mi\s+chiamo|il\s+mio\s+nome\s+e|meu\s+nome\s+e"
    r"|chamo-me|nazywam\s+sie|jmenuji\s+se"
    r"|soy|je\s+suis|sono|sou|jestem|jsem)\s+"
)
"""A sentence giving the writer's name: "my name is" and "I am" in each language (not German
"ich bin", whose nouns are capitalised like names)."""
_NAME_WORDS = re.compile(
    r"([A-ZÀ-ÖØ-Þ\u0100-\u017f][\w'\-]+(?:[ \t]+[A-ZÀ-ÖØ-Þ\u0100-\u017f][\w'\-]+)+)"
)
_NAME_BEFORE_BIRTH = re.compile(
    r"[ \t]*(?:[*\-\u2022>]+[ \t]*)?([A-ZÀ-ÖØ-Þ\u0100-\u017f][\w'\-]+(?:[ \t]+[A-ZÀ-ÖØ-Þ\u0100-\u017f][\w'\-]+){1,3})"
    r"[ \t]*[,;(\-\u2013][ \t]*$"
)
"""A line that opens with a name and goes on with a birth (``- Derek Olsen, born ...``)."""
_ZIP_AFTER_STATE = re.compile(r"\b([A-Z]{2})[ \t]+(\d{5})(?:-\d{4})?\b")
_ZIP_BEFORE_STATE = re.compile(r"\b(\d{5})(?:-\d{4})?[ \t]*\([^()\n]{0,40}?\b([A-Z]{2})\)")
"""``55408 (Minneapolis, MN)``: a ZIP with its state after it, in brackets."""
_ZIP_WORD = re.compile(
    rf"(?<![a-z])(?:{_labels('zip_code')})(?![a-z])[^\d\n]{{0,12}}(\d{{5}})(?:-\d{{4}})?\b"
)
_INLINE_VIN = re.compile(
    rf"(?<![a-z])(?:{_labels('vin')})(?![a-z])[ \t]*(?:(?:number|is|es|ist|est|je)(?![a-z0-9]))?[ \t]*[:#\-]?[ \t]*"
    r"((?=[a-z0-9]*\d)[a-z0-9]{6,20})\b"
)
_BARE_VIN = re.compile(
    r"(?<![a-z0-9])((?=[a-z0-9]*\d)(?=[a-z0-9]*[a-z])[a-hj-npr-z0-9]{17})(?![a-z0-9])"
)
_YEARS_FOR = re.compile("|".join(f"(?:{p})" for p in LICENSED_FOR))
_NO_ACCIDENTS = re.compile(rf"\b(?:{_alternation(NO_ACCIDENTS)})")
_ACCIDENTS = re.compile(rf"\b(\d{{1,2}})[ \t]+(?:{'|'.join(ACCIDENT_WORDS)})\b")
_MILES = re.compile(
    rf"(\d{{1,3}}(?:[,.]\d{{3}})+|\d{{1,6}}(?:[.,]\d)?[ \t]?k|\d{{3,6}})[ \t]*(?:{'|'.join(MILE_WORDS)})\b"
)
_NONE = {fold(word) for word in NONE_WORDS}

VEHICLE = re.compile(
    r"\b(19[5-9]\d|20\d\d)[ \t]+([A-Z][A-Za-z\-]+|[A-Z]{2,})[ \t]+([A-Za-z0-9][A-Za-z0-9\-]*)"
    r"(?=[ \t,.;:!?)\]]|$)"
)
"""``2018 Toyota Corolla`` in a line as written (the make is capitalised), any punctuation after."""
_VEHICLE_YEAR_LAST = re.compile(
    r"\b([A-Z][A-Za-z\-]+)[ \t]+([A-Za-z0-9][A-Za-z0-9\-]*)[ \t,(]+(19[5-9]\d|20\d\d)\b"
)


_MAKE = re.compile(rf"(?<![a-z0-9])({_alternation(CAR_MAKES)})(?![a-z0-9])")
_MODEL_WORD = re.compile(r"[ \t]+([A-Z0-9][A-Za-z0-9.\-/]*)")
_YEAR = re.compile(r"(?<![A-Za-z0-9./\-])((?:19[5-9]|20\d)\d)(?![A-Za-z0-9]|[./\-]\d)")


def _vehicle(line: str, folded: str, start: int = 0) -> tuple[int | None, str, str] | None:
    """(year, make, model) of a vehicle written on one line, its make from
    :data:`.cues.CAR_MAKES`: ``Nissan Sentra SV 2016``, ``2018 Honda CR-V EX``, ``Škoda
    Octavia 1.5 TSI, 2019``. The model is the words after the make that start with a capital
    or a digit (its trim included), up to the year or a word in lower case; the year is the
    one before the make, else the first after it on the line. None without a make and model."""
    make = _MAKE.search(folded, start)
    if make is None:
        return None
    words: list[str] = []
    at = make.end()
    while (word := _MODEL_WORD.match(line, at)) is not None:
        token = word.group(1).rstrip(".")
        if _YEAR.fullmatch(token):
            break
        words.append(token)
        at = word.end()
    if not words:
        return None
    before = re.search(r"((?:19[5-9]|20\d)\d)[ \t]*$", line[: make.start()])
    clause = re.search(r"[.;!?](?:\s|$)", line[at:])
    after = _YEAR.search(line, at, at + clause.start() if clause else len(line))
    year = before or after
    written = line[make.start() : make.end()]
    return (int(year.group(1)) if year else None), written, " ".join(words)


def _number(text: str) -> int | None:
    """``12,000``, ``12.000``, ``12k``, ``12.5k`` as a whole number."""
    text = text.replace(" ", "")
    if text.endswith("k"):
        try:
            return int(float(text[:-1].replace(",", ".")) * 1000)
        except ValueError:
            return None
    digits = text.replace(",", "").replace(".", "")
    return int(digits) if digits.isdigit() else None


def _years_since(text: str, today: date) -> int | None:
    """Years licensed from ``9``, ``9 years`` or ``since 2009`` (``2009`` alone is a year)."""
    since = _SINCE_YEAR.search(text) or re.match(r"^\s*((?:19|20)\d\d)\b", text)
    if since:
        return today.year - int(since.group(1))
    count = re.match(r"^\s*(\d{1,2})\b", text)
    return int(count.group(1)) if count else None


def _state_in(line: str, match: re.Match[str] | None) -> str | None:
    """The state a match found, as written; a two-letter code counts only in capitals
    (``(OK)`` is Oklahoma, ``(ok)`` is not)."""
    if match is None:
        return None
    index = next(i for i, group in enumerate(match.groups(), 1) if group)
    written = line[match.start(index) : match.end(index)]
    return None if len(written) == 2 and not written.isupper() else written


def _licence_at(folded: str) -> int:
    """Where a line first speaks of the licence (0 when it does not): a state named after it
    is the one that issued it (``720 Washington St ... la patente del New Jersey``)."""
    found = _LICENSED.search(folded)
    return found.start() if found else 0


def _answer_id(text: str) -> bool:
    """Whether an unlabelled token inside an answer (``Here you go: R5520 41876 09213``) may
    be the licence number asked for: not a year, a ZIP or a count (``since 2013``, ``12``), so
    at least six characters or a letter; an answer that opens with the number takes it whole."""
    plain = re.sub(r"[ -]", "", text)
    return bool(re.search(r"[a-z]", plain)) or len(plain) >= 6


def _first_names(entry: tuple[str, str, str, str]) -> tuple[str, str, str, str]:
    """A full-name label's line read as the first names (a last-name label gives the rest)."""
    _name, language, value, folded = entry
    return ("first_name", language, value, folded)


def _full_name(value: str) -> tuple[str, str] | None:
    words = re.split(r"\s+", re.split(r"[,;(]", value)[0].strip())
    if len(words) < 2 or any(_NAME_DIGIT.search(word) for word in words):
        return None
    return words[0], " ".join(words[1:])


_NAME_DIGIT = re.compile(r"\d")


@dataclass
class Reading:
    """What one message states: the values read, and the values refused with why.

    Attributes:
        values: field -> value as the quote takes it (through :func:`.checks.checked`).
        refused: field -> (the value as written, why it cannot be taken).
    """

    values: dict[str, object] = field(default_factory=dict)
    refused: dict[str, tuple[str, str]] = field(default_factory=dict)

    def offer(self, name: str, raw: object, today: date, *, refusable: bool = False) -> bool:
        """Take ``raw`` for ``name`` unless the field has a value; a refusable field that
        fails its check is refused (asked for again), any other is left unread."""
        if name in self.values:
            return False
        result = checked(name, raw, today)
        if result.value is not None:
            self.values[name] = result.value
            self.refused.pop(name, None)
            return True
        if refusable and result.problem and name not in self.refused:
            self.refused[name] = (str(raw).strip(), result.problem)
        return False


REFUSABLE = frozenset({"vin"})
"""Fields whose value, when it fails its check, is refused and asked for again (the VIN's
check digit); other unreadable values are simply not taken."""


def _labelled(
    reading: Reading, name: str, language: str, value: str, folded: str, today: date
) -> None:
    """A labelled line's value for its field (only that line's text)."""
    if name == "full_name":
        split = _full_name(value)
        if split:
            reading.offer("first_name", split[0], today)
            reading.offer("last_name", split[1], today)
    elif name in ("first_name", "last_name", "vehicle_make", "vehicle_model"):
        reading.offer(name, re.split(r"[,;(]", value)[0].strip(), today)
    elif name == "date_of_birth":
        born = first_date(value, day_first=language != "en")
        if born is not None:
            reading.offer(name, born.isoformat(), today)
    elif name in ("zip_code", "address"):
        found = re.search(r"(?<!\d)(\d{5})(?:-\d{4})?(?!\d)", value)
        if found:
            reading.offer("zip_code", found.group(1), today)
    elif name == "license_number":
        number = re.match(_ID, folded)
        if number:
            reading.offer(name, value[number.start(1) : number.end(1)], today)
        state = _state_in(value, _STATE_AFTER.search(folded)) or _state_in(
            value, _STATE_NAMED.search(folded)
        )
        if state:
            reading.offer("license_state", state, today)
        since = _SINCE_YEAR.search(folded)
        if since:
            reading.offer("years_licensed", today.year - int(since.group(1)), today)
    elif name == "license_state":
        if not reading.offer(name, re.split(r"[,;(]", value)[0].strip(), today):
            state = _state_in(value, _STATE_NAMED.search(folded))
            if state:
                reading.offer(name, state, today)
    elif name == "years_licensed":
        years = _years_since(folded, today)
        if years is not None:
            reading.offer(name, years, today)
    elif name == "accidents_last_5_years":
        word = re.match(r"\s*([a-z]+|\d{1,2})", folded)
        if word:
            reading.offer(name, 0 if word.group(1) in _NONE else word.group(1), today)
    elif name == "vin":
        vin = re.match(r"\s*([a-z0-9]{6,20})\b", folded)
        if vin:
            reading.offer(name, vin.group(1), today, refusable=True)
    elif name == "vehicle_year":
        year = re.match(r"\s*((?:19|20)\d\d)\b", folded)
        if year:
            reading.offer(name, int(year.group(1)), today)
    elif name == "annual_mileage":
        miles = re.match(
            r"\s*(?:(?:about|around|approx\.?|ca\.?|circa|unas|environ|etwa)\s+)?"
            r"(\d{1,3}(?:[,.]\d{3})+|\d{1,6}(?:[.,]\d)?[ \t]?k|\d{3,6})\b",
            folded,
        )
        if miles:
            reading.offer(name, _number(miles.group(1)), today)


def vehicles_named(text: str) -> list[tuple[str, str]]:
    """Every (make, model) ``text`` names, each make from :data:`.cues.CAR_MAKES` with a
    model after it (``un Toyota Camry din 2023 ... vechiului Ford Fusion`` names two)."""
    named: list[tuple[str, str]] = []
    for line in text.splitlines():
        folded = fold(line)
        for make in _MAKE.finditer(folded):
            found = _vehicle(line, folded, make.start())
            if found is not None:
                named.append((fold(found[1]), found[2].casefold()))
    return named


def _offer_vehicle(reading: Reading, known: tuple[int | None, str, str], today: date) -> None:
    year, make, model = known
    if year is not None:
        reading.offer("vehicle_year", year, today)
    reading.offer("vehicle_make", make, today)
    reading.offer("vehicle_model", model, today)


def _sentences(reading: Reading, line: str, folded: str, asked: list[str], today: date) -> None:
    """What a line says in words rather than under a label (fills only what is not read)."""
    if not any(name in reading.values for name in ("first_name", "last_name")):
        intro = _MY_NAME.search(folded)
        name = _NAME_WORDS.match(line, intro.end()) if intro else None
        if name:
            split = _full_name(name.group(1))
            if split:
                reading.offer("first_name", split[0], today)
                reading.offer("last_name", split[1], today)
    dob = _DOB_WORD.search(folded)
    born = None
    if dob and not any(name in reading.values for name in ("first_name", "last_name")):
        person = _NAME_BEFORE_BIRTH.match(line[: dob.start()])
        split = _full_name(person.group(1)) if person else None
        if split:  # "- Derek Olsen, born June 9, 1992": the person born is the one named
            reading.offer("first_name", split[0], today)
            reading.offer("last_name", split[1], today)
    if dob:
        language = _LABEL_FIELDS.get(_label_key(dob.group(0)), ("", "en"))[1]
        born = first_date(line[dob.end() :], day_first=language != "en")
        if born is not None:
            reading.offer("date_of_birth", born.isoformat(), today)
    zip_code = _ZIP_AFTER_STATE.search(line)
    if zip_code and state_code(zip_code.group(1)):
        reading.offer("zip_code", zip_code.group(2), today)
    zip_first = _ZIP_BEFORE_STATE.search(line)
    if zip_first and state_code(zip_first.group(2)):
        reading.offer("zip_code", zip_first.group(1), today)
    zip_word = _ZIP_WORD.search(folded)
    if zip_word:
        reading.offer("zip_code", zip_word.group(1), today)
    licence = _INLINE_LICENCE.search(folded) or _LICENCE_NUMBER_LATER.search(folded)
    if licence is None and "license_number" in asked:  # the answer to the question, unlabelled
        licence = re.match(rf"[ \t]*{_ID}", folded) or next(
            (m for m in re.finditer(_ID, folded) if _answer_id(m.group(1))), None
        )
    if licence:
        reading.offer("license_number", line[licence.start(1) : licence.end(1)], today)
    if licence or _LICENSED.search(folded) or "license_state" in asked:
        state = (
            _state_in(line, _STATE_AFTER.search(folded))
            or _state_in(line, _STATE_BEFORE.search(folded))
            or _state_in(line, _STATE_FIRST.search(folded))
            or _state_in(line, _STATE_NAMED.search(folded, _licence_at(folded)))
            or _state_in(line, _STATE_NAMED.search(folded))
        )
        if state:
            reading.offer("license_state", state, today)
    years = _YEARS_FOR.search(folded)
    if years:
        reading.offer("years_licensed", next(g for g in years.groups() if g), today)
    elif licence or _LICENSED.search(folded) or "years_licensed" in asked:
        since = _SINCE_YEAR.search(folded)
        if since:
            reading.offer("years_licensed", today.year - int(since.group(1)), today)
    if _NO_ACCIDENTS.search(folded):
        reading.offer("accidents_last_5_years", 0, today)
    accidents = _ACCIDENTS.search(folded)
    if accidents:
        reading.offer("accidents_last_5_years", accidents.group(1), today)
    vin = _INLINE_VIN.search(folded)
    if vin:
        reading.offer("vin", vin.group(1), today, refusable=True)
    else:
        bare = _BARE_VIN.search(folded)
        if bare:
            reading.offer("vin", bare.group(1), today, refusable="vin" in asked)
    known = _vehicle(line, folded)
    # a sentence names a car with its year (not the year of the birth date it gives)
    if known is not None and known[0] is not None and not (born and born.year == known[0]):
        _offer_vehicle(reading, known, today)
    if known is not None:
        year = make = model = None
    elif vehicle := VEHICLE.search(line):
        year, make, model = vehicle.groups()
    else:
        later = _VEHICLE_YEAR_LAST.search(line)
        make, model, year = later.groups() if later else (None, None, None)
    written_date = first_date(line) if year else None
    if written_date is not None and str(written_date.year) == year:
        year = None  # "Fri, Jan 15, 2027" is a date, not a car
    if year and not (dob and dob.start() < line.find(year)):
        reading.offer("vehicle_year", int(year), today)
        reading.offer("vehicle_make", make, today)
        reading.offer("vehicle_model", model, today)
    miles = _MILES.search(folded)
    if miles:
        reading.offer("annual_mileage", _number(miles.group(1)), today)


def read_message(text: str, asked: Iterable[str] = (), today: date | None = None) -> Reading:
    """Every field one message states, each from its own line.

    A labelled line (``Label: value``, labels of :data:`.cues.LABELS` in any case and
    without accents) gives its field from the rest of that line only; then each line is
    read for what it says in words (``born 3 March 1988``, ``licensed in Illinois since
    2009``, ``about 12k miles a year``, ``2018 Toyota Corolla``), which fills only the
    fields no label gave. ``asked``: the fields the last question asked for, so an answer
    may give them bare (``E1234 56789 01234 (New Jersey), since 2013``).
    """
    today = today or date.today()
    asked = list(asked)
    reading = Reading()
    lines = text.splitlines()
    folded_lines = [fold(line) for line in lines]
    labelled: list[tuple[str, str, str, str]] = []
    for line, folded in zip(lines, folded_lines, strict=True):
        match = _LABELLED_LINE.match(folded)
        if match:
            label = _label_key(match.group("label"))
            name, language = _LABEL_FIELDS.get(label, (None, "en"))
            if name is not None:
                at = match.start("value")
                labelled.append((name, language, line[at:], folded[at:]))
    named = {entry[0] for entry in labelled}
    first_from_name = "last_name" in named and "first_name" not in named
    if first_from_name:
        # "Nombre: José Luis" + "Apellidos: Hernández Ruiz": the name label gives the first names
        labelled = [_first_names(entry) if entry[0] == "full_name" else entry for entry in labelled]
    for name, language, value, folded_value in labelled:
        if name == "vehicle":
            known = _vehicle(value, folded_value)
            if known is not None:
                _offer_vehicle(reading, known, today)
            _sentences(reading, value, folded_value, asked, today)
        else:
            _labelled(reading, name, language, value, folded_value, today)
    first, last = reading.values.get("first_name"), reading.values.get("last_name")
    if (
        first_from_name
        and isinstance(first, str)
        and isinstance(last, str)
        and first.endswith(" " + last)
    ):
        reading.values["first_name"] = first[: -len(last) - 1]  # "Name: Ana Ruiz" + "Surname: Ruiz"
    for line, folded in zip(lines, folded_lines, strict=True):
        _sentences(reading, line, folded, asked, today)
    return reading
