"""What an email says, read by rules over the cue lists of :mod:`.cues`: a thank-you, a
request, a meeting request, a request for money, a sales pitch.

Text is folded (lower case, no diacritics, one character for one) and only the sender's
new text is read: quoted history and the "On ... wrote:" line are left out.
"""

from __future__ import annotations

import re
from functools import cache

from ...mail import strip_quoted
from ..cue_matching import fold_one_for_one
from .cues import (
    COLD_PITCH,
    HOUR_WORDS,
    MEETING_ASKS,
    MEETING_WORDS,
    MINUTE_WORDS,
    MONEY_ASKS,
    NAMED_LENGTHS,
    REQUESTS,
    THANKS,
    Cues,
)

QUESTION = re.compile(r"[?\uff1f]")
SENTENCE = re.compile(r"(?<=[.!?\uff1f\u3002\uff01])\s*|\n+")


def fold(text: str) -> str:
    """``text`` lower-cased without diacritics, one character for one (``Děkuji`` -> ``dekuji``),
    a typographic apostrophe read as ``'``."""
    return fold_one_for_one(text).replace("\u2019", "'")


@cache
def cue_pattern(cues: tuple[tuple[str, tuple[str, ...]], ...]) -> re.Pattern[str]:
    """One pattern for every cue of every language (Latin ones at a word start)."""
    words = sorted({fold(cue) for _, phrases in cues for cue in phrases}, key=len, reverse=True)
    latin = [re.escape(w).replace("\\ ", r"\s+") for w in words if w.isascii()]
    other = [re.escape(w) for w in words if not w.isascii()]
    return re.compile("|".join([rf"(?<![a-z0-9])(?:{'|'.join(latin)})", *other]))


def find(cues: Cues, text: str) -> str | None:
    """The first cue of ``cues`` in ``text`` (folded), as found, or None."""
    found = cue_pattern(tuple(sorted(cues.items()))).search(fold(text))
    return found.group(0) if found else None


def new_text(subject: str, body: str) -> str:
    """The subject and the body without what it quotes."""
    return f"{subject}\n{strip_quoted(body) or body}"


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (Latin and Japanese punctuation, line breaks)."""
    return [part.strip() for part in SENTENCE.split(text) if part and part.strip()]


def asks(text: str) -> str | None:
    """What in ``text`` asks something of the reader (a question mark, a request), or None."""
    if QUESTION.search(text):
        return "?"
    return find(REQUESTS, text)


def thanks_only(text: str) -> str | None:
    """The thank-you cue when ``text`` thanks and asks nothing, else None."""
    cue = find(THANKS, text)
    if cue is None or asks(text) is not None:
        return None
    return cue


@cache
def _length() -> re.Pattern[str]:
    """A length: a number and a unit (``45 minutes``, ``1,5 h``, ``30分``) or one in words."""
    units = sorted({fold(w) for w in (*MINUTE_WORDS, *HOUR_WORDS)}, key=len, reverse=True)
    named = cue_pattern(tuple(sorted((str(m), w) for m, w in NAMED_LENGTHS.items())))
    unit = "|".join(re.escape(u) + ("(?![a-z])" if u.isascii() else "") for u in units)
    return re.compile(rf"\d+(?:[.,]\d+)?\s*-?\s*(?:{unit})|{named.pattern}")


def meeting_request(text: str) -> str | None:
    """The sentence of ``text`` asking for a meeting (naming one and proposing it), or None.

    "Could we meet on Thursday?" asks for one; "What time does the board meeting start?"
    asks about one that exists.
    """
    for sentence in sentences(text):
        asked = find(MEETING_ASKS, sentence) or _length().search(fold(sentence))
        if asked and find(MEETING_WORDS, sentence):
            return sentence
    return None


def money_request(text: str) -> str | None:
    """The cue of a request for money, gift cards or bank details in ``text``, or None."""
    return find(MONEY_ASKS, text)


def cold_pitch(text: str) -> str | None:
    """The cue of an unsolicited sales pitch in ``text``, or None."""
    return find(COLD_PITCH, text)
