"""What a profile's escalation guard looks for, one data module per language.

Each language module holds, as plain data:

- ``MEDICAL_ADVICE``: a question for a pharmacist (dosage, whether to take or combine
  something, pregnancy and breastfeeding, side effects, overdose);
- ``CHILD`` and ``CHILD_USE``: a child and a use (give, how much, fever) in one message
  is a question of a child's dose;
- ``COMPLAINT``: the patient is unhappy with the service.

A profile declares which of these it escalates (``escalate_on`` in ``inboxflow.yaml``);
the ``escalation_cues`` guard (``guards.py``) applies them. Every language is searched in
every message; cues are matched by :mod:`inboxflow.graphs.cue_matching`.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType

from ...cue_matching import Cue, CueSet
from . import cs, de, en, es, fr, ja

LANGUAGES: dict[str, ModuleType] = {"en": en, "cs": cs, "de": de, "fr": fr, "es": es, "ja": ja}


@cache
def cues(kind: str) -> CueSet:
    """The ``kind`` cues (``MEDICAL_ADVICE``, ``CHILD``, ``CHILD_USE``, ``COMPLAINT``) of every language."""
    return CueSet(
        Cue(words, 1.0, lang)
        for lang, module in LANGUAGES.items()
        for words in getattr(module, kind)
    )


__all__ = ["LANGUAGES", "cues"]
