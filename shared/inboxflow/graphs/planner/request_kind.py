"""Whether a customer's email asks for a quote at all: a claim or a cancellation is the
agency's, whatever the model plans (cue lists in :mod:`.labels`)."""

from __future__ import annotations

import re
from functools import cache

from .extract import fold
from .labels import NOT_A_QUOTE, QUOTE_WORDS


def _pattern(cues: dict[str, tuple[str, ...]]) -> re.Pattern[str]:
    words = sorted(
        {fold(cue) for phrases in cues.values() for cue in phrases}, key=len, reverse=True
    )
    # Latin cues are words; Japanese ones are found inside the text (no spaces between words).
    latin = [re.escape(w).replace("\\ ", r"\s+") for w in words if w.isascii()]
    other = [re.escape(w) for w in words if not w.isascii()]
    return re.compile("|".join([rf"\b(?:{'|'.join(latin)})\b", *other]))


@cache
def _not_a_quote() -> re.Pattern[str]:
    return _pattern(NOT_A_QUOTE)


@cache
def _quote() -> re.Pattern[str]:
    return _pattern(QUOTE_WORDS)


def not_a_quote(text: str) -> str | None:
    """The cue that makes ``text`` a claim or a cancellation rather than a quote request
    (``"file a claim"``), or None: a cue of a claim with a quote asked for too is a quote."""
    folded = fold(text)
    found = _not_a_quote().search(folded)
    if found is None or _quote().search(folded):
        return None
    return text[found.start() : found.end()]
