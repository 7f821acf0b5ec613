"""The walk over a message's MIME tree: body text, HTML, attachments, forwards, invitations.

It follows what mail clients display:

- ``multipart/alternative``: the ``text/plain`` child gives ``body_text``
  (when it has text), the richest HTML child gives ``body_html`` (and the text
  when there is no plain part); ``text/calendar`` children become the
  invitation metadata.
- ``multipart/related``: the root part is the body, the rest are inline
  resources (attachment metadata with ``inline=True`` and their Content-ID).
- ``multipart/mixed`` (and unknown multiparts): inline text parts are body
  text in order, everything else is attachment metadata.
- ``multipart/signed``, ``multipart/report``: the first part(s) are the body;
  signatures and machine-readable reports are attachment metadata.
- ``message/rfc822``: a forwarded message; its text is added to the body
  between marker lines, its headers summarised in ``Email.forwarded``.

Bounded: at most ``MAX_PARTS`` parts, ``MAX_DEPTH`` levels, ``MAX_ATTACHMENTS``
attachments and ``MAX_FORWARDED`` forwarded messages; the rest is reported in
the warnings.
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass, field
from email.message import Message
from typing import Any

from .calendar_parts import parse_calendar
from .charsets import clean_text, decode_bytes
from .headers import (
    ParseWarnings,
    decode_header_words,
    header_str,
    one_line,
    raw_header_value,
    strip_angle,
)
from .model import Attachment, CalendarInvite, ForwardedMessage

MAX_ATTACHMENTS = 200
MAX_PARTS = 1_000
MAX_DEPTH = 12
MAX_FORWARDED = 20

FORWARD_START = "---------- Forwarded message ----------"
FORWARD_END = "---------- End of forwarded message ----------"

HTML_CUT_MARKER = (
    "\n\n[... HTML body of {total} characters: text shown from the first {shown} only; "
    "the full message stays in the mailbox ...]"
)


@dataclass
class MimeWalk:
    """What the walk collected so far; ``visit`` the root part, then read the fields."""

    warnings: ParseWarnings
    texts: list[str] = field(default_factory=list)
    htmls: list[str] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    forwarded: list[ForwardedMessage] = field(default_factory=list)
    calendar: CalendarInvite | None = None
    parts_seen: int = 0
    html_cut: bool = False

    def visit(self, part: Message, path: str, depth: int, want_text: bool, want_html: bool) -> None:
        self.parts_seen += 1
        if self.parts_seen > MAX_PARTS:
            self.warnings.add(f"more than {MAX_PARTS} MIME parts: the rest ignored")
            return
        if depth > MAX_DEPTH:
            self.warnings.add(f"MIME parts nested deeper than {MAX_DEPTH}: ignored")
            return
        for defect in part.defects if depth else ():
            self.warnings.add(f"MIME part {path or 'root'}: {describe_defect(defect)}")
        if part.get_content_type() == "message/rfc822":  # is_multipart() is true for it too
            self._forwarded(part, path, depth, want_text)
        elif part.is_multipart():
            self._multipart(part, path, depth, want_text, want_html)
        else:
            self.visit_leaf(part, path, want_text, want_html)

    def _multipart(
        self, part: Message, path: str, depth: int, want_text: bool, want_html: bool
    ) -> None:
        children = [c for c in part.get_payload() if isinstance(c, Message)]
        subtype = part.get_content_subtype()
        paths = [f"{path}.{i}" if path else str(i) for i in range(len(children))]
        if not children:
            self.warnings.add(f"empty multipart/{subtype} at part {path or 'root'}")
            preamble = part.preamble or ""
            if want_text and preamble.strip():
                self.texts.append(clean_text(preamble))
            return
        if subtype == "alternative":
            self._alternative(children, paths, depth, want_text, want_html)
        elif subtype == "related":
            root = _related_root(part, children)
            for child, child_path in zip(children, paths, strict=True):
                if child is root:
                    self.visit(child, child_path, depth + 1, want_text, want_html)
                else:
                    self._attachment(child, child_path, inline=True)
        elif subtype in ("signed", "encrypted"):
            if subtype == "encrypted":
                self.warnings.add("encrypted message: its content cannot be read")
            first, rest = children[0], children[1:]
            if subtype == "signed":
                self.visit(first, paths[0], depth + 1, want_text, want_html)
            else:
                self._attachment(first, paths[0], inline=False)
            for child, child_path in zip(rest, paths[1:], strict=True):
                self._attachment(child, child_path, inline=False)
        elif subtype == "report":
            for index, (child, child_path) in enumerate(zip(children, paths, strict=True)):
                if index == 0 or child.get_content_type() == "text/plain":
                    self.visit(child, child_path, depth + 1, want_text, want_html)
                else:
                    self._attachment(child, child_path, inline=False)
        else:  # mixed, digest, parallel and unknown subtypes
            for child, child_path in zip(children, paths, strict=True):
                self.visit(child, child_path, depth + 1, want_text, want_html)

    def _alternative(
        self,
        children: list[Message],
        paths: list[str],
        depth: int,
        want_text: bool,
        want_html: bool,
    ) -> None:
        plain_index: int | None = None
        rich_index: int | None = None
        for index, child in enumerate(children):
            ctype = child.get_content_type()
            if ctype == "text/calendar":
                self._calendar(child, paths[index], want_text, as_attachment=False)
            elif ctype == "text/plain" and plain_index is None and _decode_text(child)[0].strip():
                plain_index = index
            elif ctype == "text/html" or child.is_multipart():
                rich_index = index  # the last rich alternative is the preferred one (RFC 2046)
        if plain_index is None and rich_index is None:
            for child, child_path in zip(children, paths, strict=True):
                if child.get_content_type() != "text/calendar":
                    self.visit(child, child_path, depth + 1, want_text, want_html)
                    return
            return
        if plain_index is not None:
            self.visit(children[plain_index], paths[plain_index], depth + 1, want_text, False)
        if rich_index is not None:
            text_from_rich = want_text and plain_index is None
            self.visit(
                children[rich_index], paths[rich_index], depth + 1, text_from_rich, want_html
            )

    def visit_leaf(
        self,
        part: Message,
        path: str,
        want_text: bool,
        want_html: bool,
        force_text: bool = False,
    ) -> None:
        ctype = part.get_content_type()
        if ctype == "text/calendar":
            self._calendar(part, path, want_text, as_attachment=_is_attachment(part))
            return
        if ctype in ("text/plain", "text/html") and (force_text or not _is_attachment(part)):
            text, warning = _decode_text(part)
            if warning:
                self.warnings.add(f"part {path or 'root'}: {warning}")
            if ctype == "text/html":
                if want_html:
                    self.htmls.append(text)
                if want_text:
                    from .html_text import HTML_INPUT_LIMIT, html_to_text

                    converted = html_to_text(text)
                    if len(text) > HTML_INPUT_LIMIT:
                        self.html_cut = True
                        self.warnings.add(
                            f"HTML body of {len(text)} characters: only the first "
                            f"{HTML_INPUT_LIMIT} converted to text"
                        )
                        converted += HTML_CUT_MARKER.format(total=len(text), shown=HTML_INPUT_LIMIT)
                    self.texts.append(converted)
            elif want_text:
                if _param(part, "format").lower() == "flowed":
                    text = unflow(text, delsp=_param(part, "delsp").lower() == "yes")
                self.texts.append(text)
            return
        if force_text:  # a broken multipart: whatever is there is the body
            text, _ = _decode_text(part)
            if want_text:
                self.texts.append(text)
            return
        self._attachment(part, path, inline=part.get_content_disposition() == "inline")

    def _attachment(self, part: Message, path: str, inline: bool) -> None:
        if len(self.attachments) >= MAX_ATTACHMENTS:
            self.warnings.add(f"more than {MAX_ATTACHMENTS} attachments: the rest not listed")
            return
        content_type = clean_text(part.get_content_type())[:200]
        filename = _filename(part, self.warnings)
        if not filename and content_type == "message/rfc822":
            nested = _nested_message(part)
            subject = one_line(str(nested.get("subject", ""))) if nested is not None else ""
            filename = f"{subject[:100] or 'message'}.eml"
        self.attachments.append(
            Attachment(
                filename=filename,
                content_type=content_type,
                size=_payload_size(part),
                content_id=strip_angle(header_str(part, "content-id")) or None,
                part_id=path or None,
                inline=inline,
            )
        )

    def _forwarded(self, part: Message, path: str, depth: int, want_text: bool) -> None:
        self._attachment(part, path, inline=False)
        nested = _nested_message(part)
        if nested is None:
            self.warnings.add(f"part {path}: forwarded message could not be read")
            return
        if len(self.forwarded) >= MAX_FORWARDED:
            self.warnings.add(f"more than {MAX_FORWARDED} forwarded messages: the rest skipped")
            return
        summary = {
            "sender": one_line(header_str(nested, "from"))[:500],
            "to": one_line(header_str(nested, "to"))[:500],
            "subject": one_line(header_str(nested, "subject"))[:500],
            "date": one_line(header_str(nested, "date"))[:100],
            "message_id": strip_angle(header_str(nested, "message-id"))[:500] or None,
            "part_id": path or None,
        }
        self.forwarded.append(ForwardedMessage.model_validate(summary))
        inner = MimeWalk(warnings=self.warnings, parts_seen=self.parts_seen)
        nested_path = f"{path}.0" if path else "0"
        if nested.is_multipart():
            inner.visit(nested, path, depth + 1, want_text=want_text, want_html=False)
        else:
            inner.visit_leaf(nested, nested_path, want_text=want_text, want_html=False)
        self.parts_seen = inner.parts_seen
        self.html_cut = self.html_cut or inner.html_cut
        self.attachments.extend(
            inner.attachments[: max(0, MAX_ATTACHMENTS - len(self.attachments))]
        )
        self.forwarded.extend(inner.forwarded)
        if self.calendar is None:
            self.calendar = inner.calendar
        if want_text:
            head = [
                f"{label}: {summary[key]}"
                for label, key in (("From", "sender"), ("Date", "date"), ("Subject", "subject"))
                if summary[key]
            ]
            if summary["to"]:
                head.append(f"To: {summary['to']}")
            inner_text = "\n\n".join(t.strip("\n") for t in inner.texts if t.strip())
            self.texts.append("\n".join([FORWARD_START, *head, "", inner_text, FORWARD_END]))

    def _calendar(self, part: Message, path: str, want_text: bool, as_attachment: bool) -> None:
        text, _ = _decode_text(part)
        invite = parse_calendar(text, method=_param(part, "method"))
        if invite is not None:
            if self.calendar is None:
                self.calendar = invite
                if want_text:
                    self.texts.append(invite.readable())
        else:
            self.warnings.add(f"part {path or 'root'}: calendar data without a readable event")
        if as_attachment:
            self._attachment(part, path, inline=False)


# --- parts ------------------------------------------------------------------------------


def _is_attachment(part: Message) -> bool:
    disposition = part.get_content_disposition()
    if disposition == "attachment":
        return True
    return disposition is None and bool(_safe_filename(part))


def _related_root(part: Message, children: list[Message]) -> Message:
    start = strip_angle(_param(part, "start"))
    if start:
        for child in children:
            if strip_angle(header_str(child, "content-id")) == start:
                return child
    return children[0]


def _nested_message(part: Message) -> Message | None:
    payload = part.get_payload()
    if isinstance(payload, list) and payload and isinstance(payload[0], Message):
        return payload[0]
    if isinstance(payload, Message):
        return payload
    return None


def _payload_size(part: Message) -> int:
    try:
        if part.is_multipart() or part.get_content_type() == "message/rfc822":
            nested = _nested_message(part) if not part.is_multipart() else part
            return len(nested.as_bytes()) if nested is not None else 0
        payload = part.get_payload(decode=True)
    except Exception:  # sizes are informative; a broken part must not stop the parse
        return 0
    return len(payload) if isinstance(payload, bytes) else 0


def _safe_filename(part: Message) -> str:
    try:
        return part.get_filename() or ""
    except Exception:  # malformed RFC 2231 parameters
        return ""


def _filename(part: Message, warnings: ParseWarnings) -> str:
    try:
        name = part.get_filename() or ""
    except Exception as exc:
        warnings.add(f"unreadable attachment file name ({type(exc).__name__})")
        return ""
    name = clean_text(str(name))
    if "\ufffd" in name:  # raw 8-bit in the parameter: read it from the undecoded header
        name = _filename_from_raw_headers(part) or name
    if "=?" in name:  # Outlook puts RFC 2047 words inside (RFC 2231-less) name= parameters
        name = decode_header_words(name)[0]
    return one_line(name)[:255]


def _filename_from_raw_headers(part: Message) -> str:
    probe = Message()
    for key, value in part.raw_items():
        if key.lower() in ("content-type", "content-disposition"):
            probe[key] = raw_header_value(key.lower(), str(value), ParseWarnings())
    try:
        return str(probe.get_filename() or "")
    except Exception:  # malformed parameters
        return ""


def _param(part: Message, name: str) -> str:
    try:
        value = part.get_param(name, header="content-type")
    except Exception:  # malformed parameters
        return ""
    if isinstance(value, tuple):
        value = email.utils.collapse_rfc2231_value(value)
    return str(value) if value else ""


def _decode_text(part: Message) -> tuple[str, str | None]:
    """The part's text and, if its charset was wrong or unknown, a warning."""
    try:
        payload = part.get_payload(decode=True)
    except Exception as exc:  # broken transfer encoding
        payload = None
        fallback = part.get_payload()
        if isinstance(fallback, str):
            return clean_text(fallback), f"undecodable transfer encoding ({type(exc).__name__})"
    if not isinstance(payload, bytes):
        return "", None
    label = (part.get_content_charset() or "").strip().strip("\"'").lower()
    return decode_bytes(payload, label)


def unflow(text: str, delsp: bool = False) -> str:
    """Undo RFC 3676 ``format=flowed``: soft-broken lines joined, space-stuffing removed.

    Args:
        text: the decoded ``text/plain`` body.
        delsp: the ``DelSp=yes`` parameter (the soft-break space is not content).

    Returns:
        The text with one line per paragraph (quote depth kept).
    """
    out: list[str] = []
    buffer: str | None = None
    buffer_depth = 0

    def flush() -> None:
        nonlocal buffer
        if buffer is not None:
            out.append((">" * buffer_depth + " " if buffer_depth else "") + buffer)
            buffer = None

    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]
        if content == "-- ":  # the signature separator is never a soft break
            flush()
            out.append((">" * depth + " " if depth else "") + content)
            continue
        flowed = content.endswith(" ")
        if flowed and delsp:
            content = content[:-1]
        if buffer is not None and depth == buffer_depth:
            buffer += content
        else:
            flush()
            buffer, buffer_depth = content, depth
        if not flowed:
            flush()
    flush()
    return "\n".join(out)


def describe_defect(defect: Any) -> str:
    """A stdlib ``MessageDefect`` in words (``MissingHeaderBodySeparatorDefect`` -> "missing header body separator")."""
    name = type(defect).__name__.removesuffix("Defect")
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()
    detail = str(defect).strip()
    return f"{words}: {detail}" if detail and detail != name else words


__all__ = [
    "FORWARD_END",
    "FORWARD_START",
    "MAX_ATTACHMENTS",
    "MAX_DEPTH",
    "MAX_FORWARDED",
    "MAX_PARTS",
    "MimeWalk",
    "describe_defect",
    "unflow",
]
