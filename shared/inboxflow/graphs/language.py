"""Which language an email is written in (``py3langid``, offline): the support desk's
translator and the safety screen (:mod:`.screen`) ask it.

Detection is local and deterministic: a naive Bayes model over byte n-grams
(langid.py's, 97 languages). The model loads on the first call (about a second),
never at import: a deployment on Gemini never calls it. Text counts as English when
English has at least ``ENGLISH_FLOOR`` of the probability: short English lines often
score close to another Latin-script language, and reading English as foreign would only
cost a needless translation.

The model is scored here by :class:`_Scores`, py3langid's own arithmetic on its own
arrays, with its two slow steps done in numpy (the byte automaton's walk and the ranking
of the 97 languages, where only English's share and the best language are read): the
same probabilities bit for bit (tests compare them with ``LanguageIdentifier.rank``),
in 0.6-0.7 of the time (the bench's emails: 0.42-0.57 -> 0.26-0.33 ms on a loaded machine;
what is left is mostly the model's one matrix product, the same call as py3langid's).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING

from ..lazy import Lazy

if TYPE_CHECKING:
    import numpy as np
    from py3langid.langid import LanguageIdentifier

ENGLISH_FLOOR = 0.3
READ_CHARS = 500
"""Characters of the text read (its start): the model's time grows with the text (about
1.5 ms for a 2 KB body), and a language shows in its first lines."""
UNKNOWN = "und"
"""BCP 47's "undetermined": no letters to judge by."""

AUTOMATON_DEPTH = 6
"""The longest byte n-gram the model's automaton tracks (its states' greatest depth; a
test reads it off the model): the state after any byte depends only on the bytes up to
this many back, which lets every position's state be found at once."""


class _Scores:
    """py3langid's ``LanguageIdentifier._decide`` with ``norm_probs`` (its per-language
    probabilities), computed from the identifier's arrays with numpy.

    The automaton (an Aho-Corasick machine over the model's byte n-grams) is walked for
    every position at once: ``AUTOMATON_DEPTH`` vector steps from the start state over the
    preceding bytes instead of a Python step per byte. The features are counted in the
    order they first occur, as ``Counter`` counts them there, so the sums add in the same
    order and give the same float32 bits.
    """

    def __init__(self, identifier: LanguageIdentifier) -> None:
        import numpy as np

        self._np = np
        self._identifier = identifier
        self._moves = np.asarray(identifier.tk_nextmove, dtype=np.intp)
        self._rows = np.asarray(identifier._rowbase, dtype=np.intp)
        self._output = np.asarray(identifier.tk_output, dtype=np.intp)
        self._alias_pairs = list(identifier._alias_pairs)
        self.classes: list[str] = list(identifier.nb_classes)
        self.english = self.classes.index("en")

    def features(self, data: bytes) -> np.ndarray:
        """The model's feature at every byte of ``data`` that ends one, in text order."""
        np = self._np
        symbols = np.frombuffer(data, dtype=np.uint8).astype(np.intp)
        count = len(symbols)
        states = np.zeros(count, dtype=np.intp)
        for back in range(min(AUTOMATON_DEPTH, count) - 1, -1, -1):
            states[back:] = self._moves[self._rows[states[back:]] + symbols[: count - back]]
        found = self._output[states]
        return found[found >= 0]  # type: ignore[no-any-return]

    def probabilities(self, text: str) -> np.ndarray:
        """Each class's probability for ``text``, as ``LanguageIdentifier._decide`` gives it."""
        np, identifier = self._np, self._identifier
        data = identifier._encode(text)
        counts = Counter(self.features(data).tolist())
        if counts:
            index = np.fromiter(counts.keys(), dtype=np.intp, count=len(counts))
            counted = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
            scores = np.log1p(counted) @ identifier.nb_ptc[index] + identifier.nb_pc
        else:
            scores = np.full(len(self.classes), 0.0, dtype=np.float32)
        scores *= 1.0 / math.sqrt(len(data) or 1)
        np.exp(scores - scores.max(), out=scores)
        scores /= scores.sum()
        for first, alias in self._alias_pairs:
            scores[first] += scores[alias]
            scores[alias] = 0.0
        return scores  # type: ignore[no-any-return]

    def language(self, text: str) -> str:
        """English when it has ``ENGLISH_FLOOR`` of the probability, else the likeliest
        language (the first class of the greatest score, as ``rank``'s stable sort puts it)."""
        scores = self.probabilities(text)
        if float(scores[self.english]) >= ENGLISH_FLOOR:
            return "en"
        return self.classes[int(scores.argmax())]


def _identifier() -> LanguageIdentifier:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _scores() -> _Scores | None:
    """The fast scoring, or None where this py3langid keeps its model otherwise (its arrays
    are not public: then ``rank`` answers, slower and the same)."""
    try:
        return _Scores(_IDENTIFIER.get())
    except (AttributeError, TypeError, ValueError):
        return None


_IDENTIFIER: Lazy[LanguageIdentifier] = Lazy(_identifier)
_SCORES: Lazy[_Scores | None] = Lazy(_scores)


def detect_language(text: str) -> str:
    """The ISO 639-1 code of ``text``'s language (``en``, ``es``, ``th``...), or ``und``."""
    if not any(char.isalpha() for char in text):
        return UNKNOWN
    scores = _SCORES.get()
    if scores is None:
        return by_rank(text)
    return scores.language(text[:READ_CHARS])


def by_rank(text: str) -> str:
    """:func:`detect_language` through py3langid's own ``LanguageIdentifier.rank``."""
    if not any(char.isalpha() for char in text):
        return UNKNOWN
    ranked = _IDENTIFIER.get().rank(text[:READ_CHARS])
    if any(code == "en" and probability >= ENGLISH_FLOOR for code, probability in ranked):
        return "en"
    return str(ranked[0][0]) if ranked else UNKNOWN
