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

import hashlib
import itertools
import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ..ports.embeddings import EMBEDDING_DIMENSIONS, Embedder, EmbeddingPurpose

WORD_WEIGHT = 1.0
CONCEPT_WEIGHT = 1.2
BIGRAM_WEIGHT = 0.5
TRIGRAMS_WEIGHT = 0.6
"""Total weight of one word's character trigrams, shared equally among them."""

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


def _fold(text: str) -> str:
    """Lower case without accents (``Café Léveillé`` -> ``cafe leveille``)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s")


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
    patterns = []
    for concept, phrases in CONCEPTS.items():
        alternatives = "|".join(re.escape(_fold(p)) for p in sorted(phrases, key=len, reverse=True))
        patterns.append((re.compile(rf"\b(?:{alternatives})(?:s|es|ed|ing)?\b"), concept))
    return patterns


_CONCEPT_PATTERNS = _concept_patterns()


def features(text: str) -> dict[str, float]:
    """The weighted features of a text, before hashing."""
    folded = _fold(text)
    weights: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    words = [stem(w) for w in _WORD.findall(folded) if w not in STOP_WORDS and len(w) > 1]
    for word in words:
        counts[f"w:{word}"] += 1
    for first, second in itertools.pairwise(words):
        counts[f"b:{first}_{second}"] += 1
    for pattern, concept in _CONCEPT_PATTERNS:
        found = len(pattern.findall(folded))
        if found:
            counts[f"c:{concept}"] += found
    for name, count in counts.items():
        base = {"w": WORD_WEIGHT, "b": BIGRAM_WEIGHT, "c": CONCEPT_WEIGHT}[name[0]]
        weights[name] += base * (1.0 + math.log(count))
    for word in set(words):
        padded = f"#{word}#"
        grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
        share = TRIGRAMS_WEIGHT * (1.0 + math.log(counts[f"w:{word}"])) / len(grams)
        for gram in grams:
            weights[f"t:{gram}"] += share
    if not weights:
        weights["empty"] = 1.0
    return dict(weights)


@lru_cache(maxsize=65536)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
    return digest % dimensions, 1.0 if digest >> 63 else -1.0


def hashed(weights: Iterable[tuple[str, float]], dimensions: int) -> list[float]:
    """Signed feature hashing into ``dimensions`` slots, L2-normalised."""
    vector = [0.0] * dimensions
    for feature, weight in weights:
        index, sign = _slot(feature, dimensions)
        vector[index] += sign * weight
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else vector


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


__all__ = ["CONCEPTS", "STOP_WORDS", "OfflineEmbedder", "features", "hashed", "stem"]
