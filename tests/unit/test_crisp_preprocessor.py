"""The crisp preprocessor on realistic Crisp notifications (Czech, English, HTML, plain,
quoted-printable, diacritics) and on mail that only looks like them (falls back to default)."""

from __future__ import annotations

import quopri

import pytest

from inboxflow.graphs.agent.preprocess import crisp, default, first_message
from inboxflow.mail import email_from_eml
from tests.agent_harness import sample

FOOTER_CS = (
    "--\nOdpovězte na tento e-mail nebo otevřete konverzaci v Crispu: "
    "https://app.crisp.chat/website/1/inbox/session_2/\n"
    "Tento e-mail jste obdrželi, protože jste operátorem webu Dostupnost léků na Crispu.\n"
)
FOOTER_EN = (
    "--\nReply to this email to answer, or open the conversation in Crisp: "
    "https://app.crisp.chat/website/1/inbox/session_2/\n"
    "You are receiving this email because you are an operator of Dostupnost leku on Crisp.\n"
)


def _eml(
    body: str,
    subtype: str = "plain",
    encoding: str = "quoted-printable",
    sender: str = "info@dostupnost-leku.cz",
):
    payload = (
        quopri.encodestring(body.encode()).decode() if encoding == "quoted-printable" else body
    )
    raw = (
        f"From: Dostupnost <{sender}>\nTo: lekarna@dostupnost-leku.cz\nSubject: Nová zpráva\n"
        "Message-ID: <m1@dostupnost-leku.cz>\nDate: Thu, 14 Jan 2027 08:41:07 +0100\n"
        f"MIME-Version: 1.0\nContent-Type: text/{subtype}; charset=utf-8\n"
        f"Content-Transfer-Encoding: {encoding}\n\n{payload}"
    )
    return email_from_eml(raw.encode())


def test_czech_plain_quoted_printable_sample():
    inquiry = crisp(sample("21"))
    assert (inquiry.preprocessor, inquiry.sender_name, inquiry.sender_email) == (
        "crisp",
        "Jana Nováková",
        "jana.novakova@seznam.cz",
    )
    assert (
        inquiry.reply_to == "jana.novakova@seznam.cz" and inquiry.via == "info@dostupnost-leku.cz"
    )
    assert inquiry.text.startswith("Dobrý den,\nmáte prosím skladem Paralen 500?")
    assert inquiry.text.endswith("Děkuji, Jana Nováková")
    assert "crisp" not in inquiry.text.lower() and "Web:" not in inquiry.text


def test_english_html_sample():
    inquiry = crisp(sample("22"))
    assert (inquiry.sender_name, inquiry.reply_to) == ("Tomas Dvorak", "tomas.dvorak@example.com")
    assert "ran out of my Ibalgin 400" in inquiry.text
    assert "operator" not in inquiry.text and "Website" not in inquiry.text


@pytest.mark.parametrize(
    ("body", "name", "address", "message"),
    [
        (
            "Máte novou zprávu od Eliška Černá <eliska.cerna@post.cz>\nKonverzace: Dostupnost léků\n\n"
            "> Dobrý den, je skladem Zyrtec 10? Děkuji.\n\n" + FOOTER_CS,
            "Eliška Černá",
            "eliska.cerna@post.cz",
            "Dobrý den, je skladem Zyrtec 10? Děkuji.",
        ),
        (
            "You have a new message from John O'Neill (JOHN@Example.org):\n\n"
            '"Hi, can you hold a pack of Paralen 500 for me in Brno?"\n\n' + FOOTER_EN,
            "John O'Neill",
            "john@example.org",
            "Hi, can you hold a pack of Paralen 500 for me in Brno?",
        ),
        (
            "Nová zpráva od Řehoř Šťastný (rehor@seznam.cz)\nWeb: Dostupnost léků\n\n"
            "Dobrý den,\n\nchci zrušit rezervaci Ibalginu.\n\nŘehoř\n" + FOOTER_CS,
            "Řehoř Šťastný",
            "rehor@seznam.cz",
            "Dobrý den,\n\nchci zrušit rezervaci Ibalginu.\n\nŘehoř",
        ),
    ],
)
def test_more_crisp_notifications(body, name, address, message):
    inquiry = crisp(_eml(body))
    assert (inquiry.preprocessor, inquiry.sender_name, inquiry.sender_email, inquiry.text) == (
        "crisp",
        name,
        address,
        message,
    )


def test_html_with_base64_and_no_plain_part():
    import base64

    html = (
        "<html><body><h2>Nová zpráva od Jan Král (jan.kral@centrum.cz)</h2>"
        "<p>Dobrý den, máte Nurofen Rapid 400?</p><hr>"
        '<p><a href="https://app.crisp.chat/x">Otevřít konverzaci</a></p></body></html>'
    )
    inquiry = crisp(_eml(base64.b64encode(html.encode()).decode(), "html", "base64"))
    assert (inquiry.preprocessor, inquiry.reply_to) == ("crisp", "jan.kral@centrum.cz")
    assert inquiry.text == "Dobrý den, máte Nurofen Rapid 400?"


@pytest.mark.parametrize(
    "body",
    [
        # Mentions Crisp, but no "new message from NAME (ADDRESS)" line.
        "Hi team, we are moving our chat from Crisp to Intercom next week.\n" + FOOTER_EN,
        # The line is there, but nothing says it came from Crisp.
        "New message from Anna Horak (anna@horak.cz)\n\nPlease call me back.\n",
        # A quoted line in a reply, not a notification.
        "Thanks!\n\n> New message from Bob (bob@example.com) about crisp bread\n",
        # Crisp's wrapping with an empty message.
        "New message from Anna Horak (anna@horak.cz)\nWebsite: Dostupnost\n\n" + FOOTER_EN,
    ],
)
def test_look_alikes_fall_back_to_default_and_invent_no_patient(body):
    email = _eml(body)
    inquiry = crisp(email)
    assert inquiry == default(email)
    assert inquiry.preprocessor == "default" and inquiry.reply_to == "info@dostupnost-leku.cz"


def test_first_message_format():
    email = sample("21")
    assert first_message(crisp(email)).startswith(
        "New support inquiry from Jana Nováková (jana.novakova@seznam.cz):\n"
        "Subject: Nová zpráva od Jana Nováková\n\nDobrý den,"
    )
    assert first_message(default(email)).startswith(
        "Email from Dostupnost léků <info@dostupnost-leku.cz>:"
    )
