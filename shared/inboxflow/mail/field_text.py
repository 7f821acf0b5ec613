"""The characters a one-line or a multi-line text field may hold: one set of rules for
what mail parsing folds (``one_line``), what a pause's payload is cleaned of before a
reviewer sees it (``clean_line``, ``clean_text``) and what a reviewer's edit is refused
for (``line_refusal``, ``text_refusal``).

A one-line field (a subject, an address) holds no line break of any kind
(``str.splitlines`` splits on U+2028, U+2029 and U+0085 too, and so do mail
libraries: Python's ``email`` refuses them in a header), no bidi control (they
reorder what a reader sees: U+202E turns ``exe.pdf`` around), no zero-width
character or soft hyphen (``sofia.marquez\\u200b@...`` looks like an address it
is not) and no other control character. A multi-line field holds newlines and
tabs; its other line separators become newlines; it holds no bidi or other
control character but the right-to-left and left-to-right marks (LRM, RLM, ALM:
Hebrew and Arabic text needs them, and they reorder no letter). Zero-width joiners
stay in multi-line text (emoji sequences, Persian and Indic scripts need them).
"""

from __future__ import annotations

import re
import unicodedata

LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
"""Every character ``str.splitlines`` splits on."""
DIRECTION_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Bidi marks, embeddings, overrides and isolates: they reorder what a reader sees."""
DIRECTION_MARKS = frozenset("\u061c\u200e\u200f")
"""ALM, LRM and RLM: kept in multi-line text, where right-to-left scripts need them."""
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
"""Zero-width space, non-joiner, joiner, word joiner, BOM and soft hyphen: invisible."""

_LINE_BREAK_RUN = re.compile(r"\s*[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]\s*")
_OTHER_BREAKS = re.compile(r"\r\n|[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def _is_control(char: str) -> bool:
    return unicodedata.category(char) == "Cc"


def one_line(text: str) -> str:
    """``text`` unfolded: every line break of any kind, with the space around it, becomes one
    space; the ends are stripped."""
    return _LINE_BREAK_RUN.sub(" ", text).strip()


def line_refusal(char: str) -> str | None:
    """Why a one-line field cannot hold ``char`` (``a line break``, ...), or None."""
    if char in LINE_BREAKS:
        return "a line break"
    if char in DIRECTION_CONTROLS:
        return "a bidi control character"
    if char in ZERO_WIDTH:
        return "an invisible character"
    if _is_control(char):
        return "a control character"
    return None


def text_refusal(char: str) -> str | None:
    """Why a multi-line field cannot hold ``char`` (after :func:`text_breaks`), or None."""
    if char in "\t\n" or char in DIRECTION_MARKS:
        return None
    if char in DIRECTION_CONTROLS:
        return "a bidi control character"
    if _is_control(char):
        return "a control character"
    return None


def text_breaks(text: str) -> str:
    """``text`` with CRLF and every other line separator (CR, U+2028, U+0085, ...) as LF."""
    return _OTHER_BREAKS.sub("\n", text)


def clean_line(text: str) -> str:
    """``text`` as a one-line field holds it: line breaks folded to a space, tabs as spaces,
    everything :func:`line_refusal` refuses removed, the ends stripped."""
    folded = one_line(text).replace("\t", " ")
    return "".join(char for char in folded if line_refusal(char) is None).strip()


def clean_text(text: str) -> str:
    """``text`` as a multi-line field holds it: line separators as LF, everything
    :func:`text_refusal` refuses removed."""
    return "".join(char for char in text_breaks(text) if text_refusal(char) is None)
