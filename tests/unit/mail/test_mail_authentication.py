"""The authenticated sender (``mail/authentication.py``): one well-formed From address, vouched
for by the topmost Authentication-Results of the configured receiving server, aligned."""

from __future__ import annotations

import os

import pytest

from inboxflow.config import ConfigError, parse_config
from inboxflow.mail import email_from_eml, email_from_json
from inboxflow.mail.authentication import (
    AUTHSERV_ID_VARIABLE,
    authenticated_sender,
    check_sender,
    configured_authserv_id,
)
from inboxflow.mail.mime import EMAIL_STATE_LIMIT, ESSENTIAL_HEADERS
from tests.harness.mail_auth import gmail_fail, gmail_pass

MAYA = "maya.chen@brightlane.io"


def _eml(from_lines: str, *verdicts: str, extra: str = "", body: str = "approve") -> bytes:
    """A message whose Authentication-Results (topmost first) come above everything else."""
    results = "".join(f"Authentication-Results: {v}\r\n" for v in verdicts)
    return (
        f"{results}{from_lines}To: desk@brightlane.io\r\nSubject: Re: review\r\n"
        f"Message-ID: <x1@evil.example>\r\nDate: Thu, 14 Jan 2027 09:12:31 +0000\r\n{extra}"
        f"Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    ).encode()


def _sender(raw: bytes, authserv_id: str | None = None) -> str | None:
    return authenticated_sender(email_from_eml(raw), authserv_id)


@pytest.mark.parametrize(
    "verdict",
    [
        gmail_pass(MAYA),
        "mx.google.com; dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=brightlane.io",
        "mx.google.com; dkim=pass header.d=brightlane.io header.s=google",
        "mx.google.com; dkim=pass header.i=@brightlane.io header.s=google header.b=x",
        f"mx.google.com; spf=pass (google.com: domain of {MAYA} designates 1.2.3.4 as "
        f"permitted sender) smtp.mailfrom={MAYA}",
        "MX.Google.COM 1; dmarc=pass header.from=BRIGHTLANE.IO.",
        # folded over lines, as Gmail writes it
        "mx.google.com;\r\n       dkim=pass header.i=@brightlane.io header.s=google;\r\n"
        "       dmarc=pass (p=QUARANTINE sp=QUARANTINE dis=NONE) header.from=brightlane.io",
    ],
)
def test_a_positive_aligned_verdict_of_our_server_authenticates_from(verdict: str) -> None:
    raw = _eml(f"From: Maya Chen <{MAYA}>\r\n", verdict)
    assert _sender(raw) == MAYA


@pytest.mark.parametrize(
    ("verdicts", "why"),
    [
        ((), "no Authentication-Results"),
        (("mx.google.com; dkim=none; spf=none; dmarc=none header.from=brightlane.io",), "none"),
        (
            (
                "mx.google.com; dkim=temperror header.d=brightlane.io; "
                "spf=temperror smtp.mailfrom=maya.chen@brightlane.io; "
                "dmarc=temperror header.from=brightlane.io",
            ),
            "temperror",
        ),
        (("mx.google.com; dmarc=permerror header.from=brightlane.io",), "permerror"),
        ((gmail_fail(MAYA),), "dmarc=fail"),
        ((gmail_fail(MAYA), gmail_pass(MAYA)), "(spf=fail, dmarc=fail)"),  # theirs below ours
        ((gmail_pass(MAYA, "mx.evil.example"),), "not mx.google.com"),
        (("mx.evil.example; dmarc=pass header.from=brightlane.io", gmail_pass(MAYA)), "not"),
        (("mx.google.com; spf=pass smtp.mailfrom=bounce@evil.example",), "(spf=pass)"),
        (("mx.google.com; dkim=pass header.d=evil.example",), "(dkim=pass)"),
        (("mx.google.com; dmarc=pass header.from=evil.example",), "did not authenticate"),
        (
            ("mx.google.com; dkim=pass header.i=@brightlane-io.20230601.gappssmtp.com",),
            "did not authenticate",
        ),
        # results only inside comments, which may carry ";" and "="
        (
            (
                "mx.google.com; spf=softfail (google.com: x; dmarc=pass header.from=brightlane.io;"
                " dkim=pass header.d=brightlane.io) smtp.mailfrom=m@evil.example",
            ),
            "softfail",
        ),
        (('mx.google.com; dkim=fail reason="x; dmarc=pass header.from=brightlane.io"',), "fail"),
        (("mx.google.com; this is not; a=result list",), "unreadable"),
        (("mx.google.com; dmarc=pass",), "did not authenticate"),
        # Gmail's best guess for a domain that publishes no SPF record
        (
            (
                "mx.google.com; spf=pass (google.com: best guess record for domain of "
                f"{MAYA} designates 1.2.3.4 as permitted sender) smtp.mailfrom={MAYA}",
            ),
            "(spf=pass)",
        ),
    ],
)
def test_anything_else_authenticates_nobody(verdicts: tuple[str, ...], why: str) -> None:
    email = email_from_eml(_eml(f"From: Maya Chen <{MAYA}>\r\n", *verdicts))
    checked = check_sender(email)
    assert checked.address is None and checked.claimed == MAYA
    assert why in checked.reason


@pytest.mark.parametrize(
    "from_lines",
    [
        f"From: {MAYA}, mallory@evil.example\r\n",
        f"From: {MAYA}\r\nFrom: mallory@evil.example\r\n",
        "From: maya.chen\r\n",  # qualified with the Message-ID's domain for display only
        "From: Maya Chen <maya.chen>\r\n",
        f"From: Team: {MAYA};\r\n",
        f"From: Maya <{MAYA}\r\n",
        'From: Maya <"maya chen"@brightlane.io>\r\n',
        "From: Maya <maya@[10.0.0.1]>\r\n",
        f"From: undisclosed-recipients:;\r\nSender: {MAYA}\r\n",
        f"From: undisclosed-recipients:;\r\nReturn-Path: <{MAYA}>\r\n",
    ],
)
def test_from_must_be_exactly_one_well_formed_address(from_lines: str) -> None:
    raw = _eml(from_lines, gmail_pass(MAYA))
    email = email_from_eml(raw)
    assert email.from_address is None
    assert authenticated_sender(email) is None
    assert "From is not exactly one well-formed address" in check_sender(email).reason


@pytest.mark.parametrize(
    "from_line",
    [
        f'From: "Chen, Maya" <{MAYA}>\r\n',
        f"From: =?utf-8?q?Chen,_Maya?= <{MAYA}>\r\n",  # the comma is inside an encoded word
        f"From: =?utf-8?b?TWF5YSDEjGVu?= <{MAYA}>\r\n",
        f"From: <{MAYA}>\r\n",
    ],
)
def test_a_display_name_with_a_comma_is_still_one_address(from_line: str) -> None:
    email = email_from_eml(_eml(from_line, gmail_pass(MAYA)))
    assert email.from_address == MAYA and authenticated_sender(email) == MAYA


def test_the_authserv_id_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = _eml(f"From: {MAYA}\r\n", gmail_pass(MAYA, "mx.brightlane.io"))
    monkeypatch.delenv(AUTHSERV_ID_VARIABLE, raising=False)
    assert configured_authserv_id(None, os.environ) == "mx.google.com" and _sender(raw) is None
    assert _sender(raw, "mx.brightlane.io") == MAYA
    config = parse_config({"authserv_id": "MX.Brightlane.io"}, {}, source="t.yaml")
    assert configured_authserv_id(config) == "mx.brightlane.io"
    with pytest.raises(ConfigError, match="authserv_id"):
        parse_config({"authserv_id": "mx.google.com; dmarc=pass"}, {}, source="t.yaml")
    monkeypatch.setenv(AUTHSERV_ID_VARIABLE, "mx.other.example")
    assert configured_authserv_id(config, os.environ) == "mx.other.example"
    assert _sender(raw) is None


def test_json_emails_are_authenticated_like_parsed_ones() -> None:
    base = {"to": "desk@brightlane.io", "subject": "s", "body": "approve"}
    vouched = {"Authentication-Results": gmail_pass(MAYA)}
    assert authenticated_sender(email_from_json({**base, "from": MAYA, "headers": vouched})) == MAYA
    two = {**base, "from": MAYA, "headers": {**vouched, "From": f"{MAYA}, m@evil.example"}}
    assert authenticated_sender(email_from_json(two)) is None
    assert authenticated_sender(email_from_json({**base, "from": MAYA})) is None


def test_the_verdict_survives_an_email_too_large_for_state() -> None:
    assert "authentication-results" in ESSENTIAL_HEADERS
    padding = "".join(f"X-Pad-{i}: {'漢' * 15_000}\r\n" for i in range(6))  # 270 KB of headers
    raw = (
        f"Authentication-Results: {gmail_pass(MAYA)}\r\nFrom: Maya Chen <{MAYA}>\r\n"
        "To: desk@brightlane.io\r\nSubject: Re: review\r\nMessage-ID: <x1@evil.example>\r\n"
        f"{padding}MIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=b\r\n\r\n"
        f"--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\napprove\r\n{'z' * 250_000}\r\n"
        f"--b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>approve</p><p>{'w' * 200_000}"
        "</p>\r\n--b--\r\n"
    ).encode()
    email = email_from_eml(raw)
    assert "email too large for state: HTML body and headers dropped" in email.parse_warnings
    assert len(email.model_dump_json().encode()) <= EMAIL_STATE_LIMIT
    assert "x-pad-0" not in email.headers and email.body_html is None
    assert authenticated_sender(email) == MAYA
