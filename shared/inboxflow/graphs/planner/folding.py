"""The planner's text folding: :func:`~..cue_matching.fold_one_for_one`, and the Latin letters
Unicode does not decompose (Polish ``ł``, Danish ``ø``, ``đ``) folded too, still one character
for one, so a span of the folded text is the same span of the text as written."""

from __future__ import annotations

from ..cue_matching import fold_one_for_one

_UNDECOMPOSED = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "\u0131": "i"})


def fold(text: str) -> str:
    """``text`` lower-cased without diacritics, one character for one (``Uderzył`` -> ``uderzyl``)."""
    return fold_one_for_one(text).translate(_UNDECOMPOSED)


__all__ = ["fold"]
