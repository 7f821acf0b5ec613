"""What the assistant's rules read in an email (``reading.py``, ``when.py``, ``senders.py``), on
paraphrases in several languages written for these tests (none is an eval case)."""

from __future__ import annotations

from datetime import date

import pytest

from inboxflow.graphs.assistant.reading import (
    asks,
    cold_pitch,
    meeting_request,
    money_request,
    new_text,
    thanks_only,
)
from inboxflow.graphs.assistant.senders import lookalike
from inboxflow.graphs.assistant.when import Requested, requested

MONDAY = date(2027, 3, 1)


@pytest.mark.parametrize(
    "text",
    [
        "Many thanks for walking me through the dashboard on the phone today. Great session!",
        "Díky moc za včerejší hovor, hodně mi to pomohlo.",
        "DĚKUJI za rychlou odpověď a za schůzku.",
        "Danke für das tolle Meeting heute, bis bald!",
        "Merci pour l'appel de ce matin, c'était très utile.",
        "¡Muchas gracias por la reunión de ayer!",
        "昨日はお打ち合わせありがとうございました。",
    ],
)
def test_a_thank_you_that_asks_nothing(text):
    assert thanks_only(text) is not None
    assert meeting_request(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Thanks for the call! Could you send me the slides?",
        "Díky za hovor. Můžete mi poslat prezentaci?",
        "Danke! Können Sie mir bitte die Folien schicken",
        "ありがとうございます。資料を送っていただけますか",
    ],
)
def test_a_thank_you_with_a_request_is_a_request(text):
    assert thanks_only(text) is None
    assert asks(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Would you have time for a quick call on Wednesday?",
        "Let's set up a meeting next week to go over the budget.",
        "Mohli bychom si domluvit schůzku na středu?",
        "Können wir uns am Freitag kurz treffen?",
        "Pourrions-nous organiser une réunion jeudi ?",
        "¿Podemos agendar una llamada el lunes?",
        "来週、ミーティングのお時間をいただけますか。",
    ],
)
def test_meeting_requests_in_several_languages(text):
    assert meeting_request(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Where is the offsite meeting on Friday, and who is presenting?",
        "Could you send me the minutes of the board meeting?",
        "Kde se koná porada v pátek?",
        "Pourriez-vous m'envoyer l'ordre du jour avant la réunion ?",
    ],
)
def test_a_question_about_an_existing_meeting_is_no_meeting_request(text):
    assert meeting_request(text) is None


def test_quoted_history_is_not_read():
    body = "Any update on the contract?\n\nOn Mon, Dana wrote:\n> Could we meet on Tuesday?\n"
    assert meeting_request(new_text("Re: contract", body)) is None


@pytest.mark.parametrize(
    "text",
    [
        "Buy four Google Play cards and send me the numbers on the back.",
        "Please process a wire transfer of $18,400 to the account below today.",
        "Potřebuji, abys koupil dárkové karty pro klienta.",
        "Bitte veranlassen Sie eine Überweisung an den neuen Lieferanten.",
        "Merci d'effectuer un virement urgent.",
        "Necesito que compres tarjetas de regalo hoy.",
        "至急、取引先へ送金をお願いします。",
    ],
)
def test_money_requests_in_several_languages(text):
    assert money_request(text) is not None


def test_a_sales_pitch():
    assert cold_pitch("I'd love to show you how we helped teams like yours grow pipeline.")
    assert cold_pitch("Can we meet on Tuesday about the renewal?") is None


@pytest.mark.parametrize(
    ("sender", "expected"),
    [
        ("brightlane-io.com", True),
        ("brlghtlane.io", True),
        ("brightIane.io", True),
        ("brightlane.co", True),
        ("brightlane.io", False),
        ("mail.brightlane.io", False),
        ("partnerco.example", False),
    ],
)
def test_look_alike_domains_of_the_owners(sender, expected):
    assert lookalike(sender, "brightlane.io") is expected


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        (
            "Could we grab 40 minutes on Wednesday morning?",
            Requested(date(2027, 3, 3), "09:00", "12:00", None, 40),
        ),
        (
            "Are you free tomorrow at 4pm for an hour?",
            Requested(date(2027, 3, 2), None, None, "16:00", 60),
        ),
        (
            "Let's talk next week on Tuesday, any time after 2 pm, 1.5 h should do.",
            Requested(date(2027, 3, 9), "14:00", None, None, 90),
        ),
        (
            "Mohli bychom se sejít ve čtvrtek odpoledne na půl hodiny?",
            Requested(date(2027, 3, 4), "13:00", "17:00", None, 30),
        ),
        (
            "Hast du übermorgen um 11 Uhr eine Stunde Zeit?",
            Requested(date(2027, 3, 3), None, None, "11:00", 60),
        ),
        (
            "Pourrions-nous nous voir vendredi à 15h30 pendant 45 minutes ?",
            Requested(date(2027, 3, 5), None, None, "15:30", 45),
        ),
        (
            "¿Tienes tiempo la próxima semana, el martes por la tarde, una hora?",
            Requested(date(2027, 3, 9), "13:00", "17:00", None, 60),
        ),
        (
            "金曜日の午前に一時間ほどお時間をいただけますか。",
            Requested(date(2027, 3, 5), "09:00", "12:00", None, 60),
        ),
        ("Could we meet sometime?", Requested()),
    ],
)
def test_the_day_the_time_of_day_and_the_length_asked_for(text, wanted):
    assert requested(text, MONDAY) == wanted


def test_a_day_already_past_when_the_email_is_read_moves_on_by_weeks():
    sent_on_monday = "Could we meet on Tuesday afternoon?"
    assert requested(sent_on_monday, MONDAY).day == date(2027, 3, 2)
    assert requested(sent_on_monday, MONDAY, today=date(2027, 3, 5)).day == date(2027, 3, 9)
