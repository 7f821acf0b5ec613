"""What a profile's escalation guard looks for, one TOML data file per language (``en.toml``...).

Each language file holds, as plain data:

- ``medical_advice``: a question for a pharmacist (dosage, whether to take or combine
  something, pregnancy and breastfeeding, side effects, overdose);
- ``child`` and ``child_use``: a child and a use (give, how much, fever) in one message
  is a question of a child's dose;
- ``complaint``: the patient is unhappy with the service.

A profile declares which of these it escalates (``escalate_on`` in ``inboxflow.yaml``);
the ``escalation_cues`` guard (``guards.py``) applies them. Every language is searched in
every message; the files are read by :func:`inboxflow.graphs.word_data.read_cue_lists`
and matched by :mod:`inboxflow.graphs.cue_matching`.
"""

from __future__ import annotations

from functools import cache

from ...cue_matching import Cue, CueSet
from ...word_data import read_cue_lists

LANGUAGES = ("en", "cs", "de", "fr", "es", "ja")
"""The files of this package, each named by its language (ISO 639-1)."""


@cache
def cues(kind: str) -> CueSet:
    """The ``kind`` cues (``medical_advice``, ``child``, ``child_use``, ``complaint``) of every language."""
    return CueSet(
        Cue(words, 1.0, lang)
        for lang, lists in read_cue_lists(__name__, LANGUAGES).items()
        for words in lists[kind]
    )


__all__ = ["LANGUAGES", "cues"]
