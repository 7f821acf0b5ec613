"""The planner's reading where evals/reading found it general gaps (issue 37, items 3 and 4),
tested by generated variation: a vehicle on one line (year, make from the table of makes,
model with its trim), first names under a first-name label with a last-name label, label
tables complete per field and language, details recognisable by their own shape in a
language we have no label for, whose policy a cancellation names, a car replaced on an
existing policy, and a reply that fills only what it adds."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from inboxflow.graphs.planner.cues import CAR_MAKES, LABELS, STATE_NAMES
from inboxflow.graphs.planner.extract import (
    FIELD_LABELS,
    REQUIRED_FIELDS,
    extract,
    missing,
    read_message,
)
from inboxflow.graphs.planner.quoting import vin_check_digit
from inboxflow.graphs.planner.request_kind import request_kind
from inboxflow.graphs.planner.state import CustomerInfo, Message
from tests.harness.planner import build, checkpoint, sample, start

TODAY = date(2026, 11, 27)
LANGUAGES = ("en", "es", "fr", "de", "nl", "it", "pt", "pl", "cs")
VIN_CHARS = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
STATES = sorted({code: name for name, code in STATE_NAMES.items() if name.isascii()}.items())
SLOW = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# how the makes are written: as brands write them (the table is folded, lower case)
WRITTEN = {"bmw": "BMW", "gmc": "GMC", "vw": "VW", "byd": "BYD", "ds": "DS", "skoda": "Škoda"}
WRITTEN.update({"citroen": "Citroën", "mercedes-benz": "Mercedes-Benz"})


def written(make: str) -> str:
    return WRITTEN.get(make) or " ".join(word.capitalize() for word in make.split())


@st.composite
def vins(draw) -> str:
    body = draw(st.lists(st.sampled_from(VIN_CHARS), min_size=12, max_size=12))
    serial = draw(st.from_regex(r"[0-9]{4}", fullmatch=True))  # a VIN ends in digits
    vin = "".join(body[:8]) + "0" + "".join(body[8:]) + serial
    return vin[:8] + vin_check_digit(vin) + vin[9:]


MODELS = st.one_of(
    st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True),
    st.from_regex(r"[A-Z]{1,3}-?[0-9]{1,3}", fullmatch=True),
)
TRIMS = st.lists(
    st.one_of(st.from_regex(r"[A-Z]{2,4}", fullmatch=True), st.sampled_from(["1.5", "2.0"])),
    max_size=2,
)


def read(text: str, asked: list[str] | None = None) -> CustomerInfo:
    messages = [Message(role="customer", content=text)]
    if asked:
        messages.insert(0, Message(role="agent", content="\n".join(FIELD_LABELS[n] for n in asked)))
    return extract(messages, CustomerInfo(), today=TODAY)


# --- 1. a vehicle on one line ------------------------------------------------------------------


@SLOW
@given(
    st.sampled_from(LANGUAGES),
    st.sampled_from(CAR_MAKES),
    MODELS,
    TRIMS,
    st.integers(1995, 2026),
    st.sampled_from(["{y} {make} {model}", "{make} {model} {y}", "{make} {model}, {y}"]),
    st.data(),
)
def test_a_vehicle_on_one_line_reads_year_make_and_model_with_its_trim(
    language, make, model, trims, year, form, data
):
    """evals/reading: "Vehículo: Nissan Sentra SV 2016" gave the make "Sentra"."""
    label = data.draw(st.sampled_from(LABELS["vehicle"][language]))
    full_model = " ".join([model, *trims])
    line = form.format(y=year, make=written(make), model=full_model)
    info = read(f"{label.capitalize()}: {line}")
    assert (info.vehicle_year, info.vehicle_make, info.vehicle_model) == (
        year,
        written(make),
        full_model,
    ), line


@SLOW
@given(st.sampled_from(CAR_MAKES), MODELS, st.integers(1995, 2026), st.sampled_from(LANGUAGES))
def test_a_vehicle_in_a_sentence_takes_its_model_up_to_a_word_in_lower_case(
    make, model, year, language
):
    joiner = {"en": "from", "es": "del", "fr": "de", "de": "von", "nl": "uit", "it": "del"}
    text = f"The car is a {written(make)} {model} {joiner.get(language, 'z')} {year}."
    info = read(text)
    assert (info.vehicle_year, info.vehicle_make, info.vehicle_model) == (
        year,
        written(make),
        model,
    )


def test_a_date_is_no_car():
    info = read("On Fri, Jan 15, 2027 at 3:10 AM Brightlane Quotes wrote:")
    assert (info.vehicle_year, info.vehicle_make) == (None, None)


# --- 2. names ----------------------------------------------------------------------------------

NAME = st.from_regex(r"[A-ZÁÉÍÓÚ][a-záéíóú]{2,8}", fullmatch=True)


@SLOW
@given(
    st.sampled_from(LANGUAGES),
    st.lists(NAME, min_size=1, max_size=2),
    st.lists(NAME, min_size=1, max_size=2),
    st.booleans(),
    st.data(),
)
def test_a_first_name_label_with_a_last_name_label_gives_all_the_first_names(
    language, firsts, lasts, first_label_is_the_name_label, data
):
    """evals/reading: "Nombre: José Luis" + "Apellidos: Hernández Ruiz" gave "José" "Luis"."""
    assume(not " ".join(firsts).endswith(" " + " ".join(lasts)))  # see the next test
    table = "full_name" if first_label_is_the_name_label else "first_name"
    first_label = data.draw(st.sampled_from(LABELS[table][language]))
    last_label = data.draw(st.sampled_from(LABELS["last_name"][language]))
    lines = [
        f"{first_label.title()}: {' '.join(firsts)}",
        f"{last_label.title()}: {' '.join(lasts)}",
    ]
    if data.draw(st.booleans()):
        lines.reverse()
    info = read("\n".join(lines))
    assert (info.first_name, info.last_name) == (" ".join(firsts), " ".join(lasts)), lines


def test_a_name_label_that_repeats_the_last_name_label_s_value_gives_the_rest():
    info = read("Nombre: Ana Ruiz\nApellido: Ruiz")
    assert (info.first_name, info.last_name) == ("Ana", "Ruiz")


@given(st.sampled_from(LANGUAGES), NAME, st.lists(NAME, min_size=1, max_size=2), st.data())
def test_only_a_full_name_label_is_split(language, first, lasts, data):
    label = data.draw(st.sampled_from(LABELS["full_name"][language]))
    info = read(f"{label.title()}: {first} {' '.join(lasts)}")
    assert (info.first_name, info.last_name) == (first, " ".join(lasts))


# --- 3. the label tables -----------------------------------------------------------------------


@pytest.mark.parametrize("field", sorted(LABELS))
def test_every_field_has_several_labels_in_every_language(field):
    """No gaps: each field in each language has its labels (singular and plural, abbreviations)."""
    for language in LANGUAGES:
        assert len(LABELS[field].get(language, ())) >= 2, (field, language)


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("Apellido(s): Hernández Ruiz", "last_name", "Hernández Ruiz"),
        ("Manejo desde: 2004", "years_licensed", TODAY.year - 2004),
        ("Conduzco desde: 2010", "years_licensed", TODAY.year - 2010),
        ("Licencia desde: 1999", "years_licensed", TODAY.year - 1999),
        ("Rijbewijs sinds: 2016", "years_licensed", TODAY.year - 2016),
        ("Rijbewijsnummer: B 516 742 309 811", "license_number", "B 516 742 309 811"),
        ("Rijbewijs afgegeven in: Michigan", "license_state", "MI"),
        ("Uitgegeven in (staat): Ohio", "license_state", "OH"),
        ("Número de serie (VIN): 3N1AB7AP6GY256391", "vin", "3N1AB7AP6GY256391"),
        ("Carteira de motorista: S 482 193 67 - Massachusetts", "license_state", "MA"),
        ("Habilitação emitida em: Texas", "license_state", "TX"),
        ("Fahrzeug: Škoda Octavia 1.5 TSI, 2019", "vehicle_model", "Octavia 1.5 TSI"),
    ],
)
def test_labels_as_forms_write_them(text, field, value):
    assert getattr(read(text), field) == value, text


@SLOW
@given(st.sampled_from(LANGUAGES), st.integers(1960, 2025), st.sampled_from(STATES), st.data())
def test_since_labels_give_years_and_issuing_state_labels_give_the_state(
    language, since, state, data
):
    years_label = data.draw(st.sampled_from(LABELS["years_licensed"][language]))
    state_label = data.draw(st.sampled_from(LABELS["license_state"][language]))
    code, name = state
    info = read(f"{years_label.capitalize()}: {since}\n{state_label.capitalize()}: {name.title()}")
    assert (info.years_licensed, info.license_state) == (TODAY.year - since, code)


# --- 4. details recognisable by their own shape -----------------------------------------------

WORD = st.from_regex(r"[a-zåäö]{3,9}", fullmatch=True)


@st.composite
def unknown_language_requests(draw) -> str:
    """A request in a language none of our tables has: its words are made up; only the VIN
    (valid check digit), the ZIP with its state code and the car are recognisable."""
    code = draw(st.sampled_from([c for c, _ in STATES]))
    zip_code = draw(st.from_regex(r"[0-9]{5}", fullmatch=True))
    words = draw(st.lists(WORD, min_size=6, max_size=6))
    car = f"{written(draw(st.sampled_from(CAR_MAKES)))} {draw(MODELS)}, {words[0]} {draw(st.integers(1995, 2026))}"
    lines = [
        f"{words[1].capitalize()}: {draw(NAME)}",
        f"{words[2].capitalize()}: {zip_code} ({words[3].capitalize()}, {code})",
        f"{words[4].capitalize()}: {car}, VIN {draw(vins())}",
    ]
    lines = draw(st.permutations(lines))
    return "\n".join([f"{words[5].capitalize()}!", *lines])


@SLOW
@given(unknown_language_requests())
def test_details_recognisable_by_their_shape_make_a_quote_request(text):
    """evals/reading q-sv-mn-missing-licence: a VIN, a ZIP and a car in Swedish were 'none of
    its details'."""
    assert request_kind(text).kind == "quote", text
    info = read(text)
    assert info.vin and info.zip_code and info.vehicle_make and info.vehicle_year
    assert "license_number" in missing(info)


def test_offline_the_planner_hands_such_a_request_to_the_agency(tmp_path):
    """Issue 41: the offline model reads the details by their shape, but not whether a Swedish
    email is a claim or a cover change (no frames for Swedish): the agency takes it, saying
    why, rather than the planner acting alone. With a model the screen reads it."""
    body = (
        "Hej!\n\nFörnamn: Ingrid\nPostnummer: 55408 (Minneapolis, MN)\n"
        "Bil: Volvo XC60, årsmodell 2019, VIN YV4A22RKXK1290451\n"
    )
    runtime = build(tmp_path)
    email = sample("41").model_copy(update={"body_text": body, "message_id": "sv-1@test"})
    done = checkpoint(runtime, start(runtime, email))
    planned = done.state["planned_tool_inputs"]
    assert planned["tool_name"] == "request_human_review", planned
    assert "language 'sv' has no cue list" in planned["args"]["reason"]


# --- 5. whose policy -------------------------------------------------------------------------

INSURERS = st.from_regex(r"[A-Z][a-z]{3,8}", fullmatch=True)
SWITCHING = (
    "My {insurer} policy renews soon and the price jumped, so I'll cancel with them if you can"
    " beat it.",
    "I want to cancel my insurance with {insurer} once I'm covered by you.",
    "Quiero cancelar mi póliza con {insurer} y cambiarme con ustedes.",
    "Je veux résilier mon contrat chez {insurer} et passer chez vous.",
    "Ich möchte meine Versicherung bei {insurer} kündigen und zu Ihnen wechseln.",
    "Ik wil mijn verzekering bij {insurer} opzeggen en naar jullie overstappen.",
    "Vorrei disdire la mia polizza con {insurer} e passare a voi.",
)


@SLOW
@given(st.sampled_from(SWITCHING), INSURERS, st.sampled_from(CAR_MAKES), MODELS, st.data())
def test_cancelling_another_insurer_to_switch_here_is_a_quote(sentence, insurer, make, model, data):
    """evals/reading q-en-mn-switching-overtrigger: "cancel my Geico policy" was a cancellation."""
    year = data.draw(st.integers(1995, 2026))
    text = (
        f"{sentence.format(insurer=insurer)}\n\n- 1907 E Lake St, Minneapolis MN 55407\n"
        f"- {year} {written(make)} {model}, VIN {data.draw(vins())}"
    )
    assert request_kind(text).kind == "quote", text


@pytest.mark.parametrize(
    "text",
    [
        "Please cancel my policy PA-55120 from the end of the month.",
        "Quiero cancelar mi póliza, gracias.",
        "Ich möchte meine Versicherung kündigen.",
    ],
)
def test_cancelling_our_own_policy_stays_a_cancellation(text):
    assert request_kind(text).kind == "cancellation"


REPLACING = (
    "We are replacing our {old} with a {year} {new}, please swap it on policy {policy}.",
    "Mi-am cumpărat un {new} din {year} și vreau să-l trec pe polița {policy} în locul {old}.",
    "Compré un {new} {year}; póngalo en la póliza {policy} en lugar del {old}.",
    "Ich habe einen {new} von {year} gekauft, bitte statt dem {old} auf Vertrag {policy}.",
    "J'ai acheté une {new} de {year}, mettez-la sur le contrat {policy} à la place de la {old}.",
    "Heb een {new} uit {year} gekocht, graag op polis {policy} in plaats van de {old}.",
    "Kupiłem {new} z {year}, proszę wpisać na polisę {policy} zamiast {old}.",
)


@SLOW
@given(
    st.sampled_from(REPLACING),
    st.lists(st.sampled_from(CAR_MAKES), min_size=2, max_size=2, unique=True),
    st.lists(st.from_regex(r"[A-Z][a-z]{3,8}", fullmatch=True), min_size=2, max_size=2),
    st.from_regex(r"[A-Z]{2,3}-[0-9]{4}-[0-9]{4}", fullmatch=True),
    st.integers(2015, 2026),
)
def test_a_car_replaced_on_an_existing_policy_is_a_cover_change(
    sentence, makes, models, policy, year
):
    """evals/reading nq-ro-replace-car: a car and a year on an existing policy was a quote."""
    new, old = (f"{written(m)} {model}" for m, model in zip(makes, models, strict=True))
    text = sentence.format(new=new, old=old, year=year, policy=policy)
    assert request_kind(text).kind == "cover change", text


def test_two_cars_to_quote_without_a_policy_stay_a_quote():
    text = "Hi, a quote please for our 2018 Honda Civic and our 2020 Toyota RAV4. ZIP 60647."
    assert request_kind(text).kind == "quote"


# --- 6. a reply fills only what it adds ---------------------------------------------------------

LICENCES = st.from_regex(r"[A-Z][0-9]{4}( [0-9]{5}){2}", fullmatch=True)


@SLOW
@given(
    LICENCES,
    st.sampled_from(STATES),
    st.integers(1990, 2024),
    st.sampled_from(["Here you go: ", "Sure, it's ", "Aquí está: ", "Hier: ", ""]),
)
def test_a_reply_giving_the_licence_inside_a_sentence_fills_it_and_keeps_the_first_mail(
    number, state, since, lead
):
    """evals/reading conv-en-nj-licence-reply: 'Here you go: R5520 41876 09213 (New Jersey),
    since 2013.' fills number, state and years; nothing of the first mail is asked again."""
    code, name = state
    first = (
        "Name: Samantha Reyes\nDate of birth: September 14, 1990\n"
        "Address: 88 Grove St, Jersey City, NJ 07302\nCar: 2015 Ford Focus SE, VIN 1FADP3F22FL209874"
    )
    asked = ["license_number", "license_state", "years_licensed"]
    conversation = [
        Message(role="customer", content=first),
        Message(role="agent", content="\n".join(FIELD_LABELS[n] for n in asked)),
        Message(role="customer", content=f"{lead}{number} ({name.title()}), since {since}.\n\nSam"),
    ]
    info = extract(conversation, CustomerInfo(), today=TODAY)
    assert (info.license_number, info.license_state, info.years_licensed) == (
        number,
        code,
        TODAY.year - since,
    )
    assert missing(info) == []
    assert info.vehicle_model == "Focus SE" and info.first_name == "Samantha"


@given(st.sampled_from(STATES), st.integers(1970, 2024))
def test_a_spanish_reply_naming_the_licence_s_state_and_since_fills_both(state, since):
    code, name = state
    reading = read_message(f"Licencia de {name.title()}, manejo desde {since}.", today=TODAY)
    assert (reading.values.get("license_state"), reading.values.get("years_licensed")) == (
        code,
        TODAY.year - since,
    )


def test_required_fields_are_known_to_the_question():
    assert set(REQUIRED_FIELDS) <= set(FIELD_LABELS)


@SLOW
@given(
    NAME,
    NAME,
    st.dates(date(1940, 1, 1), date(2005, 12, 31)),
    st.sampled_from(STATES),
    LICENCES,
    st.sampled_from(["- ", "* ", ""]),
)
def test_a_line_naming_the_person_born_and_a_state_before_the_licence(
    first, last, born, state, number, bullet
):
    """evals/reading q-en-mn-switching-overtrigger: "- Derek Olsen, born June 9, 1992" and
    "- MN license D-514-337-891-224" gave neither the name nor the state."""
    code, name = state
    month = born.strftime("%B")
    text = (
        f"{bullet}{first} {last}, born {month} {born.day}, {born.year}\n"
        f"{bullet}{code} license {number}, licensed since 2008"
    )
    info = read(text)
    assert (info.first_name, info.last_name, info.date_of_birth) == (
        first,
        last,
        born.isoformat(),
    )
    assert (info.license_number, info.license_state) == (number, code)
    assert read(f"{name.title()} driver's license {number}").license_state == code


@given(
    st.sampled_from(["I am", "Soy", "Je suis", "Sono", "Sou", "Jestem", "Jsem", "Ik ben"]),
    NAME,
    NAME,
)
def test_i_am_and_a_name_in_each_language_gives_the_name(intro, first, last):
    """evals/reading q-it-nj-sentences-novin: "Sono Giuseppe Russo, nato il ..." was asked
    for the name."""
    info = read(f"Buongiorno, {intro} {first} {last}, nato il 2 aprile 1975.")
    assert (info.first_name, info.last_name) == (first, last)


@given(st.sampled_from(["JE", "ES", "EST", "JEST"]), vins())
def test_a_vin_that_opens_with_a_verb_s_letters_is_read_whole(prefix, vin):
    """Found by the generated requests above: "VIN JE..." lost "JE" to Czech "je" (is)."""
    vin = (prefix + vin[len(prefix) :])[:17]
    vin = vin[:8] + vin_check_digit(vin) + vin[9:]
    assert read(f"Car: Volvo XC60 2019, VIN {vin}").vin == vin


def test_a_make_that_is_a_word_of_damage_is_no_incident():
    """Hypothesis found it: "Škoda" (Czech for damage) named as the car made a switch a claim."""
    text = (
        "Vorrei disdire la mia polizza con Aaaa e passare a voi.\n\n"
        "- 1907 E Lake St, Minneapolis MN 55407\n- 1995 Škoda Aaa, VIN AAAAAAAA9AAAA0000"
    )
    assert request_kind(text).kind == "quote", text
