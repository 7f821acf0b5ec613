"""Preprocessors: how an email becomes the agent's first message (``preprocessor:`` of a profile).

- ``default``: the sender, the subject and the body as they are; or, for a manual forward
  by an authenticated forwarder of the mailbox's organisation or of the profile's
  ``helpdesk``, of a message written to us (``mail/forward_writer.py``), the forwarded
  message: its writer asks, their subject and text are the inquiry, the forwarder's cover
  lines are a note beside it, and replies go to the writer (``Inquiry.forwarded`` says whose
  message it is, or why the forwarder stays the one who asks).
- ``crisp``: a notification of the Crisp helpdesk (a head line ``New message from NAME
  (ADDRESS)`` or a labelled block ``Od:``/``Name:``/``E-mail:``..., in cs, sk, en or de,
  plain or HTML: ``crisp_layout.py``), forwarded to the mailbox: the patient's name and
  address and their message, without Crisp's header, fields and footer. Replies go to
  the patient. Only mail whose authenticated sender (``mail/authentication.py``) is one
  of the profile's ``helpdesk`` addresses is read so: the body names the patient, and
  anyone can write a body. Other mail, and mail that only looks like Crisp's (no head
  line or block, or no sign of Crisp at all), falls back to ``default``: no patient is
  invented. A notification whose layout is there but cannot be read (no address, two,
  one that does not parse or is our own, no message) falls back too, with the reason in
  ``Inquiry.unread``: the run escalates to a person.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from ...mail import Email
from ...mail.addresses import same_address
from ...mail.authentication import check_sender
from ...mail.forward_writer import read_customer
from ...mail.html_text import html_to_text
from . import crisp_layout
from .state import Inquiry

CRISP_PROMPT = "New support inquiry from {patient_name} ({patient_email}):\nSubject: {subject}\n\n{original_message}"

FORWARD_PROMPT = (
    "Email from {name}, forwarded by {via}:\n"
    "The forwarder's note (not the writer's words):\n{note}"
    "Subject: {subject}\n\n{text}"
)

_ADDRESS = r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+"
_CRISP_MARK = re.compile(r"crisp\.chat|crisp\.email|\bcrisp\b", re.IGNORECASE)


def default(
    email: Email, forwarders: Sequence[str] = (), authserv_id: str | None = None
) -> Inquiry:
    """The email as it is: its sender asks, replies go to its Reply-To or its sender; a manual
    forward whose writer ``mail.forward_writer`` takes is the forwarded message, its writer asks.

    Args:
        email: the email.
        forwarders: the addresses whose authenticated forwards are read as their writer's
            (besides the mailbox's organisation): the profile's ``helpdesk``.
        authserv_id: the receiving server whose verdict counts (default: the configured one).
    """
    reading = read_customer(email, forwarders, authserv_id)
    forward = reading.forward
    if forward is not None:
        return Inquiry(
            preprocessor="forward",
            sender_email=reading.customer.address,
            sender_name=reading.customer.name,
            subject=forward.subject or email.subject,
            text=forward.text or email.body_text.strip(),
            note=forward.note,
            reply_to=reading.customer.address,
            via=reading.forwarded_by,
            forwarded=reading.reason,
        )
    reply_to = email.header("reply-to") or ""
    match = re.search(_ADDRESS, reply_to)
    return Inquiry(
        preprocessor="default",
        sender_email=email.sender.address,
        sender_name=email.sender.name or "",
        subject=email.subject,
        text=email.body_text.strip(),
        reply_to=match.group(0) if match else email.sender.address,
        forwarded=reading.reason or None,
    )


def crisp(email: Email, helpdesk: Sequence[str] = (), authserv_id: str | None = None) -> Inquiry:
    """A Crisp notification from the helpdesk: the patient and their message; else ``default``.

    The layouts read are ``crisp_layout``'s (head line, labelled blocks in cs/sk/en/de,
    plain text or HTML rendered by ``mail/html_text.py``). A notification from the helpdesk
    whose layout is there but does not name one patient (no address, two, one that does not
    parse, the helpdesk's or the mailbox's own) or has no message is ``default`` with
    ``unread`` set to the reason: the ``preprocess`` node escalates it.

    Args:
        email: the email.
        helpdesk: the addresses whose authenticated mail is read as Crisp's (the profile's).
        authserv_id: the receiving server whose verdict counts (default: the configured one).
    """
    trusted = check_sender(email, authserv_id)
    if not any(trusted.is_sender(address) for address in helpdesk):
        return default(email, helpdesk, authserv_id)
    marked = _CRISP_MARK.search(
        " ".join([email.sender.address, email.sender.name or "", *email.headers.keys()])
    )
    try:
        found = None
        for text in _texts(email):
            marked = marked or _CRISP_MARK.search(text)
            found = crisp_layout.read(text)
            if found is not None:
                break
        if found is None or marked is None:
            return default(email, helpdesk, authserv_id)
        if any(same_address(found.address, own) for own in (*helpdesk, email.mailbox)):
            raise crisp_layout.Unreadable(f"the patient's address {found.address} is our own")
    except crisp_layout.Unreadable as why:
        if marked is None:
            return default(email, helpdesk, authserv_id)
        return default(email).model_copy(update={"unread": str(why)})
    return Inquiry(
        preprocessor="crisp",
        sender_email=found.address,
        sender_name=found.name,
        subject=email.subject,
        text=found.message,
        reply_to=found.address,
        via=trusted.address,
    )


def _texts(email: Email) -> Iterator[str]:
    """The plain body, then the HTML body rendered as text (only if the plain one is no layout)."""
    yield email.body_text
    if email.body_html:
        yield html_to_text(email.body_html)


PREPROCESSORS: dict[str, Callable[[Email, Sequence[str], str | None], Inquiry]] = {
    "default": default,
    "crisp": crisp,
}
"""Each preprocessor, called with the email, the profile's ``helpdesk`` and the authserv-id."""


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
        if not same_address(inquiry.reply_to, inquiry.sender_email)
        else ""
    )
    if inquiry.preprocessor == "forward":
        return FORWARD_PROMPT.format(
            name=name,
            via=inquiry.via,
            note="".join(f"> {line}\n" for line in inquiry.note.splitlines()) or "> (none)\n",
            subject=inquiry.subject,
            text=inquiry.text,
        )
    return f"Email from {name}:\n{replies}Subject: {inquiry.subject}\n\n{inquiry.text}"
