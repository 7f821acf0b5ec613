"""The crisp preprocessor on realistic Crisp notifications (Czech, English, HTML, plain,
quoted-printable, diacritics) and on mail that only looks like them (falls back to default)."""

from __future__ import annotations

import quopri

import pytest

from inboxflow.graphs.agent.preprocess import crisp, default, first_message
from inboxflow.mail import email_from_eml
from tests.harness.agent import sample
from tests.harness.mail_auth import auth_line, gmail_fail, gmail_pass

HELPDESK = ("info@dostupnost-leku.cz",)

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
    headers: str | None = None,
):
    """A Crisp-like notification; ``headers`` default: Gmail's verdict vouching for ``sender``."""
    payload = (
        quopri.encodestring(body.encode()).decode() if encoding == "quoted-printable" else body
    )
    extra = auth_line(gmail_pass(sender)).replace("\r\n", "\n") if headers is None else headers
    raw = (
        f"{extra}"
        f"From: Dostupnost <{sender}>\nTo: lekarna@dostupnost-leku.cz\nSubject: Nová zpráva\n"
        "Message-ID: <m1@dostupnost-leku.cz>\nDate: Thu, 14 Jan 2027 08:41:07 +0100\n"
        f"MIME-Version: 1.0\nContent-Type: text/{subtype}; charset=utf-8\n"
        f"Content-Transfer-Encoding: {encoding}\n\n{payload}"
    )
    return email_from_eml(raw.encode())


def test_czech_plain_quoted_printable_sample():
    inquiry = crisp(sample("21"), HELPDESK)
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
    inquiry = crisp(sample("22"), HELPDESK)
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
    inquiry = crisp(_eml(body), HELPDESK)
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
    inquiry = crisp(_eml(base64.b64encode(html.encode()).decode(), "html", "base64"), HELPDESK)
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
    ],
)
def test_look_alikes_fall_back_to_default_and_invent_no_patient(body):
    email = _eml(body)
    inquiry = crisp(email, HELPDESK)
    assert inquiry == default(email)
    assert inquiry.preprocessor == "default" and inquiry.reply_to == "info@dostupnost-leku.cz"


def test_crisps_wrapping_with_an_empty_message_is_unread_with_the_reason():
    email = _eml("New message from Anna Horak (anna@horak.cz)\nWebsite: Dostupnost\n\n" + FOOTER_EN)
    inquiry = crisp(email, HELPDESK)
    assert inquiry == default(email).model_copy(update={"unread": "no message from the patient"})


def test_first_message_format():
    email = sample("21")
    assert first_message(crisp(email, HELPDESK)).startswith(
        "New support inquiry from Jana Nováková (jana.novakova@seznam.cz):\n"
        "Subject: Nová zpráva od Jana Nováková\n\nDobrý den,"
    )
    assert first_message(default(email)).startswith(
        "Email from Dostupnost léků <info@dostupnost-leku.cz>:"
    )


NOTIFICATION = (
    "Nová zpráva od Jana Nováková (jana.novakova@seznam.cz)\nWeb: Dostupnost léků\n\n"
    "Dobrý den, zrušte prosím moji rezervaci Paralenu.\n\n" + FOOTER_CS
)
OURS = "info@dostupnost-leku.cz"


@pytest.mark.parametrize(
    ("sender", "headers"),
    [
        # an attacker's own address, Reply-To the helpdesk: the body names a real patient
        (
            "mallory@evil.example",
            f"Reply-To: {OURS}\n" + auth_line(gmail_pass("mallory@evil.example")),
        ),
        # From the helpdesk, but nothing vouches for it
        (OURS, ""),
        (
            OURS,
            auth_line(
                "mx.google.com; dkim=none; spf=none smtp.mailfrom=evil.example; dmarc=none header.from=dostupnost-leku.cz"
            ),
        ),
        (
            OURS,
            auth_line(
                "mx.google.com; dkim=temperror header.d=dostupnost-leku.cz; dmarc=temperror header.from=dostupnost-leku.cz"
            ),
        ),
        (OURS, auth_line("mx.google.com; dmarc=permerror header.from=dostupnost-leku.cz")),
        (OURS, auth_line(gmail_fail(OURS))),
        # the sender's own "pass" below ours, or from another server
        (OURS, auth_line(gmail_fail(OURS)) + auth_line(gmail_pass(OURS))),
        (OURS, auth_line(gmail_pass(OURS, "mx.evil.example"))),
    ],
)
def test_only_the_authenticated_helpdesk_is_read_as_crisp(sender, headers):
    email = _eml(NOTIFICATION, sender=sender, headers=headers.replace("\r\n", "\n"))
    inquiry = crisp(email, HELPDESK)
    assert inquiry == default(email)
    assert inquiry.preprocessor == "default" and inquiry.sender_email == sender
    assert "jana.novakova@seznam.cz" not in (inquiry.reply_to, inquiry.sender_email)


def test_the_helpdesk_authenticated_by_aligned_dkim_or_spf_alone_is_read_as_crisp():
    for verdict in (
        "mx.google.com; dkim=pass header.d=dostupnost-leku.cz header.s=google",
        "mx.google.com; spf=pass (google.com: domain of info@dostupnost-leku.cz designates "
        "209.85.220.41 as permitted sender; dmarc=fail) smtp.mailfrom=info@dostupnost-leku.cz",
    ):
        email = _eml(NOTIFICATION, headers=auth_line(verdict).replace("\r\n", "\n"))
        inquiry = crisp(email, HELPDESK)
        assert (inquiry.preprocessor, inquiry.reply_to, inquiry.via) == (
            "crisp",
            "jana.novakova@seznam.cz",
            OURS,
        )


def test_no_helpdesk_configured_trusts_nobody():
    assert crisp(sample("21")).preprocessor == "default"
