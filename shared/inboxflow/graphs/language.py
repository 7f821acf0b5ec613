"""Which language an email is written in (``langdetect``, offline): the support desk's
translator and the safety screen (:mod:`.screen`) ask it.

Detection is local and deterministic (the detector's seed is fixed). Text
counts as English when English is among the detector's candidates with at
least ``ENGLISH_FLOOR`` probability: short English lines often score close
to another Latin-script language, and reading English as foreign would only
cost a needless translation.
"""

from __future__ import annotations

from langdetect import DetectorFactory, detect_langs
from langdetect.lang_detect_exception import LangDetectException

DetectorFactory.seed = 0
ENGLISH_FLOOR = 0.3
UNKNOWN = "und"
"""BCP 47's "undetermined": no letters to judge by."""


def detect_language(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language (``en``, ``es``, ``th``...), or ``und``."""
    try:
        candidates = detect_langs(text)
    except LangDetectException:
        return UNKNOWN
    if any(c.lang == "en" and c.prob >= ENGLISH_FLOOR for c in candidates):
        return "en"
    return str(candidates[0].lang) if candidates else UNKNOWN
