"""Helpers that build realistic messages with the standard ``email`` package (see make_mail.py)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone
from email.charset import BASE64, QP, Charset
from email.header import Header
from email.message import Message
from email.mime.message import MIMEMessage
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import format_datetime, formataddr
from pathlib import Path

CET = timezone(timedelta(hours=1))
EST = timezone(timedelta(hours=-5))
JST = timezone(timedelta(hours=9))
ICT = timezone(timedelta(hours=7))
UTC = UTC

MAILS: dict[str, bytes] = {}


def addr(name: str, address: str, charset: str = "utf-8") -> str:
    """A From/To value, the display name RFC 2047-encoded when it is not ASCII."""
    return formataddr((name, address), charset=charset) if name else address


def auth_pass(address: str) -> str:
    """Gmail's verdict on a message whose DKIM, SPF and DMARC all pass for ``address``."""
    domain = address.rpartition("@")[2]
    return (
        f"mx.google.com; dkim=pass header.i=@{domain} header.s=s2026 header.b=Qm9v3xLp; "
        f"spf=pass (google.com: domain of {address} designates 209.85.220.41 as permitted "
        f"sender) smtp.mailfrom={address}; "
        f"dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from={domain}"
    )


def auth_fail(address: str, relay_ip: str = "185.220.101.47") -> str:
    """Gmail's verdict on a forged ``From: address`` sent from an unrelated server."""
    domain = address.rpartition("@")[2]
    return (
        f"mx.google.com; dkim=none (message not signed); "
        f"spf=fail (google.com: domain of {address} does not designate {relay_ip} as "
        f"permitted sender) smtp.mailfrom={address}; "
        f"dmarc=fail (p=REJECT sp=REJECT dis=NONE) header.from={domain}"
    )


def text_part(
    body: str, subtype: str = "plain", charset: str = "utf-8", cte: str = "8bit"
) -> Message:
    """One text part in ``charset`` with the transfer encoding ``cte``."""
    cs = Charset(charset)
    # Python's table sends shift_jis out as iso-2022-jp, re-encoding an already base64 body
    # (the part came out base64 twice): keep the charset the part is labelled with.
    cs.output_charset = cs.input_charset
    if cte == "quoted-printable":
        cs.body_encoding = QP
    elif cte == "base64":
        cs.body_encoding = BASE64
    else:
        cs.body_encoding = None
    return MIMEText(body, subtype, cs)


def subject_header(subject: str, charset: str) -> str:
    if subject.isascii():
        return subject
    return Header(subject, charset if charset not in ("us-ascii",) else "utf-8").encode()


def mail(
    path: str,
    *,
    frm: str,
    to: str,
    subject: str,
    date: datetime,
    body: str = "",
    html: str | None = None,
    html_only: bool = False,
    charset: str = "utf-8",
    cte: str = "8bit",
    mid: str,
    in_reply_to: str | None = None,
    references: list[str] | None = None,
    cc: str | None = None,
    headers: list[tuple[str, str]] | None = None,
    auth: str | None = None,
    delivered_to: str | None = None,
    attach: Message | None = None,
    content: Message | None = None,
    return_path: str | None = None,
) -> str:
    """Build one message and keep it under ``path`` (relative to evals/mail)."""
    if content is not None:
        msg = content
    elif html_only:
        msg = text_part(html or "", "html", charset, cte)
    elif html is not None:
        msg = MIMEMultipart("alternative")
        msg.attach(text_part(body, "plain", charset, cte))
        msg.attach(text_part(html, "html", charset, cte))
    else:
        msg = text_part(body, "plain", charset, cte)
    if attach is not None:
        outer = MIMEMultipart("mixed")
        outer.attach(msg)
        outer.attach(attach)
        msg = outer
    own = [(k, v) for k, v in msg.items()]
    for key in {k for k, _ in own}:
        del msg[key]
    sender_address = frm.rpartition("<")[2].rstrip(">")
    ordered: list[tuple[str, str]] = []
    if delivered_to:
        ordered.append(("Delivered-To", delivered_to))
    ordered.append(
        ("Return-Path", return_path if return_path is not None else f"<{sender_address}>")
    )
    if auth:
        ordered.append(("Authentication-Results", auth))
    ordered += [
        ("Message-ID", f"<{mid}>"),
        ("Date", format_datetime(date)),
        ("From", frm),
        ("To", to),
    ]
    if cc:
        ordered.append(("Cc", cc))
    ordered.append(("Subject", subject_header(subject, charset)))
    if in_reply_to:
        ordered.append(("In-Reply-To", f"<{in_reply_to}>"))
    if references:
        ordered.append(("References", " ".join(f"<{r}>" for r in references)))
    ordered += headers or []
    ordered.append(("MIME-Version", "1.0"))
    for key, value in ordered + [(k, v) for k, v in own if k != "MIME-Version"]:
        msg[key] = value
    for number, part in enumerate(msg.walk()):
        if part is not msg and "MIME-Version" in part:
            del part["MIME-Version"]
        if part.is_multipart():
            tag = hashlib.sha1(f"{path}:{number}".encode()).hexdigest()[:24]
            part.set_boundary(f"00000000000{tag}")
    MAILS[path] = msg.as_bytes()
    return path


def rfc822(frm: str, to: str, subject: str, date: datetime, body: str, mid: str) -> MIMEMessage:
    inner = text_part(body)
    own = [(k, v) for k, v in inner.items()]
    for key in {k for k, _ in own}:
        del inner[key]
    for key, value in [
        ("Message-ID", f"<{mid}>"),
        ("Date", format_datetime(date)),
        ("From", frm),
        ("To", to),
        ("Subject", subject_header(subject, "utf-8")),
        ("MIME-Version", "1.0"),
        *[(k, v) for k, v in own if k != "MIME-Version"],
    ]:
        inner[key] = value
    return MIMEMessage(inner)


def bounce(
    original_to: str, original_from: str, original_subject: str, mid: str, date: datetime
) -> Message:
    """A delivery status notification (multipart/report; RFC 3464)."""
    report = MIMEMultipart("report", **{"report-type": "delivery-status"})
    report.attach(
        text_part(
            "This is the mail system at host mx1.mailhost.example.\n\n"
            "I'm sorry to have to inform you that your message could not\n"
            "be delivered to one or more recipients.\n\n"
            f"<{original_to}>: host mx.{original_to.rpartition('@')[2]}[192.0.2.25] said: "
            "550 5.1.1 User unknown (in reply to RCPT TO command)\n",
            charset="us-ascii",
            cte="7bit",
        )
    )
    status = Message()
    status.set_type("message/delivery-status")
    per_message = Message()
    per_message["Reporting-MTA"] = "dns; mx1.mailhost.example"
    per_recipient = Message()
    per_recipient["Final-Recipient"] = f"rfc822; {original_to}"
    per_recipient["Action"] = "failed"
    per_recipient["Status"] = "5.1.1"
    per_recipient["Diagnostic-Code"] = (
        f"smtp; 550 5.1.1 <{original_to}>: Recipient address rejected"
    )
    status.attach(per_message)
    status.attach(per_recipient)
    report.attach(status)
    headers = Message()
    headers.set_type("text/rfc822-headers")
    headers.set_payload(
        f"From: {original_from}\nTo: {original_to}\nSubject: {original_subject}\n"
        f"Message-ID: <{mid}>\nDate: {format_datetime(date)}\n"
    )
    report.attach(headers)
    return report


def d(day: int, hour: int, minute: int = 0, tz: timezone = UTC, month: int = 1) -> datetime:
    return datetime(2027, month, day, hour, minute, tzinfo=tz)


def write_mails(root: Path, argv: list[str]) -> int:
    """Write every message in ``MAILS`` under ``root``; with ``--check``, only report the
    files that differ (exit code 1), so CI can tell the committed mail from the script's."""
    check = "--check" in argv
    differ = []
    for path, data in sorted(MAILS.items()):
        target = root / path
        if check:
            if not target.exists() or target.read_bytes() != data:
                differ.append(path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for path in differ:
        print(f"differs: {path}")
    if not check:
        print(f"wrote {len(MAILS)} messages under {root}")
    return 1 if differ else 0
