"""Reading a manual forward (issue 37): Gmail, Outlook and Apple Mail forwards, generated in
the clients' wording of ten languages, as plain text and as HTML, quoted or indented, with
random names, addresses, subjects and dates; each asserts what is read.

The wording below is the mail clients' own, written from their forwards, not from
``inboxflow.mail.forwarded``; a language or client the reader has no table for still gives
its writer (the first field of the block)."""

from __future__ import annotations

import html
import string
from dataclasses import dataclass
from email.message import EmailMessage

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inboxflow.mail import email_from_eml, email_from_json
from inboxflow.mail.addresses import same_address
from inboxflow.mail.forwarded import Forward, forward_of, read_forward

LANGUAGES = ("en", "cs", "sk", "de", "fr", "es", "it", "nl", "pl", "pt")

# Gmail: the intro between dashes and the From label (Gmail leaves Date/Subject/To in English
# in some languages, so both are generated); the other labels as each language writes them.
GMAIL = {
    "en": ("Forwarded message", "From"),
    "cs": ("Přeposlaná zpráva", "Od"),
    "sk": ("Preposlaná správa", "Od"),
    "de": ("Weitergeleitete Nachricht", "Von"),
    "fr": ("Message transféré", "De"),
    "es": ("Mensaje reenviado", "De"),
    "it": ("Messaggio inoltrato", "Da"),
    "nl": ("Doorgestuurd bericht", "Van"),
    "pl": ("Wiadomość przekazana dalej", "Od"),
    "pt": ("Mensagem encaminhada", "De"),
}
LABELS = {  # date, subject, to
    "en": ("Date", "Subject", "To"),
    "cs": ("Datum", "Předmět", "Komu"),
    "sk": ("Dátum", "Predmet", "Komu"),
    "de": ("Datum", "Betreff", "An"),
    "fr": ("Date", "Objet", "À"),
    "es": ("Fecha", "Asunto", "Para"),
    "it": ("Data", "Oggetto", "A"),
    "nl": ("Datum", "Onderwerp", "Aan"),
    "pl": ("Data", "Temat", "Do"),
    "pt": ("Data", "Assunto", "Para"),
}
# Outlook: From, Sent, To, Subject and the subject's forward prefix.
OUTLOOK = {
    "en": ("From", "Sent", "To", "Subject", "FW"),
    "cs": ("Od", "Odesláno", "Komu", "Předmět", "FW"),
    "sk": ("Od", "Odoslané", "Komu", "Predmet", "FW"),
    "de": ("Von", "Gesendet", "An", "Betreff", "WG"),
    "fr": ("De", "Envoyé", "À", "Objet", "TR"),
    "es": ("De", "Enviado el", "Para", "Asunto", "RV"),
    "it": ("Da", "Inviato", "A", "Oggetto", "I"),
    "nl": ("Van", "Verzonden", "Aan", "Onderwerp", "Doorst"),
    "pl": ("Od", "Wysłane", "Do", "Temat", "PD"),
    "pt": ("De", "Enviado", "Para", "Assunto", "ENC"),
}
APPLE = {
    "en": "Begin forwarded message:",
    "cs": "Začátek přeposílané zprávy:",
    "sk": "Začiatok preposlanej správy:",
    "de": "Anfang der weitergeleiteten Nachricht:",
    "fr": "Début du message réexpédié :",
    "es": "Inicio del mensaje reenviado:",
    "it": "Inizio messaggio inoltrato:",
    "nl": "Begin doorgestuurd bericht:",
    "pl": "Początek przekazywanej wiadomości:",
    "pt": "Início da mensagem reencaminhada:",
}
APPLE_FROM = {
    "en": "From",
    "cs": "Od",
    "sk": "Od",
    "de": "Von",
    "fr": "De",
    "es": "De",
    "it": "Da",
    "nl": "Van",
    "pl": "Od",
    "pt": "De",
}

_WORD = st.text(
    alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzáéíóúýčďěňřšťůžäöüßñçàèìòœłśźżą"),
    min_size=2,
    max_size=9,
)
_NAME = st.lists(_WORD, min_size=1, max_size=3).map(lambda w: " ".join(x.capitalize() for x in w))
_LOCAL = st.text(alphabet=string.ascii_lowercase + string.digits + "._+-", min_size=1, max_size=14)
_DOMAIN = st.lists(
    st.text(alphabet=string.ascii_lowercase + string.digits, min_size=2, max_size=10),
    min_size=2,
    max_size=3,
).map(".".join)
_ADDRESS = st.builds(lambda local, domain: f"{local.strip('.')}x@{domain}", _LOCAL, _DOMAIN)
_SENTENCE = st.lists(_WORD, min_size=3, max_size=12).map(lambda w: " ".join(w).capitalize() + ".")


@st.composite
def _dates(draw: st.DrawFn) -> str:
    day, month, year = (
        draw(st.integers(1, 28)),
        draw(st.integers(1, 12)),
        draw(st.integers(2019, 2031)),
    )
    hour, minute = draw(st.integers(0, 23)), draw(st.integers(0, 59))
    forms = (
        f"Mon, {day} Mar {year} at {hour}:{minute:02}",
        f"{day}. {month}. {year} v {hour}:{minute:02}",
        f"Montag, {day}. März {year} {hour}:{minute:02}",
        f"{year}-{month:02}-{day:02} {hour:02}:{minute:02}",
        f"lundi {day} mars {year} {hour}:{minute:02}",
        f"Monday, March {day}, {year} {hour % 12 + 1}:{minute:02} PM",
    )
    return draw(st.sampled_from(forms))


@dataclass
class Generated:
    """A forward as a client writes it, and what it says."""

    text: str  # the plain-text body
    html: str  # the same forward as HTML
    subject: str  # the outer subject
    name: str
    address: str
    date: str
    original_subject: str
    to: str
    body: str


def _colon(lang: str, label: str) -> str:
    return f"{label} :" if lang == "fr" else f"{label}:"


@st.composite
def forwards(draw: st.DrawFn, client: str | None = None) -> Generated:
    client = client or draw(st.sampled_from(("gmail", "outlook", "apple")))
    lang = draw(st.sampled_from(LANGUAGES))
    name, address = draw(_NAME), draw(_ADDRESS)
    to, date = draw(_ADDRESS), draw(_dates())
    original_subject, body = draw(_SENTENCE), draw(_SENTENCE)
    comment = draw(st.sampled_from(["", "FYI", "Can you answer this one?", "Viz níže."]))
    date_l, subject_l, to_l = LABELS[lang]
    if client == "gmail":
        intro, from_l = GMAIL[lang]
        if draw(st.booleans()):
            date_l, subject_l, to_l = "Date", "Subject", "To"
        shown = draw(st.sampled_from([f"{name} <{address}>", f"*{name}* <{address}>"]))
        head = [f"---------- {intro} ---------"]
        fields = [(from_l, shown), (date_l, date), (subject_l, original_subject), (to_l, f"<{to}>")]
        subject = f"Fwd: {original_subject}"
    elif client == "outlook":
        from_l, sent_l, to_l, subject_l, prefix = OUTLOOK[lang]
        shown_name = draw(st.sampled_from([name, f"{name.split()[-1]}, {name.split()[0]}"]))
        if "," in shown_name and shown_name.split(",")[0] == shown_name.split(", ")[-1]:
            shown_name = name
        name = shown_name
        shown = draw(
            st.sampled_from(
                [
                    f"{shown_name} <{address}>",
                    f"{shown_name} [mailto:{address}]",
                    f"{shown_name} <{address}<mailto:{address}>>",
                ]
            )
        )
        head = [draw(st.sampled_from(["_" * 32, "-----Original Message-----", ""]))]
        star = draw(st.sampled_from(["", "*"]))
        fields = [
            (f"{star}{from_l}{star}", shown),
            (f"{star}{sent_l}{star}", date),
            (f"{star}{to_l}{star}", to),
            (f"{star}{subject_l}{star}", original_subject),
        ]
        subject = f"{prefix}: {original_subject}"
    else:
        head = [APPLE[lang], ""]
        fields = [
            (APPLE_FROM[lang], f"{name} <{address}>"),
            (subject_l, original_subject),
            (date_l, date),
            (to_l, to),
        ]
        subject = f"Fwd: {original_subject}"
    lines = [_colon(lang, label) + f" {value}" for label, value in fields]
    quote = draw(st.sampled_from(["", "> ", "    ", "\t"]))
    forwarded = [*head, *lines, "", body]
    text = "\n".join(
        [comment, "", *[(quote + line) if line else quote.rstrip() for line in forwarded]]
    )
    head_html = "".join(f"<div>{html.escape(h)}</div>" for h in head if h)
    fields_html = "".join(
        f"<div><b>{html.escape(_colon(lang, label.strip('*')))}</b> {html.escape(value)}</div>"
        for label, value in fields
    )
    page = (
        f"<div dir='ltr'>{html.escape(comment)}</div><br><div class='gmail_quote'>"
        f"<blockquote type='cite'>{head_html}{fields_html}<br><div>{html.escape(body)}</div>"
        "</blockquote></div>"
    )
    return Generated(text, page, subject, name, address, date, original_subject, to, body)


def _assert_read(found: Forward | None, sent: Generated) -> None:
    assert found is not None, sent.text
    assert same_address(found.sender.address, sent.address)
    assert found.sender.name == sent.name
    assert found.date == sent.date
    assert found.subject == sent.original_subject
    assert [a.lower() for a in found.to] == [sent.to.lower()]
    assert found.text.strip() == sent.body


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forwards())
def test_a_forward_in_plain_text_is_read(sent: Generated) -> None:
    _assert_read(read_forward(sent.text, sent.subject), sent)


def _eml(sent: Generated, html_only: bool) -> bytes:
    message = EmailMessage()
    message["From"] = "Dana Forwarder <dana@forwarder.example>"
    message["To"] = "desk@brightlane.io"
    message["Subject"] = sent.subject
    message["Message-ID"] = "<fwd@forwarder.example>"
    if html_only:
        message.set_content(sent.html, subtype="html")
    else:
        message.set_content(sent.text)
        message.add_alternative(sent.html, subtype="html")
    return bytes(message)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forwards(), st.booleans())
def test_a_forward_is_read_from_the_parsed_email_as_html_or_plain(
    sent: Generated, html_only: bool
) -> None:
    email = email_from_eml(_eml(sent, html_only))
    found = forward_of(email)
    _assert_read(found, sent)
    # the email's writer is the forwarded message's sender, and a reply goes there
    assert email.writer is not None and same_address(email.writer.address, sent.address)
    assert same_address(email.reply_address(), sent.address)
    assert email.from_address == "dana@forwarder.example"  # trust stays with From


@settings(max_examples=100, deadline=None)
@given(
    _NAME,
    _ADDRESS,
    st.lists(
        st.text(alphabet=string.ascii_letters, min_size=2, max_size=10), min_size=4, max_size=4
    ),
    _SENTENCE,
)
def test_a_client_in_a_language_without_a_table_still_gives_the_writer(
    name: str, address: str, labels: list[str], body: str
) -> None:
    text = (
        f"Se nedan.\n\n---------- {labels[0]} {labels[1]} ---------\n{labels[2]}: {name} <{address}>\n"
        f"{labels[3]}: 3 mars 2026 10:15\nÄmne: Hej\nTill: x@y.example\n\n{body}"
    )
    found = read_forward(text, "VB: Hej")
    assert found is not None and same_address(found.sender.address, address)
    assert found.sender.name == name and found.text == body


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forwards())
def test_the_block_a_reply_quotes_is_not_a_forward(sent: Generated) -> None:
    # the same block, quoted under "On ... wrote:" in a reply without a forward prefix
    reply = "Thanks, done.\n\nOn Mon, 3 Mar 2026 at 10:15, Dana wrote:\n" + "\n".join(
        f"> {line}" for line in sent.text.splitlines()
    )
    assert read_forward(reply, f"Re: {sent.original_subject}", reply=True) is None
    email = email_from_json(
        {
            "from": "dana@forwarder.example",
            "to": "desk@brightlane.io",
            "subject": f"RE: {sent.original_subject}",
            "headers": {"In-Reply-To": "<a@b.example>"},
            "body": reply,
        }
    )
    assert email.writer is None and email.reply_address() == "dana@forwarder.example"


@given(st.text(max_size=400), _ADDRESS)
def test_text_without_a_forwarded_block_gives_nothing(text: str, address: str) -> None:
    signature = f"{text}\n--\nJan Novák\nE-mail: {address}\nTel: +420 777 123 456\nWeb: x.cz"
    assert read_forward(signature, "Question") is None
    assert read_forward(f"From: {address}\nSubject: x", "Question") is None


def test_an_attached_message_names_its_writer() -> None:
    raw = (
        "From: Dana <dana@forwarder.example>\nTo: desk@brightlane.io\nSubject: Fwd: Q\n"
        'Message-ID: <f1@x>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n'
        "--b\nContent-Type: text/plain\n\nsee below\n--b\nContent-Type: message/rfc822\n\n"
        "From: =?utf-8?q?Ingrid_S=C3=B8rensen?= <ingrid@fjord.example>\nTo: dana@forwarder.example\n"
        "Subject: Q\nDate: Mon, 9 Nov 2026 10:15:00 +0000\n\nQuestion\n--b--\n"
    )
    email = email_from_eml(raw.encode())
    found = forward_of(email)
    assert found is not None and found.layout == "attached"
    assert (found.sender.address, found.sender.name) == ("ingrid@fjord.example", "Ingrid Sørensen")
    assert found.to == ("dana@forwarder.example",)
    assert email.reply_address() == "ingrid@fjord.example"


def test_a_forward_of_the_mailboxs_own_message_is_answered_to_the_forwarder() -> None:
    email = email_from_json(
        {
            "from": "dana@forwarder.example",
            "to": "desk@brightlane.io",
            "subject": "Fwd: our offer",
            "body": "---------- Forwarded message ---------\nFrom: Desk <desk@brightlane.io>\n"
            "Date: Mon, 9 Nov 2026 at 10:15\nSubject: our offer\nTo: dana@forwarder.example\n\nHi",
        }
    )
    assert email.writer is not None and email.writer.address == "desk@brightlane.io"
    assert email.reply_address() == "dana@forwarder.example"


def test_hostile_lines_are_read_in_linear_time() -> None:
    import time

    block = "From: Jan <jan@x.example>\nDate: Mon, 9 Nov 2026 at 10:15\nTo: a@b.example\n"
    hostile = [
        "--x" + "-" * 200_000 + "y\n" + block,  # an intro that almost closes its dashes
        "From:" + " " * 200_000 + "x\n" + block,
        ("> " * 50_000) + "\n" + block,
        "A" + " x" * 100_000 + ":\n" + block,
    ]
    for text in hostile:
        started = time.perf_counter()
        read_forward(text, "Re: x", reply=True)
        assert time.perf_counter() - started < 1.0
