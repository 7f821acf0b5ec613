# ruff: noqa: RUF001 - typographic quotes and dashes are what the charset tests decode
"""parse_message over a corpus of real-world MIME shapes (tests/data/mime), huge mail, and fuzzing.

Each .eml file is hand-written after what a real client sends (Gmail, Outlook,
Apple Mail, Thunderbird, Mailman, Postfix, Exchange); one test per shape
asserts the fields the graphs and tools rely on.
"""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inboxflow.engine.runtime import MAX_STATE_BYTES
from inboxflow.graphs.pipeline.state import PipelineState
from inboxflow.mail import Email, EmailParseError, parse_message
from inboxflow.mail.loop_guard import auto_reply_block
from inboxflow.mail.mime import BODY_TEXT_LIMIT, EMAIL_STATE_LIMIT
from inboxflow.mail.walk import FORWARD_END, FORWARD_START
from tests.harness.paths import DATA

CORPUS = DATA / "mime"
MAILBOX = "maya.chen@brightlane.io"


def parse(name: str, **kwargs: object) -> Email:
    return parse_message((CORPUS / name).read_bytes(), mailbox=MAILBOX, **kwargs)  # type: ignore[arg-type]


def state_bytes(email: Email) -> int:
    state = PipelineState(email=email).model_dump(mode="json")
    return len(json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode())


def test_corpus_has_at_least_fifteen_shapes_and_all_parse_cleanly_sized():
    paths = sorted(CORPUS.glob("*.eml"))
    assert len(paths) >= 15
    for path in paths:
        email = parse_message(path.read_bytes(), mailbox=MAILBOX)
        assert email.sender.address and email.body_text, path.name
        assert "\ufffd" not in email.subject, path.name
        assert state_bytes(email) < 100_000, path.name


def test_gmail_reply_qp_text_base64_html_wrapped_intro_trimmed_for_the_model():
    email = parse("01-gmail-reply-alternative.eml", gmail_id="18d4f0a1b2c3", thread_id="18d4ee00")
    assert email.gmail_id == "18d4f0a1b2c3" and email.thread_id == "18d4ee00"
    assert email.in_reply_to == "CAJvT9mQx=quote-0113@mail.gmail.com"
    assert email.references == ["CAJvT9mQx=quote-0113@mail.gmail.com"]
    assert "40 seats — 12% below list" in email.body_text  # QP UTF-8, quote kept in full text
    assert email.body_html is not None and 'class="gmail_quote"' in email.body_html
    shown = email.body_for_model()
    assert "Could you send the contract by Friday?" in shown
    assert "12% below list" not in shown  # the quoted reply
    assert "+44 20 7946 0018" not in shown  # the signature
    assert "wrote:" not in shown
    assert "not shown" in shown  # the trimming is announced
    assert email.headers["received"].startswith("by 2002:a05")
    assert email.parse_warnings == []


def test_outlook_reply_windows_1252_and_from_sent_block():
    email = parse("02-outlook-reply-windows-1252.eml")
    assert "We’re seeing the “export failed” error again – it cost us €2,400" in email.body_text
    assert email.thread_id == "export-errors-0111@brightlane.io"
    assert email.headers["thread-index"] == "AQHa2b3cZx0k1Jq8P0mZ9aB4c6d7eA=="
    assert email.headers["x-ms-has-attach"] == ""
    shown = email.body_for_model()
    assert "Please escalate." in shown and "fix was deployed" not in shown
    assert "Sent: Tuesday" not in shown


def test_apple_mail_flowed_text_and_inline_image_in_related():
    email = parse("03-apple-mail-related-inline-image.eml")
    assert email.sender.name == "Renée Dubois"
    # format=flowed; delsp=yes: soft breaks joined, the soft-break space removed
    assert "Could you confirm the catering corner works for 60 guests?" in email.body_text
    assert email.body_html is not None and "cid:F1A2B3C4-floorplan" in email.body_html
    [image] = email.attachments
    assert image.inline and image.content_type == "image/png" and image.filename == "floorplan.png"
    assert image.content_id == "F1A2B3C4-floorplan@atelier-dubois.example"
    assert image.part_id == "1.1" and image.size == 70
    assert "Sent from my iPhone" in email.body_text
    assert "Sent from my iPhone" not in email.body_for_model()


def test_thunderbird_rfc2231_continued_utf8_filename():
    email = parse("04-thunderbird-rfc2231-attachment.eml")
    assert email.subject == "Rechnung März – bitte prüfen"
    assert "ob die Staffelpreise korrekt übernommen wurden?" in email.body_text  # flowed, 8bit
    [pdf] = email.attachments
    assert pdf.filename == "Rechnung März 2027 – Nordwerk GmbH.pdf"
    assert pdf.content_type == "application/pdf" and pdf.size == 1380 and pdf.part_id == "1"
    assert not pdf.inline


def test_gmail_inline_forward_is_kept_whole_for_the_model():
    email = parse("05-gmail-forward-inline.eml")
    shown = email.body_for_model()
    assert "Do you offer partner pricing?" in shown
    assert "From: Ines Alvarez <ines@solvia-partners.example>" in shown
    assert email.forwarded == []  # inline forwards are text, not parts


def test_outlook_forward_as_attachment_text_marked_and_summarised():
    email = parse("06-outlook-forward-as-attachment.eml")
    text = email.body_text
    assert text.startswith("Maya - see the attached complaint")
    start, end = text.index(FORWARD_START), text.index(FORWARD_END)
    forwarded = text[start:end]
    assert 'From: "Okafor, Daniel" <d.okafor@harbourline.example>' in forwarded
    assert "bills us for 55 seats but we only have 40" in forwarded
    [summary] = email.forwarded
    assert summary.subject == "Invoice 2027-014 disputed"
    assert summary.message_id == "inner-0118-dispute@harbourline.example"
    assert summary.part_id == "1"
    names = [(a.filename, a.content_type, a.part_id) for a in email.attachments]
    assert names == [
        ("Invoice 2027-014 disputed.eml", "message/rfc822", "1"),
        (
            "seats.xlsx",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "1.1",
        ),
    ]
    assert "bills us for 55 seats" in email.body_for_model()
    assert "UEsAAA" not in email.model_dump_json()  # no attachment bytes in the model


def test_nested_mixed_alternative_related_and_encoded_word_filename():
    email = parse("07-nested-mixed-alternative-related.eml")
    assert email.body_text.startswith("Hi Maya,\n\nPlease fill in the attached questionnaire")
    assert "<p>" not in email.body_text
    assert email.body_html is not None and email.body_html.startswith("<p>Hi Maya,</p>")
    assert [a.address for a in email.cc] == ["security@tidewatercu.org", "ops@brightlane.io"]
    assert email.cc[1].name == "Ops, Brightlane"
    logo, doc = email.attachments
    assert (logo.inline, logo.content_id, logo.part_id) == (True, "logo@tidewatercu.org", "0.1.1")
    assert doc.filename == "Security Questionnaire – 2027.docx"
    assert (doc.inline, doc.size, doc.part_id) == (False, 2048, "1")


def test_calendar_invite_metadata_and_readable_line():
    email = parse("08-google-calendar-invite.eml")
    invite = email.calendar
    assert invite is not None
    assert invite.method == "REQUEST"
    assert invite.summary == "Nordwerk rollout sync"
    assert (invite.start, invite.end) == ("2027-01-28T15:00:00", "2027-01-28T15:30:00")
    assert invite.timezone == "Europe/Berlin"
    assert invite.organizer == "Lena Fischer <lena.fischer@nordwerk.example>"
    assert invite.location == "Google Meet"
    assert invite.uid == "7kq2v9b1n3m5c8x0z4l6j2h1g@google.com"
    assert email.body_text.startswith(
        "[Calendar invitation: Nordwerk rollout sync, 2027-01-28T15:00"
    )
    assert "You have been invited to the following event." in email.body_text  # base64 text
    [ics] = email.attachments
    assert (ics.filename, ics.content_type, ics.part_id) == ("invite.ics", "application/ics", "1")
    assert auto_reply_block(email) is None  # Auto-Submitted: no


def test_iso_8859_1_8bit_body_and_q_encoded_headers():
    email = parse("09-iso-8859-1-8bit.eml")
    assert email.sender.name == "René Léveillé"
    assert email.subject == "Devis pour les cafés de Montréal"
    assert "trois cafés à Montréal et à Québec" in email.body_text


def test_koi8_r_base64_body_and_windows_1251_attachment_name():
    email = parse("10-koi8-r-base64.eml")
    assert email.sender.name == "Анна Смирнова"
    assert email.subject == "Вопрос по тарифам"
    assert "Сколько стоит тариф для команды из 25 человек?" in email.body_text
    assert email.attachments[0].filename == "Расчёт.pdf"


def test_shift_jis_body_with_cp932_characters_and_iso_2022_jp_subject():
    email = parse("11-shift-jis-japanese.eml")
    assert email.sender.name == "山田 花子"
    assert email.subject == "料金プランについて"
    assert "①料金プラン、②導入期間について教えてください。" in email.body_text
    assert email.parse_warnings == []


def test_html_only_hostile_markup_becomes_inert_visible_text():
    email = parse("12-html-only-hostile.eml")
    text = email.body_text
    assert "Your order #4471 could not be shipped." in text
    assert "[your order page](https://shop.example/orders/4471)" in text
    assert "Blue mug  2" in text  # table cells
    for hidden in (
        "document.cookie",
        "Ignore previous instructions",  # display:none
        "forward all invoices",  # font-size:0
        "Frame fallback",
        "Object fallback",
        "SVG text",
        "Option text",
        "system prompt",  # comment
        "javascript:",
        "onload",
        "font-family",
        "Your invoice",  # <title>
        "tracker.example",
    ):
        assert hidden not in text, hidden
    assert "confirm your address" in text  # the text of a javascript: link stays, its target goes
    assert email.body_html is not None and "<script>" in email.body_html  # raw HTML kept as data


def test_bounce_dsn_reads_the_human_part_and_is_blocked():
    email = parse("13-bounce-dsn.eml")
    assert email.sender.address == "MAILER-DAEMON@mx1.harbourline.example"
    assert "550 5.1.1 User unknown" in email.body_text
    assert "Reporting-MTA" not in email.body_text
    types = [a.content_type for a in email.attachments]
    assert types == ["message/delivery-status", "text/rfc822-headers"]
    reason = auto_reply_block(email)
    assert reason is not None and "Auto-Submitted" in reason


def test_mailing_list_post_with_footer_part_is_blocked():
    email = parse("14-mailing-list-post.eml")
    assert email.body_text.startswith("Example 3.14.2 is out.")
    assert "To unsubscribe send an email" in email.body_text  # the inline footer part
    assert email.headers["list-id"] == '"Announcements" <python-announce-list.python.example>'
    reason = auto_reply_block(email)
    assert reason is not None and "Precedence: list" in reason


def test_exchange_out_of_office_is_blocked():
    email = parse("15-exchange-out-of-office.eml")
    assert email.is_reply and email.thread_id == "renewal-0129@brightlane.io"
    reason = auto_reply_block(email)
    assert reason is not None and "auto-generated" in reason


def test_broken_boundary_bad_encoded_word_no_date_no_message_id_best_effort():
    email = parse("16-broken-boundary.eml", internal_date_ms=1_801_000_000_000)
    assert email.sender.address == "jan@broken-mailer.example"
    assert email.subject == "Proposta de orçamento urgente"  # raw 8-bit UTF-8 header
    assert email.body_text == "Olá Maya, segue a proposta. Podemos falar amanhã?"
    [pdf] = email.attachments
    assert (
        pdf.filename == "proposta.pdf" and pdf.size > 0
    )  # truncated base64 decoded as far as it goes
    assert email.message_id.startswith("generated-")
    assert email.received_at == datetime.fromtimestamp(1_801_000_000, UTC)  # internalDate wins
    warnings = " | ".join(email.parse_warnings)
    assert "boundary 'actual-boundary' taken from the body" in warnings
    assert "no Message-ID" in warnings
    assert "badly encoded words" in warnings


def test_multipart_without_boundary_parameter_is_repaired():
    email = parse("17-missing-boundary-param.eml")
    assert email.body_text == "Hi Maya, the logo files are attached. Do they work for the brochure?"
    assert [a.filename for a in email.attachments] == ["logo.png"]
    assert any("boundary 'b1_7f3a'" in w for w in email.parse_warnings)


def test_mislabelled_and_unknown_charsets_never_raise():
    email = parse("18-mislabelled-charsets.eml")
    # Windows-1252 bytes labelled ISO-8859-1: smart quotes, not C1 controls
    assert "send the “Team” plan quote… we’d like to start" in email.body_text
    # unknown charset: UTF-8 with replacement characters
    assert "PS: café \ufffd\ufffd invoices" in email.body_text
    assert any("unknown charset 'x-mac-nonsense'" in w for w in email.parse_warnings)
    assert email.sender.first_name == "Kate"


def test_smime_signed_body_and_signature_as_metadata():
    email = parse("19-smime-signed.eml")
    assert email.body_text.startswith("Hi Maya, the contract is countersigned")
    [signature] = email.attachments
    assert (signature.filename, signature.content_type, signature.size) == (
        "smime.p7s",
        "application/pkcs7-signature",
        1024,
    )


def test_iso_8859_15_euro_sign():
    email = parse("20-iso-8859-15-euro.eml")
    assert email.subject == "Tarif à 150 € par mois ?"
    assert "le tarif à 150 € par mois" in email.body_text


# --- huge mail ------------------------------------------------------------------------------


def _huge(content_type: str, body: bytes, extra: bytes = b"") -> bytes:
    return (
        b"From: Bulk Sender <big@sender.example>\r\nTo: maya.chen@brightlane.io\r\n"
        b"Subject: huge\r\nMessage-ID: <huge@sender.example>\r\nMIME-Version: 1.0\r\n"
        + extra
        + b"Content-Type: "
        + content_type.encode()
        + b"\r\n\r\n"
        + body
    )


def test_huge_plain_text_is_truncated_with_a_marker_and_fits_a_checkpoint():
    line = "Zeile mit Umlauten äöü und Emoji 🚚 — " * 3 + "\n"
    body = (line * 20_000).encode()  # > 2 MB
    assert len(body) > 2_000_000
    started = time.perf_counter()
    email = parse_message(_huge('text/plain; charset="utf-8"', body), mailbox=MAILBOX)
    elapsed = time.perf_counter() - started
    assert email.body_truncated
    assert email.body_chars == len(body.decode().strip())
    assert len(email.body_text) < email.body_chars
    assert "[... message truncated for storage:" in email.body_text
    assert email.body_text.startswith(line.strip("\n")[:40])
    assert len(json.dumps(email.body_text, ensure_ascii=False).encode()) <= BODY_TEXT_LIMIT
    assert state_bytes(email) < MAX_STATE_BYTES
    assert elapsed < 5, elapsed
    shown = email.body_for_model()
    assert len(shown) < 21_000 and "truncated" in shown


def test_huge_html_only_mail_fits_and_keeps_its_start():
    row = "<tr><td>Order</td><td>&quot;quoted&quot; \\ backslash</td></tr>\n"
    markup = (
        "<html><body><p>Start of the report</p><table>" + row * 40_000 + "</table></body></html>"
    ).encode()
    assert len(markup) > 2_000_000
    started = time.perf_counter()
    email = parse_message(_huge("text/html; charset=utf-8", markup), mailbox=MAILBOX)
    elapsed = time.perf_counter() - started
    assert elapsed < 4, elapsed  # only the first HTML_INPUT_LIMIT characters are rendered
    assert email.body_text.startswith("Start of the report")
    assert 'Order  "quoted" \\ backslash' in email.body_text
    assert "text shown from the first 256000 only" in email.body_text
    assert email.body_truncated
    assert email.body_html is not None and len(email.body_html) < 200_000
    assert state_bytes(email) < MAX_STATE_BYTES


def test_huge_attachments_and_headers_stay_metadata():
    attachment = base64.encodebytes(b"\x89PNG" + bytes(3_000_000))
    many_headers = b"".join(b"X-Trace-%d: %s\r\n" % (i, b"v" * 900) for i in range(400))
    raw = _huge(
        'multipart/mixed; boundary="B"',
        b"--B\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n--B\r\n"
        b"Content-Type: image/png; name=big.png\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        + attachment
        + b"\r\n--B--\r\n",
        extra=many_headers,
    )
    email = parse_message(raw, mailbox=MAILBOX)
    assert email.body_text == "see attached"
    assert email.attachments[0].size == 3_000_004
    assert any("headers dropped" in w for w in email.parse_warnings)
    assert state_bytes(email) < MAX_STATE_BYTES


def test_control_characters_do_not_inflate_the_stored_size():
    body = b"\x01\x02\x1b" * 400_000 + b"end"
    email = parse_message(_huge("text/plain", body), mailbox=MAILBOX)
    assert email.body_text == "end"


def test_json_heavy_characters_are_capped_by_stored_bytes():
    email = parse_message(_huge("text/plain", b'"\\' * 300_000), mailbox=MAILBOX)
    assert email.body_truncated
    assert len(json.dumps(email.body_text, ensure_ascii=False).encode()) <= BODY_TEXT_LIMIT


# --- errors and fuzzing ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"", "empty"),
        (b"\x00\x01binary", "binary"),
        (b"no headers here, just words", "not an email"),
        (b"To: a@b.example\r\nSubject: x\r\n\r\nbody", "no usable sender"),
        (b"From: nobody at all\r\nSubject: x\r\n\r\nbody", "no usable sender"),
    ],
)
def test_unusable_input_is_a_clear_parse_error(raw: bytes, match: str):
    with pytest.raises(EmailParseError, match=match):
        parse_message(raw, mailbox=MAILBOX)


def test_deep_nesting_is_bounded():
    depth = 60
    raw = b"From: a@b.example\r\nSubject: deep\r\nMIME-Version: 1.0\r\n"
    for level in range(depth):
        raw += b'Content-Type: multipart/mixed; boundary="b%d"\r\n\r\n--b%d\r\n' % (level, level)
    raw += b"Content-Type: text/plain\r\n\r\ninnermost\r\n"
    for level in reversed(range(depth)):
        raw += b"--b%d--\r\n" % level
    email = parse_message(raw, mailbox=MAILBOX)
    assert any("nested deeper" in w for w in email.parse_warnings)


_HEADER_NAMES = st.sampled_from(
    [
        *("From", "To", "Cc", "Subject", "Content-Type", "Content-Transfer-Encoding", "Date"),
        *("Message-ID", "References", "Content-Disposition", "Return-Path", "X-Custom"),
    ]
)
_HEADER_VALUES = st.one_of(
    st.binary(max_size=80),
    st.sampled_from(
        [
            b"a@b.example",
            b"=?utf-8?B?w6k=?= <x@y.example>",
            b"=?bogus?Q?=FF?=",
            b"multipart/mixed; boundary=X",
            b"multipart/alternative",
            b"message/rfc822",
            b"text/html; charset=x-unknown",
            b"text/plain; charset=shift_jis",
            b"base64",
            b"quoted-printable",
            b"attachment; filename*=UTF-8''%FF%FE",
            b"<>",
        ]
    ),
)
_BODY_CHUNKS = st.lists(
    st.one_of(
        st.binary(max_size=120),
        st.sampled_from(
            [
                b"--X\r\n",
                b"--X--\r\n",
                b"\r\n\r\n",
                b"Content-Type: text/html\r\n\r\n<p onclick=x>hi</p><script>x</script>",
                b"Content-Type: message/rfc822\r\n\r\nFrom: q@r.example\r\n\r\nbody",
                b"Content-Type: text/calendar\r\n\r\nBEGIN:VEVENT\r\nDTSTART:2027\r\n",
                b"=C3=A9=\r\n",
                b"SGVsbG8gd29ybGQ",
            ]
        ),
    ),
    max_size=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(headers=st.lists(st.tuples(_HEADER_NAMES, _HEADER_VALUES), max_size=10), body=_BODY_CHUNKS)
def test_fuzz_structured_messages_raise_nothing_but_parse_errors(headers, body):
    raw = b"".join(name.encode() + b": " + value + b"\r\n" for name, value in headers)
    raw += b"\r\n" + b"".join(body)
    try:
        email = parse_message(raw, mailbox=MAILBOX)
    except EmailParseError as exc:
        assert not str(exc).startswith("unreadable message"), exc  # an internal crash, wrapped
        return
    email.model_dump_json()  # serialisable: no lone surrogates, nothing exotic
    assert state_bytes(email) < MAX_STATE_BYTES


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=2_000))
def test_fuzz_arbitrary_bytes_raise_nothing_but_parse_errors(raw):
    try:
        parse_message(raw, mailbox=MAILBOX)
    except EmailParseError as exc:
        assert not str(exc).startswith("unreadable message"), exc


def test_hostile_combination_of_caps_still_fits_the_state():
    cjk_header = "漢字" * 7_000  # 14,000 characters, 42 KB of UTF-8 per header
    headers = "".join(f"X-Cjk-{i}: {cjk_header}\r\n" for i in range(10)).encode()
    recipients = ", ".join(f"{'名' * 60} <r{i}@{'d' * 200}.example>" for i in range(400))
    body = ("本文" * 200_000).encode()
    raw = (
        b"From: a@b.example\r\nSubject: s\r\nTo: "
        + recipients.encode()
        + b"\r\n"
        + headers
        + b'Content-Type: multipart/alternative; boundary="B"\r\n\r\n--B\r\n'
        + b"Content-Type: text/plain; charset=utf-8\r\n\r\n"
        + body
        + b"\r\n--B\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>"
        + body
        + b"</p>\r\n--B--\r\n"
    )
    email = parse_message(raw, mailbox=MAILBOX)
    assert len(email.model_dump_json().encode()) <= EMAIL_STATE_LIMIT
    assert state_bytes(email) < MAX_STATE_BYTES
    assert email.body_truncated and email.body_chars == 400_000
    assert email.body_text.startswith("本文本文")
    assert "[... message truncated for storage:" in email.body_text
    assert email.headers["from"] == "a@b.example"
    assert any("too large for state" in w for w in email.parse_warnings)


def test_raw_8bit_bytes_in_part_headers_and_defects_stay_valid_unicode():
    # found by mutation fuzzing: a defect message and a content type carried raw 8-bit bytes
    raw = (
        b"From: a@b.example\r\nSubject: s\r\n"
        b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n'
        b"--B\r\n 2027 0\xbb:00 +0000\r\nContent-Type: text/plain\r\n\r\nbody\r\n"
        b'--B\r\nContent-Type: application/x-\xff\xfe; name="r\xe9sum\xe9.pdf"\r\n\r\nxx\r\n--B--\r\n'
    )
    email = parse_message(raw, mailbox=MAILBOX)
    email.model_dump_json().encode("utf-8")  # raises on a lone surrogate
    assert any("continuation" in w for w in email.parse_warnings)
    assert email.attachments[-1].filename == "résumé.pdf"
