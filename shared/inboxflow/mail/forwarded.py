"""The forwarded message inside a forward: who wrote it, when, about what, and its text.

A person who forwards a message by hand sends the original's header block in the
body, in their mail client's layout and language:

- Gmail: ``---------- Forwarded message ---------`` (``Přeposlaná zpráva``,
  ``Weitergeleitete Nachricht``...), then ``From:`` / ``Date:`` / ``Subject:`` /
  ``To:`` (Gmail translates the ``From`` label only in some languages: ``Od:``,
  ``Von:``);
- Outlook: an underscore rule or ``-----Original Message-----`` (or nothing), then
  ``From: … Sent: … To: … Subject:`` in the client's language (``Von: … Gesendet:``,
  ``De : … Envoyé :``, ``Od: … Odesláno:``), the subject prefixed ``FW:``/``WG:``/``TR:``...;
- Apple Mail: ``Begin forwarded message:`` (``Anfang der weitergeleiteten Nachricht:``...),
  then ``From:`` / ``Subject:`` / ``Date:`` / ``To:``.

:func:`read_forward` reads that structure rather than any one client's text: a *field
block* (three or more consecutive ``Label: value`` lines, the first holding exactly one
address, one giving a date or a time) under an intro line (a dash-enclosed title, an
underscore rule, a line ending in ``:``) or none. Quoting (``>``), indentation,
``*bold*`` labels and a space before the colon (French) are read through. A block
counts as a *forward*, not the quoted original of a reply (Outlook writes both alike),
when the subject carries a forward prefix, or its intro is a client's forward wording
in one of the languages below and is not quoted, or it has any intro and the email is
no reply (no ``In-Reply-To``, no ``Re:``): the blocks a reply quotes are its history.
The labels below give the date, subject and recipients; the sender is the first field
whatever its label, so a client or language not listed still yields the writer.

:func:`forward_of` asks an :class:`~.model.Email`: a message attached as
``message/rfc822`` first (its own headers), else the first forwarded block of the
text (the HTML's text when there is no plain part). What it returns is what the body *says*:
anyone can write a body, so it is never an authenticated sender
(:mod:`.authentication`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from email.utils import getaddresses
from typing import TYPE_CHECKING

from .addresses import address_key_or_none, same_address
from .model import Address

if TYPE_CHECKING:
    from .model import Email

FORWARD_INTROS = frozenset(
    {
        # Gmail's "---------- Forwarded message ---------", Apple Mail's "Begin forwarded
        # message:", Thunderbird's "-------- Forwarded Message --------", per language.
        "forwarded message",
        "begin forwarded message",
        "přeposlaná zpráva",
        "začátek přeposílané zprávy",
        "preposlaná správa",
        "začiatok preposlanej správy",
        "weitergeleitete nachricht",
        "anfang der weitergeleiteten nachricht",
        "message transféré",
        "début du message réexpédié",
        "début du message transféré",
        "mensaje reenviado",
        "inicio del mensaje reenviado",
        "comienzo del mensaje reenviado",
        "messaggio inoltrato",
        "inizio messaggio inoltrato",
        "doorgestuurd bericht",
        "begin doorgestuurd bericht",
        "wiadomość przekazana dalej",
        "przekazana wiadomość",
        "początek przekazywanej wiadomości",
        "mensagem encaminhada",
        "mensagem reencaminhada",
        "início da mensagem encaminhada",
        "início da mensagem reencaminhada",
    }
)
"""Intro lines of a forward, lowercased, without the dashes and the colon."""

FORWARD_SUBJECT = re.compile(
    r"^\s*(?:\[[^\]]{0,40}\]\s*)?(?:fwd?|wg|tr|rv|i|doorst|pd|enc)\s*(?:\[\d+\])?\s*[:\uff1a]",
    re.IGNORECASE | re.ASCII,
)
"""A subject's forward prefix: ``Fwd:``/``FW:`` (en, cs, sk, nl), ``WG:`` (de), ``TR:`` (fr),
``RV:`` (es), ``I:`` (it), ``Doorst:`` (nl), ``PD:`` (pl), ``ENC:`` (pt)."""

DATE_LABELS = frozenset(
    {
        "date", "sent", "datum", "odesláno", "odoslané", "dátum", "gesendet", "envoyé",
        "fecha", "enviado", "enviado el", "enviada em", "data", "inviato", "verzonden",
        "wysłano", "wysłane",
    }
)  # fmt: skip
SUBJECT_LABELS = frozenset(
    {
        "subject", "předmět", "predmet", "betreff", "objet", "asunto", "oggetto",
        "onderwerp", "temat", "assunto",
    }
)  # fmt: skip
TO_LABELS = frozenset({"to", "komu", "an", "à", "a", "para", "aan", "do"})
"""Field labels of a forwarded header block (lowercased), in en, cs, sk, de, fr, es, it, nl,
pl, pt: Gmail's, Outlook's and Apple Mail's wording."""

MAX_FIELDS = 12
"""Lines a header block may have (From, Sent, To, Cc, Subject, Reply-To, Importance...)."""

_QUOTE = re.compile(r"^[ \t\u00a0]*((?:>[ \t]?)*)")
_FIELD = re.compile(
    r"^\*{0,2}(?P<label>[^\W\d_][^\W\d_ .'\u2019-]*(?:[ .'\u2019-][^\W\d_]+){0,3})\*{0,2}"
    r"[ \t\u00a0]*[:\uff1a]\*{0,2}[ \t\u00a0]*(?P<value>.*?)\s*$"
)
_RULE = re.compile(r"^_{8,}$")
_TIME_OR_YEAR = re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b(?:19|20)\d{2}\b")
_ANGLED = re.compile(r"<\s*([^<>\s]+@[^<>\s]+?)\s*>")
_MAILTO = re.compile(r"<mailto:[^<>\s]+>|\[mailto:([^\[\]\s]+)\]", re.IGNORECASE)


@dataclass(frozen=True)
class Forward:
    """A forwarded message, as its forward shows it.

    Attributes:
        sender: who wrote it (name and address): the first field of the block.
        date: its date as written (``Mon, 3 Mar 2026 at 10:15``), or empty.
        subject: its subject, or empty.
        to: the addresses it was sent to, as written (the ``To`` field).
        text: its text (the lines after the block, unquoted), or empty when only the
            headers are known (an attached message, whose text the body carries).
        layout: ``block`` (a header block in the text) or ``attached`` (message/rfc822).
        note: what the forwarder wrote above the block (their cover lines), or empty.
    """

    sender: Address
    date: str = ""
    subject: str = ""
    to: tuple[str, ...] = ()
    text: str = ""
    layout: str = "block"
    note: str = ""


def read_forward(text: str, subject: str = "", reply: bool = False) -> Forward | None:
    """The first forwarded message in ``text``, or None when there is none it can read.

    Args:
        text: a body as plain text (HTML already turned to text).
        subject: the email's subject (its forward prefix tells an Outlook forward from a
            reply's quoted original).
        reply: whether the email answers an earlier one (``In-Reply-To``, ``Re:``): a
            header block under a generic intro is then the quoted original.
    """
    lines = text.splitlines()
    forwarded_subject = bool(FORWARD_SUBJECT.match(subject))
    index = 0
    while index < len(lines):
        block = _block_at(lines, index)
        if block is None:
            index += 1
            continue
        fields, end, depth = block
        intro, top = _intro(lines, index, depth)
        named = intro is not None and intro in FORWARD_INTROS
        if forwarded_subject or (named and depth == 0) or (intro is not None and not reply):
            found = _forward(fields, lines[end:], depth)
            if found is not None:
                return replace(found, note="\n".join(lines[:top]).strip())
        index = end
    return None


def forward_of(email: Email) -> Forward | None:
    """The first message ``email`` forwards: an attached one, else a block of its text
    (``body_text``: the HTML's text when the mail has no plain part, :mod:`.walk`)."""
    for attached in email.forwarded[:1]:
        sender = _one_address(attached.sender)
        if sender is not None:
            name, address = sender
            return Forward(
                sender=Address(address=address, name=name),
                date=attached.date,
                subject=attached.subject,
                to=tuple(a for _, a in getaddresses([attached.to]) if address_key_or_none(a)),
                layout="attached",
            )
    return read_forward(email.body_text, email.subject, email.is_reply)


AUTO_FORWARD_HEADERS = ("x-forwarded-for", "x-forwarded-to")
"""The headers Gmail's auto-forwarding adds at each hop: ``X-Forwarded-For: forwarder
destination`` and ``X-Forwarded-To: destination``."""

_TOKENS = re.compile(r"[\s,;]+")


def auto_forwarded_by(email: Email, address: str, mailbox: str | None = None) -> str | None:
    """The auto-forwarding header naming ``address`` on ``email``'s way, or None.

    Any address ``X-Forwarded-For`` / ``X-Forwarded-To`` name but the mailbox the mail was
    delivered to (``mailbox``, else ``email.mailbox``) forwarded it. The sender of such a
    mail is its writer. Whoever sent the mail wrote these headers: they route, never vouch.
    """
    delivered = (mailbox or email.mailbox or "").strip()
    for header in AUTO_FORWARD_HEADERS:
        for token in _TOKENS.split(email.header(header)):
            if not same_address(token, delivered) and same_address(token, address):
                return header
    return None


def writer_of(email: Email) -> Address | None:
    """Who wrote the message ``email`` forwards (:func:`forward_of`), or None."""
    found = forward_of(email)
    return found.sender if found is not None else None


def _unquoted(line: str) -> tuple[int, str]:
    """``(quote depth, the line without its quote marks and indentation)``."""
    prefix = _QUOTE.match(line)
    marks = prefix.group(1) if prefix else ""
    return marks.count(">"), line[prefix.end() if prefix else 0 :].strip()


def _block_at(lines: list[str], start: int) -> tuple[list[tuple[str, str]], int, int] | None:
    """The header block starting at ``lines[start]``: its ``(label, value)`` fields, the index
    after it and its quote depth; None when none starts there."""
    depth, first = _unquoted(lines[start])
    head = _FIELD.match(first)
    if head is None or _one_address(head.group("value")) is None:
        return None
    fields = [(_label(head.group("label")), head.group("value"))]
    end = start + 1
    while end < len(lines) and len(fields) < MAX_FIELDS:
        line_depth, line = _unquoted(lines[end])
        field = _FIELD.match(line) if line_depth == depth else None
        if field is None or not field.group("value"):
            break
        fields.append((_label(field.group("label")), field.group("value")))
        end += 1
    if len(fields) < 3 or not any(
        label in DATE_LABELS or _TIME_OR_YEAR.search(value) for label, value in fields[1:]
    ):
        return None
    return fields, end, depth


def _intro(lines: list[str], start: int, depth: int) -> tuple[str | None, int]:
    """The intro line above a block (blank lines skipped), lowercased and without its dashes
    and colon (``""`` for an underscore rule; None when there is none), and the index of the
    first line of the forward (the intro's, else the block's): what is above is the note."""
    index = start - 1
    while index >= 0 and not _unquoted(lines[index])[1]:
        index -= 1
    if index < 0:
        return None, start
    line_depth, line = _unquoted(lines[index])
    if line_depth > depth:
        return None, start
    if _RULE.match(line):
        return "", index
    if line.startswith("--") and line.endswith("--") and line.strip("-").strip():
        return " ".join(line.strip("-").split()).lower(), index  # no regex: linear on any line
    if line.endswith((":", "\uff1a")) and len(line) <= 80:
        return " ".join(line.rstrip(":\uff1a").split()).lower(), index
    return None, start


def _forward(fields: list[tuple[str, str]], rest: list[str], depth: int) -> Forward | None:
    found = _one_address(fields[0][1])
    if found is None:
        return None
    name, address = found
    by_label: dict[str, str] = {}
    for label, value in fields[1:]:
        for kind, labels in (("date", DATE_LABELS), ("subject", SUBJECT_LABELS), ("to", TO_LABELS)):
            if label in labels and kind not in by_label:
                by_label[kind] = value
    to = tuple(
        a
        for _, a in getaddresses([_without_mailto(by_label.get("to", ""))])
        if address_key_or_none(a)
    )
    body: list[str] = []
    for line in rest:
        line_depth, content = _unquoted(line)
        body.append(content if line_depth >= depth else line.strip())
    try:
        sender = Address(address=address, name=name)
    except ValueError:
        return None
    return Forward(
        sender=sender,
        date=by_label.get("date", ""),
        subject=by_label.get("subject", "").strip("*").strip(),
        to=to,
        text="\n".join(body).strip(),
    )


def _label(label: str) -> str:
    return " ".join(label.split()).lower()


def _without_mailto(value: str) -> str:
    """Outlook's ``a@b.c<mailto:a@b.c>`` and ``Name [mailto:a@b.c]`` as plain addresses."""
    return _MAILTO.sub(lambda m: f" <{m.group(1)}>" if m.group(1) else "", value)


def _one_address(value: str) -> tuple[str, str] | None:
    """``(name, address)`` when ``value`` holds exactly one address (email.utils), else None."""
    cleaned = _without_mailto(value)
    if cleaned.count("@") != 1:
        return None
    found = [(n, a) for n, a in getaddresses([cleaned]) if a]
    angled = _ANGLED.search(cleaned)
    if len(found) != 1 and angled is not None:  # "Novák, Jan <jan@x.cz>": a comma in the name
        found = [(cleaned[: angled.start()], angled.group(1))]
    if len(found) != 1:
        return None
    name, address = found[0]
    address = address.strip()
    if address_key_or_none(address) is None:
        return None
    name = name.replace("*", "").strip().strip('"').strip()
    if not name:  # "Jan Novák < jan@x.cz >": getaddresses keeps the name only before "<"
        before = cleaned.partition("<")[0] if "<" in cleaned else ""
        name = before.replace("*", "").strip().strip('"').strip()
    return name, address


__all__ = [
    "DATE_LABELS",
    "FORWARD_INTROS",
    "FORWARD_SUBJECT",
    "SUBJECT_LABELS",
    "TO_LABELS",
    "Forward",
    "forward_of",
    "read_forward",
    "writer_of",
]
