"""The planner reads a request as people write it (issue 37, item 3), tested by generated
variation: labelled fields in any order under the labels of nine languages, dates in every
form, licence numbers with spaces and dashes, state names and codes, VINs whose check digit
holds or fails; sentences; a reply that fills only what it adds; the model's answer through
the same checks."""

from __future__ import annotations

import random
from datetime import date

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from inboxflow.graphs.planner.cues import LABELS, STATE_NAMES
from inboxflow.graphs.planner.dates import MONTHS, first_date
from inboxflow.graphs.planner.extract import (
    FIELD_LABELS,
    REQUIRED_FIELDS,
    extract,
    merged,
    missing,
)
from inboxflow.graphs.planner.quoting import vin_check_digit
from inboxflow.graphs.planner.state import CustomerFacts, CustomerInfo, Message

TODAY = date(2026, 11, 27)
LANGUAGES = ("en", "es", "fr", "de", "nl", "it", "pt", "pl", "cs")
VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
STATES = sorted({code: name for name, code in STATE_NAMES.items() if name.isascii()}.items())
"""(code, one of its names)."""
SINCE_WORDS = ("since", "seit", "depuis", "sinds", "dal", "desde", "od")

# --- the parts of a request ---------------------------------------------------------------


@st.composite
def vins(draw, valid: bool = True) -> str:
    body = draw(st.lists(st.sampled_from(VIN_CHARS), min_size=16, max_size=16))
    vin = "".join(body[:8]) + "0" + "".join(body[8:])
    digit = vin_check_digit(vin)
    if not valid:
        digit = draw(st.sampled_from([d for d in "0123456789X" if d != digit]))
    return vin[:8] + digit + vin[9:]


@st.composite
def licence_numbers(draw) -> str:
    """``E1234 56789 01234``, ``S530-4123-1234``, ``D4821937``: groups with a digit each."""
    first = draw(st.from_regex(r"[A-Z]{0,2}[0-9]{4,8}", fullmatch=True))
    rest = draw(st.lists(st.from_regex(r"[0-9]{2,5}", fullmatch=True), max_size=3))
    separator = draw(st.sampled_from([" ", "-"]))
    return separator.join([first, *rest])


def date_forms(born: date, language: str, day_first: bool) -> list[str]:
    """Every way the tests write ``born`` in ``language`` (numeric ones unambiguous to the
    reader: day first exactly where the reader reads day first)."""
    names = MONTHS[language][born.month - 1]
    month = names[0]
    d, m, y = born.day, born.month, born.year
    forms = [born.isoformat(), f"{d}.{m}.{y}", f"{d:02d}.{m:02d}.{y}"]
    forms += [f"{d:02d}/{m:02d}/{y}"] if day_first else [f"{m}/{d}/{y}", f"{m:02d}/{d:02d}/{y}"]
    forms += [f"{d} {month} {y}", f"{d} {month.capitalize()} {y}"]
    if language == "en":
        forms += [f"{month.capitalize()} {d}, {y}", f"{d} of {month.capitalize()} {y}"]
    if language in ("es", "pt"):
        forms += [f"{d} de {month} de {y}"]
    if language in ("de", "cs"):
        forms += [f"{d}. {month} {y}"]
    return forms


@st.composite
def requests(draw, vin_valid: bool = True):
    """A quote request in one language: every field on its own labelled line, in any order,
    labels in any case; returns (text, expected values)."""
    language = draw(st.sampled_from(LANGUAGES))
    rng = random.Random(draw(st.integers(0, 2**32)))

    def label(field: str) -> str:
        words = LABELS[field].get(language) or LABELS[field]["en"]
        word = rng.choice(words)
        return rng.choice([word, word.upper(), word.title(), word.capitalize()])

    def line(field: str, value: str, name: str | None = None) -> str:
        words = name or label(field)
        sep = rng.choice([": ", ":  ", " : ", " - ", ":\t"])
        bullet = rng.choice(["", "", "- ", "* ", "  "])
        return f"{bullet}{words}{sep}{value}"

    first = draw(st.from_regex(r"[A-Z][a-z]{2,9}", fullmatch=True))
    last = draw(st.from_regex(r"[A-Z][a-z]{2,11}", fullmatch=True))
    born = draw(st.dates(date(1940, 1, 1), date(2006, 12, 31)))
    zip_code = draw(st.from_regex(r"[0-9]{5}", fullmatch=True))
    number = draw(licence_numbers())
    code, state_name = draw(st.sampled_from(STATES))
    years = draw(st.integers(1, 40))
    vin = draw(vins(valid=vin_valid))
    year = draw(st.integers(1995, 2026))
    make = draw(st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True))
    model = draw(st.from_regex(r"[A-Z][a-z0-9]{1,7}", fullmatch=True))
    miles = draw(st.integers(2, 40)) * 1000
    accidents = draw(st.integers(0, 3))

    lines = []
    if draw(st.booleans()):
        lines.append(line("full_name", f"{first} {last}"))
    else:
        lines += [line("first_name", first), line("last_name", last)]
    dob_label = label("date_of_birth")
    forms = date_forms(born, language, day_first=language != "en")
    lines.append(line("date_of_birth", draw(st.sampled_from(forms)), dob_label))
    lines.append(line("zip_code", zip_code))
    state_text = draw(st.sampled_from([code, state_name.title(), f"{state_name.title()}"]))
    if draw(st.booleans()):
        lines.append(line("license_number", f"{number} ({state_text})"))
    else:
        lines += [line("license_number", number), line("license_state", state_text)]
    years_label = label("years_licensed")
    since = years_label.lower().split()[-1] in SINCE_WORDS
    lines.append(line("years_licensed", str(TODAY.year - years if since else years), years_label))
    lines.append(line("accidents_last_5_years", str(accidents)))
    lines.append(line("vin", vin))
    if draw(st.booleans()):
        lines.append(line("vehicle", f"{year} {make} {model}"))
    else:
        lines += [
            line("vehicle_year", str(year)),
            line("vehicle_make", make),
            line("vehicle_model", model),
        ]
    lines.append(line("annual_mileage", draw(st.sampled_from([f"{miles:,}", str(miles)]))))
    lines = draw(st.permutations(lines))
    text = "\n".join(["Hello,", "", *lines, "", "Thanks"])
    expected = {
        "first_name": first,
        "last_name": last,
        "date_of_birth": born.isoformat(),
        "zip_code": zip_code,
        "license_number": number,
        "license_state": code,
        "years_licensed": years,
        "accidents_last_5_years": accidents,
        "vin": vin if vin_valid else None,
        "vehicle_year": year,
        "vehicle_make": make,
        "vehicle_model": model,
        "annual_mileage": miles,
    }
    return text, expected


def read(text: str, asked: list[str] | None = None) -> CustomerInfo:
    messages = [Message(role="customer", content=text)]
    if asked:
        question = "\n".join(f"- {FIELD_LABELS[name]}" for name in asked)
        messages.insert(0, Message(role="agent", content=question))
    return extract(messages, CustomerInfo(), today=TODAY)


SLOW = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- labelled requests ----------------------------------------------------------------------


@SLOW
@given(requests())
def test_every_labelled_field_is_read_in_any_order_under_any_language_s_labels(request):
    text, expected = request
    info = read(text)
    got = {name: getattr(info, name) for name in expected}
    assert got == expected, text
    assert missing(info) == []


@SLOW
@given(requests(vin_valid=False))
def test_a_vin_failing_its_check_digit_is_refused_and_asked_for_again(request):
    text, expected = request
    info = read(text)
    assert {name: getattr(info, name) for name in expected} == expected  # vin: None
    assert missing(info) == ["vin"]
    [refused] = info.rejected["vin"]
    assert refused != refused[:8] + vin_check_digit(refused) + refused[9:]
    assert refused in text.upper()


@given(
    st.sampled_from(LANGUAGES),
    st.dates(date(1930, 1, 1), date(2010, 12, 31)),
    st.data(),
)
def test_dates_in_iso_us_european_and_spelled_out_forms(language, born, data):
    form = data.draw(st.sampled_from(date_forms(born, language, day_first=language != "en")))
    prefix = data.draw(st.sampled_from(["", "born ", "am ", "le ", "(", "on "]))
    assert first_date(prefix + form, day_first=language != "en") == born, form


@given(st.dates(date(1930, 1, 1), date(2010, 12, 31)))
def test_a_numeric_date_with_a_day_above_twelve_is_read_either_way(born):
    assume(born.day > 12)
    us, eu = f"{born.month}/{born.day}/{born.year}", f"{born.day}/{born.month}/{born.year}"
    assert first_date(us) == first_date(eu) == first_date(eu, day_first=True) == born


@SLOW
@given(licence_numbers(), st.sampled_from(STATES), st.sampled_from(["en", "es", "de", "nl", "pl"]))
def test_licence_numbers_keep_their_spaces_and_dashes_and_a_state_name_gives_its_code(
    number, state, language
):
    code, name = state
    label = LABELS["license_number"][language][0]
    info = read(f"{label.title()}: {number} ({name.title()})")
    assert (info.license_number, info.license_state) == (number, code)


# --- one field never from another field's line ----------------------------------------------


@given(st.dates(date(1950, 1, 1), date(2005, 12, 31)), licence_numbers())
def test_no_field_is_taken_from_another_field_s_line(born, number):
    """Issue 37: "Fecha de nacimiento" then "Licencia" gave vehicle year 1990 and make
    "Licencia"."""
    info = read(
        f"Nombre: Ana Ruiz\nFecha de nacimiento: {born.day}/{born.month}/{born.year}\n"
        f"Licencia de conducir: {number}\nAuto: {born.year}"
    )
    assert info.date_of_birth == born.isoformat()
    assert info.license_number == number
    assert (info.vehicle_year, info.vehicle_make, info.vehicle_model) == (None, None, None)
    car = read(f"Año: {born.year}\nLicencia de conducir: {number}\nMarca de auto preferida")
    assert (car.vehicle_year, car.vehicle_make, car.vehicle_model) == (born.year, None, None)
    assert car.license_number == number


def test_a_label_with_nothing_after_it_takes_nothing_from_the_next_line():
    info = read("Name:\nDate of birth: 1980-01-02\nVIN:\nZIP code: 60647")
    assert (info.first_name, info.vin, info.date_of_birth, info.zip_code) == (
        None,
        None,
        "1980-01-02",
        "60647",
    )


# --- sentences ----------------------------------------------------------------------------


@given(
    st.dates(date(1940, 1, 1), date(2005, 12, 31)),
    st.sampled_from(STATES),
    st.integers(1990, 2024),
    st.integers(2, 40),
)
def test_details_written_in_sentences(born, state, since, thousands):
    code, name = state
    month = MONTHS["en"][born.month - 1][0].capitalize()
    info = read(
        f"Driver: Marcus Delgado\nI was born {born.day} {month} {born.year} and have been "
        f"licensed in {name.title()} since {since}. I drive about {thousands}k miles a year.\n"
        f"We live at 2210 N Milwaukee Ave, Chicago, {code} 60647."
    )
    assert (info.first_name, info.last_name) == ("Marcus", "Delgado")
    assert info.date_of_birth == born.isoformat()
    assert (info.license_state, info.years_licensed) == (code, TODAY.year - since)
    assert info.annual_mileage == thousands * 1000
    assert info.zip_code == "60647"


def test_a_two_letter_word_is_no_state_unless_it_is_one():
    info = read("Hi, my license is D4821937 (ok) and I had no accidents.")
    assert info.license_number == "D4821937" and info.license_state is None
    assert read("OK, my license is D4821937.").license_state is None
    assert read("IL", asked=["license_state"]).license_state == "IL"


# --- a reply keeps what was given and fills what it adds ----------------------------------


@SLOW
@given(requests(), licence_numbers(), st.sampled_from(STATES), st.integers(1990, 2024))
def test_a_reply_fills_only_what_it_adds(request, number, state, since):
    """Issue 37: the reply "E1234 56789 01234 (New Jersey), since 2013" was stored as
    licence "E1234" and the next question asked again for the name and date of birth."""
    text, expected = request
    code, name = state
    first = "\n".join(
        line for line in text.splitlines() if not any(w in line.lower() for w in ("licen",))
    )
    known = extract([Message(role="customer", content=text)], CustomerInfo(), today=TODAY)
    known.license_number = known.license_state = known.years_licensed = None
    asked = ["license_number", "license_state", "years_licensed"]
    conversation = [
        Message(role="customer", content=first),
        Message(role="agent", content="\n".join(FIELD_LABELS[n] for n in asked)),
        Message(role="customer", content=f"{number} ({name.title()}), since {since}"),
    ]
    info = extract(conversation, known, today=TODAY)
    assert (info.license_number, info.license_state, info.years_licensed) == (
        number,
        code,
        TODAY.year - since,
    )
    assert (info.first_name, info.last_name, info.date_of_birth) == (
        expected["first_name"],
        expected["last_name"],
        expected["date_of_birth"],
    )
    assert missing(info) == []


def test_a_state_and_since_in_a_reply_fill_the_state_and_the_years():
    """Issue 37: "Ohio, licensed since 1997" in a reply was asked for again."""
    conversation = [
        Message(role="customer", content="Name: Ann Lee\nDL: D4821937"),
        Message(role="agent", content=FIELD_LABELS["license_state"]),
        Message(role="customer", content="Ohio, licensed since 1997"),
    ]
    info = extract(conversation, CustomerInfo(), today=TODAY)
    assert (info.license_state, info.years_licensed) == ("OH", TODAY.year - 1997)
    assert (info.first_name, info.license_number) == ("Ann", "D4821937")


def test_a_dutch_request_is_read_whole():
    """Issue 37: a Dutch request had all 11 fields asked back."""
    info = read(
        "Naam: Sanne de Vries\nGeboortedatum: 12-05-1985\nPostcode: 10001\n"
        "Rijbewijsnummer: 1234 5678 90 (New York)\nRijervaring: 15\nOngevallen: geen\n"
        "Chassisnummer: 1HGCM82633A004352\nBouwjaar: 2003\nMerk: Honda\nModel: Accord"
    )
    assert missing(info) == []
    assert (info.last_name, info.date_of_birth, info.license_number) == (
        "de Vries",
        "1985-05-12",
        "1234 5678 90",
    )


# --- the model's answer meets the same checks ------------------------------------------------


@given(vins(valid=False), vins(valid=True))
def test_the_model_s_vin_meets_the_check_digit_and_what_it_leaves_out_is_kept(bad, good):
    known = CustomerInfo(first_name="Ann", date_of_birth="1980-01-02", vin=None)
    info = merged(known, CustomerFacts(vin=bad, license_state="Ohio", zip_code="6064"))
    assert info.vin is None and info.rejected == {"vin": [bad]}
    assert (info.first_name, info.date_of_birth) == ("Ann", "1980-01-02")  # kept
    assert info.license_state == "OH" and info.zip_code is None
    assert merged(info, CustomerFacts(vin=good)).vin == good
    assert merged(info, CustomerFacts(vin=bad)).vin is None  # found wrong: never taken


@pytest.mark.parametrize("field", REQUIRED_FIELDS)
def test_every_required_field_has_labels_in_every_language(field):
    table = LABELS["full_name"] if field in ("first_name", "last_name") else LABELS[field]
    assert set(LANGUAGES) <= set(table), field
