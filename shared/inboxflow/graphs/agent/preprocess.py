"""Preprocessors: how an email becomes the agent's first message (``preprocessor:`` of a profile).

- ``default``: the sender, the subject and the body as they are.
- ``crisp``: a notification of the Crisp helpdesk (Czech or English), forwarded to
  the mailbox: the patient's name and address and their message, without
  Crisp's header and footer. Replies go to the patient. Only mail whose
  authenticated sender (``mail/authentication.py``) is one of the profile's
  ``helpdesk`` addresses is read so: the body names the patient, and anyone can
  write a body. Other mail, and mail that only looks like Crisp's (no ``New
  message from NAME (ADDRESS)`` line, or no sign of Crisp at all), falls back to
  ``default``: no patient is invented.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ...mail import Email
from ...mail.authentication import check_sender
from ...mail.html_text import html_to_text
from .state import Inquiry

CRISP_PROMPT = "New support inquiry from {patient_name} ({patient_email}):\nSubject: {subject}\n\n{original_message}"

_ADDRESS = r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+"
_CRISP_HEAD = re.compile(
    r"^\s*(?:New message from|You have a new message from|Nová zpráva od|Máte novou zprávu od)"
    rf"\s+(?P<name>[^\n()<>]*?)\s*[(<]\s*(?P<email>{_ADDRESS})\s*[)>]\s*:?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_CRISP_MARK = re.compile(r"crisp\.chat|crisp\.email|\bcrisp\b", re.IGNORECASE)
_CRISP_META = re.compile(
    r"^\s*(?:Website|Web|Webová stránka|Conversation|Konverzace|Subject|Předmět)\s*:.*$",
    re.IGNORECASE,
)
_CRISP_FOOTER = re.compile(
    r"^\s*(?:-{2,}|_{2,}|Reply to this email|Odpovězte na tento e-mail|Odpovězte na tento email|"
    r"Open (?:the )?conversation|Otevřít konverzaci|You are receiving this|Tento e-mail jste obdrželi|"
    r"Tento email jste obdrželi|Sent (?:via|with) Crisp|Odesláno (?:přes|pomocí) Crispu?)",
    re.IGNORECASE,
)


def default(email: Email) -> Inquiry:
    """The email as it is: its sender asks, replies go to its Reply-To or its sender."""
    reply_to = email.header("reply-to") or ""
    match = re.search(_ADDRESS, reply_to)
    return Inquiry(
        preprocessor="default",
        sender_email=email.sender.address,
        sender_name=email.sender.name or "",
        subject=email.subject,
        text=email.body_text.strip(),
        reply_to=match.group(0) if match else email.sender.address,
    )


def crisp(email: Email, helpdesk: Sequence[str] = (), authserv_id: str | None = None) -> Inquiry:
    """A Crisp notification from the helpdesk: the patient and their message; else ``default``.

    Args:
        email: the email.
        helpdesk: the addresses whose authenticated mail is read as Crisp's (the profile's).
        authserv_id: the receiving server whose verdict counts (default: the configured one).
    """
    trusted = check_sender(email, authserv_id)
    if not any(trusted.is_sender(address) for address in helpdesk):
        return default(email)
    text = email.body_text
    if not _CRISP_HEAD.search(text) and email.body_html:
        text = html_to_text(email.body_html)
    head = _CRISP_HEAD.search(text)
    marked = _CRISP_MARK.search(text) or _CRISP_MARK.search(
        " ".join([email.sender.address, email.sender.name or "", *email.headers.keys()])
    )
    if head is None or marked is None:
        return default(email)
    message = _original_message(text[head.end() :])
    if not message:
        return default(email)
    patient_email = head.group("email").strip().lower()
    return Inquiry(
        preprocessor="crisp",
        sender_email=patient_email,
        sender_name=head.group("name").strip().strip("\"'") or patient_email,
        subject=email.subject,
        text=message,
        reply_to=patient_email,
        via=trusted.address,
    )


def _original_message(rest: str) -> str:
    """The patient's words: after Crisp's header lines, before its footer, unquoted."""
    kept: list[str] = []
    for line in rest.splitlines():
        if _CRISP_FOOTER.match(line.lstrip("[")) or "app.crisp.chat" in line:
            break
        if not kept and (not line.strip() or _CRISP_META.match(line)):
            continue
        kept.append(line.rstrip())
    body = "\n".join(kept).strip()
    lines = [
        line.removeprefix(">").strip() if line.startswith(">") else line
        for line in body.splitlines()
    ]
    return "\n".join(lines).strip().strip('\u201c\u201d"').strip()


PREPROCESSORS: dict[str, Callable[[Email], Inquiry]] = {"default": default, "crisp": crisp}


def first_message(inquiry: Inquiry) -> str:
    """The agent's first user message."""
    if inquiry.preprocessor == "crisp":
        return CRISP_PROMPT.format(
            patient_name=inquiry.sender_name,
            patient_email=inquiry.sender_email,
            subject=inquiry.subject,
            original_message=inquiry.text,
        )
    name = (
        f"{inquiry.sender_name} <{inquiry.sender_email}>"
        if inquiry.sender_name
        else inquiry.sender_email
    )
    replies = (
        f"Replies go to: <{inquiry.reply_to}>\n"
        if inquiry.reply_to.lower() != inquiry.sender_email.lower()
        else ""
    )
    return f"Email from {name}:\n{replies}Subject: {inquiry.subject}\n\n{inquiry.text}"
