"""Which language an email is written in (``py3langid``, offline): the support desk's
translator and the safety screen (:mod:`.screen`) ask it.

Detection is local and deterministic: a naive Bayes model over byte n-grams
(langid.py's, 97 languages), 0.05-0.4 ms an email once loaded (langdetect, used before,
took 3-11 ms and drew random trials). The model loads on the first call (about a second),
never at import: a deployment on Gemini never calls it. Text counts as English when
English has at least ``ENGLISH_FLOOR`` of the probability: short English lines often
score close to another Latin-script language, and reading English as foreign would only
cost a needless translation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import Lazy

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

ENGLISH_FLOOR = 0.3
READ_CHARS = 500
"""Characters of the text read (its start): the model's time grows with the text (about
1.5 ms for a 2 KB body), and a language shows in its first lines."""
UNKNOWN = "und"
"""BCP 47's "undetermined": no letters to judge by."""


def _identifier() -> LanguageIdentifier:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


_IDENTIFIER: Lazy[LanguageIdentifier] = Lazy(_identifier)


def detect_language(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language (``en``, ``es``, ``th``...), or ``und``."""
    if not any(char.isalpha() for char in text):
        return UNKNOWN
    ranked = _IDENTIFIER.get().rank(text[:READ_CHARS])
    if any(language == "en" and probability >= ENGLISH_FLOOR for language, probability in ranked):
        return "en"
    return str(ranked[0][0]) if ranked else UNKNOWN
