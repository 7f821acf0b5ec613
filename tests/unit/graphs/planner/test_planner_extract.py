"""What the planner reads from a customer's email (``graphs/planner/extract.py``): labels in any
case, with or without accents, the common licence labels, details in sentences, several
languages; and what it must not read."""

from __future__ import annotations

import pytest

from inboxflow.graphs.planner.extract import REQUIRED_FIELDS, extract, fold, missing
from inboxflow.graphs.planner.state import CustomerInfo, Message


def read(text: str) -> CustomerInfo:
    return extract([Message(role="customer", content=text)], CustomerInfo())


@pytest.mark.parametrize(
    ("text", "number", "state"),
    [
        ("LICENSE #: B77120034 (OH)", "B77120034", "OH"),
        ("license no.: b77120034\nlicense state: oh", "B77120034", "OH"),
        ("DL number: B77120034\nIssuing state: OH", "B77120034", "OH"),
        ("DL #: B77120034 (OH)", "B77120034", "OH"),
        ("Driver\u2019s license no. B77120034, issued in OH", "B77120034", "OH"),
        ("Driver's Licence Number - B77120034\nState of license: Oh", "B77120034", "OH"),
        ("  * Licence: B77120034 (OH)", "B77120034", "OH"),
        ("My driver's license is B77120034 (OH).", "B77120034", "OH"),
        ("Licencia de conducir: B77120034 (OH)", "B77120034", "OH"),
        ("Führerscheinnummer: B77120034\nBundesstaat: OH", "B77120034", "OH"),
    ],
)
def test_licence_number_and_state_under_their_common_labels(text, number, state):
    info = read(text)
    assert (info.license_number, info.license_state) == (number, state)


def test_a_state_that_is_no_us_state_is_not_taken():
    info = read("License number: B77120034\nLicense state: XQ")
    assert info.license_number == "B77120034" and info.license_state is None


def test_upper_case_labels_are_read_like_any_others():
    info = read(
        "FIRST NAME: Tomas\nLAST NAME: Berg\nDATE OF BIRTH: 1979-04-03\nZIP CODE: 55401\n"
        "YEARS LICENSED: 20\nACCIDENTS: NONE\nVIN: 1FADP3F25EL123456\nYEAR: 2014\n"
        "MAKE: Ford\nMODEL: Focus"
    )
    assert missing(info) == [name for name in REQUIRED_FIELDS if name.startswith("license")]
    assert (info.first_name, info.years_licensed, info.accidents_last_5_years) == ("Tomas", 20, 0)
    assert (info.vehicle_year, info.vehicle_make, info.vehicle_model) == (2014, "Ford", "Focus")


@pytest.mark.parametrize("ending", ["?", "!", ".", ")", "", ", thanks"])
def test_a_car_named_in_a_sentence_is_read_whatever_follows_it(ending):
    info = read(f"Can I get insurance for a 2016 Subaru Outback{ending}")
    assert (info.vehicle_year, info.vehicle_make, info.vehicle_model) == (2016, "Subaru", "Outback")


def test_a_count_on_the_next_line_is_not_taken_for_the_accidents():
    info = read("Years licensed: 4\nAccidents: none")
    assert (info.years_licensed, info.accidents_last_5_years) == (4, 0)


def test_spanish_labels_with_or_without_accents_keep_the_value_as_written():
    info = read(
        "Nombre: José Núñez\nFecha de nacimiento: 1986-12-30\nCODIGO POSTAL: 33130\n"
        "Licencia: N5566123 (FL), con licencia desde hace 7 años, sin accidentes\n"
        "Auto: 2015 Mazda CX-5, VIN JM3KE4DY7F0123456, unas 12.000 millas al año"
    )
    assert missing(info) == []
    assert (info.first_name, info.last_name) == ("José", "Núñez")
    assert (info.years_licensed, info.accidents_last_5_years) == (7, 0)
    assert info.annual_mileage == 12000


def test_german_and_czech_labels():
    german = read("Vorname: Jonas\nNachname: Krüger\nGeburtsdatum: 03.05.1990\nPLZ: 10115")
    assert (german.first_name, german.last_name, german.date_of_birth, german.zip_code) == (
        "Jonas",
        "Krüger",
        "1990-05-03",
        "10115",
    )
    czech = read("Křestní jméno: Petra\nPříjmení: Dvořáková\nDatum narození: 1988-01-09")
    assert (czech.first_name, czech.last_name, czech.date_of_birth) == (
        "Petra",
        "Dvořáková",
        "1988-01-09",
    )


def test_a_word_containing_a_label_is_no_label():
    info = read("Statement: the car is garaged\nLicensed drivers in household: 2")
    assert info.license_state is None and info.license_number is None


def test_fold_keeps_one_character_for_one():
    text = "Řidičský průkaz \uff23\uff21 Código ß"  # a full-width CA
    assert len(fold(text)) == len(text)
    assert fold(text).startswith("ridicsky prukaz ca codigo")


@pytest.mark.parametrize(
    "line",
    [
        "Licence held: 9 years",
        "Years with license: 9",
        "Antigüedad del carnet: 9 años",
        "Fahrpraxis: 9 Jahre",
        "Ancienneté de permis : 9 ans",
        "Années de conduite: 9",
        "Řidičská praxe: 9 let",
        "運転経験: 9",
    ],
)
def test_years_licensed_under_its_common_labels(line):
    assert read(line).years_licensed == 9, line
