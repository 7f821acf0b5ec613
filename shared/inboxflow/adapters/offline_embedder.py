"""Offline embeddings: deterministic feature hashing, no model and no network.

A text becomes a bag of weighted features, each hashed (BLAKE2b, so the same
on every machine and every run) to one of 768 dimensions with a sign:

- word stems, minus stop words (weight 1, sub-linear in the count);
- a small concept lexicon that maps words people use interchangeably in
  customer mail (``refund``/``reimburse``/``money back``, ``price``/``cost``/
  ``quote``) to one shared feature, so paraphrases land near each other;
- word bigrams (weight 0.5), for phrases;
- character trigrams of each word (0.6 shared across them), so that
  inflections and typos still overlap.

The vector is L2-normalised, so cosine similarity is a dot product. It is
a lexical embedding: good enough to find the refunds policy for a refund
question and similar past emails, not a semantic model.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import operator
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache

import ahocorasick

from ..ports.embeddings import EMBEDDING_DIMENSIONS, Embedder, EmbeddingPurpose

WORD_WEIGHT = 1.0
CONCEPT_WEIGHT = 1.2
BIGRAM_WEIGHT = 0.5
TRIGRAMS_WEIGHT = 0.6
"""Total weight of one word's character trigrams, shared equally among them."""
_KIND_WEIGHTS = {"w": WORD_WEIGHT, "b": BIGRAM_WEIGHT, "c": CONCEPT_WEIGHT}

_WORD = re.compile(r"[a-z0-9]+")

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just let me more most my myself no nor not of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    hi hello hey dear thanks thank regards best cheers kind many please re fwd fw get got like
    know us im ive id dont wed youre ill well one two
    """.split()  # noqa: SIM905 - a word list reads better as text
)

# Words customers use interchangeably, mapped to one shared feature.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "refund": ("refund", "reimburse", "reimbursement", "money back", "repay", "chargeback"),
    "charge": ("charge", "charged", "billed", "debited", "payment", "card statement", "invoice"),
    "duplicate": ("twice", "double", "duplicate", "two times", "second time"),
    "price": ("price", "pricing", "cost", "quote", "how much", "fee", "rate", "per seat"),
    "plan": ("plan", "tier", "subscription", "edition", "license", "licence"),
    "seat": ("seat", "user", "licence seat", "account for", "viewer"),
    "discount": ("discount", "reduced", "cheaper", "reduction", "off the price"),
    "nonprofit": ("nonprofit", "non-profit", "charity", "ngo", "foundation", "school"),
    "sso": ("sso", "single sign-on", "single sign on", "saml", "okta", "azure ad", "login"),
    "security": ("security", "questionnaire", "soc", "pen test", "penetration", "vendor review"),
    "privacy": ("gdpr", "privacy", "data residency", "dpa", "retention", "personal data"),
    "export": ("export", "download", "pdf", "csv", "save as"),
    "schedule": ("schedule", "scheduled", "automatically", "every monday", "recurring", "weekly"),
    "report": ("report", "dashboard", "reporting", "chart", "numbers"),
    "broken": ("broken", "broke", "not working", "fails", "failed", "error", "bug", "crash"),
    "outage": ("outage", "is down", "went down", "unavailable", "incident", "status page", "502"),
    "release": ("release", "update", "upgrade", "new version", "deploy"),
    "meeting": ("meeting", "call", "demo", "meet", "chat", "conversation", "walkthrough"),
    "time": ("tuesday", "wednesday", "thursday", "friday", "monday", "morning", "afternoon"),
    "rollout": ("rollout", "roll out", "rolling out", "set up", "setup", "onboard", "onboarding"),
    "office": ("studio", "office", "location", "site", "branch", "clinic", "hotel", "cafe"),
    "renewal": ("renewal", "renew", "contract", "order form", "countersign", "paperwork"),
    "follow": ("following up", "follow up", "checking in", "any update", "any news", "chase"),
    "complaint": ("unacceptable", "frustrated", "disappointed", "angry", "annoyed"),
    "api": ("api", "webhook", "integration", "integrate", "connector", "endpoint"),
    "thanks": ("thank you", "grateful", "appreciate", "appreciated"),
}


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
"""One character: a pattern that is one class is scanned for in C (a run of them is not)."""


def _unless_mark(char: re.Match[str]) -> str:
    return "" if unicodedata.combining(char.group()) else char.group()


def _fold(text: str) -> str:
    """Lower case without accents (``Café Léveillé`` -> ``cafe leveille``)."""
    lowered = text.lower()
    if lowered.isascii():  # nothing to decompose
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    # Combining marks are never ASCII: only the other characters are looked at.
    return _NON_ASCII.sub(_unless_mark, decomposed)


_SEPARATORS = str.maketrans({code: " " for code in range(128) if not _WORD.fullmatch(chr(code))})
"""Every ASCII character but ``[a-z0-9]`` to a space."""


def _words(folded: str) -> list[str]:
    """``_WORD.findall(folded)``: in ASCII text the separators made spaces and split there
    (``str.translate`` copies ASCII text in C; the pattern's scan was a fifth of the
    embedding)."""
    if folded.isascii():
        return folded.translate(_SEPARATORS).split()
    return _WORD.findall(folded)


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude suffix-stripping stemmer (``refunds``/``refunded`` -> ``refund``)."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            base = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                base += "y"
            return base
    return word


def _concept_patterns() -> list[tuple[re.Pattern[str], str]]:
    """Per concept: its pattern and its name."""
    patterns = []
    for concept, phrases in CONCEPTS.items():
        folded = [_fold(p) for p in sorted(phrases, key=len, reverse=True)]
        alternatives = "|".join(re.escape(p) for p in folded)
        pattern = re.compile(rf"\b(?:{alternatives})(?:s|es|ed|ing)?\b")
        patterns.append((pattern, concept))
    return patterns


_CONCEPT_PATTERNS = _concept_patterns()


@functools.cache
def _phrases() -> ahocorasick.Automaton:
    """Every concept's phrases in one automaton, each to the concepts (by index) that list it."""
    listed: dict[str, list[int]] = {}
    for index, phrases in enumerate(CONCEPTS.values()):
        for phrase in phrases:
            listed.setdefault(_fold(phrase), []).append(index)
    automaton = ahocorasick.Automaton()
    for phrase, indexes in listed.items():
        automaton.add_word(phrase, (len(phrase), tuple(indexes)))
    automaton.make_automaton()
    return automaton


def concept_counts(folded: str) -> dict[str, int]:
    """How often each concept's pattern matches ``folded`` (``len(pattern.findall(folded))``),
    for the concepts that match at all, in the order of :data:`CONCEPTS`.

    A match starts where one of the concept's phrases does: the text is read once for every
    phrase (Aho-Corasick), and each concept's pattern is tried only at those places, left to
    right and past each match, as ``findall`` would go (instead of 26 scans trying every
    position)."""
    starts: dict[int, set[int]] = {}
    for last, (length, indexes) in _phrases().iter(folded):
        for index in indexes:
            starts.setdefault(index, set()).add(last + 1 - length)
    counts: dict[str, int] = {}
    for index in sorted(starts):
        pattern, concept = _CONCEPT_PATTERNS[index]
        found, position = 0, 0
        for start in sorted(starts[index]):
            if start < position:
                continue
            match = pattern.match(folded, start)
            if match:
                found, position = found + 1, match.end()
        if found:
            counts[concept] = found
    return counts


@functools.lru_cache(maxsize=65536)
def _kept(word: str) -> str:
    """A word's stem, or "" for a stop word or a single character."""
    return "" if word in STOP_WORDS or len(word) < 2 else stem(word)


@functools.lru_cache(maxsize=65536)
def _trigram_keys(word: str) -> tuple[str, ...]:
    """The feature names of a word's character trigrams (``#word#`` cut in threes)."""
    padded = f"#{word}#"
    return tuple(f"t:{padded[i : i + 3]}" for i in range(len(padded) - 2))


_DAMPED = tuple(1.0 + math.log(count) if count else 0.0 for count in range(64))
"""``1 + log(count)`` for the counts most words have (read from a table, the same floats)."""


def _damped(count: int) -> float:
    return _DAMPED[count] if count < 64 else 1.0 + math.log(count)


def features(text: str) -> dict[str, float]:
    """The weighted features of a text, before hashing."""
    folded = _fold(text)
    words = list(filter(None, map(_kept, _words(folded))))
    word_counts = Counter(words)  # first-seen order: the same float sums in every run
    weights = {f"w:{word}": WORD_WEIGHT * _damped(n) for word, n in word_counts.items()}
    for (first, second), n in Counter(itertools.pairwise(words)).items():
        weights[f"b:{first}_{second}"] = BIGRAM_WEIGHT * _damped(n)
    for concept, n in concept_counts(folded).items():
        weights[f"c:{concept}"] = CONCEPT_WEIGHT * _damped(n)
    for word, n in word_counts.items():
        keys = _trigram_keys(word)
        share = TRIGRAMS_WEIGHT * _damped(n) / len(keys)
        for key in keys:
            weights[key] = weights.get(key, 0.0) + share
    return weights or {"empty": 1.0}


@lru_cache(maxsize=65536)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
    return digest % dimensions, 1.0 if digest >> 63 else -1.0


SLOTS_KEPT = 65536
"""Features whose slot and sign are kept, per vector length (all dropped when full)."""

_SLOT_CODES: dict[int, dict[str, int]] = {}


def _slot_codes(features: Sequence[str], dimensions: int) -> list[int]:
    """Each feature's :func:`_slot` as one int: the slot, or its complement (``~slot``) for
    sign -1; kept ones read with one ``dict.get`` each (a cached call costs four times that)."""
    kept = _SLOT_CODES.setdefault(dimensions, {})
    codes = list(map(kept.get, features))
    if None in codes:
        if len(kept) + len(features) > SLOTS_KEPT:
            kept.clear()
        for at, code in enumerate(codes):
            if code is None:
                index, sign = _slot(features[at], dimensions)
                codes[at] = kept[features[at]] = index if sign > 0 else ~index
    return codes  # type: ignore[return-value]


def hashed(weights: Collection[tuple[str, float]], dimensions: int) -> list[float]:
    """Signed feature hashing into ``dimensions`` slots, L2-normalised.

    The signed weights are summed into their slots in the order given (``numpy.bincount``
    adds them one by one in that order, as a Python loop of ``vector[slot] += weight`` does:
    the same float64 bits, tests compare them with :func:`hashed_by_loop`)."""
    import numpy as np  # not at import: a deployment on Gemini never embeds offline

    if not weights:
        return [0.0] * dimensions
    features, values = zip(*weights, strict=True)
    codes = np.array(_slot_codes(features, dimensions), dtype=np.intp)
    negative = codes < 0
    signed = np.array(values, dtype=np.float64)
    np.negative(signed, out=signed, where=negative)  # the sign's -1.0 * weight, exactly
    vector = np.bincount(np.where(negative, ~codes, codes), weights=signed, minlength=dimensions)
    # fsum is exactly rounded: the zero slots add nothing (so only the others are summed).
    used = vector[vector != 0.0]
    norm = math.sqrt(math.fsum((used * used).tolist()))
    return (vector / norm).tolist() if norm > 0 else vector.tolist()  # type: ignore[no-any-return]


def hashed_by_loop(weights: Iterable[tuple[str, float]], dimensions: int) -> list[float]:
    """:func:`hashed` as a Python loop over the slots (the reference the tests hold it to)."""
    vector = [0.0] * dimensions
    for feature, weight in weights:
        index, sign = _slot(feature, dimensions)
        vector[index] += sign * weight
    norm = math.sqrt(math.fsum(map(operator.mul, vector, vector)))
    return list(map(operator.truediv, vector, itertools.repeat(norm))) if norm > 0 else vector


class OfflineEmbedder(Embedder):
    """Deterministic local embeddings (feature hashing); the default without Gemini.

    Documents and queries are embedded the same way (``purpose`` is ignored).

    Args:
        dimensions: vector length (default ``EMBEDDING_DIMENSIONS``, 768).
    """

    def __init__(self, dimensions: int = EMBEDDING_DIMENSIONS) -> None:
        self.dimensions = dimensions
        self.name = f"offline-hash-{dimensions}"

    def embed(
        self, texts: Sequence[str], purpose: EmbeddingPurpose = "document"
    ) -> list[list[float]]:
        return [hashed(features(text).items(), self.dimensions) for text in texts]


__all__ = [
    "CONCEPTS",
    "STOP_WORDS",
    "OfflineEmbedder",
    "concept_counts",
    "features",
    "hashed",
    "stem",
]
